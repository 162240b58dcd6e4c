/**
 * The core's `Wakeups` port for the local engine: a commit that wrote work due now (within
 * `soonMs`) wakes the worker at once; work due in the future arms one timer for the earliest such
 * moment (re-armed in steps of at most `maxDelayMs`, so long delays and clock jumps are safe),
 * which wakes the worker when the moment comes. Later moments are left to the worker's interval
 * pass, which remains the guarantee. Time is read from the runtime's `Clock` (a manual clock
 * included: its moments are checked every `maxDelayMs` at most, and setting it wakes the worker).
 *
 * The port is built before the worker exists: `attach` points it at the worker once started.
 */
import { type Clock, Effect, Layer } from "effect"
import { Wakeups } from "@paydesk/core"

/** What the port wakes: the local worker. */
export interface Target {
  wake(): void
}

/** The port with its worker handle. */
export interface LocalWakeups {
  /** Provides `Wakeups` to the runtime. */
  readonly layer: Layer.Layer<Wakeups>
  /** Starts forwarding to `target` (before this, wakeups are dropped). */
  attach(target: Target): void
  /** Clears the timer and stops forwarding. */
  close(): void
}

/** Options of `make`. */
export interface Options {
  /** Work due within this much of now wakes the worker at once (default 1 s). */
  readonly soonMs?: number
  /** Longest single timer delay (default 60 s). */
  readonly maxDelayMs?: number
}

/** Builds the port; call `attach(worker)` once the worker runs. */
export const make = (options: Options = {}): LocalWakeups => {
  const soonMs = options.soonMs ?? 1_000
  const maxDelayMs = options.maxDelayMs ?? 60_000
  let target: Target | null = null
  let closed = false
  let timer: ReturnType<typeof setTimeout> | undefined
  /** The moment the timer is armed for, on the runtime's clock. */
  let armedFor: number | null = null

  const check = (clock: Clock.Clock) => {
    if (closed || armedFor === null) return
    const now = clock.currentTimeMillisUnsafe()
    if (armedFor <= now) {
      armedFor = null
      timer = undefined
      target?.wake()
      return
    }
    clearTimeout(timer)
    timer = setTimeout(() => check(clock), Math.min(armedFor - now, maxDelayMs))
    timer.unref?.()
  }

  const layer = Layer.succeed(Wakeups)(Wakeups.of({
    notify: (items) =>
      Effect.clockWith((clock) =>
        Effect.sync(() => {
          if (closed) return
          const now = clock.currentTimeMillisUnsafe()
          if (items.some((w) => w.at <= now + soonMs)) target?.wake()
          const later = items.filter((w) => w.at > now).map((w) => w.at)
          if (later.length === 0) return
          const earliest = Math.min(...later)
          if (armedFor !== null && armedFor <= earliest) return
          armedFor = earliest
          check(clock)
        }))
  }))

  return {
    layer,
    attach: (worker) => {
      target = worker
    },
    close: () => {
      closed = true
      target = null
      armedFor = null
      clearTimeout(timer)
    }
  }
}
