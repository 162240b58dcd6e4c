/**
 * The emulator books' tables (outside the core's schema and migrations) are created at start, when
 * missing, in one transaction under an advisory lock of the book, so that several processes starting
 * at once create them once.
 */
import { Effect } from "effect"
import { SqlClient, type SqlError } from "effect/sql"

/** Runs `create` (idempotent DDL) in a transaction holding the book's lock `(4242, bookKey)`. */
export const ensure = (bookKey: number, create: (sql: SqlClient.SqlClient) => Effect.Effect<void, SqlError.SqlError>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(4242, ${bookKey})`
      yield* create(sql)
    }))
  })
