/**
 * Memory adapter of `TestClockRepository`.
 *
 * Updates are optimistic (`version` must be the stored one plus one) and leave `workDue` as stored;
 * `getForUpdate` is `get` (the
 * memory database serializes transactions). `claimPending` leases the clocks it returns (clears
 * `workDue`, bumps `version`), so a second claim skips them until the lease ends.
 */
import { Effect, Layer, Option } from "effect"
import { TestClockRepository } from "@paydesk/core"
import type { TestClock } from "@paydesk/core"
import { compareText, MemoryDatabase, newestFirst, writeConflict } from "./MemoryDatabase.js"

const waiting = (c: TestClock.TestClock, now: number): boolean =>
  (c.status === "advancing" || c.workDue) && (c.leaseUntil === null || c.leaseUntil <= now)

/** Memory `TestClockRepository` on the `MemoryDatabase` in context. */
export const layer: Layer.Layer<TestClockRepository, never, MemoryDatabase> = Layer.effect(
  TestClockRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { testClocks } = db.tables
    const get = (id: string) => db.atomically(Effect.sync(() => Option.fromUndefinedOr(testClocks.get(id))))
    return TestClockRepository.of({
      insert: (clock) =>
        db.atomically(Effect.suspend(() => {
          if (testClocks.has(clock.id)) return Effect.fail(writeConflict("test_clocks_pkey"))
          testClocks.set(clock.id, clock)
          return Effect.void
        })),
      get,
      getForUpdate: get,
      update: (clock) =>
        db.atomically(Effect.suspend(() => {
          const stored = testClocks.get(clock.id)
          if (stored === undefined || clock.version !== stored.version + 1) return Effect.fail(writeConflict("test_clocks_version"))
          testClocks.set(clock.id, { ...clock, workDue: stored.workDue })
          return Effect.void
        })),
      list: (terminalIds, page) =>
        db.atomically(Effect.sync(() => {
          const all = [...testClocks.values()].filter((c) => terminalIds.includes(c.terminalId)).sort(newestFirst)
          const offset = Math.max(0, page.offset)
          return { items: all.slice(offset, offset + Math.max(0, page.limit)), total: all.length }
        })),
      markWorkDue: (id) =>
        db.atomically(Effect.sync(() => {
          const stored = testClocks.get(id)
          if (stored !== undefined) testClocks.set(id, { ...stored, workDue: true })
        })),
      claimPending: (now, leaseUntil, limit) =>
        db.atomically(Effect.sync(() =>
          [...testClocks.values()]
            .filter((c) => waiting(c, now))
            .sort((a, b) => a.updatedAt - b.updatedAt || compareText(a.id, b.id))
            .slice(0, Math.max(0, limit))
            .map((c) => {
              const leased = { ...c, leaseUntil, workDue: false, version: c.version + 1 }
              testClocks.set(c.id, leased)
              return leased
            })
        ))
    })
  })
)
