/**
 * Contract suite of `SecretCipher`: decryption inverts encryption, the ciphertext hides the
 * secret, two encryptions differ, and a tampered, malformed or foreign ciphertext dies.
 *
 * Pass `foreign`, a layer of the same adapter with another key, to check foreign ciphertexts.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SecretCipher } from "@paydesk/core"
import { expectDefect } from "./Support.js"

/** What the suite needs. */
export type Requirements = SecretCipher

const flip = (text: string, index: number): string => {
  const c = text[index]!
  return text.slice(0, index) + (c === "A" ? "B" : "A") + text.slice(index + 1)
}

/** Registers the `SecretCipher` contract tests for `layer_`. */
export const suite = <E, E2 = never>(
  name: string,
  layer_: Layer.Layer<Requirements, E>,
  options: { readonly foreign?: Layer.Layer<SecretCipher, E2> } = {}
): void =>
  layer(layer_, { timeout: "60 seconds" })(`SecretCipher contract (${name})`, (it) => {
    it.effect("decrypt(encrypt(s)) is s", () =>
      Effect.gen(function*() {
        const cipher = yield* SecretCipher
        for (const secret of ["whsec_3f9a1c", "", "секрет 🔑 秘密", "x".repeat(4096)]) {
          assert.strictEqual(yield* cipher.decrypt(yield* cipher.encrypt(secret)), secret)
        }
      }))

    it.effect("the ciphertext hides the secret and differs each time", () =>
      Effect.gen(function*() {
        const cipher = yield* SecretCipher
        const secret = "whsec_visible_secret_value"
        const a = yield* cipher.encrypt(secret)
        const b = yield* cipher.encrypt(secret)
        assert.notInclude(a, secret)
        assert.notInclude(a, btoa(secret).replace(/=+$/, ""))
        assert.notStrictEqual(a, b)
      }))

    it.effect("a tampered ciphertext dies", () =>
      Effect.gen(function*() {
        const cipher = yield* SecretCipher
        const sealed = yield* cipher.encrypt("whsec_tamper_me")
        for (const index of [Math.floor(sealed.length / 2), sealed.length - 3]) {
          yield* expectDefect(cipher.decrypt(flip(sealed, index)))
        }
        yield* expectDefect(cipher.decrypt(sealed.slice(0, -4)))
      }))

    it.effect("a malformed ciphertext dies", () =>
      Effect.gen(function*() {
        const cipher = yield* SecretCipher
        for (const text of ["", "plain", "v1..", "v1.AAAA.AAAA", "v2.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAA"]) {
          yield* expectDefect(cipher.decrypt(text))
        }
      }))

    if (options.foreign !== undefined) {
      const foreign = options.foreign
      it.effect("a ciphertext of another key dies", () =>
        Effect.gen(function*() {
          const cipher = yield* SecretCipher
          const sealed = yield* Effect.flatMap(SecretCipher, (other) => other.encrypt("whsec_x")).pipe(
            Effect.provide(foreign)
          )
          yield* expectDefect(cipher.decrypt(sealed))
        }))
    }
  })
