/**
 * The emulator books' tables (outside the core's schema and migrations) are created or brought up
 * to date at start, in one transaction under advisory locks, so that several processes starting at
 * once do it once. A book records the version its tables are at (`emulator_book_schema`), and a
 * start that finds them current runs no DDL: `ALTER TABLE` and `CREATE INDEX` lock a table even
 * when they change nothing, and taken in another order than a charge of a running process takes its
 * tables (a review reproduced the deadlock), a start could fail, or the charge be answered unknown.
 */
import { Effect } from "effect"
import { SqlClient, type SqlError } from "effect/sql"

/** The advisory lock of the books' schema work (with each book's own, `(4242, bookKey)`, as before versions). */
const schemaLock = 1_000

/**
 * Runs `create` (idempotent DDL) for the book `bookKey` unless its tables are at `version` already,
 * in a transaction holding the books' schema lock and the book's own lock `(4242, bookKey)`; then
 * records `version`.
 */
export const ensure = (bookKey: number, version: number, create: (sql: SqlClient.SqlClient) => Effect.Effect<void, SqlError.SqlError>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const current = Effect.map(
      sql<{ version: number }>`SELECT version FROM emulator_book_schema WHERE book = ${bookKey}`,
      (rows) => (rows[0]?.version ?? 0) >= version
    )
    // A first start, or a book older than versions, has no such table: the transaction creates it.
    if (yield* Effect.orElseSucceed(current, () => false)) return
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(4242, ${schemaLock})`
      yield* sql`SELECT pg_advisory_xact_lock(4242, ${bookKey})`
      yield* sql`CREATE TABLE IF NOT EXISTS emulator_book_schema (book integer PRIMARY KEY, version integer NOT NULL)`
      if (yield* current) return
      yield* create(sql)
      yield* sql`INSERT INTO emulator_book_schema (book, version) VALUES (${bookKey}, ${version})
        ON CONFLICT (book) DO UPDATE SET version = excluded.version`
    }))
  })
