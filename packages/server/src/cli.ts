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

// The reader of our output has gone (`paydesk --help | head -n 3`, a `listen` piped into a command that
// ended): the rest of it has no one to go to, so stop quietly, as `cat` or `git` would (an unhandled
// EPIPE printed Node's stack trace).
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error
  process.exit(process.exitCode ?? 0)
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
