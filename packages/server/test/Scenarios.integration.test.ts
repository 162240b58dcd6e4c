/**
 * The service's own clock, over HTTP, on PostgreSQL with the manual clock: callbacks and their
 * retries, expiry and late payment, monthly charges with clamped dates, review, max_cycles,
 * scheduled conversion and payouts. Due work runs through `POST /admin/v1/work/run`.
 */
import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Signature } from "@paydesk/core"
import { freshDatabase, pgTargets, type Receiver, serverWithReceiver, type StartedServer } from "./ServerHarness.js"
import { confirmOnPage, database } from "./ServerProcess.js"

for (const target of pgTargets()) describe(`on postgres (${target.name})`, () => {
  type Srv = StartedServer
  let srv: Srv
  let receiver: Receiver
  serverWithReceiver(async () => ({ DATABASE_URL: await freshDatabase(target) }), (s, r) => {
    srv = s
    receiver = r
  })

  const events = (paymentId?: string) =>
    receiver.requests.map((r) => ({ ...r, json: JSON.parse(r.body) })).filter((r) => paymentId === undefined || r.json.payment_id === paymentId)

  /** Runs due work at each given second after `start` (ISO). */
  const walk = async (start: string, seconds: ReadonlyArray<number>) => {
    for (const s of seconds) {
      await srv.setClock(new Date(Date.parse(start) + s * 1000).toISOString())
      await srv.work()
    }
  }

  describe("background work over HTTP (manual clock, PostgreSQL)", () => {
    it("a live payment paid through the acquirer emulator reaches the receiver, signed", async () => {
      await srv.setClock("2026-03-01T09:00:00.000Z")
      const m = await srv.merchant(receiver.url)
      const created = await m.api("POST", "/payments", { amount: "500.00", order_id: "live-1" })
      expect(created.status).toBe(201)
      const settled = await srv.admin("POST", `/acquirer/payments/${created.json.id}/outcome`, { outcome: "paid" })
      expect(settled.json.status).toBe("paid")
      // The operator API's report is snake_case, as the rest of the API (it was the core's camelCase).
      const report = await srv.work()
      expect(Object.keys(report).sort()).toEqual(["callbacks", "charges", "conversions", "expired_payments", "payouts", "settled_charges", "stops", "test_clocks"])
      expect(report).toMatchObject({ expired_payments: 0, charges: 0, payouts: 0 })
      const got = events(created.json.id)
      expect(got.map((e) => e.json.event_type)).toEqual(["payment.created", "payment.paid"])
      for (const e of got) {
        expect(e.headers["x-test-mode"]).toBeUndefined()
        const verdict = await Effect.runPromise(Signature.verify({
          secret: m.signingSecret, timestamp: String(e.headers["x-timestamp"]), body: e.body,
          signature: String(e.headers["x-signature"]), nowSeconds: Math.floor(srv.now() / 1000)
        }))
        expect(verdict).toEqual({ ok: true })
      }
      const balance = await m.api("GET", "/balance")
      expect(balance.json.available_usdt).toBe("5.263157")
    }, 60_000)

    it("a receiver failing 7 times then answering 200 gets 8 attempts at 30 s, 1, 2, 4, 8, 16, 32 min", async () => {
      const start = "2026-03-02T09:00:00.000Z"
      await srv.setClock(start)
      const m = await srv.merchant(receiver.url)
      receiver.answersFor = "payment.created"
      receiver.answers.push(500, 500, 503, 404, 500, 500, 500)
      const created = await m.api("POST", "/payments", { amount: "10", order_id: "retry-1", test: true })
      const offsets = [0, 30, 90, 210, 450, 930, 1890, 3810]
      await walk(start, [0, 29, ...offsets.slice(1).flatMap((s) => [s - 1, s])])
      const got = events(created.json.id).filter((e) => e.json.event_type === "payment.created")
      expect(got.map((e) => (e.at - Date.parse(start)) / 1000)).toEqual(offsets)
      const deliveries = await srv.admin("GET", `/deliveries?payment_id=${created.json.id}`)
      // The oldest delivery is the one of payment.created (the list is newest first).
      const delivery = deliveries.json.items.at(-1)
      expect([delivery.status, delivery.attempts]).toEqual(["delivered", 8])
      const detail = await srv.admin("GET", `/deliveries/${delivery.id}`)
      expect(detail.json.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 500, 503, 404, 500, 500, 500, 200])
      receiver.answersFor = null
    }, 120_000)

    it("a receiver that never answers gets exactly 8 attempts and the delivery is marked failed", async () => {
      const start = "2026-03-03T09:00:00.000Z"
      await srv.setClock(start)
      const m = await srv.merchant("http://127.0.0.1:9/unreachable")
      const created = await m.api("POST", "/payments", { amount: "10", order_id: "dead-1", test: true })
      await walk(start, [0, 30, 90, 210, 450, 930, 1890, 3810, 7200, 14400])
      const deliveries = await srv.admin("GET", `/deliveries?payment_id=${created.json.id}`)
      const createdDelivery = deliveries.json.items.at(-1)
      expect([createdDelivery.status, createdDelivery.attempts]).toEqual(["failed", 8])
    }, 120_000)

    it("an unpaid payment expires with payment.expired and a late payment sends payment.paid", async () => {
      const start = "2026-03-04T09:00:00.000Z"
      await srv.setClock(start)
      const m = await srv.merchant(receiver.url)
      const created = await m.api("POST", "/payments", { amount: "10", order_id: "late-1" })
      await walk(start, [0, 29 * 60, 30 * 60])
      expect((await m.api("GET", `/payments/${created.json.id}`)).json.status).toBe("expired")
      await srv.admin("POST", `/acquirer/payments/${created.json.id}/outcome`, { outcome: "paid" })
      await srv.work()
      expect(events(created.json.id).map((e) => e.json.event_type)).toEqual(["payment.created", "payment.expired", "payment.paid"])
    }, 60_000)

    it("a monthly subscription activated on 31 January is charged on 28 February, 31 March and 30 April Moscow time; unknown outcome -> review", async () => {
      await srv.setClock("2026-01-31T07:00:00.000Z")
      const m = await srv.merchant(receiver.url)
      const plan = await srv.admin("POST", "/plans", {
        terminal_ids: [m.terminalId], code: `month-${m.terminalId.slice(0, 8)}`, name: "Monthly", interval: "month",
        schedule: "calendar", cap_amount_rub: "4000", consent_text: "Согласен", policy_version: "1"
      })
      expect(plan.status).toBe(201)
      const created = await m.api("POST", "/subscriptions", { terminal_id: m.terminalId, plan_id: plan.json.id, amount: "1500" }, { "idempotency-key": "sub-1" })
      expect(created.status).toBe(201)
      const { confirmed, firstPaymentToken: firstToken } = await confirmOnPage(created.json.pay_url)
      // Consent alone charges nothing: pending once the payer pays (processing), enabled once paid.
      expect(confirmed.billing_status).toBe("consent_pending")
      const first = (await m.api("GET", "/payments?recurring=true")).json.items.find((p: { pay_url: string }) => p.pay_url.endsWith(firstToken!))
      expect((await srv.admin("POST", `/acquirer/payments/${first.id}/outcome`, { outcome: "processing" })).json.status).toBe("processing")
      expect((await m.api("GET", `/subscriptions/${created.json.id}`)).json.billing_status).toBe("pending")
      await srv.admin("POST", `/acquirer/payments/${first.id}/outcome`, { outcome: "paid" })
      const dates = ["2026-02-28", "2026-03-31", "2026-04-30"].map((d) => `${d}T10:00:00.000+03:00`)
      for (const date of dates) {
        await srv.setClock(new Date(Date.parse(date) - 1000).toISOString())
        await srv.work()
        await srv.setClock(new Date(Date.parse(date)).toISOString())
        await srv.work()
      }
      const charges = (await m.api("GET", `/subscriptions/${created.json.id}/charges`)).json
      expect(charges.map((c: { scheduled_at: string; status: string }) => [c.scheduled_at, c.status])).toEqual([
        ["2026-04-30T07:00:00.000Z", "payed"], ["2026-03-31T07:00:00.000Z", "payed"], ["2026-02-28T07:00:00.000Z", "payed"], [expect.any(String), "payed"]
      ])
      const paid = (await m.api("GET", "/payments?recurring=true")).json.items.filter((p: { status: string }) => p.status === "paid")
      expect(paid).toHaveLength(4)
      for (const p of paid) {
        expect(p.subscription_id).toBe(created.json.id)
        expect(events(p.id).map((e) => e.json.event_type)).toContain("payment.paid")
      }
      await srv.admin("POST", `/acquirer/subscriptions/${created.json.id}/charge-outcomes`, { outcomes: ["unknown"] })
      await srv.setClock("2026-05-31T07:00:00.000Z")
      await srv.work()
      const sub = (await m.api("GET", `/subscriptions/${created.json.id}`)).json
      expect([sub.provider_state, sub.billing_status, sub.next_charge_at]).toEqual(["active", "review", null])
      await srv.setClock("2026-07-31T07:00:00.000Z")
      await srv.work()
      expect((await m.api("GET", `/subscriptions/${created.json.id}/charges`)).json).toHaveLength(5)
      // The bank still does not know: resume is refused. Once it settles the charge (the operator's
      // emulator control), resume books it under the same key, charged once.
      const stillUnknown = await srv.admin("POST", `/subscriptions/${created.json.id}/resume`)
      expect([stillUnknown.status, stillUnknown.json.error.message]).toEqual([400, "the last charge is still unconfirmed by the acquirer"])
      const resolved = await srv.admin("POST", `/acquirer/subscriptions/${created.json.id}/unknown-charge`, { outcome: "paid" })
      expect(resolved.status).toBe(200)
      expect(resolved.json).toMatchObject({ subscription_id: created.json.id, outcome: "paid", idempotency_key: `sub:${created.json.id}:cycle:4:attempt:1` })
      // Settled once: the bank has no unknown answer left for it.
      const again = await srv.admin("POST", `/acquirer/subscriptions/${created.json.id}/unknown-charge`, { outcome: "failed" })
      expect([again.status, again.json.error.message]).toEqual([400, "the subscription has no open charge the bank answered unknown"])
      const resumed = await srv.admin("POST", `/subscriptions/${created.json.id}/resume`)
      expect(resumed.status).toBe(200)
      expect((await m.api("GET", `/subscriptions/${created.json.id}`)).json.billing_status).toBe("enabled")
      const charges5 = (await m.api("GET", `/subscriptions/${created.json.id}/charges`)).json
      expect(charges5.map((c: { status: string }) => c.status)).toEqual(["payed", "payed", "payed", "payed", "payed"])
      const db = database(srv.databaseUrl)
      try {
        expect(await db.query("SELECT outcome FROM emulator_charges WHERE idempotency_key = $1", [resolved.json.idempotency_key])).toEqual([{ outcome: "paid" }])
      } finally {
        await db.close()
      }
      // Stopped, so that the later tests' clock moves charge nothing of it.
      expect((await m.api("POST", `/subscriptions/${created.json.id}/stop`)).status).toBe(200)
    }, 120_000)

    it("a stop while the bank takes 3 s to answer a paid charge: the charge is booked paid with payment.paid, the subscription stays stopped", async () => {
      await srv.setClock("2026-08-31T07:00:00.000Z")
      const m = await srv.merchant(receiver.url)
      const plan = await srv.admin("POST", "/plans", {
        terminal_ids: [m.terminalId], code: `slow-${m.terminalId.slice(0, 8)}`, name: "Monthly", interval: "month",
        cap_amount_rub: "4000", consent_text: "Согласен", policy_version: "1"
      })
      // No schedule given: a ceiling plan counts calendar months.
      expect(plan.json.schedule).toBe("calendar")
      const created = await m.api("POST", "/subscriptions", { terminal_id: m.terminalId, plan_id: plan.json.id, amount: "700" }, { "idempotency-key": "slow-1" })
      const { firstPaymentToken } = await confirmOnPage(created.json.pay_url)
      const first = (await m.api("GET", "/payments?recurring=true")).json.items.find((p: { pay_url: string }) => p.pay_url.endsWith(firstPaymentToken))
      await srv.admin("POST", `/acquirer/payments/${first.id}/outcome`, { outcome: "paid" })
      const programmed = await srv.admin("POST", `/acquirer/subscriptions/${created.json.id}/charge-outcomes`, { outcomes: [{ outcome: "paid", delay_ms: 3000 }] })
      expect(programmed.status).toBe(200)
      // 30 September 10:00 Moscow time: the charge goes to the bank, which answers after 3 s.
      await srv.setClock("2026-09-30T07:00:00.000Z")
      const db = database(srv.databaseUrl)
      try {
        const working = srv.work()
        const deadline = Date.now() + 2500
        while ((await db.query("SELECT 1 FROM emulator_charges WHERE subscription_id = $1", [created.json.id])).length === 0) {
          if (Date.now() > deadline) throw new Error("the charge never reached the bank")
          await new Promise((ok) => setTimeout(ok, 25))
        }
        const stopped = await m.api("POST", `/subscriptions/${created.json.id}/stop`)
        expect([stopped.status, stopped.json]).toEqual([200, { ok: true }])
        const during = (await m.api("GET", `/subscriptions/${created.json.id}`)).json
        expect([during.provider_state, during.billing_status]).toEqual(["stop", "stopped"])
        const report = await working
        expect(report.charges).toBe(1)
      } finally {
        await db.close()
      }
      await srv.work()
      const sub = (await m.api("GET", `/subscriptions/${created.json.id}`)).json
      expect([sub.provider_state, sub.billing_status, sub.next_charge_at, sub.successful_cycles]).toEqual(["stop", "stopped", null, 2])
      const charges = (await m.api("GET", `/subscriptions/${created.json.id}/charges`)).json
      expect(charges.map((c: { cycle_number: number; status: string }) => [c.cycle_number, c.status])).toEqual([[1, "payed"], [0, "payed"]])
      const payment = (await m.api("GET", `/payments/${charges[0].payment_id}`)).json
      expect([payment.status, payment.subscription_id, payment.amount]).toEqual(["paid", created.json.id, "700.00"])
      expect(events(payment.id).map((e) => e.json.event_type)).toEqual(["payment.paid"])
      // 95.00 RUB/USDT: two payments of 700.00 credited.
      expect((await m.api("GET", "/balance")).json.available_usdt).toBe("14.736842")
    }, 60_000)

    it("max_cycles ends the subscription; scheduled conversion credits USDT at the rate of the conversion time", async () => {
      await srv.setClock("2026-09-01T09:00:00.000Z")
      const m = await srv.merchant(receiver.url)
      const plan = await srv.admin("POST", "/plans", {
        terminal_ids: [m.terminalId], code: `fixed-${m.terminalId.slice(0, 8)}`, name: "Three months", interval: "month",
        schedule: "fixed_days", payer_amount_rub: "990", merchant_amount_rub: "950", max_cycles: 3, consent_text: "Согласен", policy_version: "1"
      })
      expect((await m.api("PUT", `/terminals/${m.terminalId}`, { conversion_mode: "scheduled", conversion_time: "18:00" })).status).toBe(200)
      const created = await m.api("POST", "/subscriptions", { terminal_id: m.terminalId, plan_id: plan.json.id, payer_id: "u-1" }, { "idempotency-key": "sub-max" })
      const { firstPaymentToken: firstToken } = await confirmOnPage(created.json.pay_url)
      const first = (await m.api("GET", "/payments?recurring=true")).json.items.find((p: { pay_url: string }) => p.pay_url.endsWith(firstToken!))
      await srv.admin("POST", `/acquirer/payments/${first.id}/outcome`, { outcome: "paid" })
      for (const days of [30, 60, 90, 120]) {
        await srv.setClock(new Date(Date.parse("2026-09-01T09:00:00.000Z") + days * 86_400_000).toISOString())
        await srv.work()
      }
      const sub = (await m.api("GET", `/subscriptions/${created.json.id}`)).json
      expect([sub.provider_state, sub.billing_status, sub.successful_cycles, sub.next_charge_at]).toEqual(["stop", "stopped", 3, null])
      // Each 950.00 charge waited for the next 18:00 Moscow conversion at 95.00: 3 x 10 USDT.
      expect((await m.api("GET", "/balance")).json).toMatchObject({ available_usdt: "30.000000", pending_rub: "0.00" })
      await srv.setClock("2026-12-30T07:00:00.000Z")
      const payment = await m.api("POST", "/payments", { amount: "1000", order_id: "conv-1" })
      await srv.admin("POST", `/acquirer/payments/${payment.json.id}/outcome`, { outcome: "paid" })
      expect((await m.api("GET", "/balance")).json).toMatchObject({ available_usdt: "30.000000", pending_rub: "1000.00" })
      await srv.setClock("2026-12-30T14:00:00.000Z")
      expect((await srv.admin("PUT", "/rate", { rate: "100.00" })).status).toBe(200)
      await srv.work()
      expect((await m.api("GET", "/balance")).json).toMatchObject({ pending_rub: "1000.00" })
      await srv.setClock("2026-12-30T15:00:00.000Z")
      await srv.work()
      expect((await m.api("GET", "/balance")).json).toMatchObject({ available_usdt: "40.000000", pending_rub: "0.00" })
    }, 120_000)

    it("a charge whose order id the merchant's own payment took is booked under the next one (was: money taken, never booked, the subscription stuck)", async () => {
      await srv.setClock("2026-09-01T09:00:00.000Z")
      const m = await srv.merchant(receiver.url)
      const plan = await srv.admin("POST", "/plans", {
        terminal_ids: [m.terminalId], code: `squat-${m.terminalId.slice(0, 8)}`, name: "Monthly", interval: "month",
        schedule: "fixed_days", payer_amount_rub: "990", merchant_amount_rub: "950", consent_text: "Согласен", policy_version: "1"
      })
      const created = await m.api("POST", "/subscriptions", { terminal_id: m.terminalId, plan_id: plan.json.id, payer_id: "u-1" }, { "idempotency-key": "sub-squat" })
      const { firstPaymentToken: firstToken } = await confirmOnPage(created.json.pay_url)
      const first = (await m.api("GET", "/payments?recurring=true")).json.items.find((p: { pay_url: string }) => p.pay_url.endsWith(firstToken!))
      await srv.admin("POST", `/acquirer/payments/${first.id}/outcome`, { outcome: "paid" })
      // The first payment is the history's cycle 1: the first charge is cycle 2's.
      const squatted = await m.api("POST", "/payments", { amount: "1.00", order_id: `sub-${created.json.id}-c2` })
      // The first payment's credit, at the rate of the moment (an earlier test of the suite sets it).
      const firstUsdt = Number((await m.api("GET", "/balance")).json.available_usdt)
      expect(firstUsdt).toBeGreaterThan(0)
      expect(squatted.status).toBe(201)
      await srv.setClock(new Date(Date.parse("2026-09-01T09:00:00.000Z") + 30 * 86_400_000).toISOString())
      await srv.work()
      const sub = (await m.api("GET", `/subscriptions/${created.json.id}`)).json
      expect([sub.billing_status, sub.successful_cycles, sub.next_charge_at]).toEqual(["enabled", 2, "2026-10-31T09:00:00.000Z"])
      const charge = (await m.api("GET", `/subscriptions/${created.json.id}/charges`)).json[0]
      expect([charge.cycle_number, charge.status]).toEqual([2, "payed"])
      const booked = (await m.api("GET", `/payments/${charge.payment_id}`)).json
      expect([booked.order_id, booked.status, booked.subscription_id]).toEqual([`sub-${created.json.id}-c2-2`, "paid", created.json.id])
      expect(events(booked.id).map((e) => e.json.event_type)).toEqual(["payment.paid"])
      expect((await m.api("GET", `/payments/${squatted.json.id}`)).json).toMatchObject({ order_id: `sub-${created.json.id}-c2`, subscription_id: null })
      // The charge credited as much again (the merchant's unpaid payment nothing).
      expect(Number((await m.api("GET", "/balance")).json.available_usdt)).toBeCloseTo(2 * firstUsdt, 6)
    }, 120_000)

    it("an approved payout completes with payout.completed", async () => {
      await srv.setClock("2026-08-01T09:00:00.000Z")
      await srv.admin("PUT", "/rate", { rate: "95.00" })
      const m = await srv.merchant(receiver.url)
      const funding = await m.api("POST", "/payments", { amount: "9500", order_id: "fund" })
      await srv.admin("POST", `/acquirer/payments/${funding.json.id}/outcome`, { outcome: "paid" })
      const payout = await m.api("POST", "/payouts", { amount_usdt: "40", wallet_address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" })
      expect([payout.status, payout.json.status]).toEqual([200, "created"])
      expect((await m.api("GET", "/balance")).json).toMatchObject({ available_usdt: "60.000000", hold_usdt: "40.000000" })
      await srv.work()
      expect((await srv.admin("POST", `/payouts/${payout.json.id}/approve`)).status).toBe(200)
      await srv.work()
      const listed = (await m.api("GET", "/payouts")).json.items
      expect(listed[0].status).toBe("completed")
      expect((await m.api("GET", "/balance")).json).toMatchObject({ available_usdt: "60.000000", hold_usdt: "0.000000" })
      expect(receiver.requests.map((r) => JSON.parse(r.body)).filter((b) => b.event_type === "payout.completed" && b.payout_id === payout.json.id)).toHaveLength(1)
    }, 60_000)
  })
})
