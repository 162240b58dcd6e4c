/**
 * Port: the bank side (acquirer) of QR payments and recurring bindings.
 *
 * Contract: `createPayment` registers a live QR payment and returns the QR payload; its
 * outcome arrives later through the `Payments.settle` use case. `startBinding` starts the
 * recurring binding of a subscription (H2H terminals get a `redirectUrl`). `charge` performs one
 * recurring charge and MUST be idempotent per `idempotencyKey`: asking again with a key it has
 * seen returns that key's outcome and never charges twice. `Unknown` means no unambiguous
 * answer (timeout); the core then moves the subscription to review. `stopBinding` ends the
 * binding; `Failed` means it could not be completed. `ProviderUnavailable` means the acquirer
 * could not be reached at all.
 */
import { Context, type Effect } from "effect"
import type { ProviderUnavailable, RecurringTemporarilyUnavailable } from "../Errors.js"

/** The acquirer's answer to a recurring charge. */
export type ChargeOutcome =
  | { readonly _tag: "Paid"; readonly reference: string }
  | { readonly _tag: "Failed"; readonly reason: string }
  | { readonly _tag: "Unknown"; readonly reason: string }

export class Acquirer extends Context.Service<Acquirer, {
  createPayment(input: {
    readonly paymentId: string
    readonly terminalId: string
    readonly amount: bigint
    readonly description: string | null
  }): Effect.Effect<{ readonly qrPayload: string }, ProviderUnavailable>
  startBinding(input: {
    readonly subscriptionId: string
    readonly terminalId: string
    readonly h2h: boolean
    readonly payerAmount: bigint
  }): Effect.Effect<{ readonly redirectUrl: string | null }, ProviderUnavailable | RecurringTemporarilyUnavailable>
  charge(input: {
    readonly subscriptionId: string
    readonly cycleNumber: number
    readonly idempotencyKey: string
    readonly amount: bigint
  }): Effect.Effect<ChargeOutcome>
  stopBinding(input: { readonly subscriptionId: string }): Effect.Effect<
    { readonly _tag: "Stopped" } | { readonly _tag: "Failed"; readonly reason: string },
    ProviderUnavailable
  >
}>()("@paydesk/core/Acquirer") {}
