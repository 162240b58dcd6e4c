/**
 * Port (optional): hints that a record will become due at a moment, for an engine that can
 * wake up exactly then instead of waiting for its next sweep.
 *
 * Contract: `notify` receives the due moments (epoch milliseconds) a committed transaction
 * wrote: a subscription's `next_charge_at`, a delivery's `next_attempt_at`, an unpaid payment's
 * `expires_at`, a payout waiting for the worker (a new one to submit, an approved one to send).
 * It is called after the commit, never for a transaction that rolled back, and
 * may see a moment that is already past or one that a later write moved again. Wakeups are
 * hints only: a crash between the commit and `notify` loses them, so the sweeps of "run what is
 * due now" remain the guarantee, and an engine acting on a hint runs the same idempotent use
 * cases. `notify` must not fail (an adapter logs and drops what it cannot send) and should
 * return quickly. A host without an engine that listens simply does not provide the port.
 */
import { Context, type Effect } from "effect"

/** A moment (`at`, epoch milliseconds) at which a record becomes due. */
export type Wakeup =
  | { readonly kind: "charge"; readonly subscriptionId: string; readonly at: number }
  | { readonly kind: "delivery"; readonly deliveryId: string; readonly at: number }
  | { readonly kind: "expiry"; readonly paymentId: string; readonly at: number }
  | { readonly kind: "payout"; readonly payoutId: string; readonly at: number }

export class Wakeups extends Context.Service<Wakeups, {
  /** Hints the given due moments, in the order they were written. */
  notify(items: ReadonlyArray<Wakeup>): Effect.Effect<void>
}>()("@paydesk/core/Wakeups") {}
