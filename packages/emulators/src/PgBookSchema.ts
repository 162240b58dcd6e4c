/**
 * The emulator books' tables (outside the core's schema and migrations) are created or brought up
 * to date at start, in one transaction under advisory locks, so that several processes starting at
 * once do it once. A book records the version its tables are at (`emulator_book_schema`), and a
 * start that finds them current runs no DDL: `ALTER TABLE` and `CREATE INDEX` lock a table even
 * when they change nothing, and taken in another order than a charge of a running process takes its
 * tables (a review reproduced the deadlock), a start could fail, or the charge be answered unknown.
 *
 * An upgrade waits at most `lockWaitMs` for a table lock (`lock_timeout`): a session holding a book's
 * table (a long report, a dump) would otherwise hold the start, and every charge of the running
 * processes queued behind its lock request, for as long as it lasts (an outside probe: 25 s). It
 * then logs, waits `retryMs` and tries again, until it gets them.
 */
import { Duration, Effect } from "effect"
import { SqlClient, type SqlError } from "effect/sql"

/** The advisory lock of the books' schema work (with each book's own, `(4242, bookKey)`, as before versions). */
const schemaLock = 1_000

/** How long an upgrade waits for a table lock before it gives way and tries again. */
export const lockWaitMs = 1_000

/** How long it gives way. */
export const retryMs = 2_000

/**
 * A lock the upgrade gave way on: its `lock_timeout` ran out (`effect/sql` names PostgreSQL's
 * `lock_not_available` so), or PostgreSQL chose it in a deadlock (a session taking the tables in
 * another order).
 */
const givesWay = (error: SqlError.SqlError): boolean => {
  const tag = (error.reason as { readonly _tag?: string })._tag
  return tag === "LockTimeoutError" || tag === "DeadlockError"
}

/**
 * Runs `create` (idempotent DDL) for the book `bookKey` unless its tables are at `version` already,
 * in a transaction holding the books' schema lock and the book's own lock `(4242, bookKey)`; then
 * records `version`.
 */
export const ensure = (bookKey: number, version: number, create: (sql: SqlClient.SqlClient) => Effect.Effect<void, SqlError.SqlError>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Without the table (a first start, or a book older than versions) no select: PostgreSQL would log an error.
    const current = Effect.gen(function*() {
      const [table] = yield* sql<{ present: boolean }>`SELECT to_regclass('emulator_book_schema') IS NOT NULL AS present`
      if (table?.present !== true) return false
      const [row] = yield* sql<{ version: number }>`SELECT version FROM emulator_book_schema WHERE book = ${bookKey}`
      return (row?.version ?? 0) >= version
    })
    if (yield* current) return
    const upgrade = sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(4242, ${schemaLock})`
      yield* sql`SELECT pg_advisory_xact_lock(4242, ${bookKey})`
      yield* sql`CREATE TABLE IF NOT EXISTS emulator_book_schema (book integer PRIMARY KEY, version integer NOT NULL)`
      if (yield* current) return
      yield* sql.unsafe(`SET LOCAL lock_timeout = '${lockWaitMs}ms'`)
      yield* create(sql)
      yield* sql`INSERT INTO emulator_book_schema (book, version) VALUES (${bookKey}, ${version})
        ON CONFLICT (book) DO UPDATE SET version = excluded.version`
    }))
    yield* upgrade.pipe(
      Effect.catchIf(givesWay, (error) =>
        Effect.logWarning(`emulator books: another session holds a table of the ${bookKey === 0 ? "sandbox bank's charge book" : `book ${bookKey}`} to upgrade; trying again in ${retryMs} ms`).pipe(
          Effect.annotateLogs({ component: "bank" }),
          Effect.andThen(Effect.sleep(Duration.millis(retryMs))),
          Effect.andThen(Effect.fail(error))
        )),
      Effect.retry({ while: givesWay })
    )
  })
