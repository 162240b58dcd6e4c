/**
 * The acquirer emulator's memory of recurring charges, kept in PostgreSQL so the emulated bank
 * outlives the server process and is shared by every process on the database, as a real bank
 * would be: a charge key the bank has seen is answered with its recorded outcome after a crash
 * and a restart, never charged again.
 *
 * The book lives in its own tables (`emulator_charge_programs`, `emulator_charges`), outside the
 * core's schema and migrations, and runs on its own small pool (a `SqlClient` of its own), so its
 * writes commit on their own and never join a transaction of the core (the bank is not part of our
 * database transaction, and must not roll back with it).
 *
 * Retention: like a real acquirer's idempotency keys (Stripe keeps them a day), the book forgets a
 * charge key no one has asked about for `retentionMs` (30 days by default; each charge, void or
 * settlement of the key renews it, so a key the core still asks about, an open attempt asked daily,
 * stays). A key answered `unknown` is kept until it is settled (the operator settles it, however
 * late, and the core's resume then books that answer), and the programmed outcomes of a stopped
 * binding go (no charge takes them any more); both, untouched for `abandonedMs` (400 days, longer
 * than any billing interval), go too (their subscription gone without a stop: deleted with its test
 * clock, say). Stopped bindings are kept. The layer runs `purge` when
 * it starts and every `purgeEveryMs` (an hour) after, in batches of `purgeBatch`.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import * as AcquirerEmulator from "./AcquirerEmulator.js"
import * as PgBookSchema from "./PgBookSchema.js"
import { type BookOutcome, type ChargeBook, ChargeBookService } from "./AcquirerEmulator.js"
import { BookUnavailable } from "./BookUnavailable.js"

/** Creates the book's tables when missing (idempotent, safe from several processes). */
// Version 2: the retention's columns.
const ensureTables = PgBookSchema.ensure(0, 2, (sql) =>
  Effect.gen(function*() {
    // An upgrade of a book in use: its tables locked first, in the order a charge takes them (charges,
    // stopped bindings, programs), so a running process's charge waits instead of deadlocking with the DDL.
    const existing = yield* sql<{ name: string }>`SELECT name FROM unnest(ARRAY['emulator_charges', 'emulator_stopped_bindings', 'emulator_charge_programs'])
      WITH ORDINALITY AS t(name, n) WHERE to_regclass(name) IS NOT NULL ORDER BY n`
    if (existing.length > 0) yield* sql.unsafe(`LOCK TABLE ${existing.map((t) => t.name).join(", ")} IN ACCESS EXCLUSIVE MODE`)
    yield* sql`CREATE TABLE IF NOT EXISTS emulator_charge_programs (
      seq bigserial PRIMARY KEY,
      subscription_id text NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('paid', 'failed', 'unknown'))
    )`
    yield* sql`CREATE INDEX IF NOT EXISTS emulator_charge_programs_subscription ON emulator_charge_programs (subscription_id, seq)`
    yield* sql`CREATE TABLE IF NOT EXISTS emulator_charges (
      serial bigserial PRIMARY KEY,
      idempotency_key text NOT NULL UNIQUE,
      subscription_id text NOT NULL,
      cycle_number integer NOT NULL,
      amount_kopecks bigint NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('paid', 'failed', 'unknown')),
      created_at timestamptz NOT NULL DEFAULT now()
    )`
    // Which bank client (server process) asked for the charge: for operators and tests.
    yield* sql`ALTER TABLE emulator_charges ADD COLUMN IF NOT EXISTS client text`
    // Late answers, voided keys and charges declined on a stopped binding (added after the first release).
    yield* sql`ALTER TABLE emulator_charge_programs ADD COLUMN IF NOT EXISTS delay_ms integer NOT NULL DEFAULT 0`
    yield* sql`ALTER TABLE emulator_charges DROP CONSTRAINT IF EXISTS emulator_charges_outcome_check`
    yield* sql`ALTER TABLE emulator_charges ADD CONSTRAINT emulator_charges_outcome_check
      CHECK (outcome IN ('paid', 'failed', 'unknown', 'void', 'stopped'))`
    yield* sql`CREATE TABLE IF NOT EXISTS emulator_stopped_bindings (subscription_id text PRIMARY KEY)`
    // The retention (added later; rows of an older book count from the upgrade).
    yield* sql`ALTER TABLE emulator_charges ADD COLUMN IF NOT EXISTS seen_at timestamptz NOT NULL DEFAULT now()`
    yield* sql`CREATE INDEX IF NOT EXISTS emulator_charges_seen ON emulator_charges (seen_at)`
    yield* sql`ALTER TABLE emulator_charge_programs ADD COLUMN IF NOT EXISTS created_at timestamptz NOT NULL DEFAULT now()`
  }))

