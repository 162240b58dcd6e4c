/**
 * Contract suite of `PasswordHasher`: a hash verifies only its own password, never contains it,
 * is salted (two hashes of one password differ), and a malformed hash verifies nothing.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { PasswordHasher } from "@paydesk/core"

/** What the suite needs. */
export type Requirements = PasswordHasher

/** Registers the `PasswordHasher` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`PasswordHasher contract (${name})`, (it) => {
    it.effect("verify is true for the hashed password only", () =>
      Effect.gen(function*() {
        const hasher = yield* PasswordHasher
        const hash = yield* hasher.hash("correct horse battery staple")
        assert.isTrue(yield* hasher.verify("correct horse battery staple", hash))
        for (const wrong of ["Correct horse battery staple", "correct horse battery stapl", "", "correct horse battery staple "]) {
          assert.isFalse(yield* hasher.verify(wrong, hash), wrong)
        }
      }))

    it.effect("the hash does not contain the password and is salted", () =>
      Effect.gen(function*() {
        const hasher = yield* PasswordHasher
        const password = "hunter2-hunter2"
        const a = yield* hasher.hash(password)
        const b = yield* hasher.hash(password)
        assert.notInclude(a, password)
        assert.notStrictEqual(a, b)
        assert.isTrue(yield* hasher.verify(password, a))
        assert.isTrue(yield* hasher.verify(password, b))
      }))

    it.effect("unicode and empty passwords work", () =>
      Effect.gen(function*() {
        const hasher = yield* PasswordHasher
        for (const password of ["пароль-🔐-密码", ""]) {
          const hash = yield* hasher.hash(password)
          assert.isTrue(yield* hasher.verify(password, hash))
          assert.isFalse(yield* hasher.verify(`${password}x`, hash))
        }
      }))

    it.effect("a malformed or foreign hash verifies nothing", () =>
      Effect.gen(function*() {
        const hasher = yield* PasswordHasher
        for (const hash of ["", "plain", "password", "$$$", "scrypt$1$2$3", "pbkdf2$0$$"]) {
          assert.isFalse(yield* hasher.verify("password", hash), hash)
        }
      }))
  })
