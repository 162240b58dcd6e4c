/**
 * Port: payments.
 *
 * Contract: `insert` fails with `WriteConflict` when `(terminalId, environment, orderId)` or
 * `payToken` is taken. `insertCreated` stores a new payment together with its first outbox event
 * and that event's delivery (if any) as one write: in the caller's transaction when there is one,
 * else atomically on its own (committed before it succeeds); when the payment's unique rules refuse
 * it, it fails with `WriteConflict` and stores none of them. Outside a transaction an adapter may
 * commit concurrent calls together, but one call's conflict never fails another. `update` stores a record whose `version` is one above the stored one
 * and fails with `WriteConflict` otherwise (a concurrent writer won). `list` returns newest
 * first (`createdAt` desc, then id desc) with the total count of the filter (`after` and `offset`
 * narrow the page, never the total): with `after` (a listed payment's `createdAt` and id, a keyset
 * cursor) only the payments that come after it in that order, `offset` of them skipped; an
 * adapter that stores finer times than milliseconds pages from that payment's stored time when
 * it is a payment of the filter's terminal (so none of the same millisecond is skipped), else
 * from `createdAt`. `listAfter` returns the same
 * order from a keyset cursor (the `limit` payments that come after `after`, a listed payment's
 * `createdAt` and id, or the first `limit` when it is `null`) without a count, so pages taken one
 * after another neither repeat nor skip a payment while new ones come in; `daily` groups `stats` by
 * the calendar day of `createdAt` in a time zone. `claimExpired` returns,
 * locked and skipping rows other transactions hold, payments in `created` or `processing` whose
 * `expiresAt <= now`. `claimUnconverted` returns live paid payments of a terminal whose
 * settlement has no USDT yet, locked the same way.
 *
 * Test clocks: the claims take only the payments of `testClockId` (a clock's id), or of no clock
 * when it is `null` or absent (the global background work never touches a clock's objects).
 * `earliestExpiry(testClockId)` is the smallest `expiresAt` of the clock's `created` or
 * `processing` payments (`null` when none).
 */
import { Context, type Effect, type Option } from "effect"
import type { Delivery, OutboxEvent } from "../Callback.js"
import type { UnknownTimeZone, WriteConflict } from "../Errors.js"
import type { ListPage } from "../Paging.js"
import type { Environment, Payment, Status } from "../Payment.js"

/**
 * Filter of payment listings, stats and exports. The optional fields narrow it further:
 * `createdFrom` is inclusive, `createdBefore` exclusive (epoch ms).
 */
export interface PaymentFilter {
  readonly terminalId: string
  readonly environment: Environment | "all"
  readonly recurring: boolean | null
  readonly status?: Status | undefined
  readonly orderId?: string | undefined
  readonly createdFrom?: number | undefined
  readonly createdBefore?: number | undefined
}

/** Count and sum of one status on one day (`YYYY-MM-DD` in the time zone asked for) under a filter. */
export interface DailyStats extends StatusStats {
  readonly day: string
}

/** Count and sum of one status under a filter. */
export interface StatusStats {
  readonly status: Status
  readonly count: number
  readonly amount: bigint
}

export class PaymentRepository extends Context.Service<PaymentRepository, {
  insert(payment: Payment): Effect.Effect<void, WriteConflict>
  insertCreated(payment: Payment, event: OutboxEvent, delivery: Delivery | undefined): Effect.Effect<void, WriteConflict>
  get(id: string): Effect.Effect<Option.Option<Payment>>
  getForUpdate(id: string): Effect.Effect<Option.Option<Payment>>
  update(payment: Payment): Effect.Effect<void, WriteConflict>
  findByOrderId(terminalId: string, environment: Environment, orderId: string): Effect.Effect<Option.Option<Payment>>
  findByPayToken(token: string): Effect.Effect<Option.Option<Payment>>
  list(
    filter: PaymentFilter,
    page: ListPage
  ): Effect.Effect<{ readonly items: ReadonlyArray<Payment>; readonly total: number }>
  listAfter(
    filter: PaymentFilter,
    after: { readonly createdAt: number; readonly id: string } | null,
    limit: number
  ): Effect.Effect<ReadonlyArray<Payment>>
  stats(filter: PaymentFilter): Effect.Effect<ReadonlyArray<StatusStats>>
  /**
   * `stats` per day of `createdAt` in the IANA `timeZone` (the caller checked the name against the
   * runtime's table), days ascending; `UnknownTimeZone` when the store's own table lacks it.
   */
  daily(filter: PaymentFilter, timeZone: string): Effect.Effect<ReadonlyArray<DailyStats>, UnknownTimeZone>
  claimExpired(now: number, limit: number, testClockId?: string | null): Effect.Effect<ReadonlyArray<Payment>>
  earliestExpiry(testClockId: string): Effect.Effect<number | null>
  claimUnconverted(terminalId: string, limit: number): Effect.Effect<ReadonlyArray<Payment>>
}>()("@paydesk/core/PaymentRepository") {}
