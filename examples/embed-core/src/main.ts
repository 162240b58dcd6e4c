/**
 * Runs the scenario with callbacks to `CALLBACK_URL` (default: a receiver started here that
 * prints what it gets).
 *
 *   ./run pnpm --filter @paydesk/examples run embed-core
 */
import { createServer } from "node:http"
import { makeRuntime } from "./Host.js"
import { firstPayment } from "./Scenario.js"

const receiver = createServer((request, response) => {
  let body = ""
  request.on("data", (chunk: Buffer) => (body += chunk.toString()))
  request.on("end", () => {
    console.log(`callback ${request.headers["x-signature"]} ${body}`)
    response.writeHead(200).end()
  })
})
await new Promise<void>((ok) => receiver.listen(0, "127.0.0.1", ok))
const address = receiver.address()
const url = process.env.CALLBACK_URL ?? `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/callbacks`

const runtime = makeRuntime({ allowPrivateCallbacks: true })
const result = await runtime.runPromise(firstPayment(url))
console.log(JSON.stringify(result.payment, null, 2))
await runtime.dispose()
receiver.close()
