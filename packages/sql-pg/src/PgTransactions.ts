/**
 * `Transactions` on `sql.withTransaction`: one connection and one PostgreSQL transaction for
 * the whole effect, savepoints for nested runs. Deadlocks, serialization failures and lock
 * timeouts become `WriteConflict`, which the core's `atomic` retries, whether the statement's
 * error reached the transaction as a failure or as the defect of an adapter's `orDie` (a batched
 * read or write of the transaction: its rows are locked in no order the adapter can promise);
 * other SQL failures are defects.
 */
import { Cause, Effect, Layer } from "effect"
import { Transactions, WriteConflict } from "@paydesk/core"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { isConcurrencyAbort } from "./PgSupport.js"

const isSqlError = (error: unknown): error is SqlError => (error as { _tag?: string } | null)?._tag === "SqlError"

/**
 * A cause whose only reasons are defects that are concurrency aborts (an interruption, or any other
 * failure or defect beside them, keeps the cause as it is).
 */
const abortedByDefect = (cause: Cause.Cause<unknown>): boolean =>
  cause.reasons.length > 0 &&
  cause.reasons.every((reason) => Cause.isDieReason(reason) && isSqlError(reason.defect) && isConcurrencyAbort(reason.defect))

const aborted = () => new WriteConflict({ constraint: "transaction", message: "transaction aborted by a concurrent one" })

/** `Transactions` on the `SqlClient` in context. */
export const layer: Layer.Layer<Transactions, never, SqlClient.SqlClient> = Layer.effect(
  Transactions,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return Transactions.of({
      run: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        sql.withTransaction(effect).pipe(
          Effect.catchIf(
            isSqlError,
            (error) => isConcurrencyAbort(error) ? Effect.fail(aborted()) : Effect.die(error)
          ),
          // The transaction is rolled back already (or its savepoint): the retry starts afresh.
          Effect.catchCauseIf(abortedByDefect, () => Effect.fail(aborted()))
        ) as Effect.Effect<A, E | WriteConflict, R>
    })
  })
)
