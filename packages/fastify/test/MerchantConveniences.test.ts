/**
 * The conventions beside the spec (docs/decisions.md, "Merchant conveniences"): simulation of a
 * sandbox payment by API key, lookup by `order_id`, the `Idempotency-Key` header on payments and
 * payouts, `limit` with a cursor beside `page`, and the events feed of `paydesk listen`.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Clock, Effect, Layer, ManagedRuntime, Option } from "effect"
import { IdempotencyStore, Payments, PaymentRepository, Signature, Work } from "@paydesk/core"
import { Kit, ManualClock } from "@paydesk/testkit"
import * as App from "../src/App.js"
import { adminToken, expectError, json, keyHeaders, make, publicUrl, shape, type TestApp } from "./TestApp.js"

let t: TestApp
let merchant: Kit.Merchant

beforeEach(async () => {
  t = await make()
  merchant = await t.merchant()
})
afterEach(() => t.close())

const call = (method: "GET" | "POST", url: string, payload?: unknown, headers: Record<string, string> = {}, apiKey = merchant.apiKey) =>
  t.app.inject({ method, url: `/api/v1${url}`, headers: keyHeaders(apiKey, headers), ...(payload === undefined ? {} : { payload: payload as object }) })

const sandbox = async (orderId: string) => json(await call("POST", "/payments", { amount: "250", order_id: orderId, test: true }))
const paymentCount = () =>
  t.run(Effect.flatMap(PaymentRepository, (r) => r.list({ terminalId: merchant.terminal.id, environment: "all", recurring: null }, { limit: 1, offset: 0 })))
    .then((r) => r.total)

describe("MerchantConveniences: sandbox simulation by API key", () => {
  it("moves a sandbox payment to paid (through processing) and answers the payment; repeating it changes nothing", async () => {
    const payment = await sandbox("sim-1")
    const paid = await call("POST", `/payments/${payment.id}/simulate`, { outcome: "paid" })
    expect(paid.statusCode).toBe(200)
    expect(shape("Payment", json(paid))).toMatchObject({ id: payment.id, status: "paid", test: true })
    expect(json(await call("POST", `/payments/${payment.id}/simulate`, { outcome: "paid" })).status).toBe("paid")
    // Named by the outcome asked for, not the state machine's event ("does not accept cancel").
    expectError(await call("POST", `/payments/${payment.id}/simulate`, { outcome: "failed" }), 409, "invalid_transition", "payment in state paid cannot become canceled (outcome failed)")
  })

  it("refuses live payments, unknown outcomes, other terminals' payments and unknown ids", async () => {
    const live = json(await call("POST", "/payments", { amount: "250", order_id: "live-1" }))
    expectError(await call("POST", `/payments/${live.id}/simulate`, { outcome: "paid" }), 400, "operation_not_allowed", "simulation is available only for sandbox payments")
    const payment = await sandbox("sim-2")
    expect(expectError(await call("POST", `/payments/${payment.id}/simulate`, { outcome: "maybe" }), 400, "invalid_request",
      "outcome must be one of: paid, failed, processing").field).toBe("outcome")
    const other = await t.merchant()
    expectError(await call("POST", `/payments/${payment.id}/simulate`, { outcome: "paid" }, {}, other.apiKey), 404, "not_found", "payment not found")
    expectError(await call("POST", `/payments/pay_${crypto.randomUUID()}/simulate`, { outcome: "paid" }), 404, "not_found")
    const token: string = payment.pay_url.split("/").at(-1)
    expect((await t.run(Payments.findPublic(token))).payment.status).toBe("created")
  })
})

describe("MerchantConveniences: lookup by order_id", () => {
  it("finds the payment of an order_id in its environment, 404 elsewhere", async () => {
    const payment = await sandbox("look-1")
    const found = await call("GET", "/payments/by-order?order_id=look-1&environment=sandbox")
    expect(found.statusCode).toBe(200)
    expect((shape("Payment", json(found)) as { id: string }).id).toBe(payment.id)
    expectError(await call("GET", "/payments/by-order?order_id=look-1"), 404, "not_found", "payment not found")
    expect(expectError(await call("GET", "/payments/by-order"), 400, "invalid_request", "order_id is required").field).toBe("order_id")
  })
})

describe("MerchantConveniences: Idempotency-Key", () => {
  it("on payments: the same key and body answer the first payment (200), another body 409, nothing created twice", async () => {
    const headers = { "idempotency-key": "checkout-77" }
    const body = { amount: "100.50", order_id: "idem-1", test: true }
    const first = await call("POST", "/payments", body, headers)
    expect(first.statusCode).toBe(201)
    const again = await call("POST", "/payments", body, headers)
    expect(again.statusCode).toBe(200)
    expect(json(again).id).toBe(json(first).id)
    expectError(await call("POST", "/payments", { ...body, order_id: "idem-2" }, headers), 409, "idempotency_conflict", "idempotency key conflicts with another request")
    expect(await paymentCount()).toBe(1)
    // A key bound by a replayed order_id answers that payment too.
    expect(json(await call("POST", "/payments", body, { "idempotency-key": "checkout-78" })).id).toBe(json(first).id)
    expect(json(await call("POST", "/payments", body, { "idempotency-key": "checkout-78" })).id).toBe(json(first).id)
    expectError(await call("POST", "/payments", { ...body, amount: "1" }, { "idempotency-key": "checkout-78" }), 409, "idempotency_conflict")
    expect(expectError(await call("POST", "/payments", body, { "idempotency-key": "x".repeat(129) }), 400, "invalid_request").field).toBe("Idempotency-Key")
  })

  it("on payouts: the header is the body's idempotency_key; both must agree", async () => {
    const payment = json(await call("POST", "/payments", { amount: "9500", order_id: "fund" }))
    await t.run(Payments.settle(payment.id, "paid"))
    const body = { amount_usdt: "10", wallet_address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" }
    const first = json(await call("POST", "/payouts", body, { "idempotency-key": "po-9" }))
    expect(first.idempotency_key).toBe("po-9")
    expect(json(await call("POST", "/payouts", { ...body, idempotency_key: "po-9" })).id).toBe(first.id)
    expect(json(await call("POST", "/payouts", body, { "idempotency-key": "po-9" })).id).toBe(first.id)
    expectError(await call("POST", "/payouts", { ...body, amount_usdt: "11" }, { "idempotency-key": "po-9" }), 409, "idempotency_conflict")
    expectError(await call("POST", "/payouts", { ...body, idempotency_key: "po-a" }, { "idempotency-key": "po-b" }), 400, "invalid_request",
      "idempotency_key must equal the Idempotency-Key header when both are sent")
    expect(json(await call("GET", "/payouts")).total).toBe(1)
  })
})

describe("MerchantConveniences: Idempotency-Key retention", () => {
  const hour = 3_600_000
  const start = Date.parse("2026-03-01T09:00:00.000Z")

  /** The app on the kit with a manual clock. */
  const makeTimed = async () => {
    const manual = await Effect.runPromise(ManualClock.make(start))
    const runtime = ManagedRuntime.make(Layer.merge(Kit.layer, Layer.succeed(Clock.Clock)(manual.clock)))
    const app = await App.build({ runtime, publicUrl, adminToken, checkResponses: true })
    const run = <A, E>(effect: Effect.Effect<A, E, Kit.Services>) => runtime.runPromise(effect)
    const owner = await run(Kit.provisionMerchant())
    const post = (url: string, payload: object, headers: Record<string, string> = {}) =>
      app.inject({ method: "POST", url: `/api/v1${url}`, headers: keyHeaders(owner.apiKey, headers), payload })
    return {
      run,
      owner,
      post,
      at: (ms: number) => Effect.runPromise(manual.set(start + ms)),
      close: async () => {
        await app.close()
        await runtime.dispose()
      }
    }
  }

  it("a payment's key is kept 24 h of the manual clock: a conflict until then, a new payment after", async () => {
    const timed = await makeTimed()
    try {
      const key = { "idempotency-key": "checkout-24h" }
      const first = await timed.post("/payments", { amount: "10", order_id: "day-1", test: true }, key)
      expect(first.statusCode).toBe(201)
      await timed.at(24 * hour)
      expectError(await timed.post("/payments", { amount: "10", order_id: "day-2", test: true }, key), 409, "idempotency_conflict")
      expect((await timed.post("/payments", { amount: "10", order_id: "day-1", test: true }, key)).statusCode).toBe(200)
      await timed.at(24 * hour + 1)
      const later = await timed.post("/payments", { amount: "10", order_id: "day-2", test: true }, key)
      expect(later.statusCode).toBe(201)
      expect(json(later).id).not.toBe(json(first).id)
      // The key now belongs to the new payment.
      expectError(await timed.post("/payments", { amount: "10", order_id: "day-3", test: true }, key), 409, "idempotency_conflict")
    } finally {
      await timed.close()
    }
  })

  it("a payout's key is kept 7 days, not 24 h (money leaves): the same key and body answer the first payout until then", async () => {
    const timed = await makeTimed()
    try {
      const payment = json(await timed.post("/payments", { amount: "9500", order_id: "fund" }))
      await timed.run(Payments.settle(payment.id, "paid"))
      const body = { amount_usdt: "10", wallet_address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20", idempotency_key: "po-24h" }
      const first = json(await timed.post("/payouts", body))
      await timed.at(24 * hour + 1)
      expect(json(await timed.post("/payouts", body)).id).toBe(first.id)
      await timed.at(7 * 24 * hour - 1)
      expect(json(await timed.post("/payouts", body)).id).toBe(first.id)
      await timed.at(7 * 24 * hour + 1)
      const second = json(await timed.post("/payouts", body))
      expect(second.id).not.toBe(first.id)
      expect(second.idempotency_key).toBe("po-24h")
    } finally {
      await timed.close()
    }
  })

  it("housekeeping purges payment, rotation and operator-move keys after 24 h, payout and subscription keys (the spec's) after 7 days", async () => {
    const timed = await makeTimed()
    try {
      const terminalId = timed.owner.terminal.id
      const scopes = ["subscription", "payment", "payout", "rotation", "operator"] as const
      const record = (scope: (typeof scopes)[number]) =>
        ({ terminalId, scope, key: `k-${scope}`, fingerprint: "f", resourceId: crypto.randomUUID(), createdAt: start })
      await timed.run(Effect.flatMap(IdempotencyStore, (store) => Effect.forEach(scopes, (scope) => store.insert(record(scope)))))
      const present = () =>
        timed.run(Effect.flatMap(IdempotencyStore, (store) =>
          Effect.forEach(scopes, (scope) => Effect.map(store.find(terminalId, scope, `k-${scope}`), Option.isSome))))
      await timed.at(24 * hour - 1)
      await timed.run(Work.housekeeping())
      expect(await present()).toEqual([true, true, true, true, true])
      await timed.at(24 * hour + 1)
      await timed.run(Work.housekeeping())
      expect(await present()).toEqual([true, false, true, false, false])
      await timed.at(7 * 24 * hour + 1)
      await timed.run(Work.housekeeping())
      expect(await present()).toEqual([false, false, false, false, false])
    } finally {
      await timed.close()
    }
  })
})

