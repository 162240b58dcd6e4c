/**
 * A lone surrogate in free text (a payment's or a subscription's `description`, the names of
 * accounts, terminals, plans and test clocks, a plan's consent text and policy version, a payout's
 * reject reason) becomes U+FFFD when the request is validated, as PostgreSQL stores it: the answer,
 * the stored record and later reads agree, and a retry of the request as sent replays it
 * (docs/decisions.md "Lone surrogates"). Keys (`order_id`, `payer_id`, …) are refused instead.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Effect, Option } from "effect"
import { Payments, Payouts, PlanRepository } from "@paydesk/core"
import { Kit } from "@paydesk/testkit"
import { adminCalls, json, keyCalls, make, type TestApp } from "./TestApp.js"

let t: TestApp
let merchant: Kit.Merchant

beforeEach(async () => {
  t = await make()
  merchant = await t.merchant()
})
afterEach(() => t.close())

const api = (method: "GET" | "POST" | "PUT", url: string, body?: object, headers: Record<string, string> = {}) =>
  keyCalls(t.app, () => merchant.apiKey)(method, url, body, headers)
const admin = (method: "GET" | "POST", url: string, body?: object) => adminCalls(t.app)(method, url, body)
const ok = async (response: Promise<{ statusCode: number; body: string }>, status = 200) => {
  const answer = await response
  expect(answer.statusCode, answer.body).toBe(status)
  return json(answer)
}

/** Text with a high and a low surrogate each without its other half, and a pair that stays. */
const lone = "half \ud800 pair \udc00 and \ud83d\ude00"
const stored = "half \ufffd pair \ufffd and \ud83d\ude00"

describe("Lone surrogates in free text", () => {
  it("a payment's description: the 201, a later read, the list and the CSV say U+FFFD; the same body replays", async () => {
    const body = { amount: "10", order_id: "ls-1", description: lone, test: true }
    const created = await ok(api("POST", "/payments", body), 201)
    expect(created.description).toBe(stored)
    expect((await ok(api("GET", `/payments/${created.id}`))).description).toBe(created.description)
    expect((await ok(api("GET", "/payments?environment=sandbox"))).items[0].description).toBe(created.description)
    // The description, then the settlement's four columns (empty for a sandbox payment).
    expect((await api("GET", "/payments?environment=sandbox&format=csv")).body).toContain(`,${stored},,,,\r\n`)
    // The fingerprint is the request's as sent (as before the replacement, so payments stored
    // earlier replay too): the same body replays; the stored text is another body (409).
    expect((await ok(api("POST", "/payments", body))).id).toBe(created.id)
    expect((await api("POST", "/payments", { ...body, description: stored })).statusCode).toBe(409)
  })

  it("a fixed-tariff subscription's description: the 201 and a later read agree; the same body replays", async () => {
    const plans = await t.plans(merchant.terminal.id)
    const body = { terminal_id: merchant.terminal.id, plan_id: plans.fixedMonthly.id, payer_id: "payer-1", description: lone }
    const created = await ok(api("POST", "/subscriptions", body, { "idempotency-key": "ls-sub-1" }), 201)
    expect(created.description).toBe(stored)
    expect((await ok(api("GET", `/subscriptions/${created.id}`))).description).toBe(created.description)
    expect((await ok(api("POST", "/subscriptions", body, { "idempotency-key": "ls-sub-1" }))).id).toBe(created.id)
  })

  it("a test clock's name: the 201 and a later read agree", async () => {
    const clock = await ok(api("POST", "/test-clocks", { frozen_time: "2026-01-31T10:00:00Z", name: lone }), 201)
    expect(clock.name).toBe(stored)
    expect((await ok(api("GET", `/test-clocks/${clock.id}`))).name).toBe(clock.name)
  })

  it("the operator's account and terminal names: the answers and later reads agree", async () => {
    const account = await ok(admin("POST", "/accounts", { name: lone, owner_email: "ls@shop.example", owner_password: "password-1" }), 201)
    expect((await ok(admin("GET", `/accounts/${account.account_id}`))).name).toBe(stored)
    const terminal = await ok(admin("POST", "/terminals", { account_id: account.account_id, name: lone }), 201)
    expect(terminal.terminal.name).toBe(stored)
    expect((await ok(admin("GET", `/terminals/${terminal.terminal_id}`))).name).toBe(stored)
  })

  it("a plan's name, consent text and policy version: the answer, the stored plan and the merchant's list agree", async () => {
    const plan = await ok(admin("POST", "/plans", {
      terminal_ids: [merchant.terminal.id], code: "ls-plan", name: lone, interval: "month",
      payer_amount_rub: "990", merchant_amount_rub: "950", consent_text: lone, policy_version: "v \ud800"
    }), 201)
    expect(plan.name).toBe(stored)
    const saved = Option.getOrThrow(await t.run(Effect.flatMap(PlanRepository, (plans) => plans.get(plan.id))))
    expect([saved.name, saved.consentText, saved.policyVersion]).toEqual([stored, stored, "v \ufffd"])
    const listed = await ok(api("GET", `/subscription-plans?terminal_id=${merchant.terminal.id}`))
    expect(listed.items.find((p: { id: string }) => p.id === plan.id).name).toBe(stored)
  })

  it("URLs are not free text: a terminal's callback and redirect URLs with a lone surrogate are 400 and change nothing", async () => {
    const put = (body: object) => api("PUT", `/terminals/${merchant.terminal.id}`, body)
    const before = await ok(api("GET", `/terminals/${merchant.terminal.id}`))
    for (const field of ["callback_url", "success_redirect_url", "fail_redirect_url"]) {
      const refused = await put({ [field]: "https://shop.example/p\ud800ath" })
      expect([field, refused.statusCode, json(refused).error.field, json(refused).error.message])
        .toEqual([field, 400, field, `${field} must be valid Unicode text (a surrogate without its pair was sent)`])
    }
    expect(await ok(api("GET", `/terminals/${merchant.terminal.id}`))).toEqual(before)
    const created = await admin("POST", "/terminals", { account_id: merchant.accountId, name: "Shop", callback_url: "https://shop.example/\udc00" })
    expect([created.statusCode, json(created).error.field]).toEqual([400, "callback_url"])
  })

  it("a payout's reject reason: the answer and a later read agree", async () => {
    const principal = await t.run(Kit.apiKeyPrincipal(merchant, crypto.randomUUID()))
    const { payment } = await t.run(Payments.create(principal, { amount: "9500", orderId: "ls-paid" }))
    await t.run(Payments.settle(payment.id, "paid"))
    const { payout } = await t.run(Payouts.create(principal, { amountUsdt: "10", walletAddress: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" }))
    const rejected = await ok(admin("POST", `/payouts/po_${payout.id}/reject`, { reason: lone }))
    expect(rejected.reject_reason).toBe(stored)
    expect((await ok(admin("GET", `/payouts/po_${payout.id}`))).reject_reason).toBe(stored)
  })
})
