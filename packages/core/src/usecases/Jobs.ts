/**
 * One job of a background pass: a failure is logged and counts as nothing done, so the jobs after
 * it still run (the record that failed stays due, or leased, and is retried later). And the
 * batches one pass claims.
 */
import { Cause, Context, Effect, Option, Stream } from "effect"

/** What a host does with a job that failed (the pass goes on to the next job either way). */
export interface FailureSink {
  readonly failed: (name: string, cause: Cause.Cause<unknown>) => Effect.Effect<void>
}

/**
 * Where a runner of passes learns which jobs failed, and logs them its way: the local worker
 * provides one per pass, so its health and `paydesk_work_passes_total{result="failed"}` say so, and
 * it logs a job's failures at most once a minute (a database down wrote about nine lines with their
 * stacks a second: an outside probe). Without it (null) each failure is logged at `error`: with every
 * failure turned into 0 and nothing else, a database down for minutes left every pass counted ok and
 * the worker ready (an outside probe).
 */
export const Failed = Context.Reference<FailureSink | null>("@paydesk/core/Jobs/Failed", { defaultValue: () => null })

/** Runs `effect`, turning a failure into 0, told to `Failed` (or logged at `error` without one). */
export const job = <E, R>(name: string, effect: Effect.Effect<number, E, R>): Effect.Effect<number, never, R> =>
  effect.pipe(Effect.catchCause((cause) =>
    Effect.flatMap(Failed, (sink) => Effect.as(sink === null ? Effect.logError(`background job ${name} failed`, cause) : sink.failed(name, cause), 0))))

/**
 * The items of the batches one pass claims, in order: `claim(n)` claims batch `n` (from 0) and says
 * whether another may follow. A batch is claimed only when the stream is pulled past the one before
 * (with `Stream.mapEffect`'s concurrency: once every item before it has started). A later batch that
 * cannot be claimed ends the stream, logged as `notClaimed` (its records are taken after their
 * lease); the first one's failure is the stream's.
 */
export const claimedBatches = <A, E, R>(
  notClaimed: string,
  claim: (batch: number) => Effect.Effect<readonly [ReadonlyArray<A>, Option.Option<number>], E, R>
): Stream.Stream<A, E, R> =>
  Stream.paginate(0, (batch: number) =>
    batch === 0
      ? claim(batch)
      : claim(batch).pipe(Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          : Effect.as(Effect.logError(notClaimed, cause), [[], Option.none<number>()] as const)
      )))