describe("MerchantConveniences: limit and cursor", () => {
  it("walks the payments with limit and next_cursor, beside page", async () => {
    // A millisecond apart: the list is newest first, and payments of the same millisecond are in id order.
    for (let i = 0; i < 5; i++) {
      await sandbox(`page-${i}`)
      await new Promise((ok) => setTimeout(ok, 2))
    }
    const seen: Array<string> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const answer = json(await call("GET", `/payments?environment=sandbox&limit=2${cursor === null ? "" : `&cursor=${cursor}`}`))
      shape("PaymentPage", answer)
      expect(answer.per_page).toBe(2)
      seen.push(...answer.items.map((p: { order_id: string }) => p.order_id))
      cursor = answer.next_cursor
      pages++
    } while (cursor !== null)
    expect(pages).toBe(3)
    expect(seen).toEqual(["page-4", "page-3", "page-2", "page-1", "page-0"])
    expect(json(await call("GET", "/payments?environment=sandbox&limit=2&page=3")).items.map((p: { order_id: string }) => p.order_id)).toEqual(["page-0"])
    expectError(await call("GET", "/payments?limit=101"), 400, "invalid_request", "limit must be an integer from 1 to 100")
    for (const odd of ["0x10", "1e1", "+5", "%205", "2.0"]) {
      expect(expectError(await call("GET", `/payments?limit=${odd}`), 400, "invalid_request", "limit must be an integer from 1 to 100").field).toBe("limit")
    }
    expectError(await call("GET", "/payments?page=0"), 400, "invalid_request", "page must be an integer from 1 to 999999999")
    expectError(await call("GET", "/payments?cursor=nonsense"), 400, "invalid_request", "cursor must be the next_cursor of a previous answer")
    const first = json(await call("GET", "/payments?environment=sandbox&limit=2"))
    expectError(await call("GET", `/payments?page=1&cursor=${first.next_cursor}`), 400, "invalid_request", "cursor and page cannot be used together: send one of them")
    expect(json(await call("GET", "/payouts?limit=5")).next_cursor).toBeNull()
    expect(json(await call("GET", "/subscriptions?limit=5")).next_cursor).toBeNull()
  })
})

