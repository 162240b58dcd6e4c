/**
 * Port: dashboard access tokens.
 *
 * Contract: `issue(claims)` returns an opaque bearer token; `verify(token, now)` returns the
 * claims of a token this issuer made whose `expiresAt` is after `now`, and `Option.none()` for
 * anything else (tampered, foreign, expired, malformed). Refresh tokens are not issued here:
 * they are random, stored as hashes through `SessionRepository`.
 */
import { Context, type Effect, type Option } from "effect"

/** What an access token asserts. */
export interface AccessClaims {
  readonly userId: string
  readonly accountId: string
  readonly role: string
  /** The refresh-token family the token was issued with; the token is refused once the family is revoked. */
  readonly familyId: string
  readonly expiresAt: number
}

export class TokenIssuer extends Context.Service<TokenIssuer, {
  issue(claims: AccessClaims): Effect.Effect<string>
  verify(token: string, now: number): Effect.Effect<Option.Option<AccessClaims>>
}>()("@paydesk/core/TokenIssuer") {}
