/**
 * One job of a background pass: a failure is logged and counts as nothing done, so the jobs after
 * it still run (the record that failed stays due, or leased, and is retried later).
 */
import { Effect } from "effect"

/** Runs `effect`, turning a failure into a logged error and 0. */
export const job = <E, R>(name: string, effect: Effect.Effect<number, E, R>): Effect.Effect<number, never, R> =>
  effect.pipe(Effect.catchCause((cause) => Effect.as(Effect.logError(`background job ${name} failed`, cause), 0)))
