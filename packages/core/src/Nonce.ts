/**
 * The nonce rule: every API-key request carries a fresh `X-Nonce`; one nonce can be used once
 * per API key within 10 minutes (`nonce already used` otherwise). Nonces are 1 to 128 printable
 * ASCII characters; a UUID is suggested.
 */
import { Clock, Effect } from "effect"
import { NonceAlreadyUsed, Unauthenticated } from "./Errors.js"
import { PaydeskConfig } from "./Config.js"
import { NonceStore } from "./ports/NonceStore.js"
import * as Traced from "./Traced.js"

/** Longest accepted nonce. */
export const maxLength = 128

/** Why `nonce` is not acceptable as an `X-Nonce`, or `null` when it is. */
export const problem = (nonce: string | undefined): Unauthenticated | null => {
  if (nonce === undefined || nonce.length === 0) return new Unauthenticated({ message: "X-Nonce header is required" })
  if (nonce.length > maxLength || !/^[\x21-\x7e]+$/.test(nonce)) {
    return new Unauthenticated({ message: "X-Nonce must be 1 to 128 printable ASCII characters" })
  }
  return null
}

/** The window of a nonce claimed now: `[now, expiresAt)`. */
export const window = Traced.fn("Nonce.window")(function*() {
  const config = yield* PaydeskConfig
  const now = yield* Clock.currentTimeMillis
  return { now, expiresAt: now + config.nonceWindowMs }
})

/** Claims `nonce` for `apiKeyId` now, or fails. */
export const claim = Traced.fn("Nonce.claim")(function*(apiKeyId: string, nonce: string | undefined) {
  const invalid = problem(nonce)
  if (invalid !== null) return yield* invalid
  const config = yield* PaydeskConfig
  const store = yield* NonceStore
  const now = yield* Clock.currentTimeMillis
  const fresh = yield* store.claim(apiKeyId, nonce!, now, now + config.nonceWindowMs)
  if (!fresh) return yield* NonceAlreadyUsed.of()
})
