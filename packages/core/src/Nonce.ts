/**
 * The nonce rule: every API-key request carries a fresh `X-Nonce`; one nonce can be used once
 * per API key within 10 minutes (`nonce already used` otherwise). Nonces are 1 to 128 printable
 * ASCII characters; a UUID is suggested.
 */
import { Clock, Effect } from "effect"
import { NonceAlreadyUsed, Unauthenticated } from "./Errors.js"
import { PaydeskConfig } from "./Config.js"
import { NonceStore } from "./ports/NonceStore.js"

/** Longest accepted nonce. */
export const maxLength = 128

/** Claims `nonce` for `apiKeyId` now, or fails. */
export const claim = Effect.fn("Nonce.claim")(function*(apiKeyId: string, nonce: string | undefined) {
  if (nonce === undefined || nonce.length === 0) {
    return yield* new Unauthenticated({ message: "X-Nonce header is required" })
  }
  if (nonce.length > maxLength || !/^[\x21-\x7e]+$/.test(nonce)) {
    return yield* new Unauthenticated({ message: "X-Nonce must be 1 to 128 printable ASCII characters" })
  }
  const config = yield* PaydeskConfig
  const store = yield* NonceStore
  const now = yield* Clock.currentTimeMillis
  const fresh = yield* store.claim(apiKeyId, nonce, now, now + config.nonceWindowMs)
  if (!fresh) return yield* NonceAlreadyUsed.of()
})
