/**
 * Contract suite of `TokenIssuer`: issued tokens verify to their claims until `expiresAt`;
 * tampered, malformed and foreign tokens verify to nothing.
 *
 * Pass `foreign`, a layer of the same adapter with another key, to check that tokens of another
 * issuer are refused.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { TokenIssuer } from "@paydesk/core"
import type { AccessClaims } from "@paydesk/core"

/** What the suite needs. */
export type Requirements = TokenIssuer

const claims: AccessClaims = {
  userId: "0b6f3c1e-2f6a-4a8e-9c61-6f1f1f3f2d10",
  accountId: "5d0f1d9a-3b1c-4c7e-8e2f-1a2b3c4d5e6f",
  role: "owner",
  familyId: "9a1c2b3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d",
  expiresAt: 1_768_468_500_000
}

const flip = (token: string, index: number): string => {
  const c = token[index]!
  return token.slice(0, index) + (c === "A" ? "B" : "A") + token.slice(index + 1)
}

/** Registers the `TokenIssuer` contract tests for `layer_`. */
export const suite = <E, E2 = never>(
  name: string,
  layer_: Layer.Layer<Requirements, E>,
  options: { readonly foreign?: Layer.Layer<TokenIssuer, E2> } = {}
): void =>
  layer(layer_, { timeout: "60 seconds" })(`TokenIssuer contract (${name})`, (it) => {
    it.effect("an issued token verifies to its claims before it expires", () =>
      Effect.gen(function*() {
        const issuer = yield* TokenIssuer
        const token = yield* issuer.issue(claims)
        assert.isString(token)
        assert.deepStrictEqual(yield* issuer.verify(token, claims.expiresAt - 900_000), Option.some(claims))
        assert.deepStrictEqual(yield* issuer.verify(token, claims.expiresAt - 1), Option.some(claims))
        const other = yield* issuer.issue({ ...claims, role: "viewer", userId: "someone" })
        assert.notStrictEqual(other, token)
        assert.deepStrictEqual(
          yield* issuer.verify(other, 0),
          Option.some({ ...claims, role: "viewer", userId: "someone" })
        )
      }))

    it.effect("a token is refused from its expiry on", () =>
      Effect.gen(function*() {
        const issuer = yield* TokenIssuer
        const token = yield* issuer.issue(claims)
        assert.isTrue(Option.isNone(yield* issuer.verify(token, claims.expiresAt)))
        assert.isTrue(Option.isNone(yield* issuer.verify(token, claims.expiresAt + 1)))
      }))

    it.effect("a tampered token is refused", () =>
      Effect.gen(function*() {
        const issuer = yield* TokenIssuer
        const token = yield* issuer.issue(claims)
        for (const index of [0, Math.floor(token.length / 3), Math.floor(token.length / 2), token.length - 2]) {
          assert.isTrue(Option.isNone(yield* issuer.verify(flip(token, index), 0)), `changed at ${index}`)
        }
        assert.isTrue(Option.isNone(yield* issuer.verify(`${token}x`, 0)))
        assert.isTrue(Option.isNone(yield* issuer.verify(token.slice(0, -1), 0)))
      }))

    it.effect("malformed tokens are refused", () =>
      Effect.gen(function*() {
        const issuer = yield* TokenIssuer
        for (const token of ["", ".", "abc", "a.b", "a.b.c", "eyJ9.eyJ9", "null", "\u0000", "....."]) {
          assert.isTrue(Option.isNone(yield* issuer.verify(token, 0)), JSON.stringify(token))
        }
      }))

    if (options.foreign !== undefined) {
      const foreign = options.foreign
      it.effect("a token of another issuer is refused", () =>
        Effect.gen(function*() {
          const issuer = yield* TokenIssuer
          const token = yield* Effect.flatMap(TokenIssuer, (other) => other.issue(claims)).pipe(Effect.provide(foreign))
          assert.isTrue(Option.isNone(yield* issuer.verify(token, 0)))
        }))
    }
  })
