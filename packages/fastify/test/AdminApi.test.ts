import { afterEach, describe, expect, it } from "vitest"
import { Clock, Effect, Layer, ManagedRuntime, Option } from "effect"
import { Auth, Payments, Payouts, RateSource, Subscriptions, TestClocks } from "@paydesk/core"
import type { Payment } from "@paydesk/core"
import { AcquirerEmulator, Kit, ManualClock, MemoryRateSource, RecordingCallbackTransport } from "@paydesk/testkit"
import * as App from "../src/App.js"
import { adminToken, json, make, publicUrl, type TestApp } from "./TestApp.js"

const rateControl = Effect.gen(function*() {
  return yield* MemoryRateSource.MemoryRateSource
})
const rateSource = Effect.gen(function*() {
  return yield* RateSource
})
const emulator = Effect.gen(function*() {
  return yield* AcquirerEmulator.AcquirerEmulator
})
const recorder = Effect.gen(function*() {
  return yield* RecordingCallbackTransport.RecordingCallbackTransport
})

/** The app on the kit with a manual clock and every operator hook wired to the kit. */
const makeOperated = async (start: number) => {
  const manual = await Effect.runPromise(ManualClock.make(start))
  const runtime = ManagedRuntime.make(Layer.merge(Kit.layer, Layer.succeed(Clock.Clock)(manual.clock)))
  const run = <A, E>(effect: Effect.Effect<A, E, Kit.Services>) => runtime.runPromise(effect)
  const calls: Array<string> = []
  const app = await App.build({
    runtime,
    publicUrl,
    adminToken,
    operator: {
      setRate: (rate) => run(Effect.flatMap(rateControl, (s) => s.set(rate, start))),
      setClock: (now) => Effect.runPromise(manual.set(now)),
      programCharges: async (subscriptionId, outcomes) => {
        calls.push(`${subscriptionId}:${outcomes.map((o) => o.delayMs === 0 ? o.outcome : `${o.outcome}+${o.delayMs}ms`).join(",")}`)
        await run(Effect.flatMap(emulator, (e) => e.programCharges(subscriptionId, outcomes)))
      }
    }
  })
  return {
    app,
    run,
    manual,
    calls,
    merchant: () => run(Kit.provisionMerchant()),
    close: async () => {
      await app.close()
      await runtime.dispose()
    }
  }
}

let t: TestApp
let closers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closers) await close()
  closers = []
})

const fresh = async (options: Partial<App.Options> = {}) => {
  t = await make(options)
  closers.push(t.close)
  return t
}

const auth = { authorization: `Bearer ${adminToken}` }

type Injectable = { inject: TestApp["app"]["inject"] }
const admin = (app: Injectable, method: "GET" | "POST" | "PUT", url: string, body?: unknown) =>
  app.inject({ method, url: `/admin/v1${url}`, headers: auth, ...(body === undefined ? {} : { payload: body as object }) })

const principalOf = (merchant: Kit.Merchant) => t.run(Kit.apiKeyPrincipal(merchant, crypto.randomUUID()))

/** A live payment of `amount` on a fresh merchant, optionally paid. */
const livePayment = async (amount = "9500.00", paid = false) => {
  const merchant = await t.merchant()
  const principal = await principalOf(merchant)
  const { payment } = await t.run(Payments.create(principal, { amount, orderId: `o-${crypto.randomUUID()}` }))
  const result: Payment.Payment = paid ? await t.run(Payments.settle(payment.id, "paid")) : payment
  return { merchant, principal, payment: result }
}

describe("AdminApi: authentication", () => {
  it("requires the operator bearer token", async () => {
    await fresh()
    const body = { name: "A", owner_email: "a@example.com", owner_password: "password-1" }
    for (const headers of [{}, { authorization: "Bearer wrong" }, { authorization: `Basic ${adminToken}` }, { authorization: `Bearer ${adminToken}x` }, { authorization: "Bearer" }]) {
      const response = await t.app.inject({ method: "POST", url: "/admin/v1/accounts", headers, payload: body })
      expect(response.statusCode).toBe(401)
      expect(json(response).error.code).toBe("unauthenticated")
      expect(response.headers["www-authenticate"]).toMatch(/^Bearer/)
    }
    expect((await t.app.inject({ method: "GET", url: "/admin/v1/deliveries" })).statusCode).toBe(401)
    expect((await admin(t.app, "POST", "/accounts", body)).statusCode).toBe(201)
  })

  it("refuses a body of another content type with 415, a JSON text sent as text/plain too, and creates nothing", async () => {
    await fresh()
    const body = JSON.stringify({ name: "Typed", owner_email: "typed@example.com", owner_password: "password-1" })
    for (const type of ["text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded", "application/xml"]) {
      const response = await t.app.inject({ method: "POST", url: "/admin/v1/accounts", headers: { ...auth, "content-type": type }, payload: body })
      expect([response.statusCode, json(response).error.code], type).toEqual([415, "unsupported_media_type"])
    }
    expect(json(await admin(t.app, "GET", "/accounts")).items.map((a: { name: string }) => a.name)).not.toContain("Typed")
  })

  it("is not mounted without a token", async () => {
    const runtime = ManagedRuntime.make(Kit.layer)
    const app = await App.build({ runtime, publicUrl })
    closers.push(async () => {
      await app.close()
      await runtime.dispose()
    })
    expect((await app.inject({ method: "GET", url: "/admin/v1/deliveries", headers: auth })).statusCode).toBe(404)
  })
})

