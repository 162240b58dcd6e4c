import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { Config, PaydeskConfig } from "../src/index.js"

/** The settings a layer provides. */
const read = Effect.gen(function*() {
  return yield* PaydeskConfig
})

describe("Config", () => {
  it("the defaults pass the checks", () => {
    assert.deepStrictEqual(Config.problems(Config.defaults), [])
  })

  it("names every setting out of range, one sentence each", () => {
    const found = Config.problems({
      ...Config.defaults,
      batchSize: 0,
      paymentLifetimeMs: -1_000,
      leaseMs: 1.5,
      signingSecretOverlapMs: -1,
      maxActivePayouts: 0,
      publicUrl: "not a url"
    })
    assert.deepStrictEqual(found, [
      "paymentLifetimeMs must be a whole number of milliseconds above 0, at most 3650 days (got -1000)",
      "leaseMs must be a whole number of milliseconds above 0, at most 3650 days (got 1.5)",
      "signingSecretOverlapMs must be a whole number of milliseconds, 0 or more, at most 3650 days (got -1)",
      "batchSize must be a whole number from 1 to 10000 (got 0)",
      "maxActivePayouts must be a whole number above 0 (got 0)",
      "publicUrl must be an absolute http or https URL without a trailing slash (got \"not a url\")"
    ])
    assert.strictEqual(Config.problems({ ...Config.defaults, batchSize: 10_001 }).length, 1)
    // Past JavaScript's dates, and a lease shorter than a callback in flight.
    assert.strictEqual(Config.problems({ ...Config.defaults, eventRetentionMs: Number.MAX_SAFE_INTEGER }).length, 1)
    assert.deepStrictEqual(Config.problems({ ...Config.defaults, leaseMs: 5_000 }), [
      "leaseMs must be at least 20000 (twice a callback's 10 s timeout: a shorter lease lets another worker send a callback still in flight again) (got 5000)"
    ])
    assert.strictEqual(Config.problems({ ...Config.defaults, publicUrl: "https://pay.example/" }).length, 1)
    assert.strictEqual(Config.problems({ ...Config.defaults, publicUrl: "ftp://pay.example" }).length, 1)
    assert.deepStrictEqual(Config.problems({ ...Config.defaults, publicUrl: "https://pay.example/shop", signingSecretOverlapMs: 0 }), [])
  })

  it.effect("layer: the defaults with the host's changes, or a failed build naming the problems", () =>
    Effect.gen(function*() {
      const settings = yield* Effect.provide(read, Config.layer({ batchSize: 25 }))
      assert.deepStrictEqual(settings, { ...Config.defaults, batchSize: 25 })
      // An override given as undefined keeps the default.
      const fromEnvironment: string | undefined = undefined
      assert.deepStrictEqual(yield* Config.make({ batchSize: fromEnvironment === undefined ? undefined : Number(fromEnvironment) }), Config.defaults)
      const refused = yield* Effect.exit(Effect.provide(read, Config.layer({ batchSize: 0, nonceWindowMs: 0 })))
      assert.isTrue(Exit.isFailure(refused))
      const error = Exit.isFailure(refused) ? refused.cause.reasons[0] : undefined
      assert.strictEqual(error?._tag, "Fail")
      const failure = error?._tag === "Fail" ? error.error : undefined
      assert.strictEqual(failure?._tag, "InvalidSettings")
      assert.deepStrictEqual(failure?.problems, [
        "nonceWindowMs must be a whole number of milliseconds above 0, at most 3650 days (got 0)",
        "batchSize must be a whole number from 1 to 10000 (got 0)"
      ])
      assert.match(failure?.message ?? "", /^invalid Paydesk settings: nonceWindowMs must be/)
    }))
})
