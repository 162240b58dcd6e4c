/**
 * How a host runs the core's effects from callback-style code (an HTTP route, an Inngest step):
 * a `ManagedRuntime` is one, and `fromContext` makes one from the services a host's own layer
 * graph already built (no second runtime).
 */
import { Effect, type Context, type Exit } from "effect"
import type { Services } from "./ports/Persistence.js"

/** Runs effects that need `R` (by default every port of the core) and answers their exit. */
export interface Runner<R = Services> {
  runPromiseExit<A, E>(effect: Effect.Effect<A, E, R>): Promise<Exit.Exit<A, E>>
}

/** A runner over services already built (e.g. `yield* Effect.context<Services>()` inside a layer). */
export const fromContext = <R>(context: Context.Context<R>): Runner<R> => {
  const run = Effect.runPromiseExitWith(context)
  return { runPromiseExit: (effect) => run(effect) }
}
