/**
 * How a host runs the core's effects from callback-style code (an HTTP route, an Inngest step):
 * a `ManagedRuntime` is one, and `fromContext` makes one from the services a host's own layer
 * graph already built (no second runtime).
 */
import { Cause, Effect, Exit, type Context } from "effect"
import type { Services } from "./ports/Persistence.js"

/** Runs effects that need `R` (by default every port of the core) and answers their exit. */
export interface Runner<R = Services> {
  runPromiseExit<A, E>(effect: Effect.Effect<A, E, R>): Promise<Exit.Exit<A, E>>
  /**
   * Runs an effect that completes without waiting (e.g. opening a span) at once, without a
   * promise; optional (a `ManagedRuntime` has it). An effect that would wait fails with a defect.
   */
  runSyncExit?<A, E>(effect: Effect.Effect<A, E, R>): Exit.Exit<A, E>
}

/** A runner over services already built (e.g. `yield* Effect.context<Services>()` inside a layer). */
export const fromContext = <R>(context: Context.Context<R>): Runner<R> => {
  const run = Effect.runPromiseExitWith(context)
  const runSync = Effect.runSyncExitWith(context)
  return { runPromiseExit: (effect) => run(effect), runSyncExit: (effect) => runSync(effect) }
}

/** Runs `effect` synchronously when the runner can and it completes at once, else as a promise. */
export const runExit = <A, E, R>(runner: Runner<R>, effect: Effect.Effect<A, E, R>): Exit.Exit<A, E> | Promise<Exit.Exit<A, E>> => {
  if (runner.runSyncExit === undefined) return runner.runPromiseExit(effect)
  const exit = runner.runSyncExit(effect)
  return Exit.isFailure(exit) && Cause.hasDies(exit.cause) ? runner.runPromiseExit(effect) : exit
}
