/**
 * Port: API keys, stored only as hashes.
 *
 * Contract: `findByHash` returns the key whose SHA-256 hex equals `keyHash`, revoked or not
 * (the caller checks `revokedAt`); hashes are unique. `revoke` sets `revokedAt` of a key of that
 * terminal that is not yet revoked and returns the key as stored afterwards (none when no such key).
 * `authenticate` is the request path in one step: the key of `keyHash` (revoked or not) with its
 * terminal, and, only when the key is not revoked, a claim of `nonce` for it exactly as
 * `NonceStore.claim(key.id, nonce, now, expiresAt)` makes one (`nonceClaimed`; false for a revoked
 * key, whose nonces are never taken).
 */
import { Context, type Effect, type Option } from "effect"
import type { ApiKey, Terminal } from "../Terminal.js"

/** A key found by `authenticate`, with its terminal and whether the request's nonce was claimed. */
export interface Authenticated {
  readonly key: ApiKey
  readonly terminal: Option.Option<Terminal>
  readonly nonceClaimed: boolean
}

export class ApiKeyRepository extends Context.Service<ApiKeyRepository, {
  insert(key: ApiKey): Effect.Effect<void>
  findByHash(keyHash: string): Effect.Effect<Option.Option<ApiKey>>
  authenticate(keyHash: string, nonce: string, now: number, expiresAt: number): Effect.Effect<Option.Option<Authenticated>>
  listByTerminal(terminalId: string): Effect.Effect<ReadonlyArray<ApiKey>>
  revoke(terminalId: string, id: string, at: number): Effect.Effect<Option.Option<ApiKey>>
}>()("@paydesk/core/ApiKeyRepository") {}
