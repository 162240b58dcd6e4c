/**
 * Test harness of the Postgres suites: the run's targets (see globalSetup.ts), a fresh migrated
 * database per suite on a target (alone or with the kit around it), and statement counts taken by
 * statement-level triggers; rows held by another transaction while a test runs.
 */
import { Deferred, Effect, Fiber, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { inject } from "vitest"
import { Kit } from "@paydesk/testkit"
import * as PgStore from "../src/PgStore.js"

/** The targets of this run (DATABASE_URL or embedded, plus the machine's service). */
export const targets = inject("pgTargets")

let counter = 0

/** Creates a fresh empty database on the target's server and returns its URL (a new one each time it runs). */
export const freshDatabase = (url: string): Effect.Effect<string> =>
  Effect.suspend(() => PgStore.createDatabase(url, `${inject("pgPrefix")}t${process.pid}_${++counter}`))

/** Every persistence port on a fresh, migrated database of the target. */
export const store = (url: string, options: { readonly maxConnections?: number } = {}) =>
  Layer.unwrap(Effect.map(freshDatabase(url), (db) => PgStore.layer(db, options)))

/** A fresh migrated database with the kit around it; `pool` connections. */
export const kitOn = (url: string, pool = 10) =>
  Layer.unwrap(Effect.map(freshDatabase(url), (db) => Kit.layerAround(PgStore.layer(db, { maxConnections: pool }))))

/**
 * Counts statements from now on, by kind: each kind names the trigger event it counts (`"INSERT ON
 * payments"`). Answers the effect that reads the counts since the last reading (0 for a kind not seen).
 */
export const countStatements = <K extends string>(kinds: Readonly<Record<K, string>>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE statement_counts (kind text NOT NULL)`
    yield* sql.unsafe(`CREATE FUNCTION count_statement() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO statement_counts VALUES (TG_ARGV[0]); RETURN NULL; END $$`)
    for (const [kind, event] of Object.entries<string>(kinds)) {
      yield* sql.unsafe(`CREATE TRIGGER count_${kind} AFTER ${event} FOR EACH STATEMENT EXECUTE FUNCTION count_statement('${kind}')`)
    }
    return Effect.gen(function*() {
      const rows = yield* sql<{ kind: string; n: number }>`SELECT kind, count(*)::int AS n FROM statement_counts GROUP BY kind`
      yield* sql`DELETE FROM statement_counts`
      return Object.fromEntries(Object.keys(kinds).map((kind) => [kind, rows.find((r) => r.kind === kind)?.n ?? 0])) as Record<K, number>
    }).pipe(Effect.orDie)
  }).pipe(Effect.orDie)

/**
 * `effect` in a transaction, with what its scans read of `table`: rows (by sequential scans and
 * bitmap heap scans, and fetched through an index) and index entries (of every index of the table;
 * `index`'s also apart, when given). The counters are the backend's, which PostgreSQL 15+ flushes at
 * most once a second: they may still hold earlier transactions' counts on the connection, so the
 * reading is the difference from one taken at the start.
 */
export const scanning = <A, E, R>(table: string, effect: Effect.Effect<A, E, R>, index = table) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const counters = sql<{ readonly rows: number; readonly entries: number; readonly ofIndex: number; readonly bitmap: string }>`SELECT
        (pg_stat_get_xact_tuples_returned(${table}::regclass) + pg_stat_get_xact_tuples_fetched(${table}::regclass))::int AS rows,
        (SELECT sum(pg_stat_get_xact_tuples_returned(indexrelid)) FROM pg_index WHERE indrelid = ${table}::regclass)::int AS entries,
        pg_stat_get_xact_tuples_returned(${index}::regclass)::int AS "ofIndex",
        current_setting('enable_bitmapscan') AS bitmap`
    return yield* sql.withTransaction(Effect.gen(function*() {
      const [before] = yield* counters
      const result = yield* effect
      const [after] = yield* counters
      return {
        result,
        read: after!.rows - before!.rows + after!.entries - before!.entries,
        indexEntries: after!.ofIndex - before!.ofIndex,
        bitmapScans: after!.bitmap
      }
    }))
  }).pipe(Effect.catchTag("SqlError", Effect.die))

/**
 * Runs `body` while another transaction holds the rows `lock` locks (a `SELECT ... FOR UPDATE`), so
 * that statements needing them wait in PostgreSQL. The lock is released when `body` ends, whatever
 * happens, so a failure ends the test instead of holding it.
 */
export const underLock = <A, E, R>(lock: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, SqlError>, body: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const locked = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const holder = yield* sql.withTransaction(Effect.gen(function*() {
      yield* lock(sql)
      yield* Deferred.succeed(locked, undefined)
      yield* Deferred.await(release)
    })).pipe(Effect.ensuring(Deferred.succeed(locked, undefined)), Effect.forkChild)
    yield* Deferred.await(locked)
    const result = yield* body.pipe(Effect.ensuring(Deferred.succeed(release, undefined)))
    yield* Fiber.join(holder)
    return result
  })

/** Waits (5 s at most) until `count` statements of this database wait for a lock. */
export const lockWaits = (count: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`.pipe(
      Effect.flatMap(([row]) => row!.n === count ? Effect.void : Effect.fail(`${row!.n} statements wait for a lock, not ${count}`)),
      Effect.retry({ schedule: Schedule.spaced("10 millis"), times: 500 })
    )
  })
