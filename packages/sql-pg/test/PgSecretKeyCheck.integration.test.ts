/**
 * `PgStore.checkSecretCipher` on every Postgres target: a host's key decrypts the signing secrets the
 * database holds, or the host must not start (the reference server's start check, exported for
 * embedding hosts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { SqlClient } from "effect/sql"
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
        assert.deepStrictEqual(yield* checkWith(keyA), { stored: false, decrypts: true, terminals: 0, unreadable: 0 })
        const encrypted = yield* Effect.gen(function*() {
          return yield* (yield* SecretCipher).encrypt("whsec_check")
        }).pipe(Effect.provide(NodeSecurity.layerAesGcmSecretCipher(keyA)))
        yield* Fixtures.seedTerminal({ signingSecretEncrypted: encrypted })
        assert.deepStrictEqual(yield* checkWith(keyA), { stored: true, decrypts: true, terminals: 1, unreadable: 0 })
        assert.deepStrictEqual(yield* checkWith(keyB), { stored: true, decrypts: false, terminals: 1, unreadable: 1 })
        // A database half rotated (a terminal under each key; one under A with its previous secret
        // under B): every terminal is checked, not one.
        yield* Fixtures.seedTerminal({ signingSecretEncrypted: yield* NodeSecurity.aesGcmSecretCipher(keyB).encrypt("whsec_b") })
        yield* Fixtures.seedTerminal({
          signingSecretEncrypted: yield* NodeSecurity.aesGcmSecretCipher(keyA).encrypt("whsec_a"),
          previousSigningSecretEncrypted: yield* NodeSecurity.aesGcmSecretCipher(keyB).encrypt("whsec_b_before"),
          signingSecretRotatedAt: 1_700_000_000_000
        })
        assert.deepStrictEqual(yield* checkWith(keyA), { stored: true, decrypts: false, terminals: 3, unreadable: 2 })
        assert.deepStrictEqual(yield* checkWith(keyB), { stored: true, decrypts: false, terminals: 3, unreadable: 2 })
        const both = yield* PgStore.checkSecretCipher.pipe(Effect.provide(NodeSecurity.layerAesGcmSecretCipher(keyB, [keyA])))
        assert.deepStrictEqual(both, { stored: true, decrypts: true, terminals: 3, unreadable: 0 })
      }).pipe(Effect.provide(store(target.url, { maxConnections: 2 }))), 60_000)
  })

  describe(`PgStore.reencryptSigningSecrets on ${target.name}`, () => {
    it.live("writes what only a previous key opens again with the key (secret and previous secret), leaves what the key opens and what no key opens, in batches, and finds nothing the second time", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const keyC = randomBytes(32)
        const sealed = (key: Buffer, text: string) => NodeSecurity.aesGcmSecretCipher(key).encrypt(text)
        const seeded = [
          yield* Fixtures.seedTerminal({ signingSecretEncrypted: yield* sealed(keyA, "sk_sign_a1") }),
          yield* Fixtures.seedTerminal({
            signingSecretEncrypted: yield* sealed(keyA, "sk_sign_a2"),
            previousSigningSecretEncrypted: yield* sealed(keyA, "sk_sign_a2_before"),
            signingSecretRotatedAt: 1_700_000_000_000
          }),
          yield* Fixtures.seedTerminal({ signingSecretEncrypted: yield* sealed(keyB, "sk_sign_b") }),
          yield* Fixtures.seedTerminal({ signingSecretEncrypted: yield* sealed(keyC, "sk_sign_c") })
        ].map(({ terminal }) => terminal)
        const rows = () =>
          sql<{ readonly id: string; readonly secret: string; readonly previous: string | null; readonly updated_at: Date }>`
            SELECT id, signing_secret_encrypted AS secret, previous_signing_secret_encrypted AS previous, updated_at FROM terminals`
        const before = yield* rows()
        const current = NodeSecurity.aesGcmSecretCipher(keyB)
        const readable = NodeSecurity.aesGcmSecretCipher(keyB, [keyA])
        // Batches of one: every terminal is read in a statement of its own.
        assert.deepStrictEqual(yield* PgStore.reencryptSigningSecrets(current, readable, 1), { reencrypted: 2, unreadable: 1 })
        const after = yield* rows()
        const opened = (ciphertext: string | null) =>
          ciphertext === null ? Effect.succeed(null) : Effect.map(Effect.exit(current.decrypt(ciphertext)), (exit) => Exit.isSuccess(exit) ? exit.value : "unreadable")
        const byId = (list: typeof after, id: string) => list.find((row) => row.id === id)!
        const [a1, a2, b, c] = seeded.map((t) => byId(after, t.id))
        assert.deepStrictEqual([yield* opened(a1!.secret), yield* opened(a1!.previous)], ["sk_sign_a1", null])
        assert.deepStrictEqual([yield* opened(a2!.secret), yield* opened(a2!.previous)], ["sk_sign_a2", "sk_sign_a2_before"])
        // What the key opens, and what no key opens, are left as they were; no terminal's updated_at moves.
        assert.strictEqual(b!.secret, byId(before, seeded[2]!.id).secret)
        assert.strictEqual(c!.secret, byId(before, seeded[3]!.id).secret)
        for (const row of after) assert.strictEqual(row.updated_at.getTime(), byId(before, row.id).updated_at.getTime())
        assert.deepStrictEqual(yield* PgStore.reencryptSigningSecrets(current, readable), { reencrypted: 0, unreadable: 1 })
        assert.deepStrictEqual((yield* rows()).map((row) => row.secret).sort(), after.map((row) => row.secret).sort())
      }).pipe(Effect.provide(store(target.url, { maxConnections: 2 }))), 60_000)

    it.live("with a next key as well (a second rotation begun before the first ended): what the next key opens is left, what only a previous key opens is written again", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const keyC = randomBytes(32)
        const { terminal: underA } = yield* Fixtures.seedTerminal({ signingSecretEncrypted: yield* NodeSecurity.aesGcmSecretCipher(keyA).encrypt("sk_sign_a") })
        const underNext = yield* NodeSecurity.aesGcmSecretCipher(keyC).encrypt("sk_sign_c")
        const { terminal: underC } = yield* Fixtures.seedTerminal({ signingSecretEncrypted: underNext })
        // The server's cipher: the key B, previous A, next C; it writes with B and leaves what C opens.
        const current = NodeSecurity.aesGcmSecretCipher(keyB, [keyC])
        const readable = NodeSecurity.aesGcmSecretCipher(keyB, [keyA, keyC])
        assert.deepStrictEqual(yield* PgStore.reencryptSigningSecrets(current, readable), { reencrypted: 1, unreadable: 0 })
        const secretOf = (id: string) => Effect.map(sql<{ readonly secret: string }>`SELECT signing_secret_encrypted AS secret FROM terminals WHERE id = ${id}`, (rows) => rows[0]!.secret)
        assert.strictEqual(yield* NodeSecurity.aesGcmSecretCipher(keyB).decrypt(yield* secretOf(underA.id)), "sk_sign_a")
        assert.strictEqual(yield* secretOf(underC.id), underNext)
      }).pipe(Effect.provide(store(target.url, { maxConnections: 2 }))), 60_000)

    it.live("a terminal whose secret changes between the read and the write keeps the new secret", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { terminal } = yield* Fixtures.seedTerminal({ signingSecretEncrypted: yield* NodeSecurity.aesGcmSecretCipher(keyA).encrypt("sk_sign_old") })
        const rotatedMeanwhile = yield* NodeSecurity.aesGcmSecretCipher(keyB).encrypt("sk_sign_rotated")
        const readable = NodeSecurity.aesGcmSecretCipher(keyB, [keyA])
        // The terminal's secret is rotated (written with the new key) while its old one is being opened.
        const racing = SecretCipher.of({
          encrypt: readable.encrypt,
          decrypt: (ciphertext) =>
            Effect.tap(readable.decrypt(ciphertext), () => sql`UPDATE terminals SET signing_secret_encrypted = ${rotatedMeanwhile} WHERE id = ${terminal.id}`.pipe(Effect.orDie))
        })
        assert.deepStrictEqual(yield* PgStore.reencryptSigningSecrets(NodeSecurity.aesGcmSecretCipher(keyB), racing), { reencrypted: 0, unreadable: 0 })
        const [row] = yield* sql<{ readonly secret: string }>`SELECT signing_secret_encrypted AS secret FROM terminals WHERE id = ${terminal.id}`
        assert.strictEqual(row!.secret, rotatedMeanwhile)
      }).pipe(Effect.provide(store(target.url, { maxConnections: 2 }))), 60_000)

    it.live("a terminal whose previous secret is retired between the read and the write does not get it back", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const underA = NodeSecurity.aesGcmSecretCipher(keyA)
        const { terminal } = yield* Fixtures.seedTerminal({
          signingSecretEncrypted: yield* underA.encrypt("sk_sign_now"),
          previousSigningSecretEncrypted: yield* underA.encrypt("sk_sign_before"),
          signingSecretRotatedAt: 1_700_000_000_000
        })
        const readable = NodeSecurity.aesGcmSecretCipher(keyB, [keyA])
        // The overlap ends (the previous secret retired) while the secrets are being opened.
        const racing = SecretCipher.of({
          encrypt: readable.encrypt,
          decrypt: (ciphertext) =>
            Effect.tap(readable.decrypt(ciphertext), () => sql`UPDATE terminals SET previous_signing_secret_encrypted = NULL WHERE id = ${terminal.id}`.pipe(Effect.orDie))
        })
        assert.deepStrictEqual(yield* PgStore.reencryptSigningSecrets(NodeSecurity.aesGcmSecretCipher(keyB), racing), { reencrypted: 0, unreadable: 0 })
        const [row] = yield* sql<{ readonly previous: string | null }>`SELECT previous_signing_secret_encrypted AS previous FROM terminals WHERE id = ${terminal.id}`
        assert.isNull(row!.previous)
        // The next pass writes what is left again.
        assert.deepStrictEqual(yield* PgStore.reencryptSigningSecrets(NodeSecurity.aesGcmSecretCipher(keyB), readable), { reencrypted: 1, unreadable: 0 })
      }).pipe(Effect.provide(store(target.url, { maxConnections: 2 }))), 60_000)
  })
}
