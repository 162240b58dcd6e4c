/**
 * Bad bytes and bad shapes against the real server (in process, PostgreSQL): a NUL character in
 * any text that would reach PostgreSQL is a 400 at the edge and writes nothing; the Pg adapter maps
 * PostgreSQL's encoding errors to a 400 for a host that skips the edge; deep and duplicate-key JSON
 * is refused; authenticated answers are neither cached nor sniffed; a negative balance blocks
 * payouts; the operator token must be strong off loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Cause, Effect, Exit, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { AccountRepository } from "@paydesk/core"
import { HttpErrors } from "@paydesk/fastify"
import { PgStore } from "@paydesk/sql-pg"
import * as Config from "../src/Config.js"
import { freshDatabase, startServer } from "./ServerHarness.js"
import { database } from "./ServerProcess.js"

type Srv = Awaited<ReturnType<typeof startServer>>

const NUL = "\u0000"

describe("input hardening", () => {
  let srv: Srv
  let db: ReturnType<typeof database>

  beforeAll(async () => {
    srv = await startServer()
    db = database(srv.databaseUrl)
    await srv.setClock("2026-07-01T10:00:00.000Z")
  }, 120_000)

  afterAll(async () => {
    await db?.close()
    await srv?.stop()
  })

  const count = async (table: string) => Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`))[0]!.n)

  const expectNulRefused = (what: string, answer: { status: number; json: any }) => {
    expect([what, answer.status, answer.json?.error?.code]).toEqual([what, 400, "invalid_request"])
    expect(answer.json.error.message).toMatch(/must not contain NUL characters/)
  }

  it("a NUL character in any text field, path or query is a 400 and writes nothing", async () => {
    const m = await srv.merchant("https://merchant.example/cb")
    const plan = await srv.admin("POST", "/plans", {
      terminal_ids: [m.terminalId], code: `p-${randomBytes(3).toString("hex")}`, name: "Monthly", interval: "month", schedule: "calendar",
      payer_amount_rub: "990", merchant_amount_rub: "950", consent_text: "Согласен", policy_version: "1"
    })
    const ceiling = await srv.admin("POST", "/plans", {
      terminal_ids: [m.terminalId], code: `c-${randomBytes(3).toString("hex")}`, name: "Ceiling", interval: "month", schedule: "calendar",
      cap_amount_rub: "4000", consent_text: "Согласен", policy_version: "1"
    })
    const before = { payments: await count("payments"), subscriptions: await count("subscriptions"), accounts: await count("accounts"), terminals: await count("terminals"), plans: await count("plans"), payouts: await count("payouts") }
    const payment = { amount: "10.00", order_id: "nul-1", test: true }

    const cases: Array<[string, () => Promise<{ status: number; json: any }>]> = [
      ["login email", () => srv.call("POST", "/api/v1/auth/login", { body: { email: `a${NUL}@x.example`, password: "correct horse" } })],
      ["login password", () => srv.call("POST", "/api/v1/auth/login", { body: { email: "a@x.example", password: `correct${NUL}horse` } })],
      ["refresh token", () => srv.call("POST", "/api/v1/auth/refresh", { body: { refresh_token: `rt_${NUL}` } })],
      ["logout refresh token", () => srv.call("POST", "/api/v1/auth/logout", { body: { refresh_token: `rt_${NUL}` } })],
      ["payment page token", () => srv.call("GET", "/public/payments/abc%00def")],
      ["payment status token", () => srv.call("GET", "/public/payments/abc%00def/status")],
      ["simulate token", () => srv.call("POST", "/public/payments/abc%00def/simulate", { body: { outcome: "paid", csrf_token: "x" } })],
      ["simulate csrf_token", () => srv.call("POST", "/public/payments/abc/simulate", { body: { outcome: "paid", csrf_token: `x${NUL}` } })],
      ["consent page token", () => srv.call("GET", "/public/subscriptions/abc%00def")],
      ["consent confirm token", () => srv.call("POST", "/public/subscriptions/abc%00def/confirm", { body: { csrf_token: "x" } })],
      ["payment order_id", () => m.api("POST", "/payments", { ...payment, order_id: `o${NUL}1` })],
      ["payment description", () => m.api("POST", "/payments", { ...payment, description: `tea${NUL}` })],
      ["payment amount", () => m.api("POST", "/payments", { ...payment, amount: `10${NUL}` })],
      ["payment currency", () => m.api("POST", "/payments", { ...payment, payment_currency: `RUB${NUL}` })],
      ["payment method", () => m.api("POST", "/payments", { ...payment, payment_method: `sbp${NUL}` })],
      ["metadata value", () => m.api("POST", "/payments", { ...payment, metadata: { note: `a${NUL}b` } })],
      ["metadata key", () => m.api("POST", "/payments", { ...payment, metadata: { [`k${NUL}`]: "v" } })],
      ["nested metadata value", () => m.api("POST", "/payments", { ...payment, metadata: { items: [{ sku: `x${NUL}` }] } })],
      ["payment id in path", () => m.api("GET", "/payments/pay_%00")],
      ["terminal_id in query", () => m.api("GET", "/payments?terminal_id=%00")],
      ["environment in query", () => m.api("GET", "/payments?environment=all%00")],
      ["callback_url", () => m.api("PUT", `/terminals/${m.terminalId}`, { callback_url: `https://merchant.example/${NUL}` })],
      ["success_redirect_url", () => m.api("PUT", `/terminals/${m.terminalId}`, { success_redirect_url: `https://shop.example/ok${NUL}` })],
      ["fail_redirect_url", () => m.api("PUT", `/terminals/${m.terminalId}`, { fail_redirect_url: `https://shop.example/${NUL}fail` })],
      ["conversion_time", () => m.api("PUT", `/terminals/${m.terminalId}`, { conversion_time: `10:00${NUL}` })],
      ["payout wallet", () => m.api("POST", "/payouts", { amount_usdt: "1", wallet_address: `T${NUL}x`, network: "TRC-20" })],
      ["payout network", () => m.api("POST", "/payouts", { amount_usdt: "1", wallet_address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: `TRC-20${NUL}` })],
      ["payout idempotency_key", () => m.api("POST", "/payouts", { amount_usdt: "1", wallet_address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20", idempotency_key: `k${NUL}` })],
      ["payer_id", () => m.api("POST", "/subscriptions", { terminal_id: m.terminalId, plan_id: plan.json.id, payer_id: `u${NUL}1` }, { "idempotency-key": "nul-sub-1" })],
      ["merchant_subscription_ref", () => m.api("POST", "/subscriptions", { terminal_id: m.terminalId, plan_id: plan.json.id, payer_id: "u1", merchant_subscription_ref: `r${NUL}` }, { "idempotency-key": "nul-sub-2" })],
      ["subscription description", () => m.api("POST", "/subscriptions", { terminal_id: m.terminalId, plan_id: plan.json.id, payer_id: "u1", description: `d${NUL}` }, { "idempotency-key": "nul-sub-3" })],
      ["subscription amount", () => m.api("POST", "/subscriptions", { terminal_id: m.terminalId, plan_id: ceiling.json.id, amount: `100${NUL}` }, { "idempotency-key": "nul-sub-4" })],
      ["subscription id in path", () => m.api("GET", "/subscriptions/%00")],
      ["operator account name", () => srv.admin("POST", "/accounts", { name: `Shop${NUL}`, owner_email: "nul@x.example", owner_password: "correct horse" })],
      ["operator owner_email", () => srv.admin("POST", "/accounts", { name: "Shop", owner_email: `nul${NUL}@x.example`, owner_password: "correct horse" })],
      ["operator terminal name", () => srv.admin("POST", "/terminals", { account_id: crypto.randomUUID(), name: `Till${NUL}` })],
      ["operator plan name", () => srv.admin("POST", "/plans", { terminal_ids: [m.terminalId], code: "nul", name: `P${NUL}`, interval: "month", schedule: "calendar", cap_amount_rub: "100", consent_text: "ok", policy_version: "1" })],
      ["operator consent_text", () => srv.admin("POST", "/plans", { terminal_ids: [m.terminalId], code: "nul", name: "P", interval: "month", schedule: "calendar", cap_amount_rub: "100", consent_text: `ok${NUL}`, policy_version: "1" })],
      ["operator payout reject reason", () => srv.admin("POST", `/payouts/${crypto.randomUUID()}/reject`, { reason: `no${NUL}` })],
      ["operator deliveries filter", () => srv.admin("GET", "/deliveries?status=failed%00")]
    ]
    for (const [what, send] of cases) expectNulRefused(what, await send())
    expect({ payments: await count("payments"), subscriptions: await count("subscriptions"), accounts: await count("accounts"), terminals: await count("terminals"), plans: await count("plans"), payouts: await count("payouts") }).toEqual(before)
  }, 60_000)

  it("the Pg adapter turns PostgreSQL's refusal of a NUL into UnstorableText, which the HTTP edge answers with 400", async () => {
    const url = await freshDatabase()
    const insert = Effect.gen(function*() {
      yield* (yield* AccountRepository).insertAccount({ id: crypto.randomUUID(), name: `a${NUL}b`, createdAt: Date.now() })
    })
    const exit = await Effect.runPromise(Effect.exit(insert.pipe(Effect.provide(PgStore.layer(url)))))
    expect(Exit.isFailure(exit)).toBe(true)
    const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : null
    expect((defect as { _tag?: string })._tag).toBe("UnstorableText")
    const response = HttpErrors.fromExit(exit, "req_test")
    expect(response?.status).toBe(400)
    expect(response?.body.error.code).toBe("unstorable_text")
  }, 60_000)

  it("JSON nested 4,400 levels, metadata deeper than 8 levels and duplicate keys are 400; nothing is written", async () => {
    const m = await srv.merchant("https://merchant.example/cb")
    const send = (text: string, path = "/api/v1/payments") =>
      fetch(`${srv.base}${path}`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": m.apiKey, "x-nonce": crypto.randomUUID() }, body: text })
        .then(async (r) => ({ status: r.status, json: await r.json() }))
    const before = await count("payments")
    const deep = `{"amount":"10","order_id":"deep","test":true,"metadata":${"{\"a\":".repeat(4400)}1${"}".repeat(4400)}}`
    const tooDeep = await send(deep)
    expect([tooDeep.status, tooDeep.json.error.code, tooDeep.json.error.message]).toEqual([400, "invalid_json_body", "invalid json body: nested deeper than 32 levels"])
    expect((await send(`${"[".repeat(4400)}${"]".repeat(4400)}`, "/api/v1/auth/login")).status).toBe(400)
    const nested = (levels: number) => JSON.stringify({ amount: "10", order_id: `depth-${levels}`, test: true, metadata: JSON.parse(`${"{\"a\":".repeat(levels)}1${"}".repeat(levels)}`) })
    const nine = await send(nested(9))
    expect([nine.status, nine.json.error.field, nine.json.error.message]).toEqual([400, "metadata", "metadata must be nested at most 8 levels deep"])
    expect((await send(nested(8))).status).toBe(201)
    for (const body of [
      `{"amount":"10","amount":"20000","order_id":"dup-1","test":true}`,
      `{"amount":"10","order_id":"dup-2","test":true,"metadata":{"a":1,"b":{"c":1,"c":2}}}`,
      `{"amount":"10","order_id":"dup-3","test":true,"metadata":{"a":1,"\\u0061":2}}`
    ]) {
      const answer = await send(body)
      expect([answer.status, answer.json.error.code]).toEqual([400, "invalid_json_body"])
      expect(answer.json.error.message).toMatch(/^invalid json body: duplicate key "(amount|c|a)"$/)
    }
    expect(await count("payments")).toBe(before + 1)
  }, 60_000)

  it("authenticated JSON answers carry Cache-Control: no-store and X-Content-Type-Options: nosniff", async () => {
    const m = await srv.merchant("https://merchant.example/cb")
    const headers = async (path: string, init: RequestInit) => (await fetch(`${srv.base}${path}`, init)).headers
    for (const h of [
      await headers("/api/v1/balance", { headers: { "x-api-key": m.apiKey, "x-nonce": crypto.randomUUID() } }),
      await headers("/api/v1/balance", { headers: { "x-api-key": "pd_wrong", "x-nonce": crypto.randomUUID() } }),
      await headers("/admin/v1/deliveries", { headers: { authorization: "Bearer test-admin" } }),
      await headers("/api/v1/auth/login", { method: "POST", headers: { "content-type": "application/json" }, body: "{\"email\":\"x@y.z\",\"password\":\"p\"}" })
    ]) {
      expect(h.get("cache-control")).toBe("no-store")
      expect(h.get("x-content-type-options")).toBe("nosniff")
    }
  }, 60_000)

  it("a refund after a payout drives available_usdt below zero; while it is negative payouts are neither created nor approved", async () => {
    await srv.admin("PUT", "/rate", { rate: "100.00" })
    const m = await srv.merchant("https://merchant.example/cb")
    const funding = await m.api("POST", "/payments", { amount: "10000", order_id: "fund" })
    await srv.admin("POST", `/acquirer/payments/${funding.json.id}/outcome`, { outcome: "paid" })
    const payout = await m.api("POST", "/payouts", { amount_usdt: "80", wallet_address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" })
    expect(payout.status).toBe(200)
    expect((await srv.admin("POST", `/payments/${funding.json.id}/refund`)).status).toBe(200)
    expect((await m.api("GET", "/balance")).json).toMatchObject({ available_usdt: "-80.000000", hold_usdt: "80.000000" })
    const approve = await srv.admin("POST", `/payouts/${payout.json.id}/approve`)
    expect([approve.status, approve.json.error.message]).toEqual([400, "insufficient balance"])
    const another = await m.api("POST", "/payouts", { amount_usdt: "1", wallet_address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" })
    expect([another.status, another.json.error.message]).toEqual([400, "insufficient balance"])
    // The operator rejects the held payout: its hold pays the debt back.
    expect((await srv.admin("POST", `/payouts/${payout.json.id}/reject`, { reason: "refund exceeded the balance" })).status).toBe(200)
    expect((await m.api("GET", "/balance")).json).toMatchObject({ available_usdt: "0.000000", hold_usdt: "0.000000" })
  }, 60_000)

  it("an operator's refund and approval repeated with their Idempotency-Key (at once, and after a lost answer) move once and answer the object", async () => {
    await srv.admin("PUT", "/rate", { rate: "100.00" })
    const m = await srv.merchant("https://merchant.example/cb")
    const payment = await m.api("POST", "/payments", { amount: "10000", order_id: `keyed-${randomBytes(4).toString("hex")}` })
    await srv.admin("POST", `/acquirer/payments/${payment.json.id}/outcome`, { outcome: "paid" })
    const key = { "idempotency-key": `refund-${payment.json.id}` }
    const events = async (type: string) =>
      Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM outbox_events WHERE payment_id = $1 AND event_type = $2`, [payment.json.id.replace(/^pay_/, ""), type]))[0]!.n)
    // Two at once: one refunds, the other waits for its lock and finds its record.
    const both = await Promise.all([1, 2].map(() => srv.admin("POST", `/payments/${payment.json.id}/refund`, undefined, key)))
    expect(both.map((answer) => [answer.status, answer.json.status])).toEqual([[200, "refunded"], [200, "refunded"]])
    const later = await srv.admin("POST", `/payments/${payment.json.id}/refund`, undefined, key)
    expect([later.status, later.json]).toEqual([200, both[0]!.json])
    expect(await events("payment.refunded")).toBe(1)
    expect(await db.query(`SELECT scope, resource_id FROM idempotency_records WHERE key = $1`, [key["idempotency-key"]])).toEqual([
      { scope: "operator", resource_id: payment.json.id.replace(/^pay_/, "") }
    ])
    const other = await srv.admin("POST", `/payments/${payment.json.id}/chargeback`, undefined, key)
    expect([other.status, other.json.error.code]).toEqual([409, "idempotency_conflict"])
    // One key sent at once for three payments of the terminal: one moves; the others' inserts conflict,
    // their moves roll back, and run again they find the key taken (409), still paid.
    const three = await Promise.all([1, 2, 3].map(async (i) => {
      const paid = await m.api("POST", "/payments", { amount: "100", order_id: `shared-${i}-${randomBytes(4).toString("hex")}` })
      await srv.admin("POST", `/acquirer/payments/${paid.json.id}/outcome`, { outcome: "paid" })
      return paid.json.id as string
    }))
    const shared = { "idempotency-key": `shared-${randomBytes(4).toString("hex")}` }
    const answers = await Promise.all(three.map((id, i) => srv.admin("POST", `/payments/${id}/${i === 0 ? "chargeback" : "refund"}`, undefined, shared)))
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409, 409])
    const statuses = await Promise.all(three.map(async (id) => (await srv.admin("GET", `/payments/${id}`)).json.status))
    expect(statuses.filter((status) => status === "paid")).toHaveLength(2)
    const moved = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM outbox_events WHERE payment_id = ANY($1::uuid[]) AND event_type IN ('payment.refunded', 'payment.chargeback')`,
      [three.map((id) => id.replace(/^pay_/, ""))]
    )
    expect(Number(moved[0]!.n)).toBe(1)

    const funding = await m.api("POST", "/payments", { amount: "10000", order_id: `fund-${randomBytes(4).toString("hex")}` })
    await srv.admin("POST", `/acquirer/payments/${funding.json.id}/outcome`, { outcome: "paid" })
    const payout = await m.api("POST", "/payouts", { amount_usdt: "50", wallet_address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" })
    const approveKey = { "idempotency-key": `approve-${payout.json.id}` }
    const approved = await srv.admin("POST", `/payouts/${payout.json.id}/approve`, undefined, approveKey)
    expect([approved.status, approved.json.status]).toEqual([200, "processing"])
    const again = await srv.admin("POST", `/payouts/${payout.json.id}/approve`, undefined, approveKey)
    expect([again.status, again.json.id]).toEqual([200, payout.json.id])
    // Without the key the repeat is the state conflict it was.
    expect((await srv.admin("POST", `/payouts/${payout.json.id}/approve`)).status).toBe(409)
  }, 60_000)
})

describe("operator token strength", () => {
  const base = { PAYDESK_SECRET_KEY: randomBytes(32).toString("base64") }

  it("refuses a token shorter than 32 characters when HOST is not loopback, and warns about a manual clock there", () => {
    expect(() => Config.load({ ...base, HOST: "0.0.0.0", PAYDESK_ADMIN_TOKEN: "short-token" })).toThrow(/at least 32 characters/)
    expect(() => Config.load({ ...base, HOST: "192.168.1.10", PAYDESK_ADMIN_TOKEN: "x".repeat(31) })).toThrow(Config.SettingsError)
    expect(Config.load({ ...base, HOST: "0.0.0.0", PAYDESK_ADMIN_TOKEN: "x".repeat(32), PAYDESK_PUBLIC_URL: "https://pay.example" }).warnings).toEqual([])
    expect(Option.isNone(Config.load({ ...base, HOST: "0.0.0.0" }).adminToken)).toBe(true)
    for (const host of ["127.0.0.1", "::1", "localhost", "127.0.0.2"]) expect(Config.load({ ...base, HOST: host, PAYDESK_ADMIN_TOKEN: "short" }).adminToken.pipe(Option.map(Redacted.value))).toEqual(Option.some("short"))
    expect(Config.load({ ...base, HOST: "0.0.0.0", PAYDESK_ADMIN_TOKEN: "x".repeat(40), PAYDESK_CLOCK: "manual" }).warnings[0]).toMatch(/PAYDESK_CLOCK=manual on 0\.0\.0\.0/)
    expect(Config.load({ ...base, PAYDESK_CLOCK: "manual" }).warnings).toEqual([])
    expect(Config.load(base).callbackAllowPrivate).toBe(false)
    expect(Config.load({ ...base, PAYDESK_CALLBACK_ALLOW_PRIVATE: "1" }).callbackAllowPrivate).toBe(true)
    expect(() => Config.load({ ...base, PAYDESK_CALLBACK_ALLOW_PRIVATE: "yes" })).toThrow(/PAYDESK_CALLBACK_ALLOW_PRIVATE/)
    expect(Config.load(base).loginLimits).toEqual({ perEmail: 10, perAddress: 30 })
  })
})
