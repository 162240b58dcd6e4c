/**
 * Port: test clocks.
 *
 * Contract: `update` requires `version` one above the stored one, else `WriteConflict`, and stores
 * every field but `workDue`, which only `markWorkDue` sets and `claimPending` clears (so a mark made
 * while a worker holds the clock is never lost); `getForUpdate` locks the row until the surrounding
 * transaction ends. `list` returns the clocks
 * of the given terminals newest first (`createdAt` desc, then `id` desc) with the total.
 * `markWorkDue` sets `workDue` (without a version change). `claimPending(now, leaseUntil, limit)`
 * takes, skipping rows other transactions hold, clocks that are `advancing`, or `ready` with
 * `workDue` or with a lease that ran out (its holder died before letting go), whose lease is absent
 * or at or before `now` (wall time): each terminal's oldest update
 * first, then each one's second, and so on, oldest update first within a place (a terminal with many
 * waiting takes one place of a claim while others wait, not every place); it sets
 * their `leaseUntil` to `leaseUntil`, clears `workDue`, bumps `version` and returns them as stored.
 *
 * A deleted clock (`deletedAt` set, which `update` may write) is absent for `get`, `getForUpdate`,
 * `list`, `markWorkDue` and `claimPending`, and `update` of it is a `WriteConflict`.
 * `expire(now, limit)` deletes (sets `deletedAt` to `now`, bumps `version`) up to `limit` clocks that
 * are `ready`, not deleted, with `deletesAfter` at or before `now`, and returns how many.
 * `purgeDeleted(before, now, limit)` takes one clock deleted at or before `before` whose lease is
 * absent or at or before `now` (skipping one another transaction holds) and deletes up to `limit` of
 * its objects' rows, children before parents: its events with their deliveries and attempts, then
 * its subscriptions' charges, its payments, its subscriptions, and finally the clock once nothing
 * of it is left. Returns the rows deleted (0: no such clock).
 */
import { Context, type Effect, type Option } from "effect"
import type { WriteConflict } from "../Errors.js"
import type { TestClock } from "../TestClock.js"

export class TestClockRepository extends Context.Service<TestClockRepository, {
  insert(clock: TestClock): Effect.Effect<void, WriteConflict>
  get(id: string): Effect.Effect<Option.Option<TestClock>>
  getForUpdate(id: string): Effect.Effect<Option.Option<TestClock>>
  update(clock: TestClock): Effect.Effect<void, WriteConflict>
  list(
    terminalIds: ReadonlyArray<string>,
    page: { readonly limit: number; readonly offset: number }
  ): Effect.Effect<{ readonly items: ReadonlyArray<TestClock>; readonly total: number }>
  markWorkDue(id: string): Effect.Effect<void>
  claimPending(now: number, leaseUntil: number, limit: number): Effect.Effect<ReadonlyArray<TestClock>>
  expire(now: number, limit: number): Effect.Effect<number>
  purgeDeleted(before: number, now: number, limit: number): Effect.Effect<number>
}>()("@paydesk/core/TestClockRepository") {}
