/**
 * Port: payouts.
 *
 * Contract: `update` requires `version` one above the stored one, else `WriteConflict`.
 * `list` returns a terminal's payouts newest first. `countActive` counts payouts in
 * `created`, `pending` or `processing`. `claimDue(status, now, leaseUntil, limit)` takes
 * payouts in `status` with no lease after `now`, skipping rows other transactions hold, sets
 * `leaseUntil` (bumping `version`) and returns them as stored.
 */
import { Context, type Effect, type Option } from "effect"
import type { WriteConflict } from "../Errors.js"
import type { Payout, Status } from "../Payout.js"

export class PayoutRepository extends Context.Service<PayoutRepository, {
  insert(payout: Payout): Effect.Effect<void, WriteConflict>
  get(id: string): Effect.Effect<Option.Option<Payout>>
  getForUpdate(id: string): Effect.Effect<Option.Option<Payout>>
  update(payout: Payout): Effect.Effect<void, WriteConflict>
  list(terminalId: string, page: { readonly limit: number; readonly offset: number }): Effect.Effect<{
    readonly items: ReadonlyArray<Payout>
    readonly total: number
  }>
  countActive(terminalId: string): Effect.Effect<number>
  claimDue(status: Status, now: number, leaseUntil: number, limit: number): Effect.Effect<ReadonlyArray<Payout>>
}>()("@paydesk/core/PayoutRepository") {}
