/**
 * `paydesk`: the operator CLI (see CliProgram.ts). `paydesk --help` lists the groups, `paydesk <group> --help`
 * their commands.
 */
import * as CliProgram from "./CliProgram.js"

const readStdin = async (): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

process.exitCode = await CliProgram.run(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  readStdin,
  fetch: globalThis.fetch
})
