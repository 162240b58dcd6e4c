/**
 * Port: identifiers and secret tokens.
 *
 * Contract: `uuid` returns a fresh lowercase RFC 4122 UUID (v4 or v7), never repeated;
 * `token(bytes)` returns `bytes` bytes of cryptographically secure randomness as base64url
 * without padding. The core has no randomness of its own; tests use a seeded adapter.
 */
import { Context, type Effect } from "effect"

export class Entropy extends Context.Service<Entropy, {
  readonly uuid: Effect.Effect<string>
  token(bytes: number): Effect.Effect<string>
}>()("@paydesk/core/Entropy") {}
