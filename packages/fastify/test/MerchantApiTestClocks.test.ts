import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Clock, Effect, Option } from "effect"
import { type Runner, Signature, TestClockRepository, Work } from "@paydesk/core"
import { Kit, RecordingCallbackTransport } from "@paydesk/testkit"
import * as App from "../src/App.js"
import { adminToken, expectError, json, keyHeaders, make, publicUrl, shape, type TestApp } from "./TestApp.js"

let t: TestApp
let merchant: Kit.Merchant
let plans: Kit.Plans

beforeEach(async () => {
  t = await make()
  merchant = await t.merchant({ callbackUrl: "https://shop.example/cb" })
  plans = await t.plans(merchant.terminal.id)
})
afterEach(() => t.close())

const api = (method: "GET" | "POST", url: string, body?: object, headers: Record<string, string> = {}, apiKey = merchant.apiKey) =>
  t.app.inject({ method, url: `/api/v1${url}`, headers: keyHeaders(apiKey, headers), ...(body === undefined ? {} : { payload: body }) })
const ok = async (response: Promise<{ statusCode: number; body: string }>, status = 200) => {
  const answer = await response
  expect(answer.statusCode, answer.body).toBe(status)
  return json(answer)
}
const pathOf = (url: string) => new URL(url).pathname
const csrfOf = async (path: string) => /name="csrf_token" value="([^"]*)"/.exec((await t.app.inject({ method: "GET", url: path })).body)![1]!
const recorded = () => t.run(Effect.map(RecordingCallbackTransport.RecordingCallbackTransport, (r) => r.requests))

/** The payer confirms the terms on the subscription's page; the first payment's page address. */
const consent = async (payUrl: string) => {
  const answer = await ok(t.app.inject({ method: "POST", url: `${pathOf(payUrl)}/confirm`, payload: { csrf_token: await csrfOf(pathOf(payUrl)) } }))
  return pathOf(answer.first_payment_url)
}

/** Moscow 10:00 of a day, as the API shows it (UTC). */
const at10 = (day: string) => new Date(`${day}T10:00:00+03:00`).toISOString()

