import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Option, Result } from "effect"
import { TestClock } from "effect/testing"
import { Acquirer, Auth, type InvalidRequest, Operator, PlanRepository, ProviderUnavailable, Subscriptions, SubscriptionRepository } from "@paydesk/core"
import { AcquirerEmulator, Fixtures, Kit } from "@paydesk/testkit"

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
      const cases: Array<[string, string | null, Omit<Subscriptions.CreateCommand, "idempotencyKey">, string, RegExp?]> = [
        ["no terminal", "k", { planId: ceiling, amount: "10" }, "TerminalIdRequired", /^terminal_id is required$/],
        ["no key", null, { terminalId: t, planId: ceiling, amount: "10" }, "SubscriptionFieldsMissing", /ключ идемпотентности/],
        ["no plan", "k", { terminalId: t, amount: "10" }, "SubscriptionFieldsMissing", /план/],
        ["no amount (ceiling)", "k", { terminalId: t, planId: ceiling }, "SubscriptionFieldsMissing", /сумму/],
        ["key of 129", "k".repeat(129), { terminalId: t, planId: ceiling, amount: "10" }, "InvalidRequest", /128/],
        ["ref of 129 bytes", "k", { terminalId: t, planId: ceiling, amount: "10", merchantSubscriptionRef: "я".repeat(65) }, "InvalidRequest", /128/],
        ["unknown plan", "k", { terminalId: t, planId: crypto.randomUUID(), amount: "10" }, "PlanNotAvailable"],
        ["three decimals", "k", { terminalId: t, planId: ceiling, amount: "10.001" }, "AmountMalformed"],
        ["zero", "k", { terminalId: t, planId: ceiling, amount: "0,00" }, "AmountNotPositive"],
        ["above ceiling", "k", { terminalId: t, planId: ceiling, amount: "4000.01" }, "AmountExceedsCeiling", /4000\.00 RUB за месяц/],
        ["payer_id in ceiling mode", "k", { terminalId: t, planId: ceiling, amount: "10", payerId: "p" }, "InvalidRequest"],
        ["description in ceiling mode", "k", { terminalId: t, planId: ceiling, amount: "10", description: "d" }, "InvalidRequest"],
        ["amount for fixed tariff", "k", { terminalId: t, planId: fixed, amount: "990", payerId: "p" }, "InvalidRequest"],
        ["no payer_id for fixed tariff", "k", { terminalId: t, planId: fixed }, "InvalidRequest"],
        ["empty payer_id", "k", { terminalId: t, planId: fixed, payerId: "" }, "InvalidRequest"],
        ["payer_id of 33 bytes", "k", { terminalId: t, planId: fixed, payerId: "x".repeat(33) }, "InvalidRequest", /32 bytes/],
        ["payer_id of 17 two-byte chars", "k", { terminalId: t, planId: fixed, payerId: "ж".repeat(17) }, "InvalidRequest", /32 bytes/],
        ["another terminal", "k", { terminalId: crypto.randomUUID(), planId: ceiling, amount: "10" }, "AccessDenied", /^subscription write access required$/],
        ["a terminal_id that is not a UUID", "k", { terminalId: "not-a-uuid", planId: ceiling, amount: "10" }, "AccessDenied", /^subscription write access required$/]
      ]
      for (const [name, key, body, tag, message] of cases) {
        const error = yield* Effect.flip(Subscriptions.create(principal, { idempotencyKey: key, ...body }))
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
        terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "4000"
      })
      assert.strictEqual(subscription.terms.payerAmount, 400_000n)
      const { subscription: fixed } = yield* Subscriptions.create(principal, {
        idempotencyKey: "b",
        terminalId: merchant.terminal.id, planId: plans.fixedMonthly.id, payerId: "ж".repeat(16), description: "Gold"
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
        terminalId: merchant.terminal.id, planId: plans.fixedMonthly.id, payerId: "p"
      }))
      assert.strictEqual(old._tag, "PlanNotAvailable")
      const listed = yield* Subscriptions.listPlans(principal, merchant.terminal.id)
      assert.deepStrictEqual(listed.filter((p) => p.code === plans.fixedMonthly.code).map((p) => p.version), [2])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("the same Idempotency-Key replays with the same body and conflicts with another", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal } = yield* setup
      const body = { terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "1000.50" }
      const first = yield* Subscriptions.create(principal, { idempotencyKey: "same", ...body })
      const replay = yield* Subscriptions.create(principal, { idempotencyKey: "same", ...body, amount: "1000,5" })
      assert.isTrue(first.created)
      assert.isFalse(replay.created)
      assert.strictEqual(replay.subscription.id, first.subscription.id)
      const conflict = yield* Effect.flip(Subscriptions.create(principal, { idempotencyKey: "same", ...body, amount: "999" }))
      assert.strictEqual(conflict._tag, "IdempotencyConflict")
      assert.strictEqual(conflict.message, "idempotency key conflicts with another request")
      const other = yield* Subscriptions.create(principal, { idempotencyKey: "other", ...body })
      assert.notStrictEqual(other.subscription.id, first.subscription.id)
      assert.strictEqual(yield* countAll(merchant.terminal.id), 2)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a replay answers first: after a new plan version or with the terminal disabled it still returns the subscription", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal } = yield* setup
      const body = { terminalId: merchant.terminal.id, planId: plans.fixedMonthly.id, payerId: "p-1" }
      const first = yield* Subscriptions.create(principal, { idempotencyKey: "retry-me", ...body })
      yield* Operator.createPlan({
        terminalIds: [merchant.terminal.id],
        code: plans.fixedMonthly.code,
        name: "Premium monthly v2",
        interval: "month",
        payerAmountRub: "1290",
        merchantAmountRub: "1200",
        consentText: "Новые условия",
        policyVersion: "2026-05"
      })
      const afterNewVersion = yield* Subscriptions.create(principal, { idempotencyKey: "retry-me", ...body })
      assert.deepStrictEqual([afterNewVersion.created, afterNewVersion.subscription.id], [false, first.subscription.id])
      yield* Operator.setTerminalStatus(merchant.terminal.id, "disabled")
      const afterDisable = yield* Subscriptions.create(principal, { idempotencyKey: "retry-me", ...body })
      assert.deepStrictEqual([afterDisable.created, afterDisable.subscription.id], [false, first.subscription.id])
      // Another body under the key is still a conflict; a new key meets the disabled terminal.
      const conflict = yield* Effect.flip(Subscriptions.create(principal, { idempotencyKey: "retry-me", ...body, payerId: "p-2" }))
      assert.strictEqual(conflict._tag, "IdempotencyConflict")
      // A sandbox request under the key is another body: 409, not the live subscription.
      const sandbox = yield* Effect.flip(Subscriptions.create(principal, { idempotencyKey: "retry-me", ...body, test: true }))
      assert.strictEqual(sandbox._tag, "IdempotencyConflict")
      const fresh = yield* Effect.flip(Subscriptions.create(principal, { idempotencyKey: "new-key", ...body }))
      assert.strictEqual(fresh.message, "terminal is unavailable")
      assert.strictEqual(yield* countAll(merchant.terminal.id), 1)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("concurrent creations with one key give one subscription", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal } = yield* setup
      const body = { terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "10" }
      const results = yield* Effect.forEach(
        Array.from({ length: 50 }, () => body),
        (b) => Subscriptions.create(principal, { idempotencyKey: "race", ...b }),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(new Set(results.map((r) => r.subscription.id)).size, 1)
      assert.strictEqual(results.filter((r) => r.created).length, 1)
      assert.strictEqual(yield* countAll(merchant.terminal.id), 1)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("concurrent first tries on an H2H terminal end the bindings of the subscriptions never created", () =>
    Effect.gen(function*() {
      const merchant = yield* Kit.provisionMerchant({ h2h: true })
      const plans = yield* Kit.provisionPlans(merchant.terminal.id)
      const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      // Every try reaches the acquirer before any commits: each starts a binding for its own new id.
      const acquirer = yield* Acquirer
      const gated = (tries: number) =>
        Effect.map(Deferred.make<void>(), (all) => {
          let arrived = 0
          return Acquirer.of({
            ...acquirer,
            startBinding: (input) =>
              Effect.suspend(() => (++arrived === tries ? Deferred.succeed(all, undefined) : Effect.void)).pipe(
                Effect.andThen(Deferred.await(all)),
                Effect.andThen(acquirer.startBinding(input))
              )
          })
        })
      const body = { terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "10" }
      // Five first tries under one key, one of them with another amount (a conflict).
      const results = yield* Effect.forEach(["10", "10", "11", "10", "10"],
        (amount) => Effect.result(Subscriptions.create(principal, { idempotencyKey: "race", ...body, amount })),
        { concurrency: "unbounded" }).pipe(Effect.provideService(Acquirer, yield* gated(5)))
      const won = results.flatMap((r) => Result.isSuccess(r) && r.success.created ? [r.success.subscription.id] : [])
      assert.strictEqual(won.length, 1)
      // The other amount under the key is a conflict; the same body a replay of the winner.
      assert.deepStrictEqual(results.map((r) => Result.isSuccess(r) ? r.success.subscription.id : r.failure._tag).sort(),
        [...Array(4).fill(won[0]), "IdempotencyConflict"].sort())
      assert.strictEqual(emulator.bindings.length, 5)
      const stopped = emulator.stops.map((s) => s.subscriptionId).sort()
      assert.deepStrictEqual(stopped, emulator.bindings.map((b) => b.subscriptionId).filter((id) => id !== won[0]).sort())
      assert.strictEqual(yield* countAll(merchant.terminal.id), 1)
      // The winner's binding is untouched: its subscription goes on to its first payment.
      const winner = yield* (yield* SubscriptionRepository).get(won[0]!)
      assert.isTrue(winner._tag === "Some" && winner.value.firstPaymentId !== null)
      // An acquirer that cannot end the loser's binding changes no answer (a warning is logged).
      const unreachable = Acquirer.of({ ...(yield* gated(3)), stopBinding: () => Effect.fail(ProviderUnavailable.of()) })
      const again = yield* Effect.forEach([1, 2, 3], () => Subscriptions.create(principal, { idempotencyKey: "race-2", ...body }), { concurrency: "unbounded" })
        .pipe(Effect.provideService(Acquirer, unreachable))
      assert.strictEqual(new Set(again.map((r) => r.subscription.id)).size, 1)
      assert.strictEqual(again.filter((r) => r.created).length, 1)
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
        terminalId: bare.terminal.id, planId: plans.ceilingMonthly.id, amount: "10"
      }))
      assert.strictEqual(create.message, "subscriptions not configured")
      const foreign = yield* Effect.flip(Subscriptions.listPlans(principal, bare.terminal.id))
      assert.strictEqual(foreign.message, "terminal access denied")
      // Plans connected but none active (stored before a new version had to name every terminal of the
      // older ones, when a version for another terminal withdrew them): an empty list, not 503.
      const retired = yield* Kit.provisionMerchant()
      const retiredPrincipal = yield* Kit.apiKeyPrincipal(retired, crypto.randomUUID())
      const v1 = yield* Fixtures.seedPlan([retired.terminal.id], { code: `retired-${retired.terminal.id.slice(0, 8)}`, version: 1, active: false })
      assert.deepStrictEqual(yield* Subscriptions.listPlans(retiredPrincipal, retired.terminal.id), [])
      const closed = yield* Effect.flip(Subscriptions.create(retiredPrincipal, {
        idempotencyKey: "k", terminalId: retired.terminal.id, planId: v1.id, amount: "10"
      }))
      assert.strictEqual(closed._tag, "PlanNotAvailable")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a new version of a code offered on a terminal it does not name is refused, nothing changed; naming every terminal replaces it on all", () =>
    Effect.gen(function*() {
      const first = yield* Kit.provisionMerchant()
      const second = yield* Kit.provisionMerchant()
      const third = yield* Kit.provisionMerchant()
      const code = `shared-${first.terminal.id.slice(0, 8)}`
      const terms = { name: "Monthly", interval: "month", capAmountRub: "4000", consentText: "Согласен", policyVersion: "1" }
      const v1 = yield* Operator.createPlan({ ...terms, terminalIds: [first.terminal.id, second.terminal.id], code })
      const offered = (merchant: Kit.Merchant) =>
        Effect.flatMap(Kit.apiKeyPrincipal(merchant, crypto.randomUUID()), (principal) =>
          Effect.map(Subscriptions.listPlans(principal, merchant.terminal.id), (plans) => plans.filter((p) => p.code === code).map((p) => p.version))).pipe(
          // A terminal with no plan at all: "recurring plans not configured".
          Effect.catchTag("RecurringNotConfigured", () => Effect.succeed([])))
      // Provisioning a third merchant with the same code would have withdrawn the plan from the first two.
      const refused = yield* Effect.flip(Operator.createPlan({ ...terms, terminalIds: [third.terminal.id], code, capAmountRub: "500" }))
      assert.strictEqual(refused._tag, "InvalidRequest")
      assert.strictEqual((refused as InvalidRequest).field, "terminal_ids")
      assert.strictEqual(refused.message, `plan ${code} version 1 is also offered on terminal ${first.terminal.id}, which terminal_ids does not name: a new version replaces the older ones on all their terminals; name that terminal too, or give this plan another code`)
      // Naming only one of the two is refused too, naming the other.
      const partial = yield* Effect.flip(Operator.createPlan({ ...terms, terminalIds: [first.terminal.id], code }))
      assert.include(partial.message, `also offered on terminal ${second.terminal.id}`)
      assert.deepStrictEqual([yield* offered(first), yield* offered(second), yield* offered(third)], [[1], [1], []])
      assert.isTrue(Option.getOrThrow(yield* (yield* PlanRepository).get(v1.id)).active)
      // Naming every terminal of the older version (and more) makes version 2, on all of them.
      const v2 = yield* Operator.createPlan({ ...terms, terminalIds: [second.terminal.id, first.terminal.id, third.terminal.id], code })
      assert.strictEqual(v2.version, 2)
      assert.deepStrictEqual([yield* offered(first), yield* offered(second), yield* offered(third)], [[2], [2], [2]])
      // Another code is free for the third merchant alone.
      assert.strictEqual((yield* Operator.createPlan({ ...terms, terminalIds: [third.terminal.id], code: `${code}-b` })).version, 1)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a plan without a schedule takes the kind of its mode; the operator may choose the other", () =>
    Effect.gen(function*() {
      const { merchant } = yield* setup
      const base = { terminalIds: [merchant.terminal.id], name: "P", interval: "month", consentText: "Согласен", policyVersion: "1" }
      const ceiling = yield* Operator.createPlan({ ...base, code: "kind-ceiling", capAmountRub: "100" })
      const fixed = yield* Operator.createPlan({ ...base, code: "kind-fixed", payerAmountRub: "100", merchantAmountRub: "90" })
      const chosen = yield* Operator.createPlan({ ...base, code: "kind-chosen", payerAmountRub: "100", merchantAmountRub: "90", schedule: "calendar" })
      assert.deepStrictEqual([ceiling.schedule, fixed.schedule, chosen.schedule], ["calendar", "fixed_days", "calendar"])
      const halfYear = yield* Operator.createPlan({ ...base, code: "kind-half", interval: "half_year", payerAmountRub: "100", merchantAmountRub: "90" })
      assert.strictEqual(halfYear.schedule, "fixed_days")
      const refused = yield* Effect.flip(Operator.createPlan({ ...base, code: "kind-bad", interval: "half_year", capAmountRub: "100" }))
      assert.strictEqual(refused.message, "half_year exists only for fixed_days plans")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("keys without write access, disabled terminals and an unavailable acquirer are refused", () =>
    Effect.gen(function*() {
      const { merchant, plans } = yield* setup
      const readOnlyKey = yield* Operator.createApiKey(merchant.terminal.id, { subscriptionWrite: false })
      const readOnly = yield* Auth.apiKey(readOnlyKey, crypto.randomUUID())
      const body = { terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "10" }
      assert.strictEqual(
        (yield* Effect.flip(Subscriptions.create(readOnly, { idempotencyKey: "k", ...body }))).message,
        "subscription write access required"
      )
      const h2h = yield* Kit.provisionMerchant({ h2h: true })
      const h2hPlans = yield* Kit.provisionPlans(h2h.terminal.id)
      const h2hPrincipal = yield* Kit.apiKeyPrincipal(h2h, crypto.randomUUID())
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      const h2hBody = { terminalId: h2h.terminal.id, planId: h2hPlans.ceilingMonthly.id, amount: "10" }
      yield* emulator.setRecurringUnavailable(true)
      assert.strictEqual(
        (yield* Effect.flip(Subscriptions.create(h2hPrincipal, { idempotencyKey: "k", ...h2hBody }))).message,
        "recurring scenario temporarily unavailable"
      )
      yield* emulator.setRecurringUnavailable(false)
      yield* emulator.setUnavailable(true)
      assert.strictEqual(
        (yield* Effect.flip(Subscriptions.create(h2hPrincipal, { idempotencyKey: "k", ...h2hBody }))).message,
        "provider not available"
      )
      yield* emulator.setUnavailable(false)
      yield* Operator.setTerminalStatus(merchant.terminal.id, "disabled")
      const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
      assert.strictEqual(
        (yield* Effect.flip(Subscriptions.create(principal, { idempotencyKey: "k", ...body }))).message,
        "terminal is unavailable"
      )
      assert.strictEqual(yield* countAll(merchant.terminal.id), 0)
      assert.strictEqual(yield* countAll(h2h.terminal.id), 0)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("get, list by state with paging, 404 for foreign or unknown ids, 503 without recurring configured", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal } = yield* setup
      for (let i = 0; i < 55; i++) {
        yield* Subscriptions.create(principal, {
          idempotencyKey: `k-${i}`,
          terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "10"
        })
      }
      const page1 = yield* Subscriptions.list(principal, { state: "new" })
      const page2 = yield* Subscriptions.list(principal, { state: "new", page: 2 })
      assert.deepStrictEqual([page1.items.length, page2.items.length, page1.total], [50, 5, 55])
      assert.strictEqual((yield* Subscriptions.list(principal, { state: "active" })).total, 0)
      assert.strictEqual((yield* Effect.flip(Subscriptions.list(principal, { state: "weird" })))._tag, "InvalidRequest")
      const other = yield* Kit.provisionMerchant()
      yield* Kit.provisionPlans(other.terminal.id)
      const otherPrincipal = yield* Kit.apiKeyPrincipal(other, crypto.randomUUID())
      const notFound = yield* Effect.flip(Subscriptions.get(otherPrincipal, page1.items[0]!.id))
      assert.strictEqual(notFound.message, "subscription not found")
      assert.strictEqual((yield* Effect.flip(Subscriptions.get(principal, "nope"))).message, "subscription not found")
      assert.strictEqual((yield* Effect.flip(Subscriptions.stop(otherPrincipal, page1.items[0]!.id))).message, "subscription not found")
      // A terminal without any plan has no subscriptions configured: 503 for read and stop (spec's tables).
      const bare = yield* Kit.provisionMerchant()
      const barePrincipal = yield* Kit.apiKeyPrincipal(bare, crypto.randomUUID())
      for (const call of [Subscriptions.get(barePrincipal, page1.items[0]!.id), Subscriptions.stop(barePrincipal, page1.items[0]!.id)]) {
        const error = yield* Effect.flip(call)
        assert.deepStrictEqual([error._tag, error.message], ["RecurringNotConfigured", "subscriptions not configured"])
      }
      const owner = yield* Auth.login(bare.ownerEmail, Kit.ownerPassword)
      const bareUser = yield* Auth.bearer(owner.accessToken)
      assert.strictEqual((yield* Effect.flip(Subscriptions.get(bareUser, page1.items[0]!.id))).message, "subscriptions not configured")
      // Stopping and reading still work for a configured terminal (the subscription is not touched by the 503s).
      assert.strictEqual((yield* Subscriptions.get(principal, page1.items[0]!.id)).billingStatus, "consent_pending")
    }).pipe(Effect.provide(Kit.layer)))
})
