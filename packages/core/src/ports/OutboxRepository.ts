/**
 * Port: the callback outbox, deliveries and their attempt log.
 *
 * Contract: events and deliveries are written in the transaction of the change that caused
 * them; `insertEvent(event, delivery)` writes the event and that delivery of it together (one
 * statement where the store can). `claimDue(now, leaseUntil, limit)` takes `pending` deliveries with
 * `nextAttemptAt <= now` (oldest first; ties in the order the events were inserted), skipping rows other transactions hold, sets their
 * `nextAttemptAt` to `leaseUntil` (so a crashed attempt is retried after the lease) and returns
 * them with their events. With `stamp`, the claim also stamps each delivery it takes as
 * `stampSending(id, now, stamp.keepFrom)` would (in the same statement where the store can) and
 * returns it with the stamp in force as its `sendingAt`. `stampSending(id, now, keepFrom)` sets the
 * delivery's `sendingAt` to `now` unless it holds a stamp at or after `keepFrom` (the stamp of an
 * attempt a crash cut short, still fresh), and returns the stamp in force; it commits before the
 * request is sent. `renewLease(id, heldUntil, leaseUntil)` moves a `pending` delivery's `nextAttemptAt`
 * from `heldUntil` to `leaseUntil` and answers true, only while it still holds `heldUntil` (else
 * nothing, false: a claim took it, or an attempt was recorded). `endPending(eventId, at)` ends the
 * event's `pending` deliveries as `delivered` at `at` (their attempts as they are, no attempt added),
 * in one guarded write, and answers how many: the event got a 2xx from another of its deliveries (a
 * resend); an attempt of one in flight meanwhile is then not recorded (its delivery is no longer
 * `pending`). A resend still within its lease, whose single attempt its own request sends and
 * records, is left to it (concurrent resends ended one another unrecorded: `delivered` with no
 * attempt); one whose lease ran out (its request died, a worker would send it) is ended too. `listEvents` is oldest first (ties in insertion order), at most `limit`, only `test` ones when given; `listDeliveries` newest written first (not by `createdAt`: a clock's deliveries carry the clock's time); `listAttempts`
 * oldest first. `recordAttempt(attempt, delivery, expectedAttempts)` stores `delivery` (its state
 * after the attempt) and inserts `attempt`, together and only when the stored delivery is still
 * `pending` with `expectedAttempts` attempts (else neither, and it answers false: another worker
 * recorded that attempt first). `recordAttempts(records)` records several, as `recordAttempt` would
 * one after the other (one statement where the store can), and answers each one's result in order;
 * an adapter may also batch concurrent `recordAttempt` calls into it.
 *
 * An event may have several deliveries (the scheduled one, recoveries, resends), oldest first in
 * `deliveriesOf`; an event's "delivery" in `pageEvents` is the latest that delivered it, else the
 * latest still pending (being retried), else its latest one (`null` when the terminal had no callback URL), and `deliveryStatus` filters on it. `pageEvents` lists newest first (`createdAt` desc, then `sequence` desc, then
 * `id` desc, so one payment's events written in the same millisecond keep their order), strictly
 * after the `before` cursor. `lastSequence` is the highest `sequence` of the events whose payment or
 * payout is `objectId` (0 when none). `attemptFacts` reads a terminal's attempt log, without the
 * attempts of test clocks' deliveries (they carry a clock's time): its latest attempt, the time of
 * its latest successful one (no `error`) and the time of its first failed attempt after that. `purge` deletes events created before `before` whose deliveries are all
 * finished, with their deliveries and attempts, and returns how many events went.
 *
 * `lockRecovery(terminalIds)` holds the recovery of those terminals' events until the caller's
 * transaction ends: a second recovery of one of them waits, then reads what the first wrote (its
 * new deliveries), so two recoveries at once do not both re-queue the same failed events.
 *
 * Test clocks: `claimDue` takes only the deliveries of `testClockId` (a clock's id), or of no clock
 * when it is `null` or absent; `earliestDelivery(testClockId)` is the smallest `nextAttemptAt` of
 * the clock's `pending` deliveries (`null` when none); `releaseLeases(testClockId, at)` makes the
 * clock's `pending` deliveries that were claimed and never recorded (`sendingAt` set, `nextAttemptAt`
 * after `at`) due at `at` and returns how many (the clock's holder calls it: a clock's deliveries are
 * sent only under its hold, so these are a dead worker's, whose lease on the frozen clock would
 * never run out). `purge` never deletes events of a clock
 * (their times are the clock's, not the wall clock's): they go with their clock
 * (`TestClockRepository.purgeDeleted`).
 *
 * The events feed (`paydesk listen`) reads by insertion position, a number that only grows (the
 * Postgres `seq`), so a cursor outlives its event's deletion: `feedEvents` lists a terminal's events
 * inserted after `afterPosition` in insertion order alone (whatever their timestamps), each with its
 * position; `eventPosition(id)` is the terminal and position of an event (`None` when unknown or
 * deleted); `feedPositions(terminalId)` the highest position of the terminal's events (`newest`, 0
 * when none) and the highest ever given to an event of any terminal, deleted or rolled back since
 * (`issued`, 0 when none).
 */
import { Context, type Effect, type Option } from "effect"
import type { Attempt, Delivery, DeliveryStatus, EventType, OutboxEvent } from "../Callback.js"