describe("AdminApi: provisioning", () => {
  it("creates an account (201) and refuses bad input (400)", async () => {
    await fresh()
    const created = await admin(t.app, "POST", "/accounts", { name: "Shop", owner_email: "Owner@Example.com", owner_password: "password-1" })
    expect(created.statusCode).toBe(201)
    const body = json(created)
    expect(body.account_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(body.user_id).toMatch(/^[0-9a-f-]{36}$/)
    const login = await t.run(Auth.login("owner@example.com", "password-1"))
    expect(login.user.accountId).toBe(body.account_id)

    const missing = await admin(t.app, "POST", "/accounts", { name: "Shop", owner_password: "password-1" })
    expect(missing.statusCode).toBe(400)
    expect(json(missing).error).toMatchObject({ code: "invalid_request", field: "owner_email", message: "owner_email is required" })
    const badEmail = await admin(t.app, "POST", "/accounts", { name: "Shop", owner_email: "nope", owner_password: "password-1" })
    expect(json(badEmail).error.field).toBe("owner_email")
    // A lone surrogate would be stored as U+FFFD, where another address could meet it.
    const halfEmail = await admin(t.app, "POST", "/accounts", { name: "Shop", owner_email: "a\ud800@example.com", owner_password: "password-1" })
    expect(json(halfEmail).error).toMatchObject({ field: "owner_email", message: "owner_email must be an e-mail address" })
    const unknown = await admin(t.app, "POST", "/accounts", { name: "Shop", owner_email: "x@example.com", owner_password: "password-1", role: "admin" })
    expect(unknown.statusCode).toBe(400)
    expect(json(unknown).error.field).toBe("role")
    const notObject = await admin(t.app, "POST", "/accounts", [1])
    expect(json(notObject).error.code).toBe("invalid_json_body")
    const duplicate = await admin(t.app, "POST", "/accounts", { name: "Other", owner_email: "owner@example.com", owner_password: "password-1" })
    expect(duplicate.statusCode).toBe(400)
    // A one-line name takes no control character (C1's CSI is a terminal's escape); nothing is created.
    // Nor the owner's e-mail (its rule's `\s` left out ESC, DEL and C1), which the dashboard shows.
    for (const email of ["u\u001b]0;x\u0007@example.com", "u\u009b31m@example.com", "u\u007f@example.com"]) {
      const controlled = await admin(t.app, "POST", "/accounts", { name: "Shop", owner_email: email, owner_password: "password-1" })
      expect([email, controlled.statusCode, json(controlled).error]).toEqual([email, 400, expect.objectContaining({ field: "owner_email", message: "owner_email must be an e-mail address" })])
    }
    for (const name of ["Shop\u009b31m", "Shop\nTwo", "Shop\u2028Two", "Shop\tdesk"]) {
      const controlled = await admin(t.app, "POST", "/accounts", { name, owner_email: "c@example.com", owner_password: "password-1" })
      expect([name, controlled.statusCode, json(controlled).error]).toEqual([name, 400, expect.objectContaining({ field: "name", message: "name must not contain control characters (line breaks, tabs, escapes)" })])
    }
    expect((await admin(t.app, "POST", "/accounts", { name: "Shop", owner_email: "c@example.com", owner_password: "password-1" })).statusCode).toBe(201)
  })

  it("creates a terminal with an API key and signing secret; another key; disables it", async () => {
    await fresh()
    const account = json(await admin(t.app, "POST", "/accounts", { name: "Shop", owner_email: "t@example.com", owner_password: "password-1" }))
    const created = await admin(t.app, "POST", "/terminals", {
      account_id: account.account_id,
      name: "Main desk",
      callback_url: "https://shop.example/cb"
    })
    expect(created.statusCode).toBe(201)
    const terminal = json(created)
    expect(terminal.api_key).toMatch(/^pd_/)
    expect(terminal.signing_secret).toMatch(/^sk_sign_/)
    expect(terminal.terminal).toMatchObject({ id: terminal.terminal_id, name: "Main desk", h2h: false, callback_url: "https://shop.example/cb", status: "active" })
    const principal = await t.run(Auth.apiKey(terminal.api_key, crypto.randomUUID()))
    expect(principal).toMatchObject({ _tag: "ApiKey", terminalId: terminal.terminal_id, subscriptionWrite: true })

    const key = await admin(t.app, "POST", `/terminals/${terminal.terminal_id}/api-keys`, { subscription_write: false })
    expect(key.statusCode).toBe(201)
    const second = await t.run(Auth.apiKey(json(key).api_key, crypto.randomUUID()))
    expect(second).toMatchObject({ terminalId: terminal.terminal_id, subscriptionWrite: false })
    // The answer names the key as the list does (its id revokes it).
    const listed = json(await admin(t.app, "GET", `/terminals/${terminal.terminal_id}/api-keys`)).items.find((k: { id: string }) => k.id === json(key).id)
    expect([listed?.prefix, json(key).prefix, json(key).api_key.startsWith(json(key).prefix)]).toEqual([json(key).prefix, listed?.prefix, true])
    expect((await t.app.inject({ method: "POST", url: `/admin/v1/terminals/${terminal.terminal_id}/api-keys`, headers: auth })).statusCode).toBe(201)

    const disabled = await admin(t.app, "POST", `/terminals/${terminal.terminal_id}/status`, { status: "disabled" })
    expect(disabled.statusCode).toBe(200)
    expect(json(disabled).status).toBe("disabled")
    const refused = await t.run(Effect.flip(Payments.create(principal, { amount: "10", orderId: "o-1" })))
    expect(refused._tag).toBe("TerminalUnavailable")
    expect(json(await admin(t.app, "POST", `/terminals/${terminal.terminal_id}/status`, { status: "active" })).status).toBe("active")

    // Bad input and unknown ids.
    expect((await admin(t.app, "POST", "/terminals", { account_id: account.account_id })).statusCode).toBe(400)
    expect((await admin(t.app, "POST", "/terminals", { account_id: account.account_id, name: "X", h2h: "yes" })).statusCode).toBe(400)
    const badUrl = await admin(t.app, "POST", "/terminals", { account_id: account.account_id, name: "X", callback_url: "https://shop.example/cb\u009b31m" })
    expect([badUrl.statusCode, json(badUrl).error.field, json(badUrl).error.message]).toEqual([400, "callback_url", "callback_url must be an http or https URL of at most 2048 characters"])
    const escaped = await admin(t.app, "POST", "/terminals", { account_id: account.account_id, name: "Desk\u001b[2J" })
    expect([escaped.statusCode, json(escaped).error.field, json(escaped).error.message]).toEqual([400, "name", "name must not contain control characters (line breaks, tabs, escapes)"])
    expect((await admin(t.app, "POST", "/terminals", { account_id: crypto.randomUUID(), name: "X" })).statusCode).toBe(404)
    expect((await admin(t.app, "POST", `/terminals/${terminal.terminal_id}/api-keys`, { subscription_write: "no" })).statusCode).toBe(400)
    expect((await admin(t.app, "POST", `/terminals/${crypto.randomUUID()}/api-keys`, {})).statusCode).toBe(404)
    expect((await admin(t.app, "POST", "/terminals/not-a-uuid/api-keys", {})).statusCode).toBe(404)
    const badStatus = await admin(t.app, "POST", `/terminals/${terminal.terminal_id}/status`, { status: "paused" })
    expect(badStatus.statusCode).toBe(400)
    expect(json(badStatus).error.field).toBe("status")
    expect((await admin(t.app, "POST", `/terminals/${crypto.randomUUID()}/status`, { status: "active" })).statusCode).toBe(404)
  })

  it("creates plans of both modes, versioned by code, and refuses bad plans", async () => {
    await fresh()
    const merchant = await t.merchant()
    const common = { terminal_ids: [merchant.terminal.id], consent_text: "Согласен", policy_version: "2026-01" }
    const fixed = await admin(t.app, "POST", "/plans", {
      ...common,
      code: "premium",
      name: "Premium",
      interval: "month",
      schedule: "calendar",
      payer_amount_rub: "990",
      merchant_amount_rub: "950,00",
      max_cycles: 12
    })
    expect(fixed.statusCode).toBe(201)
    expect(json(fixed)).toMatchObject({
      code: "premium",
      version: 1,
      interval: "month",
      schedule: "calendar",
      payer_amount_rub: "990.00",
      merchant_amount_rub: "950.00",
      max_cycles: 12,
      active: true,
      terminal_ids: [merchant.terminal.id]
    })
    const ceiling = json(await admin(t.app, "POST", "/plans", { ...common, code: "premium", name: "Premium 2", interval: "quarter", schedule: "fixed_days", cap_amount_rub: "9000.00" }))
    expect(ceiling).toMatchObject({ version: 2, cap_amount_rub: "9000.00", active: true })
    expect(ceiling.payer_amount_rub).toBeUndefined()

    const both = await admin(t.app, "POST", "/plans", { ...common, code: "x", name: "X", interval: "month", schedule: "calendar", cap_amount_rub: "10", payer_amount_rub: "10" })
    expect(both.statusCode).toBe(400)
    const unknownTerminal = await admin(t.app, "POST", "/plans", { ...common, terminal_ids: [crypto.randomUUID()], code: "x", name: "X", interval: "month", schedule: "calendar", cap_amount_rub: "10" })
    expect(json(unknownTerminal).error.field).toBe("terminal_ids")
    const notArray = await admin(t.app, "POST", "/plans", { ...common, terminal_ids: merchant.terminal.id, code: "x", name: "X", interval: "month", schedule: "calendar", cap_amount_rub: "10" })
    expect(json(notArray).error).toMatchObject({ field: "terminal_ids", message: "terminal_ids must be an array of strings" })
    const cycles = await admin(t.app, "POST", "/plans", { ...common, code: "x", name: "X", interval: "month", schedule: "calendar", cap_amount_rub: "10", max_cycles: "3" })
    expect(json(cycles).error.field).toBe("max_cycles")
    // Each charge is a payment: within a payment's bounds, and the merchant gets at most what the payer pays.
    const plan = (amounts: Record<string, string>) => admin(t.app, "POST", "/plans", { ...common, code: "big", name: "Big", interval: "month", schedule: "fixed_days", ...amounts })
    const tooMuch = "must not exceed 1000000.00"
    expect(json(await plan({ payer_amount_rub: "99999999999999999", merchant_amount_rub: "1" })).error).toMatchObject({ field: "payer_amount_rub", message: `payer_amount_rub ${tooMuch}` })
    expect(json(await plan({ payer_amount_rub: "1".padEnd(30, "9"), merchant_amount_rub: "1".padEnd(30, "9") })).error).toMatchObject({ field: "payer_amount_rub", message: `payer_amount_rub ${tooMuch}` })
    expect(json(await plan({ payer_amount_rub: "10", merchant_amount_rub: "1000000.01" })).error).toMatchObject({ field: "merchant_amount_rub", message: `merchant_amount_rub ${tooMuch}` })
    expect(json(await plan({ payer_amount_rub: "100", merchant_amount_rub: "100.01" })).error).toMatchObject({ field: "merchant_amount_rub", message: "merchant_amount_rub must not exceed payer_amount_rub" })
    expect(json(await plan({ cap_amount_rub: "1000000.01", interval: "half_year" })).error).toMatchObject({ field: "cap_amount_rub" })
    expect(json(await plan({ payer_amount_rub: "1000000", merchant_amount_rub: "1000000" }))).toMatchObject({ code: "big", payer_amount_rub: "1000000.00" })
    // One-line texts take no control character; the consent text is prose and keeps its line breaks.
    const lined = (fields: Record<string, string>) => admin(t.app, "POST", "/plans", { ...common, code: "lined", name: "Lined", interval: "month", schedule: "fixed_days", payer_amount_rub: "10", merchant_amount_rub: "10", ...fields })
    expect(json(await lined({ name: "Lined\u0085" })).error).toMatchObject({ field: "name", message: "name must not contain control characters (line breaks, tabs, escapes)" })
    expect(json(await lined({ policy_version: "2026\r\n01" })).error).toMatchObject({ field: "policy_version", message: "policy_version must not contain control characters (line breaks, tabs, escapes)" })
    expect(json(await lined({ consent_text: "I agree.\n\nCharges monthly." }))).toMatchObject({ code: "lined", version: 1 })
  })
})

describe("AdminApi: acquirer and operator moves", () => {
  it("settles a live payment from the acquirer; refuses bad outcomes, sandbox and unknown payments", async () => {
    await fresh()
    const { payment, principal } = await livePayment("100.00")
    const paid = await admin(t.app, "POST", `/acquirer/payments/pay_${payment.id}/outcome`, { outcome: "paid" })
    expect(paid.statusCode).toBe(200)
    expect(json(paid)).toMatchObject({ id: `pay_${payment.id}`, status: "paid", amount: "100.00", pay_url: `${publicUrl}/public/payments/${payment.payToken}` })
    // Idempotent.
    expect(json(await admin(t.app, "POST", `/acquirer/payments/${payment.id}/outcome`, { outcome: "paid" })).status).toBe("paid")

    const other = await livePayment("5.00")
    expect(json(await admin(t.app, "POST", `/acquirer/payments/${other.payment.id}/outcome`, { outcome: "failed" })).status).toBe("canceled")

    const bad = await admin(t.app, "POST", `/acquirer/payments/${payment.id}/outcome`, { outcome: "refunded" })
    expect(bad.statusCode).toBe(400)
    expect(json(bad).error.field).toBe("outcome")
    const { payment: sandbox } = await t.run(Payments.create(principal, { amount: "1", orderId: "s-1", test: true }))
    expect((await admin(t.app, "POST", `/acquirer/payments/${sandbox.id}/outcome`, { outcome: "paid" })).statusCode).toBe(400)
    expect((await admin(t.app, "POST", `/acquirer/payments/pay_${crypto.randomUUID()}/outcome`, { outcome: "paid" })).statusCode).toBe(404)
    expect((await admin(t.app, "POST", "/acquirer/payments/garbage/outcome", { outcome: "paid" })).statusCode).toBe(404)
  })

  it("refunds and charges back paid live payments", async () => {
    await fresh()
    const first = await livePayment("100.00", true)
    const refunded = await admin(t.app, "POST", `/payments/pay_${first.payment.id}/refund`)
    expect(refunded.statusCode).toBe(200)
    expect(json(refunded).status).toBe("refunded")
    const second = await livePayment("100.00", true)
    const chargeback = await admin(t.app, "POST", `/payments/${second.payment.id}/chargeback`)
    expect(json(chargeback).status).toBe("chargeback")

    const unpaid = await livePayment("1.00")
    expect((await admin(t.app, "POST", `/payments/${unpaid.payment.id}/refund`)).statusCode).toBe(409)
    const { payment: sandbox } = await t.run(Payments.create(first.principal, { amount: "1", orderId: "s-2", test: true }))
    expect((await admin(t.app, "POST", `/payments/${sandbox.id}/chargeback`)).statusCode).toBe(400)
    expect((await admin(t.app, "POST", `/payments/${crypto.randomUUID()}/refund`)).statusCode).toBe(404)
  })

  it("approves and rejects payouts", async () => {
    await fresh()
    const { principal } = await livePayment("9500.00", true)
    const create = (key: string) =>
      t.run(Payouts.create(principal, { amountUsdt: "10", walletAddress: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20", idempotencyKey: key }))
    const first = await create("p-1")
    const approved = await admin(t.app, "POST", `/payouts/po_${first.payout.id}/approve`)
    expect(approved.statusCode).toBe(200)
    expect(json(approved)).toMatchObject({ id: `po_${first.payout.id}`, status: "processing" })

    const second = await create("p-2")
    const rejected = await admin(t.app, "POST", `/payouts/${second.payout.id}/reject`, { reason: "wallet blocked" })
    expect(json(rejected)).toMatchObject({ status: "rejected", reject_reason: "wallet blocked" })
    const third = await create("p-3")
    // The merchant reads the reason: no control characters (ESC, C1's CSI, a line break), nothing moved.
    for (const reason of ["bad\u001b[2J wallet", "bad\u009b31m wallet", "bad wallet\r\nX-Injected: 1"]) {
      const escaped = await admin(t.app, "POST", `/payouts/${third.payout.id}/reject`, { reason })
      expect([escaped.statusCode, json(escaped).error.field, json(escaped).error.message]).toEqual([400, "reason", "reason must not contain control characters (line breaks, tabs, escapes)"])
    }
    expect(json(await admin(t.app, "POST", `/payouts/${third.payout.id}/reject`)).reject_reason).toBe("rejected by operator")

    expect((await admin(t.app, "POST", `/payouts/${second.payout.id}/approve`)).statusCode).toBe(409)
    // Both are state conflicts: approving a rejected payout, rejecting one being sent.
    const sending = await admin(t.app, "POST", `/payouts/${first.payout.id}/reject`, {})
    expect([sending.statusCode, json(sending).error.message]).toEqual([409, "a payout being sent cannot be rejected by the operator"])
    expect((await admin(t.app, "POST", `/payouts/${third.payout.id}/reject`, { reason: 42 })).statusCode).toBe(400)
    expect((await admin(t.app, "POST", `/payouts/po_${crypto.randomUUID()}/approve`)).statusCode).toBe(404)
  })

  it("an operator move repeated with its Idempotency-Key answers the object again; the key for another move is 409; a bad key 400", async () => {
    await fresh()
    const keyed = (url: string, key: string, body?: unknown) =>
      t.app.inject({ method: "POST", url: `/admin/v1${url}`, headers: { ...auth, "idempotency-key": key }, ...(body === undefined ? {} : { payload: body as object }) })
    const { payment, principal } = await livePayment("9500.00", true)
    const refunded = await keyed(`/payments/${payment.id}/refund`, "refund-1")
    expect([refunded.statusCode, json(refunded).status]).toEqual([200, "refunded"])
    const repeated = await keyed(`/payments/pay_${payment.id}/refund`, "refund-1")
    expect([repeated.statusCode, json(repeated)]).toEqual([200, json(refunded)])
    const conflict = await keyed(`/payments/${payment.id}/chargeback`, "refund-1")
    expect([conflict.statusCode, json(conflict).error.code]).toEqual([409, "idempotency_conflict"])
    const bad = await keyed(`/payments/${payment.id}/refund`, "x".repeat(129))
    expect([bad.statusCode, json(bad).error.field]).toEqual([400, "Idempotency-Key"])

    const { payment: funding } = await t.run(Payments.create(principal, { amount: "9500", orderId: "fund-2" }))
    await t.run(Payments.settle(funding.id, "paid"))
    const { payout } = await t.run(Payouts.create(principal, { amountUsdt: "10", walletAddress: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20", idempotencyKey: "p-k" }))
    const rejected = await keyed(`/payouts/${payout.id}/reject`, "reject-1", { reason: "wallet blocked" })
    expect([rejected.statusCode, json(rejected).status]).toEqual([200, "rejected"])
    expect(json(await keyed(`/payouts/${payout.id}/reject`, "reject-1", { reason: "wallet blocked" }))).toEqual(json(rejected))
    expect((await keyed(`/payouts/${payout.id}/reject`, "reject-1", { reason: "another" })).statusCode).toBe(409)
    expect((await keyed(`/payouts/${payout.id}/approve`, "reject-1")).statusCode).toBe(409)
  })

  it("stops a subscription and refuses to resume one that is not in review", async () => {
    await fresh()
    const merchant = await t.merchant()
    const plans = await t.plans(merchant.terminal.id)
    const principal = await principalOf(merchant)
    const { subscription } = await t.run(Subscriptions.create(principal, {
      idempotencyKey: "k-1",
      terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "100"
    }))
    // A move its state machine does not have: 409, as a payout's approval in the wrong state.
    const notInReview = await admin(t.app, "POST", `/subscriptions/${subscription.id}/resume`)
    expect([notInReview.statusCode, json(notInReview).error.code, json(notInReview).error.message])
      .toEqual([409, "invalid_transition", "subscription in new/consent_pending cannot be resumed"])
    const stopped = await admin(t.app, "POST", `/subscriptions/${subscription.id.toUpperCase()}/stop`)
    expect(stopped.statusCode).toBe(200)
    const view = json(stopped)
    expect(view).toMatchObject({ id: subscription.id, provider_state: "stop", billing_status: "stopped" })
    expect(view.pay_url).toBeUndefined()
    expect(json(await admin(t.app, "POST", `/subscriptions/${subscription.id}/stop`)).billing_status).toBe("stopped")
    expect((await admin(t.app, "POST", `/subscriptions/${crypto.randomUUID()}/stop`)).statusCode).toBe(404)
    expect((await admin(t.app, "POST", "/subscriptions/nope/resume")).statusCode).toBe(404)
  })
})

describe("AdminApi: deployment hooks", () => {
  it("answers 501 for hooks the deployment lacks and 409 for the clock", async () => {
    await fresh()
    const rate = await admin(t.app, "PUT", "/rate", { rate: "90.00" })
    expect(rate.statusCode).toBe(501)
    expect(json(rate).error.code).toBe("not_implemented")
    const charges = await admin(t.app, "POST", `/acquirer/subscriptions/${crypto.randomUUID()}/charge-outcomes`, { outcomes: ["paid"] })
    expect(charges.statusCode).toBe(501)
    expect(json(charges).error.message).toMatch(/not available/)
    const clock = await admin(t.app, "POST", "/clock", { now: "2026-03-01T00:00:00.000Z" })
    expect(clock.statusCode).toBe(409)
    expect(json(clock).error).toMatchObject({ code: "clock_not_manual", message: "clock is not manual" })
  })

  it("sets the rate through the hook, refusing malformed rates", async () => {
    const operated = await makeOperated(Date.parse("2026-01-15T09:00:00.000Z"))
    closers.push(operated.close)
    const response = await admin(operated.app, "PUT", "/rate", { rate: "90.5" })
    expect(response.statusCode).toBe(200)
    expect(json(response)).toEqual({ rate: "90.50" })
    const current = await operated.run(Effect.flatMap(rateSource, (r) => r.current(null)))
    expect(current.rate).toBe(90_500_000n)
    // Up to 1000000 (PostgreSQL's column holds 14 digits before the point: a larger rate was a 500 there).
    expect(json(await admin(operated.app, "PUT", "/rate", { rate: "1000000" }))).toEqual({ rate: "1000000.00" })
    for (const rate of ["0", "-1", "90.1234567", "abc", 90, "1000000.000001", "999999999999999"]) {
      const bad = await admin(operated.app, "PUT", "/rate", { rate })
      expect(bad.statusCode).toBe(400)
      expect(json(bad).error.field).toBe("rate")
      if (typeof rate === "string") expect(json(bad).error.message).toBe("rate must be a decimal greater than zero and at most 1000000, with at most six decimals")
    }
    expect((await operated.run(Effect.flatMap(rateSource, (r) => r.current(null)))).rate).toBe(1_000_000_000_000n)
    expect((await admin(operated.app, "PUT", "/rate", {})).statusCode).toBe(400)
  })

  it("moves the manual clock, programs a failed charge, runs due work and resumes out of review", async () => {
    const anchor = Date.parse("2026-01-31T07:00:00.000Z")
    const operated = await makeOperated(anchor)
    closers.push(operated.close)
    const merchant = await operated.merchant()
    const plans = await operated.run(Kit.provisionPlans(merchant.terminal.id))
    const principal = await operated.run(Kit.apiKeyPrincipal(merchant, crypto.randomUUID()))
    const { subscription } = await operated.run(Subscriptions.create(principal, {
      idempotencyKey: "k-1",
      terminalId: merchant.terminal.id, planId: plans.fixedMonthly.id, payerId: "p-1"
    }))
    const confirmed = await operated.run(Subscriptions.confirm(subscription.payToken, subscription.csrfToken))
    const first = Option.getOrThrow(confirmed.firstPayment)
    expect(json(await admin(operated.app, "POST", `/acquirer/payments/${first.id}/outcome`, { outcome: "paid" })).status).toBe("paid")

    for (const bad of [
      ["paid", "maybe"],
      [{ outcome: "paid", delay_ms: 30_001 }],
      [{ outcome: "paid", delay_ms: -1 }],
      [{ outcome: "paid", delay_ms: 1.5 }],
      [{ outcome: "paid", delay_ms: "3000" }],
      [{ outcome: "maybe", delay_ms: 10 }],
      [{ outcome: "paid", delay_ms: 10, extra: true }],
      [{ outcome: "paid", delay_ms: null }],
      [null]
    ]) {
      const badProgram = await admin(operated.app, "POST", `/acquirer/subscriptions/${subscription.id}/charge-outcomes`, { outcomes: bad })
      expect(badProgram.statusCode, JSON.stringify(bad)).toBe(400)
      expect(json(badProgram).error.field).toBe("outcomes")
    }
    expect(operated.calls).toEqual([])
    // Late answers are programmed as objects (another subscription: this one's program stays as below).
    const { subscription: other } = await operated.run(Subscriptions.create(principal, {
      idempotencyKey: "k-2",
      terminalId: merchant.terminal.id, planId: plans.fixedMonthly.id, payerId: "p-2"
    }))
    const slow = await admin(operated.app, "POST", `/acquirer/subscriptions/${other.id}/charge-outcomes`, {
      outcomes: [{ outcome: "paid", delay_ms: 3000 }, { outcome: "unknown" }, { outcome: "paid", delay_ms: 0 }]
    })
    expect(json(slow)).toEqual({ subscription_id: other.id, outcomes: [{ outcome: "paid", delay_ms: 3000 }, "unknown", "paid"] })
    expect(operated.calls).toEqual([`${other.id}:paid+3000ms,unknown,paid`])
    operated.calls.length = 0
    expect((await admin(operated.app, "POST", `/acquirer/subscriptions/${crypto.randomUUID()}/charge-outcomes`, { outcomes: [] })).statusCode).toBe(404)
    const programmed = await admin(operated.app, "POST", `/acquirer/subscriptions/${subscription.id}/charge-outcomes`, { outcomes: ["failed"] })
    expect(programmed.statusCode).toBe(200)
    expect(json(programmed)).toEqual({ subscription_id: subscription.id, outcomes: ["failed"] })
    expect(operated.calls).toEqual([`${subscription.id}:failed`])

    const badClock = await admin(operated.app, "POST", "/clock", { now: "yesterday" })
    expect(badClock.statusCode).toBe(400)
    expect(json(badClock).error.field).toBe("now")
    // The test clocks' years only (year 9999 made every payment's expiry unreadable to PostgreSQL).
    for (const now of ["9999-12-31T23:59:59Z", "2100-01-01T00:00:00Z", "1999-12-31T23:59:59Z"]) {
      const far = await admin(operated.app, "POST", "/clock", { now })
      expect([far.statusCode, json(far).error.field, json(far).error.message], now)
        .toEqual([400, "now", "now must be from 2000-01-01T00:00:00.000Z to 2099-12-31T23:59:59.999Z"])
    }
    const moved = await admin(operated.app, "POST", "/clock", { now: "2026-02-28T10:01:00+03:00" })
    expect(json(moved)).toEqual({ now: "2026-02-28T07:01:00.000Z" })
    expect(await Effect.runPromise(operated.manual.now)).toBe(Date.parse("2026-02-28T07:01:00.000Z"))

    const work = await admin(operated.app, "POST", "/work/run")
    expect(work.statusCode).toBe(200)
    expect(json(work)).toMatchObject({ charges: 1 })
    const inReview = await operated.run(Subscriptions.findPublic(subscription.payToken))
    expect(inReview.subscription.billingStatus).toBe("review")

    const resumed = await admin(operated.app, "POST", `/subscriptions/${subscription.id}/resume`)
    expect(resumed.statusCode).toBe(200)
    expect(json(resumed)).toMatchObject({ billing_status: "enabled", provider_state: "active" })
    // The missed cycle is retried now (later than its planned time).
    expect(json(resumed).next_charge_at).toBe("2026-02-28T07:01:00.000Z")
  })

  it("runs work through the runWork hook when the deployment has one", async () => {
    await fresh({ operator: { runWork: async () => ({ engine: "custom" }) } })
    const response = await admin(t.app, "POST", "/work/run")
    expect(json(response)).toEqual({ engine: "custom" })
  })
})

describe("AdminApi: callback deliveries", () => {
  it("runs due work that delivers callbacks, and lists and shows deliveries", async () => {
    await fresh()
    const merchant = await t.merchant({ callbackUrl: "https://shop.example/callbacks" })
    const principal = await principalOf(merchant)
    const { payment } = await t.run(Payments.create(principal, { amount: "10", orderId: "o-1", test: true }))

    const before = json(await admin(t.app, "GET", `/deliveries?payment_id=pay_${payment.id}`))
    expect(before.items).toHaveLength(1)
    expect(before.items[0]).toMatchObject({ terminal_id: merchant.terminal.id, status: "pending", attempts: 0 })

    const work = await admin(t.app, "POST", "/work/run")
    expect(work.statusCode).toBe(200)
    expect(json(work)).toEqual({ expired_payments: 0, charges: 0, settled_charges: 0, stops: 0, conversions: 0, payouts: 0, callbacks: 1, test_clocks: 0 })
    const transport = await t.run(recorder)
    expect(transport.requests).toHaveLength(1)
    const sent = transport.requests[0]!
    expect(sent.url).toBe("https://shop.example/callbacks")
    expect(JSON.parse(sent.body)).toMatchObject({ event_type: "payment.created", payment_id: `pay_${payment.id}`, test: true })
    expect(sent.headers["x-test-mode"]).toBe("true")

    const delivered = json(await admin(t.app, "GET", `/deliveries?terminal_id=${merchant.terminal.id}&status=delivered&limit=10`))
    expect(delivered.items).toHaveLength(1)
    const deliveryId = delivered.items[0].id
    expect(json(await admin(t.app, "GET", `/deliveries?terminal_id=${merchant.terminal.id}&status=pending`)).items).toHaveLength(0)
    expect(json(await admin(t.app, "GET", `/deliveries?payment_id=${crypto.randomUUID()}`)).items).toHaveLength(0)

    const detail = await admin(t.app, "GET", `/deliveries/${deliveryId}`)
    expect(detail.statusCode).toBe(200)
    const shown = json(detail)
    expect(shown.delivery).toMatchObject({ id: deliveryId, status: "delivered", attempts: 1, last_status_code: 200 })
    expect(shown.event).toMatchObject({ event_type: "payment.created", payment_id: `pay_${payment.id}`, payout_id: null, test: true })
    expect(shown.event.body).toBe(sent.body)
    expect(shown.attempts).toHaveLength(1)
    expect(shown.attempts[0]).toMatchObject({ attempt: 1, url: "https://shop.example/callbacks", status_code: 200, error: null })

    for (const query of ["status=sent", "limit=0", "limit=501", "limit=abc", "terminal_id=nope", "payment_id=nope", "status=pending&status=failed"]) {
      const bad = await admin(t.app, "GET", `/deliveries?${query}`)
      expect(bad.statusCode, query).toBe(400)
    }
    expect((await admin(t.app, "GET", `/deliveries/${crypto.randomUUID()}`)).statusCode).toBe(404)
    expect((await admin(t.app, "GET", "/deliveries/nope")).statusCode).toBe(404)
  })

  it("lists deliveries newest written first, not by a test clock's time, filtered by environment, with their kind and clock", async () => {
    await fresh()
    const merchant = await t.merchant({ callbackUrl: "https://shop.example/callbacks" })
    const principal = await principalOf(merchant)
    // A merchant's clock in 2099: its deliveries carry the clock's time (an outside probe saw them ahead of every real one).
    const clock = await t.run(TestClocks.create(principal, { frozenTime: "2099-01-01T00:00:00Z" }))
    const onClock = await t.run(Payments.create(principal, { amount: "1", orderId: "on-clock", test: true, testClock: clock.id }))
    const live = await t.run(Payments.create(principal, { amount: "10", orderId: "live-1" }))
    const sandbox = await t.run(Payments.create(principal, { amount: "1", orderId: "sandbox-1", test: true }))
    const listed = async (query: string) => {
      const answer = await admin(t.app, "GET", `/deliveries${query}`)
      expect(answer.statusCode, query).toBe(200)
      return (json(answer).items as Array<{ event_id: string; kind: string; test_clock: string | null; created_at: string }>)
    }
    const all = await listed("")
    expect(all.map((d) => [d.test_clock, d.kind, d.created_at.slice(0, 4)])).toEqual([
      [null, "scheduled", all[0]!.created_at.slice(0, 4)],
      [null, "scheduled", all[1]!.created_at.slice(0, 4)],
      [clock.id, "scheduled", "2099"]
    ])
    const events = async (items: Awaited<ReturnType<typeof listed>>) =>
      Promise.all(items.map(async (d) => json(await admin(t.app, "GET", `/deliveries/${(d as unknown as { id: string }).id}`)).event.payment_id as string))
    expect(await events(all)).toEqual([sandbox.payment, live.payment, onClock.payment].map((p) => `pay_${p.id}`))
    expect(await events(await listed("?environment=prod"))).toEqual([`pay_${live.payment.id}`])
    expect(await events(await listed("?environment=sandbox"))).toEqual([sandbox.payment, onClock.payment].map((p) => `pay_${p.id}`))
    expect(await listed("?environment=all")).toHaveLength(3)
    expect(await events(await listed(`?environment=sandbox&terminal_id=${merchant.terminal.id}&limit=1`))).toEqual([`pay_${sandbox.payment.id}`])
    expect((await admin(t.app, "GET", "/deliveries?environment=live")).statusCode).toBe(400)
  })
})
