/**
 * `PgStore.checkSecretCipher` on every Postgres target: a host's key decrypts the signing secrets the
 * database holds, or the host must not start (the reference server's start check, exported for
 * embedding hosts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SecretCipher } from "@paydesk/core"
import { Fixtures } from "@paydesk/testkit"
import { randomBytes } from "node:crypto"
import * as NodeSecurity from "../src/NodeSecurity.js"
import * as PgStore from "../src/PgStore.js"
import { store, targets } from "./PgHarness.js"

const keyA = randomBytes(32)
const keyB = randomBytes(32)

const checkWith = (key: Buffer) => PgStore.checkSecretCipher.pipe(Effect.provide(NodeSecurity.layerAesGcmSecretCipher(key)))

for (const target of targets) {
  describe(`PgStore.checkSecretCipher on ${target.name}`, () => {
    it.live("a fresh database holds nothing to check; once a secret is stored, only the key it was written with decrypts it", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* checkWith(keyA), { stored: false, decrypts: true })
        const encrypted = yield* Effect.gen(function*() {
          return yield* (yield* SecretCipher).encrypt("whsec_check")
        }).pipe(Effect.provide(NodeSecurity.layerAesGcmSecretCipher(keyA)))
        yield* Fixtures.seedTerminal({ signingSecretEncrypted: encrypted })
        assert.deepStrictEqual(yield* checkWith(keyA), { stored: true, decrypts: true })
        assert.deepStrictEqual(yield* checkWith(keyB), { stored: true, decrypts: false })
      }).pipe(Effect.provide(store(target.url, { maxConnections: 2 }))), 60_000)
  })
}
