/**
 * Port: the USDT/RUB exchange rate.
 *
 * Contract: `current(terminalId)` returns the rate in micro-RUB per USDT (> 0) and when it was
 * last updated; with a terminal id, the rate that applies to that terminal (the same as the
 * general one unless the adapter knows better). Fails with `ProviderUnavailable` when no rate
 * is known.
 */
import { Context, type Effect } from "effect"
import type { ProviderUnavailable } from "../Errors.js"

/** A rate in micro-RUB per USDT. */
export interface Rate {
  readonly rate: bigint
  readonly updatedAt: number
}

export class RateSource extends Context.Service<RateSource, {
  current(terminalId: string | null): Effect.Effect<Rate, ProviderUnavailable>
}>()("@paydesk/core/RateSource") {}
