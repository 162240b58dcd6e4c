/**
 * Port (optional): an engine in this process that sends a new payment's first delivery itself,
 * right after the commit that wrote it, without a pass claiming it first.
 *
 * Contract: while `accepting` answers true, the core writes the first delivery of a payment it
 * creates (its `payment.created`, or the `payment.paid` of a charge's new payment) already leased
 * and stamped, as a pass's claim would leave it (`nextAttemptAt` one lease ahead, `sendingAt` the
 * moment of the write), and hands it to `take` after the commit, never for a transaction that
 * rolled back. `take` must not fail and should return quickly: the engine sends the delivery and
 * records its attempt as a pass would (`Callbacks.attempt`). A hand-off a crash or a shutdown loses
 * is not lost work: the delivery is pending with a lease, so any process's pass sends it once the
 * lease has run out, as it does for a claimed delivery whose worker died. `accepting` is a hint
 * (an engine answers false when it has enough waiting): transactions that asked at the same time
 * may hand over a few more. Deliveries of a test clock are never handed off. `settled(objectId)`
 * waits until no delivery handed off for that payment (or payout) is still to be sent or recorded,
 * so a pass in the same process sends a payment's later events after its first one; `sending` tells
 * such a pass which deliveries the engine is sending now, so it does not send one again when its lease
 * ran out during the attempt. (One still waiting in the engine when its lease ran out is the pass's to
 * send: the engine renews a lease only while the delivery still holds it.)
 */
import { Context, type Effect } from "effect"
import type { Delivery, OutboxEvent } from "../Callback.js"
import type { Terminal } from "../Terminal.js"

/** A delivery written leased, with its event and the terminal it goes to (as the writer read it). */
export interface Handed {
  readonly delivery: Delivery
  readonly event: OutboxEvent
  readonly terminal: Terminal
}

export class DeliveryHandoff extends Context.Service<DeliveryHandoff, {
  /** Whether the engine takes more deliveries now. */
  readonly accepting: Effect.Effect<boolean>
  /** Committed deliveries to send, in the order they were written. */
  take(items: ReadonlyArray<Handed>): Effect.Effect<void>
  /** Done once the deliveries handed off for this payment (or payout) are sent and recorded, or at once when there are none. */
  settled(objectId: string): Effect.Effect<void>
  /**
   * The deliveries the engine is sending now (their attempt started, not yet recorded; a copy): a pass
   * in the same process that claims one of them (its lease ran out during the attempt) leaves it.
   */
  sending(): ReadonlySet<string>
}>()("@paydesk/core/DeliveryHandoff") {}
