/**
 * A clock whose time is set by hand while sleeping stays real.
 *
 * `TestClock` also freezes sleeps, which stalls code that waits on real I/O timers (a
 * connection pool, an HTTP server). A manual clock only moves the wall time that use cases
 * read (`Clock.currentTimeMillis`), so tests and demos against real PostgreSQL can travel in
 * time. The reference server's `PAYDESK_CLOCK=manual` is the same idea.
 */
import { Clock, Effect } from "effect"

/** A settable wall clock. */
export interface ManualClock {
  /** The `Clock` service to provide (`Effect.provideService(Clock.Clock, manual.clock)`). */
  readonly clock: Clock.Clock
  /** Sets the wall time (epoch milliseconds). */
  set(ms: number): Effect.Effect<void>
  /** Moves the wall time forward by `ms`. */
  adjust(ms: number): Effect.Effect<void>
  /** The current wall time. */
  readonly now: Effect.Effect<number>
}

/** A manual clock starting at `start`, sleeping with the clock currently in context. */
export const make = (start: number): Effect.Effect<ManualClock> =>
  Effect.map(Clock.Clock, (live: Clock.Clock) => {
    let current = start
    const clock: Clock.Clock = {
      currentTimeMillisUnsafe: () => current,
      currentTimeMillis: Effect.sync(() => current),
      currentTimeNanosUnsafe: () => BigInt(current) * 1_000_000n,
      currentTimeNanos: Effect.sync(() => BigInt(current) * 1_000_000n),
      monotonicTimeNanosUnsafe: () => live.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: live.monotonicTimeNanos,
      sleep: (duration) => live.sleep(duration)
    }
    return {
      clock,
      set: (ms) => Effect.sync(() => void (current = ms)),
      adjust: (ms) => Effect.sync(() => void (current += ms)),
      now: Effect.sync(() => current)
    }
  })
