/**
 * `RateSource` on PostgreSQL (table `rates`), and the operator's way to set a rate.
 *
 * A row per scope: `general`, or a terminal id whose rate overrides the general one for that
 * terminal. Rates are micro-RUB per USDT in `numeric(20,6)`. Without a row that applies,
 * `current` fails with `ProviderUnavailable` and logs a warning saying that no rate is stored: a
 * fresh database has none, so a host stores one (`setRate`) before it settles live payments (the
 * reference server stores `PAYDESK_INITIAL_RATE` at start).
 */
import { Clock, Effect, Layer } from "effect"
import { Amount, InvalidRequest, ProviderUnavailable, RateSource, Traced } from "@paydesk/core"
import type { Rate } from "@paydesk/core"
import { SqlClient } from "effect/sql"
import { fromMicro, fromTime, micro, orDie, time } from "./PgSupport.js"

/** Scope of the rate that applies to every terminal without its own. */
export const general = "general"

/** How often the missing rate of one scope is logged at most. */
const warnEveryMs = 60_000
/** Scopes whose last warning is remembered at most (then forgotten together). */
const maxWarnedScopes = 1_000

/** A `rates` row as the driver returns it. */
interface RateRow {
  readonly scope: string
  readonly rate: string
  readonly updated_at: Date
}

/** A row back to the core's rate. */
const toEntity = (row: RateRow): Rate => ({ rate: fromMicro(row.rate), updatedAt: fromTime(row.updated_at) })

/** `RateSource` on the `SqlClient` in context. */
export const layer: Layer.Layer<RateSource, never, SqlClient.SqlClient> = Layer.effect(
  RateSource,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    /** When the missing rate of a scope was last logged. */
    const warned = new Map<string, number>()
    return RateSource.of({
      current: Traced.fn("PgRateSource.current")(function*(terminalId) {
        const scopes = terminalId === null ? sql`scope = ${general}` : sql`scope IN (${general}, ${terminalId})`
        // A terminal's own row sorts first (false < true).
        const rows = yield* orDie(sql<RateRow>`SELECT * FROM rates WHERE ${scopes}
          ORDER BY scope = ${general} LIMIT 1`)
        const row = rows[0]
        if (row === undefined) {
          // The answer names the provider (the spec's 503); the host's log names what is missing, once
          // a minute per scope (any merchant's GET /rate asks).
          const now = yield* Clock.currentTimeMillis
          const scope = terminalId ?? general
          if (now - (warned.get(scope) ?? -Infinity) >= warnEveryMs) {
            if (warned.size >= maxWarnedScopes) warned.clear()
            warned.set(scope, now)
            yield* Effect.logWarning(`no exchange rate is stored${terminalId === null ? "" : ` for terminal ${terminalId}, nor a general one`}: a live payment cannot be credited (its settlement answers "provider not available") until one is set with PgRateSource.setRate or the operator's PUT /admin/v1/rate`)
          }
          return yield* ProviderUnavailable.of()
        }
        return toEntity(row)
      })
    })
  })
)

/**
 * Sets the rate (micro-RUB per USDT) of `scope` (`"general"` or a terminal id) as updated at `at`.
 * A rate outside `Amount.rateRule` (not above zero, or above `Amount.maxRateMicro`) is refused with
 * the operator route's 400 (`rate must be …`) and stores nothing.
 */
export const setRate = (scope: string, rate: bigint, at: number): Effect.Effect<void, InvalidRequest, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    if (!Amount.isRate(rate)) return yield* new InvalidRequest({ field: "rate", message: `rate must be ${Amount.rateRule}` })
    const sql = yield* SqlClient.SqlClient
    yield* orDie(sql`INSERT INTO rates (scope, rate, updated_at) VALUES (${scope}, ${micro(rate)}, ${time(at)})
      ON CONFLICT (scope) DO UPDATE SET rate = EXCLUDED.rate, updated_at = EXCLUDED.updated_at`)
  }).pipe(Effect.withSpan("PgRateSource.setRate"))

/**
 * Stores `rate` for `scope` as updated at `at` only when the scope has none, in one statement (two
 * processes starting at once store one); answers whether it stored it. A host's start calls it
 * with its initial rate: a rate the operator set since is kept. Refuses a rate outside
 * `Amount.rateRule` as `setRate` does.
 */
export const setRateIfNone = (scope: string, rate: bigint, at: number): Effect.Effect<boolean, InvalidRequest, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    if (!Amount.isRate(rate)) return yield* new InvalidRequest({ field: "rate", message: `rate must be ${Amount.rateRule}` })
    const sql = yield* SqlClient.SqlClient
    const stored = yield* orDie(sql`INSERT INTO rates (scope, rate, updated_at) VALUES (${scope}, ${micro(rate)}, ${time(at)})
      ON CONFLICT (scope) DO NOTHING RETURNING 1`)
    return stored.length > 0
  }).pipe(Effect.withSpan("PgRateSource.setRateIfNone"))
