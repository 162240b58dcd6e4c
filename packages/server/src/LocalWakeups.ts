/**
 * The core's `Wakeups` port for the local engine: a commit that wrote work due now (within
 * `soonMs`) wakes the worker at once; work due in the future arms one timer for the earliest such
 * moment (re-armed in steps of at most `maxDelayMs`, so long delays and clock jumps are safe),
 * which wakes the worker when the moment comes. Later moments are left to the worker's interval
 * pass, which remains the guarantee. Time is read from the runtime's `Clock` (a manual clock
 * included: its moments are checked every `maxDelayMs` at most, and setting it wakes the worker).
 *
 * `layer` wakes the `WakeSignal` in context and clears its timer when its scope closes.
 */
import { type Clock, Context, Effect, Latch, Layer } from "effect"
import { Wakeups } from "@paydesk/core"

/** What wakes the local worker: opening it runs a pass soon (several opens before the pass make one). */
export class WakeSignal extends Context.Service<WakeSignal, Latch.Latch>()("@paydesk/server/WakeSignal") {
  /** A closed signal. */
  static readonly layer: Layer.Layer<WakeSignal> = Layer.effect(WakeSignal, Latch.make(false))
}

/** Options of `make` and `layer`. */
export interface Options {
  /** Work due within this much of now wakes the worker at once (default 1 s). */
  readonly soonMs?: number
  /** Longest single timer delay (default 60 s). */
  readonly maxDelayMs?: number
}

/** The port over `wake`, and `close` to clear its timer and stop waking. */
export const make = (wake: () => void, options: Options = {}) => {
  const soonMs = options.soonMs ?? 1_000
  const maxDelayMs = options.maxDelayMs ?? 60_000
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
      wake()
      return
    }
    clearTimeout(timer)
    timer = setTimeout(() => check(clock), Math.min(armedFor - now, maxDelayMs))
    timer.unref?.()
  }

  const port = Wakeups.of({
    notify: (items) =>
      Effect.clockWith((clock) =>
        Effect.sync(() => {
          if (closed) return
          const now = clock.currentTimeMillisUnsafe()
          if (items.some((w) => w.at <= now + soonMs)) wake()
          const later = items.filter((w) => w.at > now).map((w) => w.at)
          if (later.length === 0) return
          const earliest = Math.min(...later)
          if (armedFor !== null && armedFor <= earliest) return
          armedFor = earliest
          check(clock)
        }))
  })

  return {
    port,
    close: () => {
      closed = true
      armedFor = null
      clearTimeout(timer)
    }
  }
}

/** `Wakeups` opening the `WakeSignal` in context; the timer is cleared when the layer's scope closes. */
export const layer = (options: Options = {}): Layer.Layer<Wakeups, never, WakeSignal> =>
  Layer.effect(
    Wakeups,
    Effect.gen(function*() {
      const signal = yield* WakeSignal
      const local = make(() => void signal.openUnsafe(), options)
      yield* Effect.addFinalizer(() => Effect.sync(local.close))
      return local.port
    })
  )
