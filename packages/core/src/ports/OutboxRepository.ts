/**
 * Port: the callback outbox, deliveries and their attempt log.
 *
 * Contract: events and deliveries are written in the transaction of the change that caused
 * them. `claimDue(now, leaseUntil, limit)` takes `pending` deliveries with
 * `nextAttemptAt <= now` (oldest first; ties in the order the events were inserted), skipping rows other transactions hold, sets their
 * `nextAttemptAt` to `leaseUntil` (so a crashed attempt is retried after the lease) and returns
 * them with their events. `stampSending(id, now, keepFrom)` sets the delivery's `sendingAt` to
 * `now` unless it holds a stamp at or after `keepFrom` (the stamp of an attempt a crash cut
 * short, still fresh), and returns the stamp in force; it commits before the request is sent. `listEvents` is oldest first in insertion order; `listDeliveries` newest first; `listAttempts`
 * oldest first.
 */
import { Context, type Effect, type Option } from "effect"
import type { Attempt, Delivery, DeliveryStatus, OutboxEvent } from "../Callback.js"

/** Filter of delivery listings. */
export interface DeliveryFilter {
  readonly terminalId?: string
  readonly paymentId?: string
  readonly status?: DeliveryStatus
  readonly limit: number
}

export class OutboxRepository extends Context.Service<OutboxRepository, {
  insertEvent(event: OutboxEvent): Effect.Effect<void>
  getEvent(id: string): Effect.Effect<Option.Option<OutboxEvent>>
  listEvents(filter: { readonly paymentId?: string; readonly terminalId?: string }): Effect.Effect<ReadonlyArray<OutboxEvent>>
  insertDelivery(delivery: Delivery): Effect.Effect<void>
  getDelivery(id: string): Effect.Effect<Option.Option<Delivery>>
  updateDelivery(delivery: Delivery): Effect.Effect<void>
  stampSending(id: string, now: number, keepFrom: number): Effect.Effect<number>
  claimDue(now: number, leaseUntil: number, limit: number): Effect.Effect<
    ReadonlyArray<{ readonly delivery: Delivery; readonly event: OutboxEvent }>
  >
  listDeliveries(filter: DeliveryFilter): Effect.Effect<ReadonlyArray<Delivery>>
  insertAttempt(attempt: Attempt): Effect.Effect<void>
  listAttempts(deliveryId: string): Effect.Effect<ReadonlyArray<Attempt>>
}>()("@paydesk/core/OutboxRepository") {}
