/**
 * Shared steps of the subscription tests on the memory kit: a merchant with the standard plans at
 * 31 January 10:00 Moscow time, the payer's consent and first payment, active subscriptions.
 */
import { assert } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { type Payment, Payments, Subscription, Subscriptions, SubscriptionRepository } from "@paydesk/core"
import { AcquirerEmulator, Kit } from "@paydesk/testkit"

/** 2026-01-31T10:00+03:00. */
export const anchor = Date.parse("2026-01-31T07:00:00.000Z")

/** The thirteen monthly charge dates after activation on 31 January, Moscow time 10:00. */
export const monthlyDates = [
  "2026-02-28", "2026-03-31", "2026-04-30", "2026-05-31", "2026-06-30", "2026-07-31", "2026-08-31",
  "2026-09-30", "2026-10-31", "2026-11-30", "2026-12-31", "2027-01-31", "2027-02-28"
].map((day) => Date.parse(`${day}T10:00:00.000+03:00`))

export const setup = (options: { readonly maxCycles?: number | null; readonly h2h?: boolean } = {}) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(anchor)
    const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/cb", h2h: options.h2h ?? false })
    const plans = yield* Kit.provisionPlans(merchant.terminal.id, { maxCycles: options.maxCycles ?? null })
    const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
    return { merchant, plans, principal }
  })

export const reload = (id: string) =>
  Effect.flatMap(SubscriptionRepository, (r) => r.get(id)).pipe(Effect.map(Option.getOrThrow))

/**
 * Consent on the form (still `consent_pending`: nothing is paid yet), then the payer pays the first
 * payment: the bank reports it `processing` (the subscription is `pending`), then paid.
 */
export const consentAndPay = (sub: Subscription.Subscription): Effect.Effect<Payment.Payment, unknown, Kit.Services> =>
  Effect.gen(function*() {
    const confirmed = yield* Subscriptions.confirm(sub.payToken, sub.csrfToken)
    assert.strictEqual(Subscription.stateOf(confirmed.subscription), "new/consent_pending")
    assert.isTrue(Subscription.hasConsent(confirmed.subscription))
    const first = Option.getOrThrow(confirmed.firstPayment)
    assert.strictEqual(first.paymentMethod, "sbp_recurrent")
    assert.strictEqual(first.subscriptionId, sub.id)
    // The first payment's QR comes from the acquirer.
    const registered = (yield* AcquirerEmulator.AcquirerEmulator).payments.get(first.id)
    assert.strictEqual(first.qrPayload, registered?.qrPayload)
    assert.strictEqual(registered?.amount, sub.terms.payerAmount)
    assert.strictEqual((yield* Payments.settle(first.id, "processing")).status, "processing")
    assert.strictEqual(Subscription.stateOf(yield* reload(sub.id)), "new/pending")
    yield* Payments.settle(first.id, "paid")
    return first
  })

/** A fresh merchant with `count` active monthly subscriptions (ceiling plan, 100 RUB). */
export const activeMerchant = (count: number) =>
  Effect.gen(function*() {
    const { merchant, plans, principal } = yield* setup()
    const ids: Array<string> = []
    for (let i = 0; i < count; i++) {
      const { subscription } = yield* Subscriptions.create(principal, {
        idempotencyKey: `k-${i}`,
        terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "100"
      })
      yield* consentAndPay(subscription)
      ids.push(subscription.id)
    }
    return { ids, merchant }
  })

/** `count` active monthly subscriptions (ceiling plan, 100 RUB) of a fresh merchant; their ids. */
export const activeSubscriptions = (count: number) => Effect.map(activeMerchant(count), ({ ids }) => ids)
