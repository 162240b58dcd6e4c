import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Clock, Effect, Layer, ManagedRuntime, Option } from "effect"
import { Operator, type Runner, Signature, TestClockRepository, Work } from "@paydesk/core"
import { Kit, ManualClock, MemoryDatabase, RecordingCallbackTransport } from "@paydesk/testkit"
import * as App from "../src/App.js"
import * as OpenApi from "../src/OpenApi.js"
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

const api = (method: "GET" | "POST" | "DELETE", url: string, body?: object, headers: Record<string, string> = {}, apiKey = merchant.apiKey) =>
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
    for (const name of ["a\u0007b", "a\u0085b", "a\u2028b"]) {
      expectError(await api("POST", "/test-clocks", { frozen_time: "2026-01-31T07:00:00Z", name }), 400, "invalid_request", "name must be at most 128 characters without control characters")
    }
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

describe("MerchantApi test clocks: DELETE /test-clocks/{id}", () => {
  const del = (id: string, apiKey = merchant.apiKey) => api("DELETE", `/test-clocks/${id}`, undefined, {}, apiKey)

  it("answers 200 { id, deleted: true }; the clock is then absent: GET, advance and a second DELETE 404, the list leaves it out, a payment naming it 400, a simulate of its payment 404", async () => {
    const doomed = await ok(api("POST", "/test-clocks", { frozen_time: "2026-01-31T07:00:00Z", name: "doomed" }), 201)
    const kept = await ok(api("POST", "/test-clocks", { frozen_time: "2026-01-31T07:00:00Z", name: "kept" }), 201)
    const payment = await ok(api("POST", "/payments", { amount: "10", order_id: "on-doomed", test: true, test_clock: doomed.id }), 201)
    // Another terminal's key: 404 as for a read, and the clock stays.
    const other = await t.merchant()
    expectError(await del(doomed.id, other.apiKey), 404, "not_found", "test clock not found")
    expect((await ok(api("GET", `/test-clocks/${doomed.id}`))).id).toBe(doomed.id)

    const deleted = await del(doomed.id)
    expect([deleted.statusCode, json(deleted)], deleted.body).toEqual([200, { id: doomed.id, deleted: true }])
    expect(shape("DeletedTestClock", json(deleted))).toEqual({ id: doomed.id, deleted: true })

    expectError(await api("GET", `/test-clocks/${doomed.id}`), 404, "not_found", "test clock not found")
    const page = shape("TestClockPage", await ok(api("GET", "/test-clocks"))) as { items: Array<{ id: string }>; total: number }
    expect([page.items.map((c) => c.id), page.total]).toEqual([[kept.id], 1])
    expectError(await api("POST", `/test-clocks/${doomed.id}/advance`, { frozen_time: "2026-02-01T00:00:00Z" }), 404, "not_found", "test clock not found")
    expectError(await del(doomed.id), 404, "not_found", "test clock not found")
    // Its objects: a creation naming it is refused as for an unknown clock, an action on them is 404.
    const refused = expectError(await api("POST", "/payments", { amount: "10", order_id: "after-delete", test: true, test_clock: doomed.id }), 400, "invalid_request",
      "test_clock: no test clock with this id on the terminal")
    expect(refused.field).toBe("test_clock")
    expectError(await api("POST", `/payments/${payment.id}/simulate`, { outcome: "paid" }), 404, "not_found", "test clock not found")
    // Until the housekeeping purges it (a lease later, see below), the payment is still read as it was.
    expect((await ok(api("GET", `/payments/${payment.id}`))).test_clock).toBe(doomed.id)
    // The other clock is untouched.
    expect((shape("TestClock", await ok(api("GET", `/test-clocks/${kept.id}`))) as Record<string, unknown>)["status"]).toBe("ready")
  })

  it("needs write access as advance does (a disabled terminal: 400 terminal is unavailable), is 409 while the clock advances, and the account owner's session may delete it", async () => {
    const clock = await ok(api("POST", "/test-clocks", { frozen_time: "2026-01-31T07:00:00Z" }), 201)
    await t.run(Operator.setTerminalStatus(merchant.terminal.id, "disabled"))
    expectError(await api("POST", `/test-clocks/${clock.id}/advance`, { frozen_time: "2026-02-01T00:00:00Z" }), 400, "terminal_unavailable", "terminal is unavailable")
    expectError(await del(clock.id), 400, "terminal_unavailable", "terminal is unavailable")
    // Still readable, and still there.
    expect((await ok(api("GET", `/test-clocks/${clock.id}`))).id).toBe(clock.id)
    await t.run(Operator.setTerminalStatus(merchant.terminal.id, "active"))

    // While an advance holds it (the state an advance whose budget ran out leaves), DELETE is 409 and the clock stays.
    await t.run(Effect.gen(function*() {
      const repo = yield* TestClockRepository
      const stored = Option.getOrThrow(yield* repo.get(clock.id))
      yield* repo.update({ ...stored, status: "advancing", targetTime: stored.frozenTime + 1, leaseUntil: Date.now() + 60_000, version: stored.version + 1 })
    }))
    expectError(await del(clock.id), 409, "test_clock_advancing", "test clock is advancing")
    expect((await ok(api("GET", `/test-clocks/${clock.id}`))).status).toBe("advancing")

    // The account owner's dashboard session deletes a ready clock of the account's terminal.
    const ready = await ok(api("POST", "/test-clocks", { frozen_time: "2026-01-31T07:00:00Z" }), 201)
    const login = await ok(t.app.inject({ method: "POST", url: "/api/v1/auth/login", payload: { email: merchant.ownerEmail, password: Kit.ownerPassword } }))
    const byOwner = await t.app.inject({ method: "DELETE", url: `/api/v1/test-clocks/${ready.id}`, headers: { authorization: `Bearer ${login.access_token}` } })
    expect([byOwner.statusCode, json(byOwner)], byOwner.body).toEqual([200, { id: ready.id, deleted: true }])
    expectError(await api("GET", `/test-clocks/${ready.id}`), 404, "not_found")
  })

  it("takes no query parameter and no body but {} (as a POST that declares none; a GET's body is never read), and is documented", async () => {
    const clock = await ok(api("POST", "/test-clocks", { frozen_time: "2026-01-31T07:00:00Z" }), 201)
    const query = expectError(await api("DELETE", `/test-clocks/${clock.id}?force=true`), 400, "invalid_request", "unknown query parameter force")
    expect(query.field).toBe("force")
    const withBody = (payload: string) =>
      t.app.inject({ method: "DELETE", url: `/api/v1/test-clocks/${clock.id}`, headers: keyHeaders(merchant.apiKey, { "content-type": "application/json" }), payload })
    expect(expectError(await withBody(JSON.stringify({ force: true })), 400, "invalid_request", "unknown field force").field).toBe("force")
    expectError(await withBody("[1]"), 400, "invalid_json_body")
    expectError(await withBody("{"), 400, "invalid_json_body")
    // Nothing was deleted by the refused requests.
    expect((await ok(api("GET", `/test-clocks/${clock.id}`))).id).toBe(clock.id)
    // `{}`, which many clients send with every write, is no body.
    expect(await ok(withBody("{}"))).toEqual({ id: clock.id, deleted: true })

    const doc = (OpenApi.make().paths as Record<string, Record<string, { operationId: string; summary: string; responses: Record<string, unknown> }>>)["/api/v1/test-clocks/{testClockID}"]!
    expect([doc["get"]!.operationId, doc["delete"]!.operationId, doc["delete"]!.summary]).toEqual(["getTestClock", "deleteTestClock", "Delete a test clock"])
    expect(Object.keys(doc["delete"]!.responses).toSorted()).toEqual(["200", "400", "401", "403", "404", "408", "409", "413", "414", "415", "417", "431"])
  })

  it("the housekeeping removes a deleted clock's payments, subscriptions, charges and events once a lease has passed; another clock's and a payment on no clock stay; a clock past its deletes_after is deleted too", async () => {
    const start = Date.parse("2026-03-01T09:00:00.000Z")
    const manual = await Effect.runPromise(ManualClock.make(start))
    const runtime = ManagedRuntime.make(Layer.merge(Kit.layer, Layer.succeed(Clock.Clock)(manual.clock)))
    const app = await App.build({ runtime, publicUrl, adminToken, checkResponses: true })
    const run = <A, E>(effect: Effect.Effect<A, E, Kit.Services>) => runtime.runPromise(effect)
    const setWall = (ms: number) => Effect.runPromise(manual.set(ms))
    try {
      const owner = await run(Kit.provisionMerchant({ callbackUrl: "https://shop.example/cb" }))
      const ownerPlans = await run(Kit.provisionPlans(owner.terminal.id))
      const call = (method: "GET" | "POST" | "DELETE", url: string, body?: object, headers: Record<string, string> = {}) =>
        app.inject({ method, url: `/api/v1${url}`, headers: keyHeaders(owner.apiKey, headers), ...(body === undefined ? {} : { payload: body }) })
      const page = async (path: string) => /name="csrf_token" value="([^"]*)"/.exec((await app.inject({ method: "GET", url: path })).body)![1]!
      const status = async (url: string) => (await call("GET", url)).statusCode
      const eventsOf = async (objectId: string) =>
        (await ok(call("GET", `/events?environment=sandbox&object_id=${objectId}`))).items.map((e: { id: string }) => e.id) as Array<string>

      const doomed = await ok(call("POST", "/test-clocks", { frozen_time: "2026-01-31T10:00:00+03:00" }), 201)
      const kept = await ok(call("POST", "/test-clocks", { frozen_time: "2026-01-31T10:00:00+03:00" }), 201)
      // Kept for the event retention (30 days) from its creation on the wall clock.
      expect([doomed.created_at, doomed.deletes_after]).toEqual(["2026-03-01T09:00:00.000Z", "2026-03-31T09:00:00.000Z"])

      // On the doomed clock: a payment paid by simulation, and a subscription charged once a month on.
      const payment = await ok(call("POST", "/payments", { amount: "10", order_id: "doomed-1", test: true, test_clock: doomed.id }), 201)
      await ok(call("POST", `/payments/${payment.id}/simulate`, { outcome: "paid" }))
      const sub = await ok(call("POST", "/subscriptions", {
        terminal_id: owner.terminal.id, plan_id: ownerPlans.ceilingMonthly.id, amount: "700", test: true, test_clock: doomed.id
      }, { "idempotency-key": "doomed-sub" }), 201)
      const subPage = pathOf(sub.pay_url)
      const confirmed = await ok(app.inject({ method: "POST", url: `${subPage}/confirm`, payload: { csrf_token: await page(subPage) } }))
      const firstPage = pathOf(confirmed.first_payment_url)
      await ok(app.inject({ method: "POST", url: `${firstPage}/simulate`, payload: { outcome: "paid", csrf_token: await page(firstPage) } }))
      expect((await ok(call("POST", `/test-clocks/${doomed.id}/advance`, { frozen_time: "2026-03-01T00:00:00Z" }))).status).toBe("ready")
      const charges = await ok(call("GET", `/subscriptions/${sub.id}/charges`)) as Array<{ payment_id: string; status: string }>
      expect(charges.map((c) => c.status)).toEqual(["payed", "payed"])
      // On the kept clock and on no clock: one sandbox payment each.
      const onKept = await ok(call("POST", "/payments", { amount: "11", order_id: "kept-1", test: true, test_clock: kept.id }), 201)
      const onNone = await ok(call("POST", "/payments", { amount: "12", order_id: "none-1", test: true }), 201)
      await ok(call("POST", `/payments/${onNone.id}/simulate`, { outcome: "paid" }))
      await run(Work.drain())
      const doomedPayments = [payment.id, ...charges.map((c) => `pay_${c.payment_id}`)]
      const doomedEvents = (await Promise.all(doomedPayments.map(eventsOf))).flat()
      const keptEvents = [...(await eventsOf(onKept.id)), ...(await eventsOf(onNone.id))]
      expect(doomedEvents.length).toBeGreaterThanOrEqual(4)
      expect(keptEvents.length).toBe(3)
      // Delivered: the purge takes the deliveries and their attempts too.
      const recorded = await run(Effect.map(RecordingCallbackTransport.RecordingCallbackTransport, (r) => r.requests))
      expect(recorded.filter((r) => r.headers["x-test-clock"] === doomed.id).length).toBeGreaterThanOrEqual(doomedEvents.length)

      expect(await ok(call("DELETE", `/test-clocks/${doomed.id}`))).toEqual({ id: doomed.id, deleted: true })
      // Within the lease nothing of it is purged (an action begun before the deletion may still be running).
      await setWall(start + 59_000)
      expect((await run(Work.housekeeping())).testClocks).toBe(0)
      expect(await status(`/payments/${payment.id}`)).toBe(200)

      // A lease after the deletion, one pass deletes it all, a table's batch a call, then the clock: the events with their
      // deliveries and attempts (one each here), the charges, the payments (the first, the charge's and the one-off), the subscription.
      await setWall(start + 60_000)
      const passes: Array<number> = []
      for (let pass = 0; pass < 20; pass++) {
        const removed = (await run(Work.housekeeping())).testClocks
        if (removed === 0) break
        passes.push(removed)
      }
      expect(passes).toEqual([doomedEvents.length * 3 + 2 + 3 + 1 + 1])
      for (const id of doomedPayments) expect([id, await status(`/payments/${id}`)]).toEqual([id, 404])
      expect(await status(`/subscriptions/${sub.id}`)).toBe(404)
      expect(await status(`/subscriptions/${sub.id}/charges`)).toBe(404)
      for (const id of doomedEvents) expect([id, await status(`/events/${id}`)]).toEqual([id, 404])
      expect(await status(`/test-clocks/${doomed.id}`)).toBe(404)
      const tables = await run(Effect.map(MemoryDatabase.MemoryDatabase, (db) => db.tables))
      expect([tables.testClocks.has(doomed.id), [...tables.deliveries.values()].some((d) => d.testClockId === doomed.id)]).toEqual([false, false])
      // The other clock, its payment, the payment on no clock and their events stay.
      expect(await status(`/test-clocks/${kept.id}`)).toBe(200)
      expect([await status(`/payments/${onKept.id}`), await status(`/payments/${onNone.id}`)]).toEqual([200, 200])
      for (const id of keptEvents) expect([id, await status(`/events/${id}`)]).toEqual([id, 200])

      // At its deletes_after the retention deletes the kept clock the same way: absent at once, its objects a lease later.
      await setWall(Date.parse(kept.deletes_after) - 1)
      await run(Work.housekeeping())
      expect(await status(`/test-clocks/${kept.id}`)).toBe(200)
      await setWall(Date.parse(kept.deletes_after))
      await run(Work.housekeeping())
      expect(await status(`/test-clocks/${kept.id}`)).toBe(404)
      await setWall(Date.parse(kept.deletes_after) + 60_000)
      for (let pass = 0; pass < 20 && (await run(Work.housekeeping())).testClocks > 0; pass++);
      expect([await status(`/payments/${onKept.id}`), await status(`/payments/${onNone.id}`)]).toEqual([404, 200])
    } finally {
      await app.close()
      await runtime.dispose()
    }
  })
})
