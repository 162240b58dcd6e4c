/**
 * The payout network emulator's memory of final answers, kept in PostgreSQL so the emulated network
 * outlives the server process and is shared by every process on the database, as a real network
 * would be: a payout key it has answered is answered the same after a crash and a restart, never
 * sent again (an outside probe found the in-memory network starting again at `tx_1` after each
 * restart, so a payout whose send a crash cut off before its booking would have been sent twice).
 *
 * The book lives in its own table (`emulator_payouts`), outside the core's schema and migrations, on
 * the bank's pool (a `SqlClient` of its own), so its writes commit on their own and never join a
 * transaction of the core. Transaction ids are random, `tx_` and the 32 hex digits of a random UUID:
 * merchants see them (`tx_id`), and a serial would tell one how many payouts the others made (a
 * payout sent before their column came keeps its `tx_<serial>`; a process of an older build beside a
 * newer one answers a replay with `tx_<serial>` too).
 */
import { Effect, Layer } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import type { SendOutcome } from "@paydesk/core"
import * as PgBookSchema from "./PgBookSchema.js"
import { BookUnavailable, type PayoutBook, PayoutBookService, rejected } from "./PayoutNetworkEmulator.js"

/** Creates the book's table when missing (idempotent, safe from several processes). */
// Version 2: random transaction ids.
const ensureTable = PgBookSchema.ensure(1, 2, (sql) =>
  Effect.gen(function*() {
    yield* sql`CREATE TABLE IF NOT EXISTS emulator_payouts (
      serial bigserial PRIMARY KEY,
      idempotency_key text NOT NULL UNIQUE,
      amount_micro_usdt bigint NOT NULL,
      wallet_address text NOT NULL,
      network text NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('sent', 'rejected')),
      client text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
    yield* sql`ALTER TABLE emulator_payouts ADD COLUMN IF NOT EXISTS tx_id text`
  }))

interface Row {
  readonly serial: string
  readonly outcome: "sent" | "rejected"
  readonly tx_id: string | null
}

const outcomeOf = (row: Row): SendOutcome => row.outcome === "sent" ? { _tag: "Sent", txId: row.tx_id ?? `tx_${row.serial}` } : rejected

/** Builds the book's operations over `sql`; `client` names the caller (server process) in its records. */
const operations = (sql: SqlClient.SqlClient, client: string): PayoutBook => {
  const final = (key: string) =>
    Effect.map(sql<Row>`SELECT serial, outcome, tx_id FROM emulator_payouts WHERE idempotency_key = ${key}`, (rows) => rows[0] === undefined ? undefined : outcomeOf(rows[0]))
  return {
    final: (key) => Effect.mapError(final(key), (cause) => new BookUnavailable({ cause })),
    decide: (input, program) =>
      Effect.mapError(Effect.gen(function*() {
        const inserted = yield* sql<Row>`
          INSERT INTO emulator_payouts (idempotency_key, amount_micro_usdt, wallet_address, network, outcome, client, tx_id)
          VALUES (${input.idempotencyKey}, ${input.amountUsdt.toString()}, ${input.walletAddress}, ${input.network}, ${program}, ${client},
            'tx_' || replace(gen_random_uuid()::text, '-', ''))
          ON CONFLICT (idempotency_key) DO NOTHING
          RETURNING serial, outcome, tx_id`
        if (inserted[0] !== undefined) return { outcome: outcomeOf(inserted[0]), replay: false }
        // Another process answered the key first: its answer is the key's.
        const known = yield* final(input.idempotencyKey)
        return { outcome: known!, replay: true }
      }), (cause) => new BookUnavailable({ cause }))
  }
}

/** `PayoutBookService` on the `SqlClient` in context (give it a pool of its own), creating its table when missing. */
export const layer = (options: { readonly client: string }): Layer.Layer<PayoutBookService, SqlError.SqlError, SqlClient.SqlClient> =>
  Layer.effect(
    PayoutBookService,
    Effect.gen(function*() {
      yield* ensureTable
      return PayoutBookService.of(operations(yield* SqlClient.SqlClient, options.client))
    })
  )
