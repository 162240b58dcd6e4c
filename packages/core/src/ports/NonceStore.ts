/**
 * Port: used nonces per API key.
 *
 * Contract: `claim(apiKeyId, nonce, now, expiresAt)` returns true exactly once for a
 * `(apiKeyId, nonce)` pair while an earlier claim of it has `expiresAt > now`, and false for
 * every other concurrent or later claim in that window; after the window the pair can be
 * claimed again. `purge(now)` deletes claims with `expiresAt <= now` and returns how many.
 */
import { Context, type Effect } from "effect"

export class NonceStore extends Context.Service<NonceStore, {
  claim(apiKeyId: string, nonce: string, now: number, expiresAt: number): Effect.Effect<boolean>
  purge(now: number): Effect.Effect<number>
}>()("@paydesk/core/NonceStore") {}
