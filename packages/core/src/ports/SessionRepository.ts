/**
 * Port: refresh-token sessions of dashboard users.
 *
 * Contract: `findByHash` returns the session with that token hash, revoked or not;
 * `revoke` marks one session revoked at `at` if it is not already; `revokeFamily` revokes
 * every session of a rotation family (used when a revoked refresh token is replayed, and by
 * logout); `revokeUser` revokes every session of a user; `isFamilyLive(familyId, now, owner)` is true
 * while the family has a session that is neither revoked nor expired (access tokens of a family
 * that is not live are refused) and, with `owner`, that session is of `owner.userId`, a user of
 * `owner.accountId` (an access token names its family, user and account; one minted with the token
 * key for another user or account over a live family of one's own is refused). In a transaction, `revoke`, `revokeFamily` and `revokeUser` of one
 * family run one after another (an adapter with concurrent transactions locks the family until the
 * end of the caller's): a family revoked while an exchange of one of its tokens is in flight (which
 * calls `revoke` before it inserts the successor) then includes the session that exchange inserts.
 * `purge(before)` deletes sessions that expired before `before`, revoked or not, of families none of
 * whose sessions expires at `before` or later (a rotated-away token of a live family stays, so its
 * replay still revokes the family), at most 1,000 a call (the housekeeping calls it every pass), and
 * answers how many.
 */
import { Context, type Effect, type Option } from "effect"
import type { Session } from "../Terminal.js"

export class SessionRepository extends Context.Service<SessionRepository, {
  insert(session: Session): Effect.Effect<void>
  findByHash(tokenHash: string): Effect.Effect<Option.Option<Session>>
  /** Revokes the session; true when this call revoked it (false if it already was). */
  revoke(id: string, at: number): Effect.Effect<boolean>
  revokeFamily(familyId: string, at: number): Effect.Effect<void>
  revokeUser(userId: string, at: number): Effect.Effect<void>
  isFamilyLive(familyId: string, now: number, owner?: { readonly userId: string; readonly accountId: string }): Effect.Effect<boolean>
  purge(before: number): Effect.Effect<number>
}>()("@paydesk/core/SessionRepository") {}
