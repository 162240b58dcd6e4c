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
 */
import { Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import * as AcquirerEmulator from "./AcquirerEmulator.js"
import * as PgBookSchema from "./PgBookSchema.js"
import { type BookOutcome, type ChargeBook, ChargeBookService } from "./AcquirerEmulator.js"
import { BookUnavailable } from "./BookUnavailable.js"

/** Creates the book's tables when missing (idempotent, safe from several processes). */
const ensureTables = PgBookSchema.ensure(0, (sql) =>
  Effect.gen(function*() {
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
  }))

/** Serializes the book's work on one subscription across processes (own advisory-lock space). */
const lockSubscription = (sql: SqlClient.SqlClient, subscriptionId: string) =>
  sql`SELECT pg_advisory_xact_lock(4242, hashtext(${subscriptionId}))`

/** A statement or transaction of the book whose database could not be reached: `BookUnavailable`. */
const unavailable = <A, R>(effect: Effect.Effect<A, SqlError.SqlError, R>) => Effect.mapError(effect, (cause) => new BookUnavailable({ cause }))

/** Builds the book's operations over `sql`. */
const operations = (sql: SqlClient.SqlClient, client: string): ChargeBook => {
  const known = (idempotencyKey: string) =>
    Effect.map(
      sql<{ serial: string; outcome: BookOutcome }>`SELECT serial, outcome FROM emulator_charges WHERE idempotency_key = ${idempotencyKey}`,
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
        sql`UPDATE emulator_charges SET outcome = ${outcome} WHERE idempotency_key = ${idempotencyKey} AND outcome = 'unknown' RETURNING 1`,
        (rows) => rows.length > 0
      ))
  }
}

/**
 * `ChargeBookService` on the `SqlClient` in context, creating the book's tables when missing;
 * `client` names the caller (server process) in its records.
 *
 * Give the book a client of its own (`PgClient.layer`, a pool separate from the core's): its
 * statements and transactions then run on that client's connections, whose transactions are
 * tracked apart from every other client's, so a charge the bank recorded stays recorded whatever
 * the core's transaction around the call does.
 */
export const layer = (options: { readonly client: string }): Layer.Layer<ChargeBookService, SqlError.SqlError, SqlClient.SqlClient> =>
  Layer.effect(
    ChargeBookService,
    Effect.gen(function*() {
      yield* ensureTables
      return ChargeBookService.of(operations(yield* SqlClient.SqlClient, options.client))
    })
  )