/** How long the book remembers a settled charge key no one asked about. */
export const defaultRetentionMs = 30 * 86_400_000

/**
 * How long the book keeps what a live binding may still need, an `unknown` key and a programmed
 * outcome, when nothing touches it: longer than any billing interval (a subscription deleted with
 * its test clock, or stopped before its binding started, leaves them with no stop to tell the bank).
 */
export const abandonedMs = 400 * 86_400_000

/** How often the layer purges. */
export const defaultPurgeEveryMs = 3_600_000

/** Rows one purge statement deletes at most (each statement its own short transaction). */
export const purgeBatch = 1_000

/**
 * Deletes the settled charge keys (not `unknown`) not asked about for `retentionMs`, the `unknown`
 * ones not asked about for `abandonedMs`, the programmed outcomes of stopped bindings and those
 * older than `abandonedMs`, `purgeBatch` rows a statement until none is left; answers how many rows
 * went. A key asked about meanwhile is kept (its `seen_at` is checked again on the row the delete
 * finds).
 */
export const purge = (retentionMs: number): Effect.Effect<number, SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const age = (ms: number) => `${Math.max(0, Math.floor(ms))} milliseconds`
    const [settled, abandoned] = [age(retentionMs), age(Math.max(retentionMs, abandonedMs))]
    const batches = (statement: Effect.Effect<ReadonlyArray<{ readonly n: number }>, SqlError.SqlError>) =>
      Effect.gen(function*() {
        let total = 0
        for (;;) {
          const n = (yield* statement)[0]?.n ?? 0
          total += n
          if (n < purgeBatch) return total
        }
      })
    const expired = sql`seen_at < now() - (CASE WHEN outcome = 'unknown' THEN ${abandoned} ELSE ${settled} END)::interval`
    const keys = yield* batches(sql<{ n: number }>`WITH gone AS (
        DELETE FROM emulator_charges WHERE ${expired} AND serial IN (
          SELECT serial FROM emulator_charges WHERE ${expired} LIMIT ${purgeBatch}
        ) RETURNING 1
      ) SELECT count(*)::int AS n FROM gone`)
    const programs = yield* batches(sql<{ n: number }>`WITH gone AS (
        DELETE FROM emulator_charge_programs WHERE seq IN (
          SELECT p.seq FROM emulator_charge_programs p
          WHERE p.created_at < now() - ${abandoned}::interval
            OR EXISTS (SELECT 1 FROM emulator_stopped_bindings s WHERE s.subscription_id = p.subscription_id)
          LIMIT ${purgeBatch}
        ) RETURNING 1
      ) SELECT count(*)::int AS n FROM gone`)
    return keys + programs
  })

/** Serializes the book's work on one subscription across processes (own advisory-lock space). */
const lockSubscription = (sql: SqlClient.SqlClient, subscriptionId: string) =>
  sql`SELECT pg_advisory_xact_lock(4242, hashtext(${subscriptionId}))`

/** A statement or transaction of the book whose database could not be reached: `BookUnavailable`. */
const unavailable = <A, R>(effect: Effect.Effect<A, SqlError.SqlError, R>) => Effect.mapError(effect, (cause) => new BookUnavailable({ cause }))

