/**
 * Memory adapter of `TestClockRepository`.
 *
 * Updates are optimistic (`version` must be the stored one plus one) and leave `workDue` as stored;
 * `getForUpdate` is `get` (the
 * memory database serializes transactions). `claimPending` leases the clocks it returns (clears
 * `workDue`, bumps `version`), so a second claim skips them until the lease ends. A deleted clock is
 * absent for every read; `purgeDeleted` deletes its objects' rows in the order the foreign keys of the
 * PostgreSQL adapter ask for (events with their deliveries and attempts, charges, payments,
 * subscriptions, the clock), up to the limit a call.
 */
import { Effect, Layer, Option } from "effect"
import { TestClockRepository } from "@paydesk/core"
import type { TestClock } from "@paydesk/core"
import { compareText, MemoryDatabase, newestFirst, writeConflict } from "./MemoryDatabase.js"

/**
 * Clocks in the order a claim takes them: each terminal's least recently worked first, then each
 * one's second, …, least recently worked first within a place (as the PostgreSQL adapter ranks them).
 */
const fairly = (clocks: ReadonlyArray<TestClock.TestClock>): Array<TestClock.TestClock> => {
  const byAge = [...clocks].sort((a, b) => a.updatedAt - b.updatedAt || compareText(a.id, b.id))
  const seen = new Map<string, number>()
  const placed = byAge.map((clock) => {
    const place = (seen.get(clock.terminalId) ?? 0) + 1
    seen.set(clock.terminalId, place)
    return { clock, place }
  })
  return placed.sort((a, b) => a.place - b.place || a.clock.updatedAt - b.clock.updatedAt || compareText(a.clock.id, b.clock.id)).map((p) => p.clock)
}

const waiting = (c: TestClock.TestClock, now: number): boolean =>
  c.deletedAt === null && (c.status === "advancing" || c.workDue || (c.leaseUntil !== null && c.leaseUntil <= now)) &&
  (c.leaseUntil === null || c.leaseUntil <= now)

/** Deletes from `table` the first `limit` entries `pick` selects; returns how many. */
const deleteSome = <A>(table: Map<string, A>, pick: (value: A) => boolean, limit: number): number => {
  let n = 0
  for (const [key, value] of table) {
    if (n >= limit) break
    if (pick(value)) {
      table.delete(key)
      n++
    }
  }
  return n
}

/** Memory `TestClockRepository` on the `MemoryDatabase` in context. */
export const layer: Layer.Layer<TestClockRepository, never, MemoryDatabase> = Layer.effect(
  TestClockRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { attempts, charges, deliveries, outboxEvents, payments, subscriptions, testClocks } = db.tables
    const live = (id: string): TestClock.TestClock | undefined => {
      const c = testClocks.get(id)
      return c === undefined || c.deletedAt !== null ? undefined : c
    }
    const get = (id: string) => db.atomically(Effect.sync(() => Option.fromUndefinedOr(live(id))))
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
          const stored = live(clock.id)
          if (stored === undefined || clock.version !== stored.version + 1) return Effect.fail(writeConflict("test_clocks_version"))
          testClocks.set(clock.id, { ...clock, workDue: stored.workDue })
          return Effect.void
        })),
      list: (terminalIds, page) =>
        db.atomically(Effect.sync(() => {
          const all = [...testClocks.values()].filter((c) => c.deletedAt === null && terminalIds.includes(c.terminalId)).sort(newestFirst)
          const offset = Math.max(0, page.offset)
          return { items: all.slice(offset, offset + Math.max(0, page.limit)), total: all.length }
        })),
      markWorkDue: (id) =>
        db.atomically(Effect.sync(() => {
          const stored = live(id)
          if (stored !== undefined) testClocks.set(id, { ...stored, workDue: true })
        })),
      claimPending: (now, leaseUntil, limit) =>
        db.atomically(Effect.sync(() =>
          fairly([...testClocks.values()].filter((c) => waiting(c, now)))
            .slice(0, Math.max(0, limit))
            .map((c) => {
              const leased = { ...c, leaseUntil, workDue: false, version: c.version + 1 }
              testClocks.set(c.id, leased)
              return leased
            })
        )),
      expire: (now, limit) =>
        db.atomically(Effect.sync(() =>
          [...testClocks.values()]
            .filter((c) => c.deletedAt === null && c.status === "ready" && c.deletesAfter <= now)
            .sort((a, b) => a.deletesAfter - b.deletesAfter || compareText(a.id, b.id))
            .slice(0, Math.max(0, limit))
            .map((c) => testClocks.set(c.id, { ...c, deletedAt: now, updatedAt: now, version: c.version + 1 }))
            .length
        )),
      purgeDeleted: (before, now, limit) =>
        db.atomically(Effect.sync(() => {
          const clock = [...testClocks.values()]
            .filter((c) => c.deletedAt !== null && c.deletedAt <= before && (c.leaseUntil === null || c.leaseUntil <= now))
            .sort((a, b) => a.deletedAt! - b.deletedAt! || compareText(a.id, b.id))[0]
          if (clock === undefined) return 0
          const n = Math.max(1, limit)
          const events = new Set([...outboxEvents.values()].filter((e) => e.testClockId === clock.id).slice(0, n).map((e) => e.id))
          if (events.size > 0) {
            const sent = new Set([...deliveries.values()].filter((d) => events.has(d.eventId)).map((d) => d.id))
            return deleteSome(attempts, (a) => sent.has(a.deliveryId), Infinity) +
              deleteSome(deliveries, (d) => events.has(d.eventId), Infinity) +
              deleteSome(outboxEvents, (e) => events.has(e.id), Infinity)
          }
          const subs = new Set([...subscriptions.values()].filter((s) => s.testClockId === clock.id).map((s) => s.id))
          const steps: ReadonlyArray<() => number> = [
            () => deleteSome(charges, (c) => subs.has(c.subscriptionId), n),
            () => deleteSome(payments, (p) => p.testClockId === clock.id, n),
            () => deleteSome(subscriptions, (s) => subs.has(s.id), n)
          ]
          for (const step of steps) {
            const deleted = step()
            if (deleted > 0) return deleted
          }
          testClocks.delete(clock.id)
          return 1
        }))
    })
  })
)
