import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Operator, Payments, SubscriptionRepository, Subscriptions } from "@paydesk/core"
import { AcquirerEmulator, Kit } from "@paydesk/testkit"
import { expectError, json, keyHeaders, make, shape, type TestApp } from "./TestApp.js"

const missingFields = "Укажите терминал (terminal_id), план (plan_id), сумму (amount) и ключ идемпотентности (Idempotency-Key)"

let t: TestApp
let merchant: Kit.Merchant
let plans: Kit.Plans

beforeEach(async () => {
  t = await make()
  merchant = await t.merchant()
  plans = await t.plans(merchant.terminal.id)
})
afterEach(() => t.close())

const create = (payload: unknown, key: string | null = crypto.randomUUID(), apiKey = merchant.apiKey) =>
  t.app.inject({
    method: "POST",
    url: "/api/v1/subscriptions",
    headers: keyHeaders(apiKey, key === null ? {} : { "idempotency-key": key }),
    payload: payload as object
  })
const get = (url: string, apiKey = merchant.apiKey) => t.app.inject({ method: "GET", url: `/api/v1${url}`, headers: keyHeaders(apiKey) })
const stop = (id: string, apiKey = merchant.apiKey) => t.app.inject({ method: "POST", url: `/api/v1/subscriptions/${id}/stop`, headers: keyHeaders(apiKey) })
const ceiling = (extra: Record<string, unknown> = {}) => ({ terminal_id: merchant.terminal.id, plan_id: plans.ceilingMonthly.id, amount: "1000.50", ...extra })
const fixed = (extra: Record<string, unknown> = {}) => ({ terminal_id: merchant.terminal.id, plan_id: plans.fixedMonthly.id, payer_id: "payer-1", ...extra })
const count = () => t.run(Effect.flatMap(SubscriptionRepository, (r) => r.list({ terminalIds: [merchant.terminal.id], providerState: null }, { limit: 100, offset: 0 })).pipe(Effect.map((r) => r.total)))

/** The payer confirms on the form and pays the first payment: active/enabled. */
const activate = (payUrl: string) =>
  t.run(Effect.gen(function*() {
    const token = payUrl.split("/").at(-1)!
    const { subscription } = yield* Subscriptions.findPublic(token)
    yield* Subscriptions.confirm(token, subscription.csrfToken)
    const { subscription: pending } = yield* Subscriptions.findPublic(token)
    yield* Payments.settle(pending.firstPaymentId!, "paid")
  }))

describe("MerchantApi subscription plans", () => {
  it("lists the terminal's active plans", async () => {
    const response = await get(`/subscription-plans?terminal_id=${merchant.terminal.id}`)
    expect(response.statusCode).toBe(200)
    const body = shape("PlanList", json(response)) as { items: Array<Record<string, unknown>> }
    expect(body.items.map((p) => p["id"]).sort()).toEqual(Object.values(plans).map((p) => p.id).sort())
    expect(body.items.find((p) => p["id"] === plans.ceilingMonthly.id)).toMatchObject({ interval: "month", cap_amount_rub: "4000.00", version: 1 })
    expect(body.items.find((p) => p["id"] === plans.fixedMonthly.id)).toMatchObject({ payer_amount_rub: "990.00", merchant_amount_rub: "950.00" })
  })

  it("400 terminal_id is required, 403 terminal access denied, 503 recurring plans not configured", async () => {
    expectError(await get("/subscription-plans"), 400, "terminal_id_required", "terminal_id is required")
    const other = await t.merchant()
    expectError(await get(`/subscription-plans?terminal_id=${other.terminal.id}`), 403, "access_denied", "terminal access denied")
    expectError(await get(`/subscription-plans?terminal_id=${other.terminal.id}`, other.apiKey), 503, "recurring_not_configured", "recurring plans not configured")
  })

  it("a terminal without plans is the merchant's state, not a server failure: its 503 is not logged as an error", async () => {
    const lines: Array<string> = []
    const logged = await make({ logger: { level: "info", stream: { write: (line: string) => void lines.push(line) } } })
    try {
      const other = await logged.merchant()
      const answer = await logged.app.inject({ method: "GET", url: `/api/v1/subscription-plans?terminal_id=${other.terminal.id}`, headers: keyHeaders(other.apiKey) })
      expectError(answer, 503, "recurring_not_configured", "recurring plans not configured")
      const entries = lines.map((line) => JSON.parse(line) as { level: number; msg: string; res?: { statusCode?: number } })
      expect(entries.filter((e) => e.level >= 50)).toEqual([])
      // The request log has it, as every answer.
      expect(entries.some((e) => e.level === 30 && JSON.stringify(e).includes("503"))).toBe(true)
    } finally {
      await logged.close()
    }
  })
})

