/**
 * Contract suite of `ApiKeyRepository`: keys are found by hash whether revoked or not, and listed
 * per terminal; `authenticate` finds the key with its terminal and claims the nonce by the
 * `NonceStore`'s rule, never for a revoked key.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { AccountRepository, ApiKeyRepository, NonceStore, TerminalRepository } from "@paydesk/core"
import * as Fixtures from "../Fixtures.js"
import { ids, none, some } from "./Support.js"

/** What the suite needs. */
export type Requirements = ApiKeyRepository | AccountRepository | TerminalRepository | NonceStore

/** Registers the `ApiKeyRepository` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`ApiKeyRepository contract (${name})`, (it) => {
    const setup = Effect.gen(function*() {
      const { terminal } = yield* Fixtures.seedTerminal()
      return { terminal, repo: yield* ApiKeyRepository }
    })

    it.effect("findByHash returns the key with every field, revoked or not", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const live = Fixtures.apiKey(terminal.id)
        const revoked = Fixtures.apiKey(terminal.id, {
          subscriptionWrite: false,
          prefix: "pk_live_abc",
          createdAt: Fixtures.baseTime + 1,
          revokedAt: Fixtures.baseTime + 2
        })
        yield* repo.insert(live)
        yield* repo.insert(revoked)
        assert.deepStrictEqual(some(yield* repo.findByHash(live.keyHash)), live)
        assert.deepStrictEqual(some(yield* repo.findByHash(revoked.keyHash)), revoked)
        none(yield* repo.findByHash("0".repeat(64)))
      }))

    it.effect("authenticate finds the key with its terminal and claims the nonce as NonceStore.claim does, never for a revoked key", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const nonces = yield* NonceStore
        const live = Fixtures.apiKey(terminal.id)
        const revoked = Fixtures.apiKey(terminal.id, { revokedAt: Fixtures.baseTime })
        yield* repo.insert(live)
        yield* repo.insert(revoked)
        const t = Fixtures.baseTime
        const first = some(yield* repo.authenticate(live.keyHash, "n-1", t, t + 600_000))
        assert.deepStrictEqual(first.key, live)
        assert.deepStrictEqual(some(first.terminal), terminal)
        assert.isTrue(first.nonceClaimed)
        // The nonce is taken for its window, by either path.
        assert.isFalse(some(yield* repo.authenticate(live.keyHash, "n-1", t + 1, t + 600_001)).nonceClaimed)
        assert.isFalse(yield* nonces.claim(live.id, "n-1", t + 2, t + 600_002))
        assert.isTrue(yield* nonces.claim(live.id, "n-2", t + 3, t + 600_003))
        assert.isFalse(some(yield* repo.authenticate(live.keyHash, "n-2", t + 4, t + 600_004)).nonceClaimed)
        // After its window it is free again.
        assert.isTrue(some(yield* repo.authenticate(live.keyHash, "n-1", t + 600_000, t + 1_200_000)).nonceClaimed)
        // A revoked key is found (the caller refuses it) and its nonce is not taken.
        const gone = some(yield* repo.authenticate(revoked.keyHash, "n-3", t, t + 600_000))
        assert.deepStrictEqual(gone.key, revoked)
        assert.isFalse(gone.nonceClaimed)
        assert.isTrue(yield* nonces.claim(revoked.id, "n-3", t, t + 600_000))
        none(yield* repo.authenticate("0".repeat(64), "n-4", t, t + 600_000))
      }))

    it.effect("listByTerminal lists the terminal's keys only", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const { terminal: other } = yield* Fixtures.seedTerminal()
        const a = Fixtures.apiKey(terminal.id)
        const b = Fixtures.apiKey(terminal.id, { revokedAt: Fixtures.baseTime })
        const c = Fixtures.apiKey(other.id)
        for (const k of [a, b, c]) yield* repo.insert(k)
        const listed = yield* repo.listByTerminal(terminal.id)
        assert.deepStrictEqual(new Set(ids(listed)), new Set(ids([a, b])))
        assert.deepStrictEqual(listed.find((k) => k.id === b.id), b)
        assert.deepStrictEqual(yield* repo.listByTerminal(Fixtures.uuid()), [])
      }))
  
    it.effect("revoke sets revokedAt once, only for a key of that terminal", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const { terminal: other } = yield* Fixtures.seedTerminal()
        const key = Fixtures.apiKey(terminal.id)
        yield* repo.insert(key)
        none(yield* repo.revoke(other.id, key.id, Fixtures.baseTime + 5))
        assert.strictEqual(some(yield* repo.findByHash(key.keyHash)).revokedAt, null)
        assert.deepStrictEqual(some(yield* repo.revoke(terminal.id, key.id, Fixtures.baseTime + 10)), { ...key, revokedAt: Fixtures.baseTime + 10 })
        assert.deepStrictEqual(some(yield* repo.revoke(terminal.id, key.id, Fixtures.baseTime + 20)), { ...key, revokedAt: Fixtures.baseTime + 10 })
        assert.strictEqual(some(yield* repo.findByHash(key.keyHash)).revokedAt, Fixtures.baseTime + 10)
        none(yield* repo.revoke(terminal.id, Fixtures.uuid(), Fixtures.baseTime))
      }))
  })
