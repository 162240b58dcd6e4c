/**
 * Port: API keys, stored only as hashes.
 *
 * Contract: `findByHash` returns the key whose SHA-256 hex equals `keyHash`, revoked or not
 * (the caller checks `revokedAt`); hashes are unique. `revoke` sets `revokedAt` of a key of that
 * terminal that is not yet revoked and returns the key as stored afterwards (none when no such key).
 */
import { Context, type Effect, type Option } from "effect"
import type { ApiKey } from "../Terminal.js"

export class ApiKeyRepository extends Context.Service<ApiKeyRepository, {
  insert(key: ApiKey): Effect.Effect<void>
  findByHash(keyHash: string): Effect.Effect<Option.Option<ApiKey>>
  listByTerminal(terminalId: string): Effect.Effect<ReadonlyArray<ApiKey>>
  revoke(terminalId: string, id: string, at: number): Effect.Effect<Option.Option<ApiKey>>
}>()("@paydesk/core/ApiKeyRepository") {}