describe("MerchantApi subscription creation", () => {
  it("creates (201 with pay_url), replays the Idempotency-Key (200) and conflicts on another body (409)", async () => {
    const created = await create(ceiling({ merchant_subscription_ref: "ref-1" }), "key-1")
    expect(created.statusCode).toBe(201)
    const sub = shape("Subscription", json(created)) as Record<string, unknown>
    expect(sub).toMatchObject({
      terminal_id: merchant.terminal.id,
      plan_id: plans.ceilingMonthly.id,
      merchant_subscription_ref: "ref-1",
      provider_state: "new",
      billing_status: "consent_pending",
      merchant_amount_rub: "1000.50",
      payer_amount_rub: "1000.50",
      interval: "month",
      successful_cycles: 0,
      consecutive_failures: 0,
      next_charge_at: null
    })
    expect(sub["pay_url"]).toMatch(/^http:\/\/pay\.test\/public\/subscriptions\//)
    const replay = await create(ceiling({ merchant_subscription_ref: "ref-1", amount: "1000,5" }), "key-1")
    expect(replay.statusCode).toBe(200)
    expect(json(replay).id).toBe(sub["id"])
    expectError(await create(ceiling({ amount: "1000.51", merchant_subscription_ref: "ref-1" }), "key-1"), 409, "idempotency_conflict", "idempotency key conflicts with another request")
    const fixedSub = await create(fixed({ description: "Premium" }))
    expect(fixedSub.statusCode).toBe(201)
    expect(json(fixedSub)).toMatchObject({ payer_id: "payer-1", payer_amount_rub: "990.00", merchant_amount_rub: "950.00", description: "Premium" })
    expect(await count()).toBe(2)
  })

  it("an H2H terminal gets redirect_url and starts the binding at once", async () => {
    const h2h = await t.merchant({ h2h: true })
    const h2hPlans = await t.plans(h2h.terminal.id)
    const response = await create({ terminal_id: h2h.terminal.id, plan_id: h2hPlans.fixedMonthly.id, payer_id: "p" }, "h2h-1", h2h.apiKey)
    expect(response.statusCode).toBe(201)
    const body = shape("Subscription", json(response)) as Record<string, unknown>
    expect(body["pay_url"]).toBeUndefined()
    // Spec rule 5: the 201 answer shows consent_pending (docs/decisions.md, H2H creation).
    expect(body).toMatchObject({
      redirect_url: AcquirerEmulator.bindingUrlOf(String(body["id"])),
      provider_state: "new",
      billing_status: "consent_pending"
    })
  })

  it("creates a sandbox subscription with test: true or X-Test-Mode: true, listed apart from live ones", async () => {
    const body = shape("Subscription", json(await create(ceiling({ test: true }), "sandbox-1"))) as Record<string, unknown>
    expect([body["test"], body["environment"]]).toEqual([true, "sandbox"])
    const header = await t.app.inject({
      method: "POST",
      url: "/api/v1/subscriptions",
      headers: keyHeaders(merchant.apiKey, { "idempotency-key": "sandbox-2", "x-test-mode": "true" }),
      payload: ceiling()
    })
    expect([header.statusCode, json(header).environment]).toEqual([201, "sandbox"])
    expectError(await create(ceiling({ test: "yes" }), "sandbox-3"), 400, "invalid_json_body", "invalid json body")
    const disagreeing = await t.app.inject({
      method: "POST",
      url: "/api/v1/subscriptions",
      headers: keyHeaders(merchant.apiKey, { "idempotency-key": "sandbox-4", "x-test-mode": "true" }),
      payload: ceiling({ test: false })
    })
    expectError(disagreeing, 400, "invalid_request", "test (false) and X-Test-Mode (true) disagree: send one of them, or the same value")
    expect(json(await get("/subscriptions")).total).toBe(0)
    expect(json(await get("/subscriptions?environment=sandbox")).total).toBe(2)
    // test: false is a live subscription, as without it.
    const live = await create(ceiling({ test: false }), "live-1")
    expect([live.statusCode, json(live).environment]).toEqual([201, "prod"])
    expect(json(await get("/subscriptions?environment=all")).total).toBe(3)
  })

  it("a replay with the same Idempotency-Key answers 200 even after the plan changed or the terminal was disabled", async () => {
    const first = await create(fixed(), "retry-1")
    expect(first.statusCode).toBe(201)
    await t.run(Operator.createPlan({
      terminalIds: [merchant.terminal.id],
      code: plans.fixedMonthly.code,
      name: "Premium monthly v2",
      interval: "month",
      payerAmountRub: "1290",
      merchantAmountRub: "1200",
      consentText: "Новые условия",
      policyVersion: "2026-06"
    }))
    const replay = await create(fixed(), "retry-1")
    expect(replay.statusCode).toBe(200)
    expect(json(replay).id).toBe(json(first).id)
    await t.run(Operator.setTerminalStatus(merchant.terminal.id, "disabled"))
    const disabled = await create(fixed(), "retry-1")
    expect([disabled.statusCode, json(disabled).id]).toEqual([200, json(first).id])
    expectError(await create(fixed(), "retry-2"), 400, "terminal_unavailable", "terminal is unavailable")
    await t.run(Operator.setTerminalStatus(merchant.terminal.id, "active"))
  })

  it("every 400 of the spec, creating nothing", async () => {
    const raw = await t.app.inject({
      method: "POST",
      url: "/api/v1/subscriptions",
      headers: keyHeaders(merchant.apiKey, { "idempotency-key": "k", "content-type": "application/json" }),
      payload: "{\"terminal_id\":"
    })
    expectError(raw, 400, "invalid_json_body", "invalid json body")
    // Invalid UTF-8, a duplicate key, too deep a nesting: the spec's exact text on this route too
    // (elsewhere the message says which; a conformance probe found the detail here).
    for (const payload of [Buffer.from("{\"terminal_id\":\"\xff\"}", "latin1"), "{\"amount\":\"1\",\"amount\":\"2\"}", "[".repeat(100) + "]".repeat(100)]) {
      const refused = await t.app.inject({
        method: "POST",
        url: "/api/v1/subscriptions",
        headers: keyHeaders(merchant.apiKey, { "idempotency-key": "k", "content-type": "application/json" }),
        payload
      })
      expectError(refused, 400, "invalid_json_body", "invalid json body")
    }
    // The spec's exact text; `field` names the field at fault (an unknown one, or a value of the wrong type).
    expect(expectError(await create(ceiling({ colour: "red" })), 400, "invalid_json_body", "invalid json body").field).toBe("colour")
    expect(expectError(await create(ceiling({ amount: 1000 })), 400, "invalid_json_body", "invalid json body").field).toBe("amount")
    expect(expectError(await create(ceiling({ test: "yes" })), 400, "invalid_json_body", "invalid json body").field).toBe("test")
    expect(expectError(raw, 400, "invalid_json_body", "invalid json body").field).toBeUndefined()
    expectError(await create({ plan_id: plans.ceilingMonthly.id, amount: "10" }), 400, "terminal_id_required", "terminal_id is required")
    // The spec's Russian text names all four; `field` the first that is missing.
    expect(expectError(await create(ceiling({ plan_id: undefined })), 400, "subscription_fields_missing", missingFields).field).toBe("plan_id")
    expect(expectError(await create(ceiling(), null), 400, "subscription_fields_missing", missingFields).field).toBe("Idempotency-Key")
    expect(expectError(await create(ceiling({ amount: undefined })), 400, "subscription_fields_missing", missingFields).field).toBe("amount")
    expect(expectError(await create(ceiling(), "k".repeat(129)), 400, "invalid_request").field).toBe("Idempotency-Key")
    expect(expectError(await create(ceiling({ merchant_subscription_ref: "r".repeat(129) })), 400, "invalid_request").field).toBe("merchant_subscription_ref")
    expectError(await create(ceiling({ plan_id: crypto.randomUUID() })), 400, "plan_not_available", "selected plan is not available for this terminal")
    const other = await t.merchant()
    const otherPlans = await t.plans(other.terminal.id)
    expectError(await create(ceiling({ plan_id: otherPlans.ceilingMonthly.id })), 400, "plan_not_available")
    expectError(await create(ceiling({ amount: "10.123" })), 400, "amount_malformed", "amount malformed: rubles with at most two decimals")
    expectError(await create(ceiling({ amount: "0,00" })), 400, "amount_not_positive", "amount must be greater than zero")
    expectError(await create(ceiling({ amount: "4000.01" })), 400, "amount_exceeds_ceiling", "Сумма превышает лимит 4000.00 RUB за месяц")
    expectError(await create(ceiling({ plan_id: plans.ceiling90Days.id, amount: "9000.01" })), 400, "amount_exceeds_ceiling", "Сумма превышает лимит 9000.00 RUB за квартал")
    expect(expectError(await create(ceiling({ payer_id: "p" })), 400, "invalid_request").field).toBe("payer_id")
    expect(expectError(await create(ceiling({ description: "d" })), 400, "invalid_request").field).toBe("description")
    expect(expectError(await create(fixed({ amount: "990" })), 400, "invalid_request").field).toBe("amount")
    expect(expectError(await create(fixed({ payer_id: undefined })), 400, "invalid_request").field).toBe("payer_id")
    expect(expectError(await create(fixed({ payer_id: "я".repeat(17) })), 400, "invalid_request").field).toBe("payer_id")
    // Keys a store would write with U+FFFD for a lone surrogate (so two of them would meet).
    const unicode = (field: string) => `${field} must be valid Unicode text (a surrogate without its pair was sent)`
    expect(expectError(await create(fixed({ payer_id: "payer-\udc00" })), 400, "invalid_request", unicode("payer_id")).field).toBe("payer_id")
    expect(expectError(await create(ceiling({ merchant_subscription_ref: "\ud800ref" })), 400, "invalid_request", unicode("merchant_subscription_ref")).field)
      .toBe("merchant_subscription_ref")
    await t.run(Effect.flatMap(AcquirerEmulator.AcquirerEmulator, (a) => a.setRecurringUnavailable(true)))
    const h2h = await t.merchant({ h2h: true })
    const h2hPlans = await t.plans(h2h.terminal.id)
    const refused = await create({ terminal_id: h2h.terminal.id, plan_id: h2hPlans.ceilingMonthly.id, amount: "10" }, "h", h2h.apiKey)
    expectError(refused, 400, "recurring_temporarily_unavailable", "recurring scenario temporarily unavailable")
    await t.run(Operator.setTerminalStatus(merchant.terminal.id, "disabled"))
    expectError(await create(ceiling()), 400, "terminal_unavailable", "terminal is unavailable")
    expect(await count()).toBe(0)
  })

  it("403 subscription write access required, 503 subscriptions not configured", async () => {
    const other = await t.merchant()
    expectError(await create(ceiling({ terminal_id: other.terminal.id })), 403, "access_denied", "subscription write access required")
    const readOnlyKey = await t.run(Operator.createApiKey(merchant.terminal.id, { subscriptionWrite: false }))
    expectError(await create(ceiling(), "k", readOnlyKey), 403, "access_denied", "subscription write access required")
    expectError(await create({ terminal_id: other.terminal.id, plan_id: plans.ceilingMonthly.id, amount: "1" }, "k", other.apiKey), 503, "recurring_not_configured", "subscriptions not configured")
    await t.run(Effect.flatMap(AcquirerEmulator.AcquirerEmulator, (a) => a.setUnavailable(true)))
    const h2h = await t.merchant({ h2h: true })
    const h2hPlans = await t.plans(h2h.terminal.id)
    const down = await create({ terminal_id: h2h.terminal.id, plan_id: h2hPlans.ceilingMonthly.id, amount: "10" }, "h", h2h.apiKey)
    expectError(down, 503, "provider_unavailable", "provider not available")
    expect(await count()).toBe(0)
  })
})

describe("MerchantApi subscriptions: read, list, charges, stop", () => {
  it("reads without pay_url, lists with filters, and 404 subscription not found", async () => {
    const a = json(await create(ceiling()))
    const b = json(await create(fixed()))
    const read = await get(`/subscriptions/${a.id}`)
    expect(read.statusCode).toBe(200)
    const body = shape("Subscription", json(read)) as Record<string, unknown>
    expect(body["pay_url"]).toBeUndefined()
    expect(body["id"]).toBe(a.id)
    expect(json(await get(`/subscriptions/${String(a.id).toUpperCase()}`)).id).toBe(a.id)

    const list = await get("/subscriptions")
    expect(shape("SubscriptionPage", json(list))).toMatchObject({ total: 2, page: 1, per_page: 50 })
    expect(json(list).items.map((s: { id: string }) => s.id)).toEqual([b.id, a.id])
    expect(json(list).items[0].pay_url).toBeUndefined()
    expect(json(await get("/subscriptions?state=active")).total).toBe(0)
    expect(json(await get(`/subscriptions?state=new&terminal_id=${merchant.terminal.id}&page=1`)).total).toBe(2)
    expect(expectError(await get("/subscriptions?state=stopped"), 400, "invalid_request").field).toBe("state")

    const unconfigured = await t.merchant()
    expectError(await get(`/subscriptions/${a.id}`, unconfigured.apiKey), 503, "recurring_not_configured", "subscriptions not configured")
    expectError(await stop(a.id, unconfigured.apiKey), 503, "recurring_not_configured", "subscriptions not configured")
    const other = await t.merchant()
    await t.plans(other.terminal.id)
    expectError(await get(`/subscriptions/${a.id}`, other.apiKey), 404, "not_found", "subscription not found")
    expectError(await get(`/subscriptions/${crypto.randomUUID()}`), 404, "not_found", "subscription not found")
    expectError(await get("/subscriptions/not-a-uuid/charges"), 404, "not_found", "subscription not found")
    expectError(await stop(a.id, other.apiKey), 404, "not_found", "subscription not found")
    // A key of another terminal of the same account: the spec's 403 ("the key is issued for another
    // terminal"), where it read 404 (a conformance probe); nothing stopped.
    const sibling = await t.run(Operator.createTerminal({ accountId: merchant.accountId, name: "Second shop" }))
    await t.plans(sibling.terminal.id)
    expectError(await stop(a.id, sibling.apiKey), 403, "access_denied", "subscription write access required")
    // Programming its sandbox charges is a write too: the same answers as a stop (it read 404 for the sibling, an outside probe).
    const program = (apiKey: string) => t.app.inject({ method: "POST", url: `/api/v1/subscriptions/${a.id}/sandbox/charge-outcomes`, headers: keyHeaders(apiKey), payload: { outcomes: ["failed"] } })
    expectError(await program(sibling.apiKey), 403, "access_denied", "subscription write access required")
    expectError(await program(other.apiKey), 404, "not_found", "subscription not found")
    expectError(await get(`/subscriptions/${a.id}`, sibling.apiKey), 404, "not_found", "subscription not found")
    expect(json(await get(`/subscriptions/${a.id}`))).toMatchObject({ billing_status: "consent_pending" })
  })

  it("a dashboard user lists all subscriptions of the account", async () => {
    await create(ceiling())
    const pair = json(await t.app.inject({ method: "POST", url: "/api/v1/auth/login", payload: { email: merchant.ownerEmail, password: Kit.ownerPassword } }))
    const listed = await t.app.inject({ method: "GET", url: "/api/v1/subscriptions", headers: { authorization: `Bearer ${pair.access_token}` } })
    expect(json(listed).total).toBe(1)
  })

  it("shows the charge history after activation and stops (200 ok, twice)", async () => {
    const sub = json(await create(fixed()))
    expect(json(await get(`/subscriptions/${sub.id}/charges`))).toEqual([])
    await activate(sub.pay_url)
    const active = json(await get(`/subscriptions/${sub.id}`))
    expect(active).toMatchObject({ provider_state: "active", billing_status: "enabled", successful_cycles: 1 })
    const charges = await get(`/subscriptions/${sub.id}/charges`)
    expect(charges.statusCode).toBe(200)
    const history = shape("ChargeList", json(charges)) as Array<Record<string, unknown>>
    expect(history).toHaveLength(1)
    expect(history[0]).toMatchObject({ status: "payed", validation_status: "accepted", cycle_number: 1, amount_rub: "990.00", expected_amount_rub: "990.00" })
    const payment = json(await get(`/payments/${history[0]!["payment_id"]}`))
    expect(payment).toMatchObject({ status: "paid", subscription_id: sub.id, payment_method: "sbp_recurrent", recurring: true })

    const stopped = await stop(sub.id)
    expect(stopped.statusCode).toBe(200)
    expect(shape("Ok", json(stopped))).toEqual({ ok: true })
    expect(json(await get(`/subscriptions/${sub.id}`))).toMatchObject({ provider_state: "stop", billing_status: "stopped", next_charge_at: null })
    expect(json(await stop(sub.id))).toEqual({ ok: true })
  })

  it("stop: 400 (Russian) when the acquirer fails it, 403 without write access, 503 when the acquirer is down", async () => {
    const sub = json(await create(fixed()))
    await activate(sub.pay_url)
    const readOnlyKey = await t.run(Operator.createApiKey(merchant.terminal.id, { subscriptionWrite: false }))
    expectError(await stop(sub.id, readOnlyKey), 403, "access_denied", "subscription write access required")
    await t.run(Effect.flatMap(AcquirerEmulator.AcquirerEmulator, (a) => a.programStop(sub.id, "failed")))
    expectError(await stop(sub.id), 400, "stop_failed", "Не удалось завершить отключение подписки: подписка переведена на проверку (review)")
    expect(json(await get(`/subscriptions/${sub.id}`))).toMatchObject({ billing_status: "review" })

    const second = json(await create(fixed({ payer_id: "payer-2" })))
    await activate(second.pay_url)
    await t.run(Effect.flatMap(AcquirerEmulator.AcquirerEmulator, (a) => a.setUnavailable(true)))
    expectError(await stop(second.id), 503, "provider_unavailable", "provider not available")
  })
})