describe("MerchantApi test clocks", () => {
  it("a sandbox ceiling subscription on a clock from 31 January: three months, a programmed failure into review and a stop, all over HTTP with the key of live payments; a live subscription is untouched", async () => {
    // A live subscription of the same terminal, same API key, active on the wall clock.
    const live = await ok(api("POST", "/subscriptions", { terminal_id: merchant.terminal.id, plan_id: plans.ceilingMonthly.id, amount: "500" }, { "idempotency-key": "live-1" }), 201)
    await consent(live.pay_url)
    const liveFirst = (await ok(api("GET", "/payments?recurring=true"))).items[0]
    await ok(t.app.inject({ method: "POST", url: `/admin/v1/acquirer/payments/${liveFirst.id}/outcome`, headers: { authorization: `Bearer ${adminToken}` }, payload: { outcome: "paid" } }))
    const liveBefore = await ok(api("GET", `/subscriptions/${live.id}`))
    expect([liveBefore.provider_state, liveBefore.billing_status, liveBefore.test_clock]).toEqual(["active", "enabled", null])

    const clock = shape("TestClock", await ok(api("POST", "/test-clocks", { frozen_time: "2026-01-31T10:00:00+03:00", name: "January" }), 201)) as Record<string, string>
    expect([clock["status"], clock["frozen_time"], clock["name"]]).toEqual(["ready", "2026-01-31T07:00:00.000Z", "January"])

    const created = shape("Subscription", await ok(api("POST", "/subscriptions", {
      terminal_id: merchant.terminal.id, plan_id: plans.ceilingMonthly.id, amount: "700", test: true, test_clock: clock["id"]
    }, { "idempotency-key": "sandbox-1" }), 201)) as Record<string, string>
    expect([created["environment"], created["test_clock"], created["created_at"]]).toEqual(["sandbox", clock["id"], "2026-01-31T07:00:00.000Z"])
    // The payer consents and pays the first payment with the sandbox page's simulate button, at the clock's time.
    const firstPage = await consent(created["pay_url"]!)
    const paid = await ok(t.app.inject({ method: "POST", url: `${firstPage}/simulate`, payload: { outcome: "paid", csrf_token: await csrfOf(firstPage) } }))
    expect(paid.status).toBe("paid")
    const active = await ok(api("GET", `/subscriptions/${created["id"]}`))
    expect([active.provider_state, active.billing_status, active.activated_at, active.next_charge_at]).toEqual(["active", "enabled", at10("2026-01-31"), at10("2026-02-28")])

    const upcoming = shape("UpcomingCharges", await ok(api("GET", `/subscriptions/${created["id"]}/upcoming?count=3`))) as { items: Array<Record<string, string>> }
    expect(upcoming.items.map((i) => [i["cycle_number"], i["scheduled_at"], i["scheduled_at_moscow"], i["amount_rub"]])).toEqual([
      [1, at10("2026-02-28"), "2026-02-28T10:00:00.000+03:00", "700.00"],
      [2, at10("2026-03-31"), "2026-03-31T10:00:00.000+03:00", "700.00"],
      [3, at10("2026-04-30"), "2026-04-30T10:00:00.000+03:00", "700.00"]
    ])
    expect(await ok(api("POST", `/subscriptions/${created["id"]}/sandbox/charge-outcomes`, { outcomes: ["paid", "paid", "paid", "failed"] })))
      .toEqual({ subscription_id: created["id"], outcomes: ["paid", "paid", "paid", "failed"] })

    // Three months on the clock: the charges fall on 28 February, 31 March and 30 April at 10:00 Moscow time.
    const advanced = shape("TestClock", await ok(api("POST", `/test-clocks/${clock["id"]}/advance`, { frozen_time: "2026-05-01T00:00:00+03:00" }))) as Record<string, unknown>
    expect([advanced["status"], advanced["frozen_time"], advanced["target_frozen_time"]]).toEqual(["ready", "2026-04-30T21:00:00.000Z", null])
    const charges = (shape("ChargeList", await ok(api("GET", `/subscriptions/${created["id"]}/charges`))) as Array<Record<string, unknown>>).reverse()
    expect(charges.map((c) => [c["cycle_number"], c["status"], c["scheduled_at"], c["actual_at"]])).toEqual([
      [0, "payed", "2026-01-31T07:00:00.000Z", "2026-01-31T07:00:00.000Z"],
      [1, "payed", at10("2026-02-28"), at10("2026-02-28")],
      [2, "payed", at10("2026-03-31"), at10("2026-03-31")],
      [3, "payed", at10("2026-04-30"), at10("2026-04-30")]
    ])
    // The preview matched the dates then charged.
    expect(charges.slice(1).map((c) => c["scheduled_at"])).toEqual(upcoming.items.map((i) => i["scheduled_at"]))
    const chargePayments = await Promise.all(charges.map((c) => ok(api("GET", `/payments/${c["payment_id"]}`))))
    expect(chargePayments.map((p) => [p.created_at, p.environment, p.test_clock])).toEqual(charges.map((c) => [c["actual_at"], "sandbox", clock["id"]]))

    // The programmed failure on 31 May puts it in review; then the merchant stops it.
    await ok(api("POST", `/test-clocks/${clock["id"]}/advance`, { frozen_time: "2026-06-10T12:00:00+03:00" }))
    const review = await ok(api("GET", `/subscriptions/${created["id"]}`))
    expect([review.billing_status, review.successful_cycles, review.next_charge_at]).toEqual(["review", 4, null])
    const failed = (await ok(api("GET", `/subscriptions/${created["id"]}/charges`)))[0]
    expect([failed.cycle_number, failed.status, failed.actual_at]).toEqual([4, "fail", at10("2026-05-31")])
    expect(await ok(api("POST", `/subscriptions/${created["id"]}/stop`))).toEqual({ ok: true })
    const stopped = await ok(api("GET", `/subscriptions/${created["id"]}`))
    expect([stopped.provider_state, stopped.billing_status, stopped.stopped_at]).toEqual(["stop", "stopped", "2026-06-10T09:00:00.000Z"])

    // The background work of the wall clock sends the live callbacks and leaves the clock's objects as they are.
    await t.run(Work.drain())
    expect((await ok(api("GET", `/subscriptions/${created["id"]}/charges`))).length).toBe(5)
    // Callbacks of the clock's objects carry the clock's time and id, signed as any; the live ones carry neither.
    const requests = await recorded()
    const onClock = requests.filter((r) => r.headers["x-test-clock"] === clock["id"])
    expect(onClock.map((r) => [JSON.parse(r.body).event_type, new Date(Number(r.headers["x-test-clock-time"]) * 1000).toISOString()])).toEqual([
      ["payment.created", "2026-01-31T07:00:00.000Z"],
      ["payment.paid", "2026-01-31T07:00:00.000Z"],
      ["payment.paid", at10("2026-02-28")],
      ["payment.paid", at10("2026-03-31")],
      ["payment.paid", at10("2026-04-30")]
    ])
    for (const r of onClock) {
      expect(r.headers["x-test-mode"]).toBe("true")
      // X-Timestamp is the wall time of sending: a receiver verifies against its own clock, as for any callback.
      const verified = await t.run(Signature.verify({
        secret: merchant.signingSecret, timestamp: r.headers["x-timestamp"], signature: r.headers["x-signature"], body: r.body
      }))
      expect(verified).toEqual({ ok: true })
    }
    const liveCallbacks = requests.filter((r) => r.headers["x-test-clock"] === undefined)
    expect(liveCallbacks.map((r) => [JSON.parse(r.body).event_type, r.headers["x-test-mode"]])).toEqual([["payment.created", undefined], ["payment.paid", undefined]])

    // The live subscription: still its first payment only, its next charge where it was.
    const liveAfter = await ok(api("GET", `/subscriptions/${live.id}`))
    expect([liveAfter.billing_status, liveAfter.successful_cycles, liveAfter.next_charge_at]).toEqual(["enabled", 1, liveBefore.next_charge_at])
    expect((await ok(api("GET", `/subscriptions/${live.id}/charges`))).length).toBe(1)
  })

  it("a callback retry of an object on a clock runs at the clock's time: the failed attempt at the creation, the retry 30 s later on the clock (X-Test-Clock-Time)", async () => {
    const clock = await ok(api("POST", "/test-clocks", { frozen_time: "2026-03-01T09:00:00Z" }), 201)
    await t.run(Effect.flatMap(RecordingCallbackTransport.RecordingCallbackTransport, (r) => r.failNext(2, { status: 500 })))
    const payment = await ok(api("POST", "/payments", { amount: "10", order_id: "retry-on-clock", test: true, test_clock: clock.id }), 201)
    // The background pass runs the work due at the clock's current time: the first attempt, at 09:00 on the clock, fails.
    await t.run(Work.drain())
    expect((await recorded()).map((r) => new Date(Number(r.headers["x-test-clock-time"]) * 1000).toISOString())).toEqual(["2026-03-01T09:00:00.000Z"])
    // Its retry waits for the clock, not for the wall clock.
    await t.run(Work.drain())
    expect(await recorded()).toHaveLength(1)
    // One hour on the clock: the retries follow at +30 s (fails again) and +60 s more (succeeds), on the clock's time.
    const advanced = await ok(api("POST", `/test-clocks/${clock.id}/advance`, { frozen_time: "2026-03-01T10:00:00Z" }))
    expect([advanced.status, advanced.frozen_time]).toEqual(["ready", "2026-03-01T10:00:00.000Z"])
    const attempts = (await recorded()).filter((r) => JSON.parse(r.body).payment_id === payment.id)
    expect(attempts.map((r) => [JSON.parse(r.body).event_type, r.headers["x-test-clock"], new Date(Number(r.headers["x-test-clock-time"]) * 1000).toISOString()])).toEqual([
      ["payment.created", clock.id, "2026-03-01T09:00:00.000Z"],
      ["payment.created", clock.id, "2026-03-01T09:00:30.000Z"],
      ["payment.created", clock.id, "2026-03-01T09:01:30.000Z"],
      // And the unpaid payment expires 30 minutes after its creation on the clock.
      ["payment.expired", clock.id, "2026-03-01T09:30:00.000Z"]
    ])
    // The same event each time, signed over the wall time of its sending, which the receiver's clock accepts.
    expect(new Set(attempts.slice(0, 3).map((r) => r.headers["x-event-id"])).size).toBe(1)
    for (const r of attempts) {
      expect(await t.run(Signature.verify({
        secret: merchant.signingSecret, timestamp: r.headers["x-timestamp"], signature: r.headers["x-signature"], body: r.body
      }))).toEqual({ ok: true })
    }
  })

  it("an advance whose request budget runs out answers 202 with the clock advancing; the background worker finishes it and GET shows it ready", async () => {
    // A wall clock that runs 8 s per reading while `slow` is on: the advance's 20 s budget is spent after a step or two.
    let slow = false
    let skew = 0
    const base = await t.run(Clock.clockWith(Effect.succeed))
    const read = () => base.currentTimeMillisUnsafe() + (slow ? (skew += 8_000) : skew)
    const slowWall: Clock.Clock = {
      currentTimeMillisUnsafe: read,
      currentTimeMillis: Effect.sync(read),
      currentTimeNanosUnsafe: () => BigInt(read()) * 1_000_000n,
      currentTimeNanos: Effect.sync(() => BigInt(read()) * 1_000_000n),
      monotonicTimeNanosUnsafe: () => base.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: base.monotonicTimeNanos,
      sleep: (duration) => base.sleep(duration)
    }
    const runner: Runner.Runner = { runPromiseExit: (effect) => t.runtime.runPromiseExit(Effect.provideService(effect, Clock.Clock, slowWall)) }
    const app = await App.build({ runtime: runner, publicUrl, adminToken, checkResponses: true })
    try {
      const call = (method: "GET" | "POST", url: string, body?: object, headers: Record<string, string> = {}) =>
        app.inject({ method, url: `/api/v1${url}`, headers: keyHeaders(merchant.apiKey, headers), ...(body === undefined ? {} : { payload: body }) })
      const clock = await ok(call("POST", "/test-clocks", { frozen_time: "2026-01-31T10:00:00+03:00" }), 201)
      const created = await ok(call("POST", "/subscriptions", {
        terminal_id: merchant.terminal.id, plan_id: plans.ceilingMonthly.id, amount: "700", test: true, test_clock: clock.id
      }, { "idempotency-key": "slow-1" }), 201)
      const payUrl = pathOf(created.pay_url)
      const confirmed = await ok(app.inject({ method: "POST", url: `${payUrl}/confirm`, payload: { csrf_token: await csrfOf(payUrl) } }))
      const firstPage = pathOf(confirmed.first_payment_url)
      await ok(app.inject({ method: "POST", url: `${firstPage}/simulate`, payload: { outcome: "paid", csrf_token: await csrfOf(firstPage) } }))

      slow = true
      const answer = await call("POST", `/test-clocks/${clock.id}/advance`, { frozen_time: "2026-05-01T00:00:00+03:00" })
      slow = false
      expect(answer.statusCode, answer.body).toBe(202)
      const advancing = shape("TestClock", json(answer)) as Record<string, unknown>
      expect([advancing["status"], advancing["target_frozen_time"]]).toEqual(["advancing", "2026-04-30T21:00:00.000Z"])
      // Part of the way only: the clock stopped before its target.
      expect(Date.parse(advancing["frozen_time"] as string)).toBeLessThan(Date.parse("2026-04-30T21:00:00.000Z"))
      // Meanwhile the clock is busy: another advance is 409.
      expectError(await call("POST", `/test-clocks/${clock.id}/advance`, { frozen_time: "2026-06-01T00:00:00Z" }), 409, "test_clock_advancing")

      // The background worker goes on until the target (1 s of work per clock per pass).
      for (let pass = 0; pass < 20 && (await ok(call("GET", `/test-clocks/${clock.id}`))).status === "advancing"; pass++) {
        await t.run(Work.runDue())
      }
      const ready = shape("TestClock", await ok(call("GET", `/test-clocks/${clock.id}`))) as Record<string, unknown>
      expect([ready["status"], ready["frozen_time"], ready["target_frozen_time"]]).toEqual(["ready", "2026-04-30T21:00:00.000Z", null])
      const charges = (await ok(call("GET", `/subscriptions/${created.id}/charges`))).reverse() as Array<Record<string, unknown>>
      expect(charges.map((c) => [c["cycle_number"], c["status"], c["actual_at"]])).toEqual([
        [0, "payed", "2026-01-31T07:00:00.000Z"],
        [1, "payed", at10("2026-02-28")],
        [2, "payed", at10("2026-03-31")],
        [3, "payed", at10("2026-04-30")]
      ])
    } finally {
      await app.close()
    }
  })

  it("clocks are listed and read per terminal; advances are checked; objects attach in sandbox to a clock of their terminal", async () => {
    const clock = await ok(api("POST", "/test-clocks", { frozen_time: "2026-01-31T07:00:00Z" }), 201)
    const other = await t.merchant()
    const page = shape("TestClockPage", await ok(api("GET", "/test-clocks"))) as { items: Array<{ id: string }>; total: number }
    expect([page.items.map((c) => c.id), page.total]).toEqual([[clock.id], 1])
    expect((await ok(api("GET", "/test-clocks", undefined, {}, other.apiKey))).total).toBe(0)
    expectError(await api("GET", `/test-clocks/${clock.id}`, undefined, {}, other.apiKey), 404, "not_found", "test clock not found")
    expectError(await api("POST", `/test-clocks/${clock.id}/advance`, { frozen_time: "2026-02-01T00:00:00Z" }, {}, other.apiKey), 404, "not_found")
    expectError(await api("POST", "/test-clocks", { frozen_time: "31.01.2026" }), 400, "invalid_request")
    expectError(await api("POST", "/test-clocks", { frozen_time: "1999-12-31T23:59:59Z" }), 400, "invalid_request")
    expectError(await api("POST", "/test-clocks", { frozen_time: "2026-01-31T07:00:00Z", extra: 1 }), 400, "invalid_request", "unknown field extra")
    expectError(await api("POST", `/test-clocks/${clock.id}/advance`, { frozen_time: "2026-01-31T07:00:00Z" }), 400, "invalid_request",
      "frozen_time must be later than the clock's frozen_time (2026-01-31T07:00:00.000Z)")

    // A one-off sandbox payment on the clock is created at the clock's time; a live one cannot be on a clock.
    const payment = await ok(api("POST", "/payments", { amount: "10", order_id: "on-clock", test_clock: clock.id }, { "x-test-mode": "true" }), 201)
    expect([payment.created_at, payment.expires_at, payment.test_clock]).toEqual(["2026-01-31T07:00:00.000Z", "2026-01-31T07:30:00.000Z", clock.id])
    expect(expectError(await api("POST", "/payments", { amount: "10", order_id: "live", test_clock: clock.id }), 400, "invalid_request").field).toBe("test_clock")
    const foreignClock = await ok(api("POST", "/test-clocks", { frozen_time: "2026-01-31T07:00:00Z" }, {}, other.apiKey), 201)
    expectError(await api("POST", "/payments", { amount: "10", order_id: "x", test: true, test_clock: foreignClock.id }), 400, "invalid_request",
      "test_clock: no test clock with this id on the terminal")
    // The advance expires it at 07:30 on the clock.
    await ok(api("POST", `/test-clocks/${clock.id}/advance`, { frozen_time: "2026-01-31T08:00:00Z" }))
    expect((await ok(api("GET", `/payments/${payment.id}`))).status).toBe("expired")

    // While an advance runs, another is 409 (the first holds the clock).
    await t.run(Effect.gen(function*() {
      const repo = yield* TestClockRepository
      const stored = Option.getOrThrow(yield* repo.get(clock.id))
      yield* repo.update({ ...stored, status: "advancing", targetTime: stored.frozenTime + 1, leaseUntil: Date.now() + 60_000, version: stored.version + 1 })
    }))
    expectError(await api("POST", `/test-clocks/${clock.id}/advance`, { frozen_time: "2026-02-01T00:00:00Z" }), 409, "test_clock_advancing", "test clock is advancing")
    const busy = shape("TestClock", await ok(api("GET", `/test-clocks/${clock.id}`))) as Record<string, unknown>
    expect([busy["status"], busy["target_frozen_time"]]).toEqual(["advancing", "2026-01-31T08:00:00.001Z"])

    // Upcoming and outcome programming: a live subscription has neither programming nor, before activation, charges to come.
    const live = await ok(api("POST", "/subscriptions", { terminal_id: merchant.terminal.id, plan_id: plans.ceilingMonthly.id, amount: "5" }, { "idempotency-key": "l" }), 201)
    expect(await ok(api("GET", `/subscriptions/${live.id}/upcoming`))).toEqual({ subscription_id: live.id, items: [] })
    expectError(await api("GET", `/subscriptions/${live.id}/upcoming?count=61`), 400, "invalid_request")
    expectError(await api("POST", `/subscriptions/${live.id}/sandbox/charge-outcomes`, { outcomes: ["failed"] }), 400, "invalid_request",
      "charge outcomes can be programmed for sandbox subscriptions only")
    expectError(await api("POST", `/subscriptions/${live.id}/sandbox/charge-outcomes`, { outcomes: ["maybe"] }), 400, "invalid_request")
  })
})
