/**
 * `Transactions` on `sql.withTransaction`: one connection and one PostgreSQL transaction for
 * the whole effect, savepoints for nested runs. Deadlocks and serialization failures become
 * `WriteConflict`, which the core's `atomic` retries; other SQL failures are defects.
 */
import { Effect, Layer } from "effect"
import { Transactions, WriteConflict } from "@paydesk/core"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { isConcurrencyAbort } from "./PgSupport.js"

/** `Transactions` on the `SqlClient` in context. */
export const layer: Layer.Layer<Transactions, never, SqlClient.SqlClient> = Layer.effect(
  Transactions,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return Transactions.of({
      run: <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        sql.withTransaction(effect).pipe(
          Effect.catchIf(
            (error): error is SqlError => (error as { _tag?: string })?._tag === "SqlError",
            (error) =>
              isConcurrencyAbort(error)
                ? Effect.fail(new WriteConflict({ constraint: "transaction", message: "transaction aborted by a concurrent one" }))
                : Effect.die(error)
          )
        ) as Effect.Effect<A, E | WriteConflict, R>
    })
  })
)
