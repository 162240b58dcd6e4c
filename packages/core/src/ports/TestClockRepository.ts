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
 * `workDue`, whose lease is absent or at or before `now` (wall time), oldest update first; it sets
 * their `leaseUntil` to `leaseUntil`, clears `workDue`, bumps `version` and returns them as stored.
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
}>()("@paydesk/core/TestClockRepository") {}
