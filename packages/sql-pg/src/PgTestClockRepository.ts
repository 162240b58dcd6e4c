/**
 * `TestClockRepository` on PostgreSQL (table `test_clocks`).
 *
 * Updates are optimistic on `version` and leave `work_due` as stored; `getForUpdate` locks the row. `claimPending` leases the clocks
 * that wait in one `UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED)` statement, so two
 * workers never take the same clock. A deleted clock (`deleted_at` set) is left out of every read;
 * `purgeDeleted` locks one such clock (`SKIP LOCKED`, so two processes purge different clocks) and
 * deletes one table's worth of its rows per call, children first, so every foreign key holds at each
 * commit: up to `limit` events with their deliveries and attempts, else up to `limit` charges of its
 * subscriptions, else payments, else subscriptions, else the clock.
 */
import { Effect, Layer } from "effect"
import { Id, TestClockRepository, WriteConflict } from "@paydesk/core"
import type { TestClock } from "@paydesk/core"
import { SqlClient } from "effect/sql"
import { byUuid, conflictOnUnique, first, fromTime, fromTimeOrNull, orDie, time, timeOrNull } from "./PgSupport.js"

/** A `test_clocks` row as the driver returns it. */
interface TestClockRow {
  readonly id: string
  readonly terminal_id: string
  readonly name: string | null
  readonly frozen_time: Date
  readonly status: TestClock.Status
  readonly target_time: Date | null
  readonly lease_until: Date | null
  readonly work_due: boolean
  readonly created_at: Date
  readonly updated_at: Date
  readonly deleted_at: Date | null
  readonly deletes_after: Date
  readonly version: number
}

const toClock = (row: TestClockRow): TestClock.TestClock => ({
  id: row.id,
  terminalId: row.terminal_id,
  name: row.name,
  frozenTime: fromTime(row.frozen_time),
  status: row.status,
  targetTime: fromTimeOrNull(row.target_time),
  leaseUntil: fromTimeOrNull(row.lease_until),
  workDue: row.work_due,
  createdAt: fromTime(row.created_at),
  updatedAt: fromTime(row.updated_at),
  deletedAt: fromTimeOrNull(row.deleted_at),
  deletesAfter: fromTime(row.deletes_after),
  version: row.version
})

const columns = (c: TestClock.TestClock) => ({
  id: c.id,
  terminal_id: c.terminalId,
  name: c.name,
  frozen_time: time(c.frozenTime),
  status: c.status,
  target_time: timeOrNull(c.targetTime),
  lease_until: timeOrNull(c.leaseUntil),
  work_due: c.workDue,
  created_at: time(c.createdAt),
  updated_at: time(c.updatedAt),
  deleted_at: timeOrNull(c.deletedAt),
  deletes_after: time(c.deletesAfter),
  version: c.version
})

