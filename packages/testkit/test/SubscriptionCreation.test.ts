import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { Auth, Operator, Subscriptions, SubscriptionRepository } from "@paydesk/core"
import { AcquirerEmulator, Kit } from "@paydesk/testkit"

const setup = Effect.gen(function*() {
  yield* TestClock.setTime(Date.parse("2026-05-01T09:00:00.000Z"))
  const merchant = yield* Kit.provisionMerchant()
  const plans = yield* Kit.provisionPlans(merchant.terminal.id)
  const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
  return { merchant, plans, principal }
})

const countAll = (terminalId: string) =>
  Effect.flatMap(SubscriptionRepository, (r) => r.list({ terminalIds: [terminalId], providerState: null }, { limit: 100, offset: 0 }))
    .pipe(Effect.map((r) => r.total))

describe("Subscription creation rules", () => {
  it.effect("every rejection is a clear error and creates nothing", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal } = yield* setup
      const t = merchant.terminal.id
      const ceiling = plans.ceilingMonthly.id
      const fixed = plans.fixedMonthly.id
      const cases: Array<[string, string | null, unknown, string, RegExp?]> = [
        ["unknown field", "k", { terminal_id: t, plan_id: ceiling, amount: "10", coupon: "x" }, "InvalidJsonBody", /^invalid json body$/],
        ["non-string field", "k", { terminal_id: t, plan_id: ceiling, amount: 10 }, "InvalidJsonBody"],
        ["array body", "k", [1], "InvalidJsonBody"],
        ["no terminal", "k", { plan_id: ceiling, amount: "10" }, "TerminalIdRequired", /^terminal_id is required$/],
        ["no key", null, { terminal_id: t, plan_id: ceiling, amount: "10" }, "SubscriptionFieldsMissing", /ключ идемпотентности/],
        ["no plan", "k", { terminal_id: t, amount: "10" }, "SubscriptionFieldsMissing", /план/],
        ["no amount (ceiling)", "k", { terminal_id: t, plan_id: ceiling }, "SubscriptionFieldsMissing", /сумму/],
        ["key of 129", "k".repeat(129), { terminal_id: t, plan_id: ceiling, amount: "10" }, "InvalidRequest", /128/],
        ["ref of 129 bytes", "k", { terminal_id: t, plan_id: ceiling, amount: "10", merchant_subscription_ref: "я".repeat(65) }, "InvalidRequest", /128/],
        ["unknown plan", "k", { terminal_id: t, plan_id: crypto.randomUUID(), amount: "10" }, "PlanNotAvailable"],
        ["three decimals", "k", { terminal_id: t, plan_id: ceiling, amount: "10.001" }, "AmountMalformed"],
        ["zero", "k", { terminal_id: t, plan_id: ceiling, amount: "0,00" }, "AmountNotPositive"],
        ["above ceiling", "k", { terminal_id: t, plan_id: ceiling, amount: "4000.01" }, "AmountExceedsCeiling", /4000\.00 RUB за месяц/],
        ["payer_id in ceiling mode", "k", { terminal_id: t, plan_id: ceiling, amount: "10", payer_id: "p" }, "InvalidRequest"],
        ["description in ceiling mode", "k", { terminal_id: t, plan_id: ceiling, amount: "10", description: "d" }, "InvalidRequest"],
        ["amount for fixed tariff", "k", { terminal_id: t, plan_id: fixed, amount: "990", payer_id: "p" }, "InvalidRequest"],
        ["no payer_id for fixed tariff", "k", { terminal_id: t, plan_id: fixed }, "InvalidRequest"],
        ["empty payer_id", "k", { terminal_id: t, plan_id: fixed, payer_id: "" }, "InvalidRequest"],
        ["payer_id of 33 bytes", "k", { terminal_id: t, plan_id: fixed, payer_id: "x".repeat(33) }, "InvalidRequest", /32 bytes/],
        ["payer_id of 17 two-byte chars", "k", { terminal_id: t, plan_id: fixed, payer_id: "ж".repeat(17) }, "InvalidRequest", /32 bytes/],
        ["another terminal", "k", { terminal_id: crypto.randomUUID(), plan_id: ceiling, amount: "10" }, "AccessDenied", /^subscription write access required$/]
      ]
      for (const [name, key, body, tag, message] of cases) {
        const error = yield* Effect.flip(Subscriptions.create(principal, { idempotencyKey: key, body }))
        assert.strictEqual(error._tag, tag, name)
        if (message !== undefined) assert.match(error.message, message, name)
      }
      assert.strictEqual(yield* countAll(t), 0)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a ceiling amount exactly at the cap and 32-byte payer ids are accepted; terms are a snapshot", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal } = yield* setup
      const { subscription } = yield* Subscriptions.create(principal, {
        idempotencyKey: "a",
        body: { terminal_id: merchant.terminal.id, plan_id: plans.ceilingMonthly.id, amount: "4000" }
      })
      assert.strictEqual(subscription.terms.payerAmount, 400_000n)
      const { subscription: fixed } = yield* Subscriptions.create(principal, {
        idempotencyKey: "b",
        body: { terminal_id: merchant.terminal.id, plan_id: plans.fixedMonthly.id, payer_id: "ж".repeat(16), description: "Gold" }
      })
      assert.deepStrictEqual(
        [fixed.terms.planCode, fixed.terms.planVersion, fixed.terms.payerAmount, fixed.terms.merchantAmount, fixed.terms.policyVersion],
        [plans.fixedMonthly.code, 1, 99_000n, 95_000n, "2026-01"]
      )
      // A new plan version does not change existing subscriptions, and the old version is closed for new ones.
      const v2 = yield* Operator.createPlan({
        terminalIds: [merchant.terminal.id],
        code: plans.fixedMonthly.code,
        name: "Premium monthly v2",
        interval: "month",
        schedule: "calendar",
        payerAmountRub: "1290",
        merchantAmountRub: "1200",
        consentText: "Новые условия",
        policyVersion: "2026-05"
      })
      assert.strictEqual(v2.version, 2)
      const stored = yield* Subscriptions.get(principal, fixed.id)
      assert.strictEqual(stored.terms.payerAmount, 99_000n)
      const old = yield* Effect.flip(Subscriptions.create(principal, {
        idempotencyKey: "c",
        body: { terminal_id: merchant.terminal.id, plan_id: plans.fixedMonthly.id, payer_id: "p" }
      }))
      assert.strictEqual(old._tag, "PlanNotAvailable")
      const listed = yield* Subscriptions.listPlans(principal, merchant.terminal.id)
      assert.deepStrictEqual(listed.filter((p) => p.code === plans.fixedMonthly.code).map((p) => p.version), [2])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("the same Idempotency-Key replays with the same body and conflicts with another", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal } = yield* setup
      const body = { terminal_id: merchant.terminal.id, plan_id: plans.ceilingMonthly.id, amount: "1000.50" }
      const first = yield* Subscriptions.create(principal, { idempotencyKey: "same", body })
      const replay = yield* Subscriptions.create(principal, { idempotencyKey: "same", body: { ...body, amount: "1000,5" } })
      assert.isTrue(first.created)
      assert.isFalse(replay.created)
      assert.strictEqual(replay.subscription.id, first.subscription.id)
      const conflict = yield* Effect.flip(Subscriptions.create(principal, { idempotencyKey: "same", body: { ...body, amount: "999" } }))
      assert.strictEqual(conflict._tag, "IdempotencyConflict")
      assert.strictEqual(conflict.message, "idempotency key conflicts with another request")
      const other = yield* Subscriptions.create(principal, { idempotencyKey: "other", body })
      assert.notStrictEqual(other.subscription.id, first.subscription.id)
      assert.strictEqual(yield* countAll(merchant.terminal.id), 2)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("concurrent creations with one key give one subscription", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal } = yield* setup
      const body = { terminal_id: merchant.terminal.id, plan_id: plans.ceilingMonthly.id, amount: "10" }
      const results = yield* Effect.forEach(
        Array.from({ length: 50 }, () => body),
        (b) => Subscriptions.create(principal, { idempotencyKey: "race", body: b }),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(new Set(results.map((r) => r.subscription.id)).size, 1)
      assert.strictEqual(results.filter((r) => r.created).length, 1)
      assert.strictEqual(yield* countAll(merchant.terminal.id), 1)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("plans: terminal_id required, 503 without recurring, only active plans", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal } = yield* setup
      assert.strictEqual((yield* Effect.flip(Subscriptions.listPlans(principal, undefined))).message, "terminal_id is required")
      const listed = yield* Subscriptions.listPlans(principal, merchant.terminal.id)
      assert.deepStrictEqual(new Set(listed.map((p) => p.id)), new Set(Object.values(plans).map((p) => p.id)))
      const bare = yield* Kit.provisionMerchant()
      const barePrincipal = yield* Kit.apiKeyPrincipal(bare, crypto.randomUUID())
      const none = yield* Effect.flip(Subscriptions.listPlans(barePrincipal, bare.terminal.id))
      assert.strictEqual(none.message, "recurring plans not configured")
      const create = yield* Effect.flip(Subscriptions.create(barePrincipal, {
        idempotencyKey: "k",
        body: { terminal_id: bare.terminal.id, plan_id: plans.ceilingMonthly.id, amount: "10" }
      }))
      assert.strictEqual(create.message, "subscriptions not configured")
      const foreign = yield* Effect.flip(Subscriptions.listPlans(principal, bare.terminal.id))
      assert.strictEqual(foreign.message, "terminal access denied")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("keys without write access, disabled terminals and an unavailable acquirer are refused", () =>
    Effect.gen(function*() {
      const { merchant, plans } = yield* setup
      const readOnlyKey = yield* Operator.createApiKey(merchant.terminal.id, { subscriptionWrite: false })
      const readOnly = yield* Auth.apiKey(readOnlyKey, crypto.randomUUID())
      const body = { terminal_id: merchant.terminal.id, plan_id: plans.ceilingMonthly.id, amount: "10" }
      assert.strictEqual(
        (yield* Effect.flip(Subscriptions.create(readOnly, { idempotencyKey: "k", body }))).message,
        "subscription write access required"
      )
      const h2h = yield* Kit.provisionMerchant({ h2h: true })
      const h2hPlans = yield* Kit.provisionPlans(h2h.terminal.id)
      const h2hPrincipal = yield* Kit.apiKeyPrincipal(h2h, crypto.randomUUID())
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      const h2hBody = { terminal_id: h2h.terminal.id, plan_id: h2hPlans.ceilingMonthly.id, amount: "10" }
      yield* emulator.setRecurringUnavailable(true)
      assert.strictEqual(
        (yield* Effect.flip(Subscriptions.create(h2hPrincipal, { idempotencyKey: "k", body: h2hBody }))).message,
        "recurring scenario temporarily unavailable"
      )
      yield* emulator.setRecurringUnavailable(false)
      yield* emulator.setUnavailable(true)
      assert.strictEqual(
        (yield* Effect.flip(Subscriptions.create(h2hPrincipal, { idempotencyKey: "k", body: h2hBody }))).message,
        "provider not available"
      )
      yield* emulator.setUnavailable(false)
      yield* Operator.setTerminalStatus(merchant.terminal.id, "disabled")
      const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
      assert.strictEqual(
        (yield* Effect.flip(Subscriptions.create(principal, { idempotencyKey: "k", body }))).message,
        "terminal is unavailable"
      )
      assert.strictEqual(yield* countAll(merchant.terminal.id), 0)
      assert.strictEqual(yield* countAll(h2h.terminal.id), 0)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("get, list by state with paging, and 404 for foreign or unknown ids", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal } = yield* setup
      for (let i = 0; i < 55; i++) {
        yield* Subscriptions.create(principal, {
          idempotencyKey: `k-${i}`,
          body: { terminal_id: merchant.terminal.id, plan_id: plans.ceilingMonthly.id, amount: "10" }
        })
      }
      const page1 = yield* Subscriptions.list(principal, { state: "new" })
      const page2 = yield* Subscriptions.list(principal, { state: "new", page: 2 })
      assert.deepStrictEqual([page1.items.length, page2.items.length, page1.total], [50, 5, 55])
      assert.strictEqual((yield* Subscriptions.list(principal, { state: "active" })).total, 0)
      assert.strictEqual((yield* Effect.flip(Subscriptions.list(principal, { state: "weird" })))._tag, "InvalidRequest")
      const other = yield* Kit.provisionMerchant()
      const otherPrincipal = yield* Kit.apiKeyPrincipal(other, crypto.randomUUID())
      const notFound = yield* Effect.flip(Subscriptions.get(otherPrincipal, page1.items[0]!.id))
      assert.strictEqual(notFound.message, "subscription not found")
      assert.strictEqual((yield* Effect.flip(Subscriptions.get(principal, "nope"))).message, "subscription not found")
      assert.strictEqual((yield* Effect.flip(Subscriptions.stop(otherPrincipal, page1.items[0]!.id))).message, "subscription not found")
    }).pipe(Effect.provide(Kit.layer)))
})