describe("MerchantConveniences: events feed", () => {
  it("reads the terminal's events after a cursor, each signed with the terminal's secret; latest starts from now", async () => {
    const before = await sandbox("feed-0")
    const start = json(await call("GET", "/events/feed?after=latest"))
    expect(start.items).toEqual([])
    const payment = await sandbox("feed-1")
    await call("POST", `/payments/${payment.id}/simulate`, { outcome: "paid" })
    const feed = json(await call("GET", `/events/feed?after=${start.next_after}`))
    shape("EventFeed", feed)
    expect(feed.items.map((e: { event_type: string }) => e.event_type)).toEqual(["payment.created", "payment.paid"])
    for (const event of feed.items) {
      expect(JSON.parse(event.body).payment_id).toBe(payment.id)
      expect(event.headers["x-test-mode"]).toBe("true")
      const check = await Effect.runPromise(Signature.verify({
        secret: merchant.signingSecret,
        timestamp: event.headers["x-timestamp"],
        body: event.body,
        signature: event.headers["x-signature"]
      }))
      expect(check.ok).toBe(true)
    }
    // Each item's cursor reads on after it; next_after is the last one's.
    expect(feed.items.map((e: { cursor: string }) => e.cursor)).toEqual([expect.stringMatching(/^feed_v1\./), expect.stringMatching(/^feed_v1\./)])
    expect(feed.next_after).toBe(feed.items[1].cursor)
    expect(json(await call("GET", `/events/feed?after=${feed.items[0].cursor}`)).items.map((e: { id: string }) => e.id)).toEqual([feed.items[1].id])
    const none = json(await call("GET", `/events/feed?after=${feed.next_after}`))
    expect(none.items).toEqual([])
    expect(json(await call("GET", `/events/feed?after=${none.next_after}`)).items).toEqual([])
    // An event id (the cursor of earlier versions) still reads on after it, and moves to a feed_ cursor.
    const byId = json(await call("GET", `/events/feed?after=${feed.items[0].id}`))
    expect(byId.items.map((e: { id: string }) => e.id)).toEqual([feed.items[1].id])
    expect(byId.next_after).toBe(byId.items[0].cursor)
    const lastById = json(await call("GET", `/events/feed?after=${feed.items[1].id}`))
    expect(lastById.items).toEqual([])
    expect(json(await call("GET", `/events/feed?after=${lastById.next_after}`)).items).toEqual([])
    // From the first event; live events only with environment=prod or all.
    const all = json(await call("GET", "/events/feed?limit=100"))
    expect(JSON.parse(all.items[0].body).payment_id).toBe(before.id)
    expect(json(await call("GET", "/events/feed?environment=prod")).items).toEqual([])
    expectError(await call("GET", "/events/feed?after=nope"), 400, "invalid_request")
    // A cursor this database never gave, or an id that is no event of this terminal, gets a 400, not
    // an empty feed for ever.
    const cursor = "after must be latest or the next_after of an earlier answer of this feed"
    expect(expectError(await call("GET", `/events/feed?after=evt_${crypto.randomUUID()}`), 400, "invalid_request", cursor).field).toBe("after")
    // Made-up or altered cursors are refused: one can neither forge a position nor read one.
    const sealed: string = feed.items[0].cursor
    const flipped = sealed.slice(0, -2) + (sealed.at(-2) === "A" ? "B" : "A") + sealed.at(-1)
    for (const bad of ["feed_1", "feed_0", "feed_", `feed_${"x".repeat(600)}`, flipped, sealed.toUpperCase()]) {
      expect(expectError(await call("GET", `/events/feed?after=${encodeURIComponent(bad)}`), 400, "invalid_request", cursor).field).toBe("after")
    }
    const other = await t.merchant()
    expect(json(await call("GET", "/events/feed", undefined, {}, other.apiKey)).items).toEqual([])
    // Another terminal's cursor or event id is refused.
    expectError(await call("GET", `/events/feed?after=${feed.items[1].id}`, undefined, {}, other.apiKey), 400, "invalid_request", cursor)
    expectError(await call("GET", `/events/feed?after=${encodeURIComponent(sealed)}`, undefined, {}, other.apiKey), 400, "invalid_request", cursor)
  })
})
