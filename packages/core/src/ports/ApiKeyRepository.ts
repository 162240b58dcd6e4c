/**
 * Port: API keys, stored only as hashes.
 *
 * Contract: `findByHash` returns the key whose SHA-256 hex equals `keyHash`, revoked or not
 * (the caller checks `revokedAt`); hashes are unique.
 */
import { Context, type Effect, type Option } from "effect"
import type { ApiKey } from "../Terminal.js"

export class ApiKeyRepository extends Context.Service<ApiKeyRepository, {
  insert(key: ApiKey): Effect.Effect<void>
  findByHash(keyHash: string): Effect.Effect<Option.Option<ApiKey>>
  listByTerminal(terminalId: string): Effect.Effect<ReadonlyArray<ApiKey>>
}>()("@paydesk/core/ApiKeyRepository") {}
