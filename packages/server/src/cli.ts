/**
 * `paydesk`: the operator CLI (see CliProgram.ts). `paydesk --help` lists the groups, `paydesk <group> --help`
 * their commands.
 */
import { createInterface } from "node:readline/promises"
import * as CliProgram from "./CliProgram.js"

const readStdin = async (): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

/**
 * The question on stderr (stdout stays the answer's), the reply from the terminal: yes only for `y`
 * or `yes`; Ctrl-C or Ctrl-D answer no.
 */
const confirm = async (question: string): Promise<boolean> => {
  const terminal = createInterface({ input: process.stdin, output: process.stderr })
  // Ctrl-C cancels the question (closing the interface alone left it pending and the CLI exited 13).
  const cancel = new AbortController()
  terminal.on("SIGINT", () => cancel.abort())
  try {
    return /^(y|yes)$/i.test((await terminal.question(question, { signal: cancel.signal })).trim())
  } catch {
    process.stderr.write("\n")
    return false
  } finally {
    terminal.close()
  }
}

// The reader of our output has gone (`paydesk --help | head -n 1`, a `listen` piped into a command that
// ended): the rest of it has no one to go to, so stop quietly (an unhandled EPIPE printed Node's stack
// trace). A command that had finished keeps its exit code; one still running ends with 141, as a program
// ended by SIGPIPE does (`yes | head`), so a pipeline under `set -o pipefail` does not take it for done.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error
  process.exit(process.exitCode ?? 141)
})
// Diagnostics with no one to read them are dropped, not a crash of their own.
process.stderr.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error
})

process.exitCode = await CliProgram.run(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  readStdin,
  fetch: globalThis.fetch,
  // Asked only when a person is at the terminal: a script or a pipe runs as before.
  ...(process.stdin.isTTY && process.stderr.isTTY ? { confirm } : {})
})
