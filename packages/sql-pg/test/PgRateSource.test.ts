/**
 * `PgRateSource` on every Postgres target: no rate is `ProviderUnavailable`, the general rate
 * applies to every terminal, a terminal's own rate overrides it for that terminal only,
 * `setRate` replaces a scope's rate, and refuses a rate outside `Amount.rateRule` as the operator
 * route does (not above zero, or above `Amount.maxRateMicro`), storing nothing.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Logger } from "effect"
import { SqlClient } from "effect/sql"
import { Amount, RateSource } from "@paydesk/core"
import * as PgRateSource from "../src/PgRateSource.js"
import { store, targets } from "./PgHarness.js"

const at = 1_768_467_600_000

describe("PgRateSource", () => {
  for (const target of targets) {
    layer(PgRateSource.layer.pipe(Layer.provideMerge(store(target.url))), { timeout: "60 seconds" })(
      `postgres (${target.name})`,
      (it) => {
        it.effect("without any rate, current fails with ProviderUnavailable", () =>
          Effect.gen(function*() {
            const rates = yield* RateSource
            const warnings: Array<string> = []
            const logger = Logger.make<unknown, void>(({ logLevel, message }) => {
              if (logLevel === "Warn") warnings.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
            })
            const terminal = crypto.randomUUID()
            const [none, forTerminal] = yield* Effect.all([Effect.flip(rates.current(null)), Effect.flip(rates.current(terminal))]).pipe(
              Effect.provide(Logger.layer([logger]))
            )
            assert.strictEqual(none._tag, "ProviderUnavailable")
            assert.strictEqual(forTerminal._tag, "ProviderUnavailable")
            // The answer is the spec's; the host's log says what is missing (an embedding probe read only the answer).
            assert.deepStrictEqual(warnings.map((w) => w.slice(0, w.indexOf(":"))), ["no exchange rate is stored", `no exchange rate is stored for terminal ${terminal}, nor a general one`])
            assert.include(warnings[0], "PgRateSource.setRate")
            // Once a minute per scope: a merchant asking again does not fill the log.
            yield* Effect.flip(rates.current(null)).pipe(Effect.provide(Logger.layer([logger])))
            assert.strictEqual(warnings.length, 2)
          }))

        it.effect("the general rate applies to every terminal; a terminal's rate overrides it", () =>
          Effect.gen(function*() {
            const rates = yield* RateSource
            const terminal = crypto.randomUUID()
            yield* PgRateSource.setRate("general", 95_123_456n, at)
            assert.deepStrictEqual(yield* rates.current(null), { rate: 95_123_456n, updatedAt: at })
            assert.deepStrictEqual(yield* rates.current(terminal), { rate: 95_123_456n, updatedAt: at })
            yield* PgRateSource.setRate(terminal, 90_000_001n, at + 1)
            assert.deepStrictEqual(yield* rates.current(terminal), { rate: 90_000_001n, updatedAt: at + 1 })
            assert.deepStrictEqual(yield* rates.current(null), { rate: 95_123_456n, updatedAt: at })
            assert.deepStrictEqual(yield* rates.current(crypto.randomUUID()), { rate: 95_123_456n, updatedAt: at })
          }))

        it.effect("setRateIfNone stores a scope's first rate and keeps one set before (a start's initial rate)", () =>
          Effect.gen(function*() {
            const rates = yield* RateSource
            const terminal = crypto.randomUUID()
            // Two starts at once: one stores.
            const stored = yield* Effect.all([PgRateSource.setRateIfNone(terminal, 96_000_000n, at), PgRateSource.setRateIfNone(terminal, 97_000_000n, at + 1)], { concurrency: 2 })
            assert.deepStrictEqual(stored.filter(Boolean).length, 1)
            const first = yield* rates.current(terminal)
            // The operator's rate set since is kept at the next start.
            yield* PgRateSource.setRate(terminal, 98_000_000n, at + 2)
            assert.isFalse(yield* PgRateSource.setRateIfNone(terminal, first.rate, at + 3))
            assert.deepStrictEqual(yield* rates.current(terminal), { rate: 98_000_000n, updatedAt: at + 2 })
            assert.strictEqual((yield* Effect.flip(PgRateSource.setRateIfNone(crypto.randomUUID(), 0n, at)))._tag, "InvalidRequest")
          }))

        it.effect("setRate replaces the rate of its scope", () =>
          Effect.gen(function*() {
            const rates = yield* RateSource
            yield* PgRateSource.setRate("general", 100_000_000n, at + 10)
            yield* PgRateSource.setRate("general", Amount.maxRateMicro, at + 20)
            assert.deepStrictEqual(yield* rates.current(null), { rate: Amount.maxRateMicro, updatedAt: at + 20 })
            yield* PgRateSource.setRate("general", 1n, at + 30)
            assert.deepStrictEqual(yield* rates.current(null), { rate: 1n, updatedAt: at + 30 })
          }))

        it.effect("reads a rate stored before the bound exactly, beyond 2^53 micro-RUB", () =>
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            const terminal = crypto.randomUUID()
            yield* sql`INSERT INTO rates (scope, rate, updated_at) VALUES (${terminal}, ${"9007199254.740993"}, ${new Date(at)})`
            assert.deepStrictEqual(yield* (yield* RateSource).current(terminal), { rate: 9_007_199_254_740_993n, updatedAt: at })
          }))

        it.effect("setRate refuses a rate outside the operator's rule (not above zero, above the maximum) and stores nothing", () =>
          Effect.gen(function*() {
            const rates = yield* RateSource
            const terminal = crypto.randomUUID()
            yield* PgRateSource.setRate(terminal, 95_000_000n, at)
            for (const bad of [0n, -1n, -95_000_000n, Amount.maxRateMicro + 1n, 9_007_199_254_740_993n]) {
              const refused = yield* Effect.flip(PgRateSource.setRate(terminal, bad, at + 1))
              assert.deepStrictEqual(
                [refused._tag, refused.field, refused.message],
                ["InvalidRequest", "rate", `rate must be ${Amount.rateRule}`],
                String(bad)
              )
              assert.deepStrictEqual(yield* rates.current(terminal), { rate: 95_000_000n, updatedAt: at })
            }
          }))
      }
    )
  }
})