/** Filter of event listings. */
export interface EventFilter {
  readonly paymentId?: string
  readonly terminalId?: string
  readonly test?: boolean
  readonly limit?: number
}

/** Filter of the events feed: a terminal's events inserted after a position. */
export interface FeedFilter {
  readonly terminalId: string
  /** `true`: sandbox events only; `false`: live only; absent: both. */
  readonly test?: boolean | undefined
  /** Events inserted after this position (0: from the first). */
  readonly afterPosition: number
  readonly limit: number
}

/** An event of the feed with its insertion position. */
export interface PositionedEvent {
  readonly event: OutboxEvent
  readonly position: number
}

/** Filter of delivery listings. */
export interface DeliveryFilter {
  readonly terminalId?: string
  readonly paymentId?: string
  readonly status?: DeliveryStatus
  /** `true`: deliveries of sandbox events only; `false`: live only; absent: both. */
  readonly test?: boolean
  readonly limit: number
}

/** Filter of the events pages (the merchant's events API). */
export interface EventPageFilter {
  readonly terminalIds: ReadonlyArray<string>
  /** `true`: sandbox events only; `false`: live only; `null`: both. */
  readonly test: boolean | null
  readonly eventType?: EventType | undefined
  /** A payment or payout id (UUID). */
  readonly objectId?: string | undefined
  /** Events created at or after this time (epoch ms, inclusive). */
  readonly createdFrom?: number | undefined
  /** Events created before this time (epoch ms, exclusive), as the payments' `createdBefore`. */
  readonly createdBefore?: number | undefined
  /**
   * The retention's window: events on no test clock created before it are left out. A clock's events
   * carry the clock's time and are kept until the clock is deleted, so they are listed whatever it is.
   */
  readonly retainedFrom?: number | undefined
  /** The status of the event's delivery (the latest that delivered it, else its latest); `none` for events that had no delivery. */
  readonly deliveryStatus?: DeliveryStatus | "none" | undefined
  /** Only events listed after this one (newest first). */
  readonly before?: { readonly createdAt: number; readonly sequence: number; readonly id: string } | undefined
  readonly limit: number
}

/** An event with its delivery: the latest that delivered it, else its latest. */
export interface EventWithDelivery {
  readonly event: OutboxEvent
  readonly delivery: Delivery | null
}

/** What a terminal's attempt log says about its callback endpoint. */
export interface AttemptFacts {
  readonly last: Attempt | null
  readonly lastSuccessAt: number | null
  readonly firstFailureAfterSuccess: number | null
}

/** One `recordAttempt` of a batch: the attempt, the delivery after it, the attempts it was claimed with. */
export interface AttemptRecord {
  readonly attempt: Attempt
  readonly delivery: Delivery
  readonly expectedAttempts: number
}

export class OutboxRepository extends Context.Service<OutboxRepository, {
  insertEvent(event: OutboxEvent, delivery?: Delivery): Effect.Effect<void>
  getEvent(id: string): Effect.Effect<Option.Option<OutboxEvent>>
  listEvents(filter: EventFilter): Effect.Effect<ReadonlyArray<OutboxEvent>>
  feedEvents(filter: FeedFilter): Effect.Effect<ReadonlyArray<PositionedEvent>>
  eventPosition(id: string): Effect.Effect<Option.Option<{ readonly terminalId: string; readonly position: number }>>
  feedPositions(terminalId: string): Effect.Effect<{ readonly newest: number; readonly issued: number }>
  insertDelivery(delivery: Delivery): Effect.Effect<void>
  getDelivery(id: string): Effect.Effect<Option.Option<Delivery>>
  updateDelivery(delivery: Delivery): Effect.Effect<void>
  stampSending(id: string, now: number, keepFrom: number): Effect.Effect<number>
  renewLease(id: string, heldUntil: number, leaseUntil: number): Effect.Effect<boolean>
  endPending(eventId: string, at: number): Effect.Effect<number>
  claimDue(now: number, leaseUntil: number, limit: number, testClockId?: string | null, stamp?: { readonly keepFrom: number }): Effect.Effect<
    ReadonlyArray<{ readonly delivery: Delivery; readonly event: OutboxEvent }>
  >
  listDeliveries(filter: DeliveryFilter): Effect.Effect<ReadonlyArray<Delivery>>
  insertAttempt(attempt: Attempt): Effect.Effect<void>
  recordAttempt(attempt: Attempt, delivery: Delivery, expectedAttempts: number): Effect.Effect<boolean>
  recordAttempts(records: ReadonlyArray<AttemptRecord>): Effect.Effect<ReadonlyArray<boolean>>
  listAttempts(deliveryId: string): Effect.Effect<ReadonlyArray<Attempt>>
  pageEvents(filter: EventPageFilter): Effect.Effect<ReadonlyArray<EventWithDelivery>>
  deliveriesOf(eventId: string): Effect.Effect<ReadonlyArray<Delivery>>
  lastSequence(objectId: string): Effect.Effect<number>
  attemptFacts(terminalId: string): Effect.Effect<AttemptFacts>
  purge(before: number): Effect.Effect<number>
  earliestDelivery(testClockId: string): Effect.Effect<number | null>
  releaseLeases(testClockId: string, at: number): Effect.Effect<number>
  lockRecovery(terminalIds: ReadonlyArray<string>): Effect.Effect<void>
}>()("@paydesk/core/OutboxRepository") {}
