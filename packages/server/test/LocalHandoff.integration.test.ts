/**
 * The local engine sends a new payment's `payment.created` right after the creation commits, without
 * a pass (the worker's interval here is an hour, and nothing due wakes it), and counts it among the
 * callbacks it handled.
 */
import { afterEach, describe, expect, it } from "vitest"
import { type Receiver, startReceiver, startServer } from "./ServerHarness.js"

let stop: (() => Promise<unknown>) | null = null
let receiver: Receiver | null = null

afterEach(async () => {
  await stop?.()
  await receiver?.close()
  stop = receiver = null
})

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms))

/** A counter's value in a Prometheus scrape (0 when absent). */
const counter = (scrape: string, line: string) => Number(scrape.split("\n").find((l) => l.startsWith(`${line} `))?.split(" ")[1] ?? 0)

describe("callbacks handed off to the local engine", () => {
  it("a created payment's callback arrives at once, signed, without a pass; shutting down sends what was taken", async () => {
    const srv = await startServer({ PAYDESK_ENGINE: "local", PAYDESK_WORK_INTERVAL_MS: "3600000" })
    stop = srv.stop
    receiver = await startReceiver(() => Date.now())
    const merchant = await srv.merchant(receiver.url)
    const scrape = async () => (await srv.call("GET", "/metrics", { headers: { authorization: "Bearer test-admin" } })).text
    const passesBefore = counter(await scrape(), 'paydesk_work_passes_total{result="ok"}')

    const created = await merchant.api("POST", "/payments", { amount: "15.00", order_id: "handed-1", test: true })
    expect(created.status).toBe(201)
    for (let i = 0; i < 100 && receiver.requests.length === 0; i++) await sleep(50)
    expect(receiver.requests.map((r) => JSON.parse(r.body).event_type)).toEqual(["payment.created"])
    const [request] = receiver.requests
    expect(JSON.parse(request!.body).order_id).toBe("handed-1")
    expect(request!.headers["x-signature"]).toMatch(/^[0-9a-f]{64}$/)
    expect(request!.headers["x-event-sequence"]).toBe("1")

    // Recorded delivered, counted as a callback the engine handled, and no pass ran for it.
    let delivery: { status: string; attempts: number } | undefined
    for (let i = 0; i < 100 && delivery?.status !== "delivered"; i++) {
      delivery = (await srv.admin("GET", `/deliveries?payment_id=${created.json.id}`)).json.items[0]
      if (delivery?.status !== "delivered") await sleep(50)
    }
    expect(delivery).toMatchObject({ status: "delivered", attempts: 1 })
    const after = await scrape()
    expect(counter(after, 'paydesk_work_items_total{kind="callbacks"}')).toBe(1)
    expect(counter(after, 'paydesk_work_passes_total{result="ok"}')).toBe(passesBefore)

    // Taken just before the shutdown: still sent, once.
    receiver.requests.length = 0
    await merchant.api("POST", "/payments", { amount: "16.00", order_id: "handed-2", test: true })
    await srv.stop()
    stop = null
    expect(receiver.requests.map((r) => JSON.parse(r.body).order_id)).toEqual(["handed-2"])
  })
})

/** A receiver that answers `payment.paid` 200 after `delayMs` (within the spec's 10 s), the others at once, counting the paid ones. */
const slowReceiver = async (delayMs: number) => {
  const { createServer } = await import("node:http")
  const state = { received: 0, answered: 0 }
  const server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (c: Buffer) => chunks.push(c))
    request.on("end", () => {
      if (JSON.parse(Buffer.concat(chunks).toString("utf8")).event_type !== "payment.paid") return void response.writeHead(200).end()
      state.received++
      setTimeout(() => {
        state.answered++
        response.writeHead(200).end()
      }, delayMs)
    })
  })
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok))
  const address = server.address()
  return {
    state,
    url: `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/callbacks`,
    close: () => new Promise<void>((ok) => server.close(() => ok()))
  }
}

describe("a slow receiver and the local engine", () => {
  it("another merchant's callbacks arrive at once while a slow receiver's are in flight; a shutdown waits for those", async () => {
    const srv = await startServer({ PAYDESK_ENGINE: "local", PAYDESK_CLOCK: "system", PAYDESK_WORK_INTERVAL_MS: "200" })
    stop = srv.stop
    receiver = await startReceiver(() => Date.now())
    const slow = await slowReceiver(8_000)
    try {
      const slowMerchant = await srv.merchant(slow.url)
      const healthy = await srv.merchant(receiver.url)
      // The slow merchant's payments, then their payment.paid, which go out by the passes and are answered slowly.
      const ids: Array<string> = []
      for (let i = 0; i < 8; i++) ids.push((await slowMerchant.api("POST", "/payments", { amount: "10", order_id: `slow-${i}`, test: true })).json.id)
      for (const id of ids) expect((await slowMerchant.api("POST", `/payments/${id}/simulate`, { outcome: "paid" })).status).toBe(200)
      for (let i = 0; i < 100 && slow.state.received < 8; i++) await sleep(50)
      expect(slow.state.received).toBe(8)
      expect(slow.state.answered).toBeLessThan(8)
      // The healthy merchant's payment.created (handed off) and payment.paid (a pass) arrive long before the slow ones are answered.
      const created = await healthy.api("POST", "/payments", { amount: "10", order_id: "healthy", test: true })
      await healthy.api("POST", `/payments/${created.json.id}/simulate`, { outcome: "paid" })
      const started = Date.now()
      for (let i = 0; i < 100 && receiver.requests.length < 2; i++) await sleep(20)
      expect(receiver.requests.map((r) => JSON.parse(r.body).event_type)).toEqual(["payment.created", "payment.paid"])
      expect(Date.now() - started).toBeLessThan(2_000)
      expect(slow.state.answered).toBeLessThan(8)
      // Stopping now waits for the callbacks in flight: each answered and recorded delivered.
      await srv.stop()
      stop = null
      expect(slow.state.answered).toBe(8)
    } finally {
      await slow.close()
    }
  }, 60_000)
})