/** `TestClockRepository` on the `SqlClient` in context. */
export const layer: Layer.Layer<TestClockRepository, never, SqlClient.SqlClient> = Layer.effect(
  TestClockRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return TestClockRepository.of({
      insert: (c) => sql`INSERT INTO test_clocks ${sql.insert(columns(c))}`.pipe(Effect.asVoid, conflictOnUnique("test_clocks_pkey")),
      get: (id) =>
        byUuid(id, (id) => orDie(sql<TestClockRow>`SELECT * FROM test_clocks WHERE id = ${id} AND deleted_at IS NULL`).pipe(Effect.map((rows) => first(rows, toClock)))),
      getForUpdate: (id) =>
        byUuid(id, (id) =>
          orDie(sql<TestClockRow>`SELECT * FROM test_clocks WHERE id = ${id} AND deleted_at IS NULL FOR UPDATE`).pipe(Effect.map((rows) => first(rows, toClock)))),
      update: (c) =>
        sql<{ readonly id: string }>`UPDATE test_clocks SET ${sql.update(columns(c), ["id", "work_due"])}
          WHERE id = ${c.id} AND version = ${c.version - 1} AND deleted_at IS NULL
          RETURNING id`.pipe(
          conflictOnUnique("test_clocks_version"),
          Effect.flatMap((rows) =>
            rows.length > 0
              ? Effect.void
              : Effect.fail(new WriteConflict({ constraint: "test_clocks_version", message: `test clock ${c.id} is not at version ${c.version - 1}` })))
        ),
      list: (terminalIds, page) => {
        const ids = terminalIds.filter(Id.isUuid)
        if (ids.length === 0) return Effect.succeed({ items: [], total: 0 })
        return orDie(Effect.all({
          items: sql<TestClockRow>`SELECT * FROM test_clocks WHERE terminal_id IN ${sql.in(ids)} AND deleted_at IS NULL
            ORDER BY created_at DESC, id DESC
            LIMIT ${Math.max(0, page.limit)} OFFSET ${Math.max(0, page.offset)}`,
          total: sql<{ readonly total: number }>`SELECT count(*)::int AS total FROM test_clocks
            WHERE terminal_id IN ${sql.in(ids)} AND deleted_at IS NULL`
        })).pipe(Effect.map(({ items, total }) => ({ items: items.map(toClock), total: total[0]?.total ?? 0 })))
      },
      markWorkDue: (id) =>
        Id.isUuid(id) ? orDie(sql`UPDATE test_clocks SET work_due = true WHERE id = ${id} AND deleted_at IS NULL`).pipe(Effect.asVoid) : Effect.void,
      claimPending: (now, leaseUntil, limit) =>
        // Each terminal's least recently worked clock first, then each one's second, and so on: a terminal
        // with many clocks waiting takes one place of a run while others wait (least recently worked
        // first among them), not every place.
        orDie(sql<TestClockRow>`WITH ranked AS (
            SELECT id, updated_at, row_number() OVER (PARTITION BY terminal_id ORDER BY updated_at, id) AS place
            FROM test_clocks
            WHERE (status = 'advancing' OR work_due OR lease_until <= ${time(now)}) AND (lease_until IS NULL OR lease_until <= ${time(now)}) AND deleted_at IS NULL)
          UPDATE test_clocks SET lease_until = ${time(leaseUntil)}, work_due = false, version = version + 1
          WHERE id IN (
            SELECT c.id FROM test_clocks c JOIN ranked r ON r.id = c.id
            WHERE (c.status = 'advancing' OR c.work_due OR c.lease_until <= ${time(now)}) AND (c.lease_until IS NULL OR c.lease_until <= ${time(now)}) AND c.deleted_at IS NULL
            ORDER BY r.place, r.updated_at, r.id
            LIMIT ${Math.max(0, limit)}
            FOR UPDATE OF c SKIP LOCKED)
          RETURNING *`).pipe(Effect.map((rows) => rows.map(toClock).sort((a, b) => a.updatedAt - b.updatedAt || (a.id < b.id ? -1 : 1)))),
      expire: (now, limit) =>
        orDie(sql<{ readonly id: string }>`UPDATE test_clocks SET deleted_at = ${time(now)}, updated_at = ${time(now)}, version = version + 1
          WHERE id IN (
            SELECT id FROM test_clocks
            WHERE deleted_at IS NULL AND status = 'ready' AND deletes_after <= ${time(now)}
            ORDER BY deletes_after, id
            LIMIT ${Math.max(0, limit)}
            FOR UPDATE SKIP LOCKED)
          RETURNING id`).pipe(Effect.map((rows) => rows.length)),
      purgeDeleted: (before, now, limit) => {
        const waiting = sql<{ readonly id: string }>`SELECT id FROM test_clocks
          WHERE deleted_at <= ${time(before)} AND (lease_until IS NULL OR lease_until <= ${time(now)})
          ORDER BY deleted_at, id
          LIMIT 1`
        // A look outside a transaction first: the housekeeping asks at every pass, and almost always finds none.
        return orDie(Effect.flatMap(waiting, (found) => found.length === 0 ? Effect.succeed(0) : sql.withTransaction(Effect.gen(function*() {
          const clocks = yield* sql<{ readonly id: string }>`${waiting} FOR UPDATE SKIP LOCKED`
          const clock = clocks[0]?.id
          if (clock === undefined) return 0
          const n = Math.max(1, limit)
          const events = (yield* sql<{ readonly id: string }>`SELECT id FROM outbox_events WHERE test_clock_id = ${clock} LIMIT ${n}`)
            .map((r) => r.id)
          if (events.length > 0) {
            const attempts = yield* sql`DELETE FROM delivery_attempts
              WHERE delivery_id IN (SELECT id FROM deliveries WHERE event_id IN ${sql.in(events)}) RETURNING 1`
            const deliveries = yield* sql`DELETE FROM deliveries WHERE event_id IN ${sql.in(events)} RETURNING 1`
            yield* sql`DELETE FROM outbox_events WHERE id IN ${sql.in(events)}`
            return attempts.length + deliveries.length + events.length
          }
          const steps = [
            sql`DELETE FROM charges WHERE id IN (
              SELECT c.id FROM charges c JOIN subscriptions s ON s.id = c.subscription_id WHERE s.test_clock_id = ${clock} LIMIT ${n})
              RETURNING 1`,
            sql`DELETE FROM payments WHERE id IN (SELECT id FROM payments WHERE test_clock_id = ${clock} LIMIT ${n}) RETURNING 1`,
            sql`DELETE FROM subscriptions WHERE id IN (SELECT id FROM subscriptions WHERE test_clock_id = ${clock} LIMIT ${n}) RETURNING 1`
          ]
          for (const step of steps) {
            const deleted = yield* step
            if (deleted.length > 0) return deleted.length
          }
          yield* sql`DELETE FROM test_clocks WHERE id = ${clock}`
          return 1
        }))))
      }
    })
  })
)
