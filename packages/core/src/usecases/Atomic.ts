/**
 * Runs a use case's state change in one transaction, retrying it when a concurrent writer
 * won a unique rule or a version check (`WriteConflict`): the retry then sees the winner's
 * row and answers as a replay or a conflict.
 */
import { Effect } from "effect"
import type { WriteConflict } from "../Errors.js"
import { Transactions } from "../ports/Transactions.js"

/** Attempts of one use case before a `WriteConflict` is given up and reported. */
export const maxAttempts = 5

/** `Transactions.run` with retries on `WriteConflict`. */
export const atomic = <A, E, R>(
  effect: Effect.Effect<A, E | WriteConflict, R>
): Effect.Effect<A, E | WriteConflict, R | Transactions> =>
  Effect.flatMap(Transactions, (tx) =>
    tx.run(effect).pipe(
      Effect.retry({
        times: maxAttempts - 1,
        while: (e) => (e as { _tag?: string })._tag === "WriteConflict"
      })
    ))
