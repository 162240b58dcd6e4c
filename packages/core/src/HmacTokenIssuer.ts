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

/** Builds an HMAC `TokenIssuer` keyed with the UTF-8 bytes of `key`. */
export const make = (key: string): Effect.Effect<TokenIssuer["Service"]> =>
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

/** The HMAC `TokenIssuer` keyed with `key` (keep it secret: anyone holding it can mint tokens). */
export const layer = (key: string): Layer.Layer<TokenIssuer> => Layer.effect(TokenIssuer, make(key))
