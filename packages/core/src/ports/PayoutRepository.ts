/**
 * Port: payouts.
 *
 * Contract: `update` requires `version` one above the stored one, else `WriteConflict`.
 * `list` returns a terminal's payouts newest first (`createdAt` desc, then id desc) with their
 * total (`after` and `offset` narrow the page, never the total): with `after` (a listed payout's
 * `createdAt` and id, a keyset cursor) only the payouts after it in that order, `offset` of them
 * skipped; an adapter that stores finer times than milliseconds pages from that payout's stored
 * time when it is one of the terminal's, else from `createdAt`. `countActive` counts payouts in
 * `created`, `pending` or `processing`. `claimDue(status, now, leaseUntil, limit)` takes
 * payouts in `status` with no lease after `now`, skipping rows other transactions hold, sets
 * `leaseUntil` (bumping `version`) and returns them as stored.
 */
import { Context, type Effect, type Option } from "effect"
import type { WriteConflict } from "../Errors.js"
import type { ListPage } from "../Paging.js"
import type { Payout, Status } from "../Payout.js"

export class PayoutRepository extends Context.Service<PayoutRepository, {
  insert(payout: Payout): Effect.Effect<void, WriteConflict>
  get(id: string): Effect.Effect<Option.Option<Payout>>
  getForUpdate(id: string): Effect.Effect<Option.Option<Payout>>
  update(payout: Payout): Effect.Effect<void, WriteConflict>
  list(terminalId: string, page: ListPage): Effect.Effect<{
    readonly items: ReadonlyArray<Payout>
    readonly total: number
  }>
  countActive(terminalId: string): Effect.Effect<number>
  claimDue(status: Status, now: number, leaseUntil: number, limit: number): Effect.Effect<ReadonlyArray<Payout>>
}>()("@paydesk/core/PayoutRepository") {}
