/**
 * Port: subscription charge attempts.
 *
 * Contract: `(subscriptionId, cycleNumber, attempt)` is unique: `insert` fails with
 * `WriteConflict` when taken, so two workers can never both start the same attempt.
 * `listForCycle` returns the attempts of one cycle, lowest attempt first. `listBySubscription`
 * returns at most `limit` attempts, newest first (`createdAt` desc, then cycle and attempt desc);
 * with `bookedOnly` it leaves out `pending` attempts before the limit applies.
 * `claimOpenOfStopped` takes, in one transaction, at most `limit` attempts that are `pending` or
 * `unconfirmed`, due by `backoff` (`Charge.nextVoidAt(attempt, backoff) <= now`), of subscriptions
 * whose `billing_status` is `stop_pending` or `stopped`, oldest update first, skipping rows another
 * transaction holds, and sets their `updatedAt` to `now` (so another claim skips them for a while).
 * It takes only attempts of the subscriptions of `testClockId` (a clock's id), or of no clock when
 * it is `null` or absent; `earliestOpenOfStopped(testClockId, backoff)` is the earliest
 * `Charge.nextVoidAt` of such open attempts of the clock's stopping subscriptions (`null` when none).
 */
import { Context, type Effect, type Option } from "effect"
import type { Charge, VoidBackoff } from "../Charge.js"
import type { WriteConflict } from "../Errors.js"

export class ChargeRepository extends Context.Service<ChargeRepository, {
  insert(charge: Charge): Effect.Effect<void, WriteConflict>
  get(id: string): Effect.Effect<Option.Option<Charge>>
  update(charge: Charge): Effect.Effect<void>
  listForCycle(subscriptionId: string, cycleNumber: number): Effect.Effect<ReadonlyArray<Charge>>
  listBySubscription(
    subscriptionId: string,
    limit: number,
    options?: { readonly bookedOnly?: boolean }
  ): Effect.Effect<ReadonlyArray<Charge>>
  claimOpenOfStopped(now: number, backoff: VoidBackoff, limit: number, testClockId?: string | null): Effect.Effect<ReadonlyArray<Charge>>
  earliestOpenOfStopped(testClockId: string, backoff: VoidBackoff): Effect.Effect<number | null>
}>()("@paydesk/core/ChargeRepository") {}
