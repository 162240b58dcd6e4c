/**
 * The acquirer emulator's memory of recurring charges, kept in PostgreSQL so the emulated bank
 * outlives the server process and is shared by every process on the database, as a real bank
 * would be: a charge key the bank has seen is answered with its recorded outcome after a crash
 * and a restart, never charged again.
 *
 * The book lives in its own tables (`emulator_charge_programs`, `emulator_charges`), outside the
 * core's schema and migrations, and runs on its own small pool and runtime, so its writes commit
 * on their own and never join a transaction of the core (the bank is not part of our database
 * transaction, and must not roll back with it).
 */
import { Effect, ManagedRuntime } from "effect"
import { PgStore } from "@paydesk/sql-pg"
import type { AcquirerEmulator } from "@paydesk/testkit"
import { SqlClient } from "effect/sql"
import { hostname } from "node:os"

type ChargeBook = AcquirerEmulator.ChargeBook
type ChargeProgram = AcquirerEmulator.ChargeProgram

/** Creates the book's tables when missing (idempotent, safe from several processes). */
const ensureTables = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(4242, 0)`
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
  }))
})

/** Serializes the book's work on one subscription across processes (own advisory-lock space). */
const lockSubscription = (sql: SqlClient.SqlClient, subscriptionId: string) =>
  sql`SELECT pg_advisory_xact_lock(4242, hashtext(${subscriptionId}))`

/** Builds the book's operations over `sql`. */
const operations = (sql: SqlClient.SqlClient, client: string): ChargeBook => ({
  program: (subscriptionId, outcomes) =>
    Effect.orDie(Effect.forEach(outcomes, (outcome) =>
      sql`INSERT INTO emulator_charge_programs (subscription_id, outcome) VALUES (${subscriptionId}, ${outcome})`, { discard: true }).pipe(
        sql.withTransaction
      )),
  take: (request) =>
    Effect.orDie(sql.withTransaction(Effect.gen(function*() {
      yield* lockSubscription(sql, request.subscriptionId)
      const known = yield* sql<{ serial: string; outcome: ChargeProgram }>`
        SELECT serial, outcome FROM emulator_charges WHERE idempotency_key = ${request.idempotencyKey}`
      if (known[0] !== undefined) return { program: known[0].outcome, serial: Number(known[0].serial), fresh: false }
      const next = yield* sql<{ outcome: ChargeProgram }>`
        DELETE FROM emulator_charge_programs
        WHERE seq = (SELECT min(seq) FROM emulator_charge_programs WHERE subscription_id = ${request.subscriptionId})
        RETURNING outcome`
      const program = next[0]?.outcome ?? "paid"
      const inserted = yield* sql<{ serial: string }>`
        INSERT INTO emulator_charges (idempotency_key, subscription_id, cycle_number, amount_kopecks, outcome, client)
        VALUES (${request.idempotencyKey}, ${request.subscriptionId}, ${request.cycleNumber}, ${request.amount.toString()}, ${program}, ${client})
        RETURNING serial`
      return { program, serial: Number(inserted[0]!.serial), fresh: true }
    }))),
  resolve: (idempotencyKey, outcome) =>
    Effect.orDie(sql`UPDATE emulator_charges SET outcome = ${outcome} WHERE idempotency_key = ${idempotencyKey}`)
})

/** A book on `url` with its own runtime and pool; `close` releases them. */
export interface Opened {
  readonly book: ChargeBook
  close(): Promise<void>
}

/** Opens the book on the database at `url` (creating its tables when missing); `client` names the caller in its records. */
export const open = async (url: string, client = `${hostname()}:${process.pid}`): Promise<Opened> => {
  const runtime = ManagedRuntime.make(PgStore.layerClient(url, { maxConnections: 4 }))
  const sql = await runtime.runPromise(Effect.gen(function*() {
    yield* Effect.orDie(ensureTables)
    return yield* SqlClient.SqlClient
  }))
  const direct = operations(sql, client)
  // Each operation runs on the book's own runtime: never inside the caller's transaction.
  const isolated = <A>(effect: Effect.Effect<A, never, never>): Effect.Effect<A> => Effect.promise(() => runtime.runPromise(effect))
  return {
    book: {
      program: (subscriptionId, outcomes) => isolated(direct.program(subscriptionId, outcomes)),
      take: (request) => isolated(direct.take(request)),
      resolve: (idempotencyKey, outcome) => isolated(direct.resolve(idempotencyKey, outcome))
    },
    close: () => runtime.dispose()
  }
}
