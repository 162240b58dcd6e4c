import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { type Receiver, startReceiver, startServer } from "./ServerHarness.js"

/** An event as Inngest's event API receives it. */
interface SentEvent {
  readonly name: string
  readonly id: string
  readonly data: Record<string, unknown>
}

/** A local stand-in for Inngest's event API (`POST /e/<key>`) that records the events sent to it. */
const startEventApi = async () => {
  const events: Array<SentEvent> = []
  const paths: Array<string> = []
  const server = createServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => (body += chunk))
    req.on("end", () => {
      paths.push(`${req.method} ${req.url}`)
      const sent = req.method === "POST" && req.url?.startsWith("/e/") ? JSON.parse(body) as Array<SentEvent> : []
      events.push(...sent)
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ ids: sent.map((e) => e.id), status: 200 }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    events,
    paths,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}

/** Retries `check` until it passes (background sends land a moment after the request). */
const eventually = async (check: () => void, timeoutMs = 5_000) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      return check()
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise((ok) => setTimeout(ok, 20))
    }
  }
}

let srv: Awaited<ReturnType<typeof startServer>>
let eventApi: Awaited<ReturnType<typeof startEventApi>>
let receiver: Receiver

beforeAll(async () => {
  eventApi = await startEventApi()
  srv = await startServer({ PAYDESK_ENGINE: "inngest", INNGEST_DEV: "1", INNGEST_BASE_URL: eventApi.url })
  receiver = await startReceiver(() => srv.now())
}, 120_000)

afterAll(async () => {
  await receiver?.close()
  await srv?.stop()
  await eventApi?.close()
})

describe("PAYDESK_ENGINE=inngest", () => {
  it("serves the Inngest functions at /api/inngest and runs no local worker", async () => {
    const introspection = await srv.call("GET", "/api/inngest")
    expect(introspection.status).toBe(200)
    expect(introspection.json).toMatchObject({ mode: "dev", function_count: 13 })
    // Without a local worker, /admin/v1/work/run still runs due work on demand.
    expect(Object.keys(await srv.work()).sort()).toEqual(["callbacks", "charges", "conversions", "expired_payments", "payouts", "settled_charges", "stops", "test_clocks"])
  }, 60_000)

  it("a payment created through the merchant API sends paydesk/payment.created and paydesk/callback.scheduled after the commit", async () => {
    const start = "2026-04-01T09:00:00.000Z"
    await srv.setClock(start)
    const m = await srv.merchant(receiver.url)
    eventApi.events.length = 0
    const created = await m.api("POST", "/payments", { amount: "10", order_id: "inngest-1", test: true })
    expect(created.status).toBe(201)
    expect(created.json.expires_at).toBe("2026-04-01T09:30:00.000Z")
    const paymentId = String(created.json.id).replace(/^pay_/, "")
    const deliveries = await srv.admin("GET", `/deliveries?payment_id=${created.json.id}`)
    expect(deliveries.json.items).toHaveLength(1)
    const deliveryId: string = deliveries.json.items[0].id

    // Sent after the commit, in the background, in one request to the event API.
    await eventually(() => expect(eventApi.paths.filter((p) => p.startsWith("POST /e/"))).toHaveLength(1))
    expect(eventApi.events).toEqual([
      {
        name: "paydesk/payment.created",
        id: `expiry:${paymentId}:${Date.parse("2026-04-01T09:30:00.000Z")}`,
        data: { payment_id: paymentId, expires_at: "2026-04-01T09:30:00.000Z" },
        ts: expect.any(Number)
      },
      {
        name: "paydesk/callback.scheduled",
        id: `delivery:${deliveryId}:${Date.parse(start)}`,
        data: { delivery_id: deliveryId, next_attempt_at: start },
        ts: expect.any(Number)
      }
    ].map((e) => expect.objectContaining(e)))

    // A failed attempt reschedules the delivery 30 s later: one more paydesk/callback.scheduled.
    eventApi.events.length = 0
    receiver.answers.push(500)
    expect((await srv.work()).callbacks).toBe(1)
    expect(receiver.requests.at(-1)?.body).toContain("\"event_type\":\"payment.created\"")
    const retryAt = "2026-04-01T09:00:30.000Z"
    await eventually(() => expect(eventApi.events).toEqual([expect.objectContaining({
      name: "paydesk/callback.scheduled",
      id: `delivery:${deliveryId}:${Date.parse(retryAt)}`,
      data: { delivery_id: deliveryId, next_attempt_at: retryAt }
    })]))
    const detail = await srv.admin("GET", `/deliveries/${deliveryId}`)
    expect(detail.json.delivery).toMatchObject({ status: "pending", attempts: 1, next_attempt_at: retryAt })

    // Delivered at the retry: nothing more is due, nothing is sent.
    eventApi.events.length = 0
    await srv.setClock(retryAt)
    expect((await srv.work()).callbacks).toBe(1)
    await new Promise((ok) => setTimeout(ok, 200))
    expect(eventApi.events).toEqual([])
  }, 60_000)
})
