import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import { Fixtures, MemoryStore } from "@paydesk/testkit"
import { Config, Nonce, PaydeskConfig } from "@paydesk/core"

const minute = 60_000
const window = 10 * minute

/** The failure of a claim as `[tag, message]`. */
const rejected = (apiKeyId: string, nonce: string | undefined) =>
  Nonce.claim(apiKeyId, nonce).pipe(
    Effect.flip,
    Effect.map((error) => [error._tag, error.message] as const)
  )

const alreadyUsed = ["NonceAlreadyUsed", "nonce already used"] as const

describe("Nonce", () => {
  it.layer(MemoryStore.layer)("claim", (it) => {
    it.effect("accepts a fresh nonce and rejects its reuse within 10 minutes", () =>
      Effect.gen(function*() {
        const key = Fixtures.uuid()
        const nonce = Fixtures.uuid()
        yield* Nonce.claim(key, nonce)
        assert.deepStrictEqual(yield* rejected(key, nonce), alreadyUsed)
        yield* TestClock.adjust(5 * minute)
        assert.deepStrictEqual(yield* rejected(key, nonce), alreadyUsed)
      }))

    it.effect("still rejects at 9:59.999 after the first use", () =>
      Effect.gen(function*() {
        const key = Fixtures.uuid()
        const nonce = Fixtures.uuid()
        yield* Nonce.claim(key, nonce)
        yield* TestClock.adjust(window - 1)
        assert.deepStrictEqual(yield* rejected(key, nonce), alreadyUsed)
      }))

    it.effect("accepts the nonce again 10 minutes and 1 ms after the first use", () =>
      Effect.gen(function*() {
        const key = Fixtures.uuid()
        const nonce = Fixtures.uuid()
        yield* Nonce.claim(key, nonce)
        yield* TestClock.adjust(window + 1)
        yield* Nonce.claim(key, nonce)
        // The second use opens a new window.
        assert.deepStrictEqual(yield* rejected(key, nonce), alreadyUsed)
      }))

    it.effect("does not extend the window on a rejected reuse", () =>
      Effect.gen(function*() {
        const key = Fixtures.uuid()
        const nonce = Fixtures.uuid()
        yield* Nonce.claim(key, nonce)
        yield* TestClock.adjust(window - 1)
        assert.deepStrictEqual(yield* rejected(key, nonce), alreadyUsed)
        yield* TestClock.adjust(2)
        yield* Nonce.claim(key, nonce)
      }))

    it.effect("keeps nonces apart per API key", () =>
      Effect.gen(function*() {
        const nonce = Fixtures.uuid()
        const first = Fixtures.uuid()
        const second = Fixtures.uuid()
        yield* Nonce.claim(first, nonce)
        yield* Nonce.claim(second, nonce)
        assert.deepStrictEqual(yield* rejected(first, nonce), alreadyUsed)
        assert.deepStrictEqual(yield* rejected(second, nonce), alreadyUsed)
      }))

    it.effect("lets exactly one of concurrent claims of one nonce win", () =>
      Effect.gen(function*() {
        const key = Fixtures.uuid()
        const nonce = Fixtures.uuid()
        const results = yield* Effect.all(
          Array.from({ length: 10 }, () => Effect.result(Nonce.claim(key, nonce))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter(Result.isSuccess).length, 1)
        for (const result of results.filter(Result.isFailure)) {
          assert.strictEqual(result.failure._tag, "NonceAlreadyUsed")
        }
      }))

    it.effect("requires a nonce: missing or empty is Unauthenticated", () =>
      Effect.gen(function*() {
        const key = Fixtures.uuid()
        assert.strictEqual((yield* rejected(key, undefined))[0], "Unauthenticated")
        assert.strictEqual((yield* rejected(key, ""))[0], "Unauthenticated")
      }))

    it.effect("accepts 128 characters and rejects 129 as Unauthenticated", () =>
      Effect.gen(function*() {
        const key = Fixtures.uuid()
        assert.strictEqual(Nonce.maxLength, 128)
        yield* Nonce.claim(key, "n".repeat(128))
        assert.strictEqual((yield* rejected(key, "n".repeat(129)))[0], "Unauthenticated")
      }))

    it.effect("rejects non-printable or non-ASCII nonces as Unauthenticated", () =>
      Effect.gen(function*() {
        const key = Fixtures.uuid()
        for (const bad of ["with space", "ключ", "tab\t", "line\n"]) {
          assert.strictEqual((yield* rejected(key, bad))[0], "Unauthenticated", JSON.stringify(bad))
        }
      }))

    it.effect("uses the configured window", () =>
      Effect.gen(function*() {
        assert.strictEqual(Config.defaults.nonceWindowMs, window)
        const key = Fixtures.uuid()
        const nonce = Fixtures.uuid()
        const short = { ...Config.defaults, nonceWindowMs: 1_000 }
        yield* Nonce.claim(key, nonce).pipe(Effect.provideService(PaydeskConfig, short))
        assert.deepStrictEqual(
          yield* rejected(key, nonce).pipe(Effect.provideService(PaydeskConfig, short)),
          alreadyUsed
        )
        yield* TestClock.adjust(1_001)
        yield* Nonce.claim(key, nonce).pipe(Effect.provideService(PaydeskConfig, short))
      }))
  })
})
