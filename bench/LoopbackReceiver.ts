/**
 * A callback receiver on loopback for the benchmarks: answers 200 and counts what it received. It
 * runs in a process of its own, as a merchant's receiver would, so its work is not counted in the
 * engine's CPU (on this 2-core machine it still shares the cores with the engine and PostgreSQL).
 *
 * With `answerBytes`, each answer has a body of that many bytes, its first KiB written with the
 * status line and the rest on the next turn of the receiver's loop (as an answer comes over a
 * network, in more than one read). The receiver also counts the connections it accepted.
 */
import { fork } from "node:child_process"

/** The receiver's process: listens on an ephemeral loopback port, answers count requests over IPC. */
const program = `
const { createServer } = require("node:http")
const answer = Buffer.alloc(Number(process.env.ANSWER_BYTES ?? 0), "x")
let received = 0
let connections = 0
const server = createServer((request, response) => {
  request.resume()
  request.on("end", () => {
    received++
    if (answer.length === 0) return void response.writeHead(200).end()
    response.writeHead(200, { "content-length": String(answer.length) })
    response.write(answer.subarray(0, 1024))
    setImmediate(() => response.end(answer.subarray(1024)))
  })
})
server.on("connection", () => connections++)
server.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }))
process.on("message", (message) => {
  if (message === "count") process.send({ received, connections })
  if (message === "reset") { received = 0; connections = 0; process.send({ received, connections }) }
})
process.on("disconnect", () => process.exit(0))
`

export const start = async (options: { readonly answerBytes?: number } = {}) => {
  const child = fork("-e", [program], {
    execArgv: [],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    env: { ...process.env, ANSWER_BYTES: String(options.answerBytes ?? 0) }
  })
  // One question at a time: each answer goes to the one waiting.
  let waiting: { ok: (answer: Record<string, number>) => void; fail: (error: Error) => void } | undefined
  child.on("message", (message) => waiting?.ok(message as Record<string, number>))
  child.on("exit", (code) => waiting?.fail(new Error(`the receiver exited (${code})`)))
  const answer = () => new Promise<Record<string, number>>((ok, fail) => (waiting = { ok, fail }))
  const { port } = await answer()
  const ask = async (message: "count" | "reset") => {
    const answered = answer()
    child.send(message)
    return await answered
  }
  return {
    url: `http://127.0.0.1:${port}/cb`,
    /** The receiver's process. */
    pid: child.pid!,
    /** Callbacks received so far. */
    received: () => ask("count").then((counts) => counts.received!),
    /** Connections accepted so far. */
    connections: () => ask("count").then((counts) => counts.connections!),
    /** Counts from zero again. */
    reset: () => ask("reset").then(() => undefined),
    close: async () => {
      const exited = new Promise<void>((ok) => child.once("exit", () => ok()))
      child.disconnect()
      await exited
    }
  }
}
