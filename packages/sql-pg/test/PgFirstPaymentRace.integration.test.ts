/**
 * A subscription's first payment whose consent was taken back (expired unpaid), paid late at the same
 * moment as the next first payment is paid: each settles, the subscription is activated once (one
 * cycle), and the other is booked for review. The late payment's transaction locks the other first
 * payment before the subscription, as the other's own transition does; the other order deadlocked in
 * about half of such collisions (PostgreSQL aborted one, retried a second later; a review found it).
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Option } from "effect"
import { ChargeRepository, Payments, PaymentRepository, Subscription, SubscriptionRepository, Subscriptions } from "@paydesk/core"
import { Kit, ManualClock } from "@paydesk/testkit"
import * as Harness from "./PgHarness.js"
import { targets } from "./PgHarness.js"

const anchor = Date.parse("2026-01-31T07:00:00.000Z")

for (const target of targets) {
  describe(`A late first payment against the next first payment (${target.name})`, () => {
    it.live("paid at the same moment: both settle, one activation, one cycle, the other booked for review", () =>
      Effect.gen(function*() {
        const clock = yield* ManualClock.make(anchor)
        const body = Effect.gen(function*() {
          const merchant = yield* Kit.provisionMerchant()
          const plans = yield* Kit.provisionPlans(merchant.terminal.id)
          const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
          for (let i = 0; i < 10; i++) {
            const { subscription } = yield* Subscriptions.create(principal, { idempotencyKey: `k${i}`, terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "100" })
            const first = Option.getOrThrow((yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)).firstPayment)
            yield* clock.set((yield* Clock.currentTimeMillis) + 31 * 60_000)
            while ((yield* Payments.expireDue()) > 0) { /* until none is left */ }
            const second = Option.getOrThrow((yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)).firstPayment)
            yield* Effect.all([Payments.settle(first.id, "paid"), Payments.settle(second.id, "paid")], { concurrency: 2 })
            const sub = Option.getOrThrow(yield* (yield* SubscriptionRepository).get(subscription.id))
            assert.deepStrictEqual([Subscription.stateOf(sub), sub.successfulCycles], ["active/enabled", 1])
            const payments = yield* PaymentRepository
            for (const id of [first.id, second.id]) assert.strictEqual(Option.getOrThrow(yield* payments.get(id)).status, "paid")
            // Whichever activated it, the other is the payer's second payment, booked for review.
            const charges = yield* (yield* ChargeRepository).listBySubscription(subscription.id, 10)
            assert.deepStrictEqual(charges.map((c) => [c.status, c.validationReason]).sort(), [["payed", null], ["payed", "superseded_first_payment"]])
            assert.strictEqual(charges.find((c) => c.validationReason === null)!.paymentId, sub.firstPaymentId)
          }
        })
        yield* Effect.provideService(body, Clock.Clock, clock.clock)
      }).pipe(Effect.provide(Harness.kitOn(target.url, 10))), 120_000)
  })
}
