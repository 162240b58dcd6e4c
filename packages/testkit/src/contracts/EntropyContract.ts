/**
 * Contract suite of `Entropy`: lowercase RFC 4122 UUIDs (v4 or v7) that never repeat, and
 * base64url tokens without padding of exactly the requested number of bytes.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Entropy } from "@paydesk/core"
import { fromBase64Url } from "../Bytes.js"

/** What the suite needs. */
export type Requirements = Entropy

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[47][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** Registers the `Entropy` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`Entropy contract (${name})`, (it) => {
    it.effect("uuid is a lowercase RFC 4122 UUID of version 4 or 7", () =>
      Effect.gen(function*() {
        const entropy = yield* Entropy
        for (let i = 0; i < 200; i++) assert.match(yield* entropy.uuid, UUID)
      }))

    it.effect("uuids never repeat", () =>
      Effect.gen(function*() {
        const entropy = yield* Entropy
        const seen = new Set<string>()
        for (let i = 0; i < 10_000; i++) seen.add(yield* entropy.uuid)
        assert.strictEqual(seen.size, 10_000)
      }))

    it.effect("token(n) is unpadded base64url of exactly n bytes", () =>
      Effect.gen(function*() {
        const entropy = yield* Entropy
        for (const n of [1, 2, 3, 16, 24, 32, 33, 64]) {
          const token = yield* entropy.token(n)
          assert.match(token, /^[A-Za-z0-9_-]+$/)
          assert.strictEqual(token.length, Math.ceil((n * 4) / 3))
          assert.strictEqual(fromBase64Url(token)?.length, n)
        }
      }))

    it.effect("tokens of 16 bytes or more do not repeat", () =>
      Effect.gen(function*() {
        const entropy = yield* Entropy
        const seen = new Set<string>()
        for (let i = 0; i < 2_000; i++) seen.add(yield* entropy.token(16))
        assert.strictEqual(seen.size, 2_000)
      }))
  })
