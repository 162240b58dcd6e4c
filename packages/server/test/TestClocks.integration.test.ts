/**
 * Test clocks on the reference server: PostgreSQL, the system clock and the local engine running
 * its background passes every second, as deployed. A sandbox subscription on a clock from 31
 * January goes through three months, a programmed failure into review and a stop over HTTP, with
 * the API key that serves live payments, while a live subscription on the same terminal is
 * untouched; the upcoming preview matches the dates then charged. A deleted clock (the manual clock,
 * the engine off: passes through the operator API) is absent at once, and a lease later the
 * housekeeping of the passes deletes its payments, subscriptions, charges, events, deliveries and
 * attempts, then its row, in an order every foreign key allows; another clock's objects stay.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Signature } from "@paydesk/core"
import { freshDatabase, pgTargets, type Receiver, serverWithReceiver, type StartedServer, startReceiver, startServer } from "./ServerHarness.js"
import { confirmOnPage, database } from "./ServerProcess.js"

const at10 = (day: string) => new Date(`${day}T10:00:00+03:00`).toISOString()

for (const target of pgTargets()) describe(`test clocks on postgres (${target.name})`, () => {
  type Srv = Awaited<ReturnType<typeof startServer>>
  let srv: Srv
  let receiver: Receiver

  beforeAll(async () => {
    srv = await startServer({ DATABASE_URL: await freshDatabase(target), PAYDESK_CLOCK: "system", PAYDESK_ENGINE: "local", PAYDESK_WORK_INTERVAL_MS: "200" })
    receiver = await startReceiver(() => Date.now())
  }, 120_000)

  afterAll(async () => {
    await receiver?.close()
    await srv?.stop()
  })

  /** Waits (bounded) until `check` holds. */
  const eventually = async (check: () => boolean, what: string) => {
    for (let i = 0; i < 150 && !check(); i++) await new Promise((ok) => setTimeout(ok, 100))
    if (!check()) throw new Error(`timed out waiting for ${what}`)
  }

  it("a sandbox subscription on a clock: charged 28 Feb, 31 Mar, 30 Apr at 10:00 Moscow, a programmed failure into review, a stop; the live one untouched", async () => {
    const m = await srv.merchant(receiver.url)
    const plan = await srv.admin("POST", "/plans", {
      terminal_ids: [m.terminalId], code: `month-${m.terminalId.slice(0, 8)}`, name: "Monthly", interval: "month",
      schedule: "calendar", cap_amount_rub: "4000", consent_text: "Согласен", policy_version: "1"
    })
    expect(plan.status).toBe(201)
    const body = (extra: object) => ({ terminal_id: m.terminalId, plan_id: plan.json.id, ...extra })

    // A live subscription, paid through the acquirer emulator, on the wall clock.
    const live = await m.api("POST", "/subscriptions", body({ amount: "500" }), { "idempotency-key": "live" })
    const { firstPaymentToken: liveToken } = await confirmOnPage(live.json.pay_url)
    const liveFirst = (await m.api("GET", "/payments?recurring=true")).json.items.find((p: { pay_url: string }) => p.pay_url.endsWith(liveToken))
    expect((await srv.admin("POST", `/acquirer/payments/${liveFirst.id}/outcome`, { outcome: "paid" })).json.status).toBe("paid")
    const liveBefore = (await m.api("GET", `/subscriptions/${live.json.id}`)).json
    expect([liveBefore.billing_status, liveBefore.successful_cycles]).toEqual(["enabled", 1])

    // The clock and a sandbox subscription on it, consented and paid by simulation at the clock's time.
    const clock = await m.api("POST", "/test-clocks", { frozen_time: "2026-01-31T10:00:00+03:00" })
    expect([clock.status, clock.json.frozen_time]).toEqual([201, "2026-01-31T07:00:00.000Z"])
    const sub = await m.api("POST", "/subscriptions", body({ amount: "700", test_clock: clock.json.id }), { "idempotency-key": "sandbox", "x-test-mode": "true" })
    expect([sub.status, sub.json.environment, sub.json.test_clock, sub.json.created_at]).toEqual([201, "sandbox", clock.json.id, "2026-01-31T07:00:00.000Z"])
    const { firstPaymentToken } = await confirmOnPage(sub.json.pay_url)
    const firstPage = `${srv.base}/public/payments/${firstPaymentToken}`
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(await fetch(firstPage).then((r) => r.text()))![1]!
    const simulated = await srv.call("POST", `/public/payments/${firstPaymentToken}/simulate`, { body: { outcome: "paid", csrf_token: csrf } })
    expect(simulated.json.status).toBe("paid")
    const active = (await m.api("GET", `/subscriptions/${sub.json.id}`)).json
    expect([active.billing_status, active.activated_at, active.next_charge_at]).toEqual(["enabled", "2026-01-31T07:00:00.000Z", at10("2026-02-28")])
    // The background worker sends the callbacks due at the clock's time, stamped with it.
    await eventually(() => receiver.requests.filter((r) => r.headers["x-test-clock"] === clock.json.id).length >= 2, "the first payment's callbacks")

    const upcoming = await m.api("GET", `/subscriptions/${sub.json.id}/upcoming?count=3`)
    expect(upcoming.json.items.map((i: { scheduled_at_moscow: string }) => i.scheduled_at_moscow))
      .toEqual(["2026-02-28T10:00:00.000+03:00", "2026-03-31T10:00:00.000+03:00", "2026-04-30T10:00:00.000+03:00"])
    expect((await m.api("POST", `/subscriptions/${sub.json.id}/sandbox/charge-outcomes`, { outcomes: ["paid", "paid", "paid", "failed"] })).status).toBe(200)

    const advance = async (frozenTime: string) => {
      const answer = await m.api("POST", `/test-clocks/${clock.json.id}/advance`, { frozen_time: frozenTime })
      expect([200, 202], answer.text).toContain(answer.status)
      let state = answer.json
      for (let i = 0; i < 100 && state.status !== "ready"; i++) {
        await new Promise((ok) => setTimeout(ok, 200))
        state = (await m.api("GET", `/test-clocks/${clock.json.id}`)).json
      }
      expect([state.status, state.frozen_time]).toEqual(["ready", new Date(frozenTime).toISOString()])
    }
    await advance("2026-05-01T00:00:00+03:00")
    const charges = (await m.api("GET", `/subscriptions/${sub.json.id}/charges`)).json.reverse()
    expect(charges.map((c: { cycle_number: number; status: string; actual_at: string }) => [c.cycle_number, c.status, c.actual_at])).toEqual([
      [0, "payed", "2026-01-31T07:00:00.000Z"], [1, "payed", at10("2026-02-28")], [2, "payed", at10("2026-03-31")], [3, "payed", at10("2026-04-30")]
    ])
    expect(charges.slice(1).map((c: { scheduled_at: string }) => c.scheduled_at)).toEqual(upcoming.json.items.map((i: { scheduled_at: string }) => i.scheduled_at))

    await advance("2026-06-10T12:00:00+03:00")
    const review = (await m.api("GET", `/subscriptions/${sub.json.id}`)).json
    expect([review.billing_status, review.successful_cycles]).toEqual(["review", 4])
    expect((await m.api("POST", `/subscriptions/${sub.json.id}/stop`)).json).toEqual({ ok: true })
    const stopped = (await m.api("GET", `/subscriptions/${sub.json.id}`)).json
    expect([stopped.provider_state, stopped.billing_status, stopped.stopped_at]).toEqual(["stop", "stopped", "2026-06-10T09:00:00.000Z"])

    // Another pass of the wall clock's work changes nothing on the clock.
    await srv.work()
    expect((await m.api("GET", `/subscriptions/${sub.json.id}/charges`)).json.length).toBe(5)
    // The callbacks of the clock: the clock's time in X-Test-Clock-Time, X-Test-Clock, signed as any over
    // the wall time of sending (X-Timestamp), which the receiver's own clock accepts.
    const onClock = receiver.requests.filter((r) => r.headers["x-test-clock"] === clock.json.id)
    expect(onClock.map((r) => [JSON.parse(r.body).event_type, new Date(Number(r.headers["x-test-clock-time"]) * 1000).toISOString()])).toEqual([
      ["payment.created", "2026-01-31T07:00:00.000Z"], ["payment.paid", "2026-01-31T07:00:00.000Z"],
      ["payment.paid", at10("2026-02-28")], ["payment.paid", at10("2026-03-31")], ["payment.paid", at10("2026-04-30")]
    ])
    for (const r of onClock) {
      expect(r.headers["x-test-mode"]).toBe("true")
      const verdict = await Effect.runPromise(Signature.verify({
        secret: m.signingSecret, timestamp: String(r.headers["x-timestamp"]), body: r.body,
        signature: String(r.headers["x-signature"])
      }))
      expect(verdict).toEqual({ ok: true })
    }
    // The live subscription is as it was.
    const liveAfter = (await m.api("GET", `/subscriptions/${live.json.id}`)).json
    expect([liveAfter.billing_status, liveAfter.successful_cycles, liveAfter.next_charge_at]).toEqual(["enabled", 1, liveBefore.next_charge_at])
  }, 120_000)

  /**
   * `count` clocks of a merchant of their own, each with a sandbox payment whose callback hangs until
   * its timeout (10 s); answers once the first hangs. The receiver is the caller's to close.
   */
  const stuckClocks = async (count: number) => {
    const slow = await startReceiver(() => Date.now())
    slow.answers.push(...Array.from({ length: 2 * count }, () => "hang" as const))
    const stuck = await srv.merchant(slow.url)
    for (let i = 0; i < count; i++) {
      const clock = await stuck.api("POST", "/test-clocks", { frozen_time: "2026-06-01T10:00:00+03:00" })
      expect(clock.status, clock.text).toBe(201)
      const payment = await stuck.api("POST", "/payments", { amount: "10", order_id: `stuck-${i}`, test: true, test_clock: clock.json.id })
      expect(payment.status, payment.text).toBe(201)
    }
    await eventually(() => slow.requests.length >= 1, "the stuck clocks' callbacks to hang")
    return slow
  }

  it("one sandbox's clocks whose endpoint does not answer hold up another merchant's clock for one run at most (a run's clocks side by side, one place per terminal first)", async () => {
    // More than a run's 4 places: before, the other merchant's clock waited for every one of them.
    const slow = await stuckClocks(8)
    try {
      // Another merchant's clock, with a payment whose payment.created its loop sends.
      const m = await srv.merchant(receiver.url)
      const clock = await m.api("POST", "/test-clocks", { frozen_time: "2026-06-01T10:00:00+03:00" })
      const createdAt = Date.now()
      expect((await m.api("POST", "/payments", { amount: "10", order_id: "beside-stuck", test: true, test_clock: clock.json.id })).status).toBe(201)
      const arrived = () => receiver.requests.find((r) => r.headers["x-test-clock"] === clock.json.id)
      for (let i = 0; i < 300 && arrived() === undefined; i++) await new Promise((ok) => setTimeout(ok, 100))
      expect(arrived(), "the other merchant's clock callback").toBeDefined()
      // The stuck clocks of the run in progress end together (10 s, their callbacks' timeout), then
      // this clock's run, beside 3 more of them: it was 10 s for each stuck clock, one after another.
      expect(arrived()!.at - createdAt).toBeLessThan(20_000)
    } finally {
      await slow.close()
    }
  }, 90_000)

  it("a sandbox's clocks whose endpoint does not answer hold up no live callback: the local engine works test clocks in a loop of its own", async () => {
    const slow = await stuckClocks(4)
    try {

      // A live payment paid meanwhile: its payment.paid is sent by a pass of the live loop.
      const m = await srv.merchant(receiver.url)
      const payment = await m.api("POST", "/payments", { amount: "100", order_id: "live-beside-slow-clocks" })
      expect(payment.status, payment.text).toBe(201)
      const paidAt = Date.now()
      expect((await srv.admin("POST", `/acquirer/payments/${payment.json.id}/outcome`, { outcome: "paid" })).json.status).toBe("paid")
      const delivered = () => receiver.requests.find((r) => r.body.includes(`"payment_id":"${payment.json.id}"`) && r.body.includes(`"event_type":"payment.paid"`))
      await eventually(() => delivered() !== undefined, "the live payment.paid")
      // Before, the live loop worked the clocks: it waited for their callbacks, 10 s each, one after another.
      expect(delivered()!.at - paidAt).toBeLessThan(5_000)
      // The clocks' callbacks were attempted meanwhile, in their own loop.
      expect(slow.requests.length).toBeGreaterThanOrEqual(1)
    } finally {
      await slow.close()
    }
  }, 90_000)
})