/** Builds the book's operations over `sql`. */
const operations = (sql: SqlClient.SqlClient, client: string): ChargeBook => {
  // A key asked about is remembered a retention from now.
  const known = (idempotencyKey: string) =>
    Effect.map(
      sql<{ serial: string; outcome: BookOutcome }>`UPDATE emulator_charges SET seen_at = now() WHERE idempotency_key = ${idempotencyKey}
        RETURNING serial, outcome`,
      (rows) => rows[0] === undefined ? undefined : { program: rows[0].outcome, serial: Number(rows[0].serial), fresh: false, delayMs: 0 }
    )
  const record = (request: { readonly subscriptionId: string; readonly idempotencyKey: string; readonly cycleNumber: number; readonly amount: bigint }, program: BookOutcome, delayMs: number) =>
    Effect.map(
      sql<{ serial: string }>`
        INSERT INTO emulator_charges (idempotency_key, subscription_id, cycle_number, amount_kopecks, outcome, client)
        VALUES (${request.idempotencyKey}, ${request.subscriptionId}, ${request.cycleNumber}, ${request.amount.toString()}, ${program}, ${client})
        RETURNING serial`,
      (rows) => ({ program, serial: Number(rows[0]!.serial), fresh: true, delayMs })
    )
  return {
    program: (subscriptionId, outcomes) =>
      unavailable(Effect.forEach(outcomes.map(AcquirerEmulator.instructionOf), ({ outcome, delayMs }) =>
        sql`INSERT INTO emulator_charge_programs (subscription_id, outcome, delay_ms) VALUES (${subscriptionId}, ${outcome}, ${delayMs})`, { discard: true }).pipe(
          sql.withTransaction
        )),
    take: (request) =>
      unavailable(sql.withTransaction(Effect.gen(function*() {
        yield* lockSubscription(sql, request.subscriptionId)
        const seen = yield* known(request.idempotencyKey)
        if (seen !== undefined) return seen
        const stopped = yield* sql`SELECT 1 FROM emulator_stopped_bindings WHERE subscription_id = ${request.subscriptionId}`
        if (stopped.length > 0) return yield* record(request, "stopped", 0)
        const next = yield* sql<{ outcome: AcquirerEmulator.ChargeProgram; delay_ms: number }>`
          DELETE FROM emulator_charge_programs
          WHERE seq = (SELECT min(seq) FROM emulator_charge_programs WHERE subscription_id = ${request.subscriptionId})
          RETURNING outcome, delay_ms`
        return yield* record(request, next[0]?.outcome ?? "paid", next[0]?.delay_ms ?? 0)
      }))),
    void: (request) =>
      unavailable(sql.withTransaction(Effect.gen(function*() {
        yield* lockSubscription(sql, request.subscriptionId)
        const seen = yield* known(request.idempotencyKey)
        if (seen !== undefined) return seen
        return yield* record({ ...request, cycleNumber: 0, amount: 0n }, "void", 0)
      }))),
    stopBinding: (subscriptionId) =>
      unavailable(sql`INSERT INTO emulator_stopped_bindings (subscription_id) VALUES (${subscriptionId}) ON CONFLICT DO NOTHING`).pipe(Effect.asVoid),
    resolve: (idempotencyKey, outcome) =>
      unavailable(Effect.map(
        sql`UPDATE emulator_charges SET outcome = ${outcome}, seen_at = now() WHERE idempotency_key = ${idempotencyKey} AND outcome = 'unknown' RETURNING 1`,
        (rows) => rows.length > 0
      ))
  }
}

/**
 * `ChargeBookService` on the `SqlClient` in context, creating the book's tables when missing;
 * `client` names the caller (server process) in its records. It purges (`purge`) at start and every
 * `purgeEveryMs` while it lives (a failed purge is logged and tried again at the next); `retentionMs`
 * and `purgeEveryMs` default to 30 days and an hour.
 *
 * Give the book a client of its own (`PgClient.layer`, a pool separate from the core's): its
 * statements and transactions then run on that client's connections, whose transactions are
 * tracked apart from every other client's, so a charge the bank recorded stays recorded whatever
 * the core's transaction around the call does.
 */
export const layer = (options: {
  readonly client: string
  readonly retentionMs?: number
  readonly purgeEveryMs?: number
}): Layer.Layer<ChargeBookService, SqlError.SqlError, SqlClient.SqlClient> =>
  Layer.effect(
    ChargeBookService,
    Effect.gen(function*() {
      yield* ensureTables
      const sql = yield* SqlClient.SqlClient
      const once = purge(options.retentionMs ?? defaultRetentionMs).pipe(
        Effect.tap((n) => n > 0 ? Effect.logInfo(`sandbox bank: ${n} rows forgotten (charge keys past the retention, programs no charge will take)`) : Effect.void),
        Effect.catchCause((cause) => Effect.logWarning("sandbox bank: purge failed; tried again later", cause)),
        Effect.annotateLogs({ component: "bank" })
      )
      yield* Effect.forkScoped(Effect.repeat(once, Schedule.spaced(Duration.millis(options.purgeEveryMs ?? defaultPurgeEveryMs))))
      return ChargeBookService.of(operations(sql, options.client))
    })
  )
