/**
 * `Transactions` on `sql.withTransaction`: one connection and one PostgreSQL transaction for
 * the whole effect, savepoints for nested runs. Deadlocks, serialization failures and lock
 * timeouts become `WriteConflict`, which the core's `atomic` retries; other SQL failures are
 * defects. Such an abort that reached the transaction as the defect of an adapter's `orDie` (a
 * batched read or write of the transaction: its rows are locked in no order the adapter can promise)
 * becomes `WriteConflict` at the outermost transaction only: a savepoint's retry would keep the
 * outer transaction's locks, which the other transaction may be waiting for, and deadlock again.
 */
import { Cause, Effect, Layer, Option } from "effect"
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
        Effect.flatMap(Effect.serviceOption(sql.transactionService), (open) => {
          const run = sql.withTransaction(effect).pipe(
            Effect.catchIf(
              isSqlError,
              (error) => isConcurrencyAbort(error) ? Effect.fail(aborted()) : Effect.die(error)
            )
          )
          // The transaction is rolled back already: the retry starts afresh.
          return Option.isSome(open) ? run : Effect.catchCauseIf(run, abortedByDefect, () => Effect.fail(aborted()))
        }) as Effect.Effect<A, E | WriteConflict, R>
    })
  })
)
