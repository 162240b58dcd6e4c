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
 *
 * `charge` answers within `PaydeskConfig.leaseMs / 2` (else `Unknown`), so the lease of an attempt
 * outlives its call. `voidCharge` is how the service gives up an attempt it prepared but may not
 * have sent (the subscription stopped meanwhile): atomically per key at the acquirer, it answers
 * the key's outcome when the charge was performed, and otherwise records the key as void and
 * answers `Voided`; a later `charge` with a voided key is declined and takes no money. It is
 * idempotent like `charge`.
 */
import { Context, type Effect } from "effect"
import type { Program } from "../Charge.js"
import type { Outcome, VoidOutcome } from "../Charge.js"
import type { ProviderUnavailable, RecurringTemporarilyUnavailable } from "../Errors.js"

/** The acquirer's answer to a recurring charge. */
export type ChargeOutcome = Outcome

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
  voidCharge(input: { readonly subscriptionId: string; readonly idempotencyKey: string }): Effect.Effect<VoidOutcome>
  stopBinding(input: { readonly subscriptionId: string }): Effect.Effect<
    { readonly _tag: "Stopped" } | { readonly _tag: "Failed"; readonly reason: string },
    ProviderUnavailable
  >
}>()("@paydesk/core/Acquirer") {}

/**
 * Port: the sandbox acquirer, which charges sandbox subscriptions (no real money), and whose
 * answers the merchant programs per subscription (`programCharges`: the outcomes of the next
 * charges, `paid` once none is left; `ProviderUnavailable` when they could not be stored). A host
 * without one offers no sandbox subscriptions.
 */
export class SandboxAcquirer extends Context.Service<SandboxAcquirer, Acquirer["Service"] & {
  programCharges(subscriptionId: string, outcomes: ReadonlyArray<Program>): Effect.Effect<void, ProviderUnavailable>
}>()("@paydesk/core/SandboxAcquirer") {}
