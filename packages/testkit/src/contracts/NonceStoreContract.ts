/**
 * Contract suite of `NonceStore`: a nonce is claimed once per API key within its window, even
 * under concurrency; it can be claimed again once the window has passed; `purge` deletes and
 * counts expired claims.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { NonceStore } from "@paydesk/core"
import * as Fixtures from "../Fixtures.js"

/** What the suite needs. */
export type Requirements = NonceStore

const WINDOW = 600_000

/** Registers the `NonceStore` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`NonceStore contract (${name})`, (it) => {
    const fresh = Effect.map(NonceStore, (store) => ({ store, apiKeyId: Fixtures.uuid(), nonce: Fixtures.uuid() }))
    const now = Fixtures.baseTime

    it.effect("a nonce is claimed once within its window", () =>
      Effect.gen(function*() {
        const { store, apiKeyId, nonce } = yield* fresh
        assert.isTrue(yield* store.claim(apiKeyId, nonce, now, now + WINDOW))
        assert.isFalse(yield* store.claim(apiKeyId, nonce, now, now + WINDOW))
        assert.isFalse(yield* store.claim(apiKeyId, nonce, now + WINDOW - 1, now + 2 * WINDOW))
      }))

    it.effect("20 concurrent claims of one nonce: exactly one succeeds", () =>
      Effect.gen(function*() {
        const { store, apiKeyId, nonce } = yield* fresh
        const results = yield* Effect.forEach(
          Array.from({ length: 20 }, (_, i) => i),
          () => store.claim(apiKeyId, nonce, now, now + WINDOW),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter(Boolean).length, 1)
      }))

    it.effect("after the window the nonce can be claimed again, once", () =>
      Effect.gen(function*() {
        const { store, apiKeyId, nonce } = yield* fresh
        assert.isTrue(yield* store.claim(apiKeyId, nonce, now, now + WINDOW))
        assert.isTrue(yield* store.claim(apiKeyId, nonce, now + WINDOW, now + 2 * WINDOW))
        assert.isFalse(yield* store.claim(apiKeyId, nonce, now + WINDOW + 1, now + 3 * WINDOW))
      }))

    it.effect("claims of other API keys and other nonces are independent", () =>
      Effect.gen(function*() {
        const { store, apiKeyId, nonce } = yield* fresh
        assert.isTrue(yield* store.claim(apiKeyId, nonce, now, now + WINDOW))
        assert.isTrue(yield* store.claim(Fixtures.uuid(), nonce, now, now + WINDOW))
        assert.isTrue(yield* store.claim(apiKeyId, Fixtures.uuid(), now, now + WINDOW))
        assert.isTrue(yield* store.claim(apiKeyId, nonce.toUpperCase(), now, now + WINDOW))
      }))

    it.effect("purge deletes the claims that expired by now and counts them", () =>
      Effect.gen(function*() {
        const { store, apiKeyId } = yield* fresh
        const cutoff = now + 10 * WINDOW
        // Start from a store without claims expired by the cutoff (a shared database may hold some).
        yield* store.purge(cutoff)
        const expired = [Fixtures.uuid(), Fixtures.uuid(), Fixtures.uuid()]
        const live = [Fixtures.uuid(), Fixtures.uuid()]
        for (const [i, nonce] of expired.entries()) {
          assert.isTrue(yield* store.claim(apiKeyId, nonce, now, cutoff - i))
        }
        for (const nonce of live) assert.isTrue(yield* store.claim(apiKeyId, nonce, now, cutoff + 1))
        assert.strictEqual(yield* store.purge(cutoff), 3)
        assert.strictEqual(yield* store.purge(cutoff), 0)
        for (const nonce of live) assert.isFalse(yield* store.claim(apiKeyId, nonce, now, cutoff + 1))
        for (const nonce of expired) assert.isTrue(yield* store.claim(apiKeyId, nonce, cutoff, cutoff + WINDOW))
      }))
  })
