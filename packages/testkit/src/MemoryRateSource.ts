/**
 * A settable `RateSource` for tests.
 *
 * `MemoryRateSource` holds the general USDT/RUB rate (micro-RUB per USDT, default 95.00 RUB at
 * `updatedAt` 0), optional per-terminal rates, and an "unavailable" switch under which `current`
 * fails with `ProviderUnavailable`. `layer` provides both the control service and the port.
 */
import { Context, Effect, Layer } from "effect"
import { ProviderUnavailable, RateSource } from "@paydesk/core"
import type { Rate } from "@paydesk/core"

/** 95.00 RUB per USDT in micro-RUB. */
export const defaultRate = 95_000_000n

/** Controls of the memory rate source. */
export class MemoryRateSource extends Context.Service<MemoryRateSource, {
  /** Sets the general rate, updated at `at`, and makes the source available. */
  set(rate: bigint, at: number): Effect.Effect<void>
  /** Sets the rate of one terminal (overrides the general one for it). */
  setForTerminal(terminalId: string, rate: bigint, at: number): Effect.Effect<void>
  /** Makes `current` fail with `ProviderUnavailable` (true) or answer again (false). */
  setUnavailable(unavailable: boolean): Effect.Effect<void>
  /** The port's `current`. */
  current(terminalId: string | null): Effect.Effect<Rate, ProviderUnavailable>
}>()("@paydesk/testkit/MemoryRateSource") {}

/** Builds a memory rate source starting at `initial` (95.00 RUB/USDT at time 0 by default). */
export const make = (initial: Partial<Rate> = {}): MemoryRateSource["Service"] => {
  let general: Rate = { rate: initial.rate ?? defaultRate, updatedAt: initial.updatedAt ?? 0 }
  const perTerminal = new Map<string, Rate>()
  let unavailable = false
  return MemoryRateSource.of({
    set: (rate, at) =>
      Effect.sync(() => {
        general = { rate, updatedAt: at }
        unavailable = false
      }),
    setForTerminal: (terminalId, rate, at) => Effect.sync(() => void perTerminal.set(terminalId, { rate, updatedAt: at })),
    setUnavailable: (value) => Effect.sync(() => void (unavailable = value)),
    current: (terminalId) =>
      Effect.suspend(() =>
        unavailable
          ? Effect.fail(ProviderUnavailable.of())
          : Effect.succeed((terminalId === null ? undefined : perTerminal.get(terminalId)) ?? general)
      )
  })
}

/** `MemoryRateSource` and the `RateSource` port on it; fresh state per build. */
export const layer = (initial: Partial<Rate> = {}): Layer.Layer<MemoryRateSource | RateSource> =>
  Layer.effect(RateSource, Effect.map(MemoryRateSource, (m) => RateSource.of({ current: m.current }))).pipe(
    Layer.provideMerge(Layer.sync(MemoryRateSource, () => make(initial)))
  )