for (const target of pgTargets()) describe(`deleting a test clock on postgres (${target.name})`, () => {
  let srv: StartedServer
  let receiver: Receiver
  serverWithReceiver(async () => ({ DATABASE_URL: await freshDatabase(target) }), (s, r) => {
    srv = s
    receiver = r
  })

  it("DELETE answers { id, deleted: true }; a lease later the passes purge the clock's payments, subscription, charges, events, deliveries and attempts, then the clock; another clock and a payment on no clock stay", async () => {
    const start = Date.parse("2027-01-01T00:00:00.000Z")
    await srv.setClock(new Date(start).toISOString())
    const m = await srv.merchant(receiver.url)
    const ok = async (answer: Promise<{ status: number; text: string; json: any }>, status = 200) => {
      const got = await answer
      expect(got.status, got.text).toBe(status)
      return got.json
    }
    const plan = await ok(srv.admin("POST", "/plans", {
      terminal_ids: [m.terminalId], code: `del-${m.terminalId.slice(0, 8)}`, name: "Monthly", interval: "month",
      schedule: "calendar", cap_amount_rub: "4000", consent_text: "Согласен", policy_version: "1"
    }), 201)
    // Clocks within the events API's 30 days of the wall clock (an event on a clock carries the clock's time).
    const doomed = await ok(m.api("POST", "/test-clocks", { frozen_time: "2026-12-10T10:00:00+03:00" }), 201)
    const kept = await ok(m.api("POST", "/test-clocks", { frozen_time: "2026-12-10T10:00:00+03:00" }), 201)
    expect(doomed.deletes_after).toBe("2027-01-31T00:00:00.000Z")

    // On the doomed clock: a payment paid by simulation, and a subscription charged a month on.
    const payment = await ok(m.api("POST", "/payments", { amount: "10", order_id: "doomed-1", test: true, test_clock: doomed.id }), 201)
    await ok(m.api("POST", `/payments/${payment.id}/simulate`, { outcome: "paid" }))
    const sub = await ok(m.api("POST", "/subscriptions", { terminal_id: m.terminalId, plan_id: plan.id, amount: "700", test_clock: doomed.id },
      { "idempotency-key": "doomed-sub", "x-test-mode": "true" }), 201)
    const { firstPaymentToken } = await confirmOnPage(sub.pay_url)
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(await fetch(`${srv.base}/public/payments/${firstPaymentToken}`).then((r) => r.text()))![1]!
    expect((await ok(srv.call("POST", `/public/payments/${firstPaymentToken}/simulate`, { body: { outcome: "paid", csrf_token: csrf } }))).status).toBe("paid")
    expect((await ok(m.api("POST", `/test-clocks/${doomed.id}/advance`, { frozen_time: "2027-01-11T00:00:00Z" }))).status).toBe("ready")
    const charges = await ok(m.api("GET", `/subscriptions/${sub.id}/charges`)) as Array<{ payment_id: string; status: string }>
    expect(charges.map((c) => c.status)).toEqual(["payed", "payed"])
    // On the kept clock and on no clock: a sandbox payment each.
    const onKept = await ok(m.api("POST", "/payments", { amount: "11", order_id: "kept-1", test: true, test_clock: kept.id }), 201)
    const onNone = await ok(m.api("POST", "/payments", { amount: "12", order_id: "none-1", test: true }), 201)
    await ok(m.api("POST", `/payments/${onNone.id}/simulate`, { outcome: "paid" }))
    await srv.work()
    const eventsOf = async (id: string) => (await ok(m.api("GET", `/events?environment=sandbox&object_id=${id}`))).items.map((e: { id: string }) => e.id) as Array<string>
    const doomedPayments = [payment.id, ...charges.map((c) => `pay_${c.payment_id}`)]
    const doomedEvents = (await Promise.all(doomedPayments.map(eventsOf))).flat()
    const keptEvents = [...(await eventsOf(onKept.id)), ...(await eventsOf(onNone.id))]
    expect([doomedEvents.length >= 4, keptEvents.length]).toEqual([true, 3])

    const db = database(srv.databaseUrl)
    /** The doomed clock's rows per table, and the clock's own row. */
    const rows = async (clock: string) => {
      const [counts] = await db.query<Record<string, number>>(`SELECT
        (SELECT count(*)::int FROM test_clocks WHERE id = $1) AS clocks,
        (SELECT count(*)::int FROM payments WHERE test_clock_id = $1) AS payments,
        (SELECT count(*)::int FROM subscriptions WHERE test_clock_id = $1) AS subscriptions,
        (SELECT count(*)::int FROM charges c JOIN subscriptions s ON s.id = c.subscription_id WHERE s.test_clock_id = $1) AS charges,
        (SELECT count(*)::int FROM outbox_events WHERE test_clock_id = $1) AS events,
        (SELECT count(*)::int FROM deliveries d JOIN outbox_events e ON e.id = d.event_id WHERE e.test_clock_id = $1) AS deliveries,
        (SELECT count(*)::int FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id JOIN outbox_events e ON e.id = d.event_id
          WHERE e.test_clock_id = $1) AS attempts`, [clock])
      return counts!
    }
    // The events feed (paydesk listen) with its cursor on the doomed clock's last event.
    const feedAll = (await ok(m.api("GET", "/events/feed?limit=100"))).items as Array<{ id: string; cursor: string }>
    const onDoomed = feedAll.filter((e) => doomedEvents.includes(e.id)).at(-1)!
    const feedAfter = feedAll.slice(feedAll.indexOf(onDoomed) + 1).map((e) => e.id)
    try {
      const before = await rows(doomed.id)
      expect(before).toMatchObject({ clocks: 1, payments: 3, subscriptions: 1, charges: 2, events: doomedEvents.length, deliveries: doomedEvents.length })
      expect(before["attempts"]).toBeGreaterThanOrEqual(doomedEvents.length)
      const keptBefore = await rows(kept.id)

      expect(await ok(m.api("DELETE", `/test-clocks/${doomed.id}`))).toEqual({ id: doomed.id, deleted: true })
      expect((await m.api("GET", `/test-clocks/${doomed.id}`)).status).toBe(404)
      expect((await ok(m.api("GET", "/test-clocks"))).items.map((c: { id: string }) => c.id)).toEqual([kept.id])
      expect((await m.api("POST", `/payments/${payment.id}/simulate`, { outcome: "failed" })).json.error.message).toBe("test clock not found")
      // Within the lease the passes leave its rows (only the clock's deleted_at is set).
      await srv.work()
      expect(await rows(doomed.id)).toEqual(before)

      // A lease later each pass deletes a table's worth of its rows, children first; the clock's row last.
      await srv.setClock(new Date(start + 61_000).toISOString())
      for (let pass = 0; pass < 10 && (await rows(doomed.id))["clocks"] === 1; pass++) await srv.work()
      expect(await rows(doomed.id)).toEqual({ clocks: 0, payments: 0, subscriptions: 0, charges: 0, events: 0, deliveries: 0, attempts: 0 })
      for (const id of doomedPayments) expect([id, (await m.api("GET", `/payments/${id}`)).status]).toEqual([id, 404])
      expect((await m.api("GET", `/subscriptions/${sub.id}`)).status).toBe(404)
      for (const id of doomedEvents) expect([id, (await m.api("GET", `/events/${id}`)).status]).toEqual([id, 404])
      // The other clock's rows, its payment and the payment on no clock stay.
      expect(await rows(kept.id)).toEqual(keptBefore)
      expect((await m.api("GET", `/test-clocks/${kept.id}`)).status).toBe(200)
      expect([(await m.api("GET", `/payments/${onKept.id}`)).status, (await m.api("GET", `/payments/${onNone.id}`)).status]).toEqual([200, 200])
      for (const id of keptEvents) expect([id, (await m.api("GET", `/events/${id}`)).status]).toEqual([id, 200])
      // The feed's cursor outlived its event: the same events after it, without the doomed ones, then a new one.
      const read = await ok(m.api("GET", `/events/feed?after=${onDoomed.cursor}`))
      expect(read.items.map((e: { id: string }) => e.id)).toEqual(feedAfter.filter((id) => !doomedEvents.includes(id)))
      const later = await ok(m.api("POST", "/payments", { amount: "13", order_id: "none-2", test: true }), 201)
      const next = await ok(m.api("GET", `/events/feed?after=${read.next_after}`))
      expect(next.items.map((e: { body: string }) => [JSON.parse(e.body).event_type, JSON.parse(e.body).payment_id])).toEqual([["payment.created", later.id]])
    } finally {
      await db.close()
    }
  }, 120_000)
})
