/**
 * Live monthly subscriptions for the benches of due charges: created, confirmed and their first
 * payment paid (the second charge falls due a month later, on the plan's schedule).
 */
import { Effect, Option } from "effect"
import { Payments, Subscriptions } from "@paydesk/core"
import { Kit } from "@paydesk/testkit"

/** `count` paid-up subscriptions of the merchant's terminal (10 set up at once). */
export const paidUp = (
  merchant: Effect.Success<ReturnType<typeof Kit.provisionMerchant>>,
  principal: Effect.Success<ReturnType<typeof Kit.apiKeyPrincipal>>,
  count: number,
  /** Prefix of their idempotency keys (distinct per set of one merchant). */
  prefix = "s"
) =>
  Effect.gen(function*() {
    const plans = yield* Kit.provisionPlans(merchant.terminal.id)
    yield* Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
      Effect.gen(function*() {
        const { subscription } = yield* Subscriptions.create(principal, {
          idempotencyKey: `${prefix}-${i}`,
          terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "100"
        })
        const { firstPayment } = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
        yield* Payments.settle(Option.getOrThrow(firstPayment).id, "paid")
      }), { concurrency: 10, discard: true })
  })
