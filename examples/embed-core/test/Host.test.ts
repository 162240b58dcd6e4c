/**
 * The embedded core: our own fetch transport delivers both callbacks of a sandbox payment, signed
 * so that `@paydesk/client` verifies them with the terminal's secret.
 */
import { afterAll, describe, expect, it } from "vitest"
import { createServer } from "node:http"
import { webhooks } from "@paydesk/client"
import { makeRuntime } from "../src/Host.js"
import { firstPayment } from "../src/Scenario.js"

const received: Array<{ headers: Record<string, string | string[] | undefined>; body: string }> = []
const receiver = createServer((request, response) => {
  let body = ""
  request.on("data", (chunk: Buffer) => (body += chunk.toString()))
  request.on("end", () => {
    received.push({ headers: request.headers, body })
    response.writeHead(200).end("ok")
  })
})
afterAll(() => receiver.close())

describe("embed-core", () => {
  it("runs a sandbox payment through its own adapters, delivering signed callbacks", async () => {
    await new Promise<void>((ok) => receiver.listen(0, "127.0.0.1", ok))
    const address = receiver.address()
    const url = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/callbacks`
    const runtime = makeRuntime({ allowPrivateCallbacks: true })
    try {
      const result = await runtime.runPromise(firstPayment(url))
      expect(result.payment).toMatchObject({ status: "paid", amount: "1000.50", test: true })
      expect(result.report.callbacks).toBe(2)
      const events = await Promise.all(received.map((r) => webhooks.verify(r.body, r.headers as Record<string, string>, result.signingSecret)))
      expect(events.map((e) => e.event_type)).toEqual(["payment.created", "payment.paid"])
    } finally {
      await runtime.dispose()
    }
  })
})
