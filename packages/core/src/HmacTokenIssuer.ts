/**
 * The production `TokenIssuer`: HMAC-SHA256 signed access tokens, on Web Crypto (no Node
 * built-in, so any host can use it; the reference server keys it from its secret key).
 *
 * A token is `base64url(JSON claims) + "." + base64url(HMAC-SHA256(key, first part))`. `verify`
 * recomputes the signature and compares it in constant time before it parses anything, then checks
 * the claims' shape and that `expiresAt` is after `now`; every other input gives `Option.none()`.
 */
import { Effect, Layer, Option } from "effect"
import { constantTimeEqual, fromBase64Url, fromUtf8, toBase64Url, utf8 } from "./Bytes.js"
import { type AccessClaims, TokenIssuer } from "./ports/TokenIssuer.js"

const isClaims = (value: unknown): value is AccessClaims => {
  if (typeof value !== "object" || value === null) return false
  const v = value as Record<string, unknown>
  return typeof v.userId === "string" && typeof v.accountId === "string" && typeof v.role === "string" &&
    typeof v.familyId === "string" && typeof v.expiresAt === "number" && Number.isFinite(v.expiresAt)
}

/** One key's issuer. */
const makeOne = (key: string): Effect.Effect<TokenIssuer["Service"]> =>
  Effect.gen(function*() {
    const cryptoKey = yield* Effect.promise(() =>
      globalThis.crypto.subtle.importKey(
        "raw",
        key === "" ? new Uint8Array(32) : utf8(key),
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["sign"]
      )
    )
    const sign = (payload: string) =>
      Effect.promise(async () => new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", cryptoKey, utf8(payload))))

    return TokenIssuer.of({
      issue: (claims) =>
        Effect.gen(function*() {
          const payload = toBase64Url(
            utf8(JSON.stringify({
              userId: claims.userId,
              accountId: claims.accountId,
              role: claims.role,
              familyId: claims.familyId,
              expiresAt: claims.expiresAt
            }))
          )
          return `${payload}.${toBase64Url(yield* sign(payload))}`
        }),
      verify: (token, now) =>
        Effect.gen(function*() {
          const parts = token.split(".")
          if (parts.length !== 2) return Option.none()
          const [payload, signature] = parts as [string, string]
          const given = fromBase64Url(signature)
          if (given === undefined) return Option.none()
          if (!constantTimeEqual(yield* sign(payload), given)) return Option.none()
          const bytes = fromBase64Url(payload)
          const json = bytes === undefined ? undefined : fromUtf8(bytes)
          if (json === undefined) return Option.none()
          let claims: unknown
          try {
            claims = JSON.parse(json)
          } catch {
            return Option.none()
          }
          if (!isClaims(claims) || claims.expiresAt <= now) return Option.none()
          return Option.some<AccessClaims>({
            userId: claims.userId,
            accountId: claims.accountId,
            role: claims.role,
            familyId: claims.familyId,
            expiresAt: claims.expiresAt
          })
        })
    })
  })

/**
 * Builds an HMAC `TokenIssuer` keyed with the UTF-8 bytes of `key`: it issues tokens with `key` and
 * verifies them with `key` or one of `next`. `next` is for a fleet's rolling rotation of the key: a
 * process not yet issuing with the new key accepts the tokens of one that does. Never give it a
 * previous key: a rotation may be for a leaked key, which could then still mint accepted tokens.
 */
export const make = (key: string, next: ReadonlyArray<string> = []): Effect.Effect<TokenIssuer["Service"]> =>
  Effect.gen(function*() {
    const current = yield* makeOne(key)
    const others = yield* Effect.forEach(next, makeOne)
    if (others.length === 0) return current
    return TokenIssuer.of({
      issue: current.issue,
      verify: (token, now) =>
        Effect.gen(function*() {
          for (const issuer of [current, ...others]) {
            const claims = yield* issuer.verify(token, now)
            if (Option.isSome(claims)) return claims
          }
          return Option.none()
        })
    })
  })

/**
 * The HMAC `TokenIssuer` keyed with `key`, also verifying with `next` (see `make`). Keep the keys
 * secret: anyone holding one can mint tokens.
 */
export const layer = (key: string, next: ReadonlyArray<string> = []): Layer.Layer<TokenIssuer> => Layer.effect(TokenIssuer, make(key, next))
