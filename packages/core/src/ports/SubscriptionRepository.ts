/**
 * Port: subscriptions.
 *
 * Contract: `update` requires `version` one above the stored one, else `WriteConflict`.
 * `list` returns newest first (`createdAt` desc, then id desc) with the total of the filter
 * (`after` and `offset` narrow the page, never the total): with `after` (a listed subscription's
 * `createdAt` and id, a keyset cursor) only the subscriptions after it in that order, `offset` of
 * them skipped; an adapter that stores finer times than milliseconds pages from that
 * subscription's stored time when it is one of the filter's terminals', else from `createdAt`.
 * `claimDue(now, leaseUntil, limit)`
 * takes subscriptions that are `active/enabled` with `nextChargeAt <= now` and no lease after
 * `now`, skipping rows other transactions hold, sets their `chargeLeaseUntil` to `leaseUntil`
 * (bumping `version`) and returns them as stored. `claimStopPending(now, leaseUntil, limit)` does
 * the same for subscriptions in `stop_pending` (a stop whose acquirer call did not finish).
 *
 * Test clocks: both claims take only the subscriptions of `testClockId` (a clock's id), or of no
 * clock when it is `null` or absent. `earliestDue(testClockId)` is the earliest moment at which a
 * claim can take one of the clock's subscriptions (`null` when none can): for `active/enabled` ones
 * the later of `nextChargeAt` and `chargeLeaseUntil`; for `stop_pending` ones `chargeLeaseUntil`,
 * or `updatedAt` when unleased (due already).
 */
import { Context, type Effect, type Option } from "effect"
import type { WriteConflict } from "../Errors.js"
import type { ListPage } from "../Paging.js"
import type { ProviderState, Subscription } from "../Subscription.js"

export class SubscriptionRepository extends Context.Service<SubscriptionRepository, {
  insert(subscription: Subscription): Effect.Effect<void, WriteConflict>
  get(id: string): Effect.Effect<Option.Option<Subscription>>
  getForUpdate(id: string): Effect.Effect<Option.Option<Subscription>>
  update(subscription: Subscription): Effect.Effect<void, WriteConflict>
  findByPayToken(token: string): Effect.Effect<Option.Option<Subscription>>
  list(
    filter: {
      readonly terminalIds: ReadonlyArray<string>
      readonly providerState: ProviderState | null
      /** Only live (`prod`) or sandbox subscriptions; absent or `null`: both. */
      readonly environment?: "prod" | "sandbox" | null | undefined
    },
    page: ListPage
  ): Effect.Effect<{ readonly items: ReadonlyArray<Subscription>; readonly total: number }>
  claimDue(now: number, leaseUntil: number, limit: number, testClockId?: string | null): Effect.Effect<ReadonlyArray<Subscription>>
  claimStopPending(now: number, leaseUntil: number, limit: number, testClockId?: string | null): Effect.Effect<ReadonlyArray<Subscription>>
  earliestDue(testClockId: string): Effect.Effect<number | null>
  /** Whether the clock holds a subscription that is not stopped (deleting the clock would end it). */
  anyOngoing(testClockId: string): Effect.Effect<boolean>
}>()("@paydesk/core/SubscriptionRepository") {}
