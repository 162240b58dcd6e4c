/**
 * Authentication: API keys with nonces for server integrations, and the dashboard's
 * login with a token pair (short-lived access token, rotating refresh token).
 *
 * A refresh token is single-use: refreshing revokes it and issues a new pair in the same
 * family; presenting a revoked refresh token again revokes the whole family (token theft).
 * Access tokens name their family and are refused as soon as it is revoked (reuse, logout), not
 * only when they expire. Logout revokes the family.
 *
 * A password change (the user's own, with the current password) or an operator's reset replaces the
 * password and ends every session of the user, so a leaked password or token stops working; the
 * change answers a new pair, so the session that made it goes on.
 */
import { Clock, Effect, Option } from "effect"
import * as Bytes from "../Bytes.js"
import type { Principal } from "../Access.js"
import { PaydeskConfig } from "../Config.js"
import { AccessDenied, InvalidCredentials, InvalidRequest, NonceAlreadyUsed, NotFound, Unauthenticated } from "../Errors.js"
import * as Nonce from "../Nonce.js"
import type { User } from "../Terminal.js"
import { AccountRepository } from "../ports/AccountRepository.js"
import { ApiKeyRepository } from "../ports/ApiKeyRepository.js"
import { Digest } from "../ports/Digest.js"
import { Entropy } from "../ports/Entropy.js"
import { PasswordHasher } from "../ports/PasswordHasher.js"
import { SessionRepository } from "../ports/SessionRepository.js"
import { TokenIssuer } from "../ports/TokenIssuer.js"
import { atomic } from "./Atomic.js"
import * as Traced from "../Traced.js"

/**
 * Authenticates `X-API-Key` and claims `X-Nonce`: one repository call on the usual path (the key,
 * its terminal and the nonce claim together); a request whose nonce is missing or malformed is
 * answered as before, the key checked first.
 */
export const apiKeyRequest = Traced.fn("Auth.apiKeyRequest")(function*(key: string | undefined, nonce: string | undefined) {
  if (key === undefined || key.length === 0) return yield* new Unauthenticated({ message: "X-API-Key header is required" })
  const keys = yield* ApiKeyRepository
  const keyHash = yield* (yield* Digest).sha256Hex(key)
  // Made only when refused: an error captures a stack trace, which every request would pay for.
  const invalidKey = () => new Unauthenticated({ message: "invalid api key" })
  const badNonce = Nonce.problem(nonce)
  if (badNonce !== null) {
    const found = yield* keys.findByHash(keyHash)
    return yield* (Option.isNone(found) || found.value.revokedAt !== null ? invalidKey() : badNonce)
  }
  const { now, expiresAt } = yield* Nonce.window()
  const found = yield* keys.authenticate(keyHash, nonce!, now, expiresAt)
  if (Option.isNone(found) || found.value.key.revokedAt !== null) return yield* invalidKey()
  if (!found.value.nonceClaimed) return yield* NonceAlreadyUsed.of()
  const principal: Principal = {
    _tag: "ApiKey",
    apiKeyId: found.value.key.id,
    terminalId: found.value.key.terminalId,
    subscriptionWrite: found.value.key.subscriptionWrite
  }
  /** The key's terminal as read now: for this request only (`Access.withRequestTerminal`). */
  return { principal, terminal: Option.getOrNull(found.value.terminal) }
})

/** Authenticates `X-API-Key` and claims `X-Nonce` (`apiKeyRequest` without the terminal it read). */
export const apiKey = (key: string | undefined, nonce: string | undefined) =>
  Effect.map(apiKeyRequest(key, nonce), (authenticated): Principal => authenticated.principal)

/** The claims of a valid access token whose refresh family is still live. */
const liveClaims = Traced.fn("Auth.liveClaims")(function*(token: string) {
  const now = yield* Clock.currentTimeMillis
  const claims = yield* (yield* TokenIssuer).verify(token, now)
  const invalid = () => new Unauthenticated({ message: "invalid or expired access token" })
  if (Option.isNone(claims)) return yield* invalid()
  // The family live, and of the user and account the token names.
  const owner = { userId: claims.value.userId, accountId: claims.value.accountId }
  if (!(yield* (yield* SessionRepository).isFamilyLive(claims.value.familyId, now, owner))) return yield* invalid()
  return claims.value
})

/** Authenticates `Authorization: Bearer <access token>`. */
export const bearer = Traced.fn("Auth.bearer")(function*(token: string) {
  const claims = yield* liveClaims(token)
  const principal: Principal = {
    _tag: "User",
    userId: claims.userId,
    accountId: claims.accountId,
    role: claims.role,
    sessionId: claims.familyId
  }
  return principal
})

/** A token pair as the API returns it. */
export interface TokenPair {
  readonly accessToken: string
  readonly refreshToken: string
  readonly expiresAt: number
  readonly user: User
}

const issuePair = Traced.fn("Auth.issuePair")(function*(user: User, given: string | null) {
  const config = yield* PaydeskConfig
  const entropy = yield* Entropy
  const now = yield* Clock.currentTimeMillis
  const expiresAt = now + config.accessTokenTtlMs
  const familyId = given ?? (yield* entropy.uuid)
  const accessToken = yield* (yield* TokenIssuer).issue({ userId: user.id, accountId: user.accountId, role: user.role, familyId, expiresAt })
  const refreshToken = `rt_${yield* entropy.token(32)}`
  yield* (yield* SessionRepository).insert({
    id: yield* entropy.uuid,
    userId: user.id,
    familyId,
    tokenHash: yield* (yield* Digest).sha256Hex(refreshToken),
    expiresAt: now + config.refreshTokenTtlMs,
    revokedAt: null,
    createdAt: now
  })
  const pair: TokenPair = { accessToken, refreshToken, expiresAt, user }
  return pair
})

/** Dashboard login with e-mail and password. */
export const login = Traced.fn("Auth.login")(function*(email: string, password: string) {
  const accounts = yield* AccountRepository
  const user = yield* accounts.findUserByEmail(email.trim().toLowerCase())
  const hasher = yield* PasswordHasher
  if (Option.isNone(user)) {
    // Same work as for a known user, so timing does not reveal which e-mails exist.
    yield* hasher.hash(password)
    return yield* InvalidCredentials.of()
  }
  // One with a lone surrogate is no password that can be set (`passwordProblem`): hashed as U+FFFD it
  // would match another. Refused after the same work.
  if (!(yield* hasher.verify(password, user.value.passwordHash)) || Bytes.hasLoneSurrogate(password)) return yield* InvalidCredentials.of()
  return yield* atomic(Effect.gen(function*() {
    // The password checked is still the user's: a change committed since the check refuses the
    // login; one committing after this reads it waits, and then ends the session issued here.
    const locked = yield* accounts.lockUser(user.value.id)
    if (Option.isNone(locked) || locked.value.passwordHash !== user.value.passwordHash) return yield* InvalidCredentials.of()
    return yield* issuePair(locked.value, null)
  }))
})

/**
 * Inside the caller's transaction: the user's password hash replaced (while it is `expected`, when
 * given) and every session of the user ended; false when nothing was replaced.
 */
const replacePassword = Effect.fnUntraced(function*(userId: string, passwordHash: string, expected?: string) {
  if (!(yield* (yield* AccountRepository).setPassword(userId, passwordHash, expected))) return false
  yield* (yield* SessionRepository).revokeUser(userId, yield* Clock.currentTimeMillis)
  return true
})

/** Passwords: 8 to 256 characters (an owner's at account creation, a new one at a change or a reset). */
export const passwordProblem = (field: string, password: string): InvalidRequest | null => {
  // A lone surrogate is stored (hashed as UTF-8) as U+FFFD, so two passwords would be one (a fuzz).
  if (Bytes.hasLoneSurrogate(password)) return new InvalidRequest({ field, message: Bytes.unicodeOnly(field) })
  // Characters (code points), not UTF-16 units: four emoji were "8 characters" (a fuzz).
  const characters = [...password].length
  return characters < 8 || characters > 256 ? new InvalidRequest({ field, message: `${field} must be 8 to 256 characters` }) : null
}

/**
 * A dashboard user changes its own password (its bearer token; an API key is 403 `account owner
 * access required`): the current password checked (400 on `current_password` when wrong), the new
 * one stored, every session of the user ended (its other devices, and whoever had its password or
 * a token), and a new pair issued to the caller. A change committed meanwhile by another session or
 * the operator makes this one's current password wrong: refused the same way, nothing written.
 */
export const changePassword = Traced.fn("Auth.changePassword")(function*(
  who: Principal,
  input: { readonly currentPassword: string; readonly newPassword: string }
) {
  if (who._tag !== "User") return yield* AccessDenied.owner()
  const refused = passwordProblem("new_password", input.newPassword)
  if (refused !== null) return yield* refused
  const accounts = yield* AccountRepository
  const user = yield* accounts.getUser(who.userId)
  if (Option.isNone(user)) return yield* new Unauthenticated({ message: "invalid or expired access token" })
  const hasher = yield* PasswordHasher
  const wrong = () => new InvalidRequest({ field: "current_password", message: "current_password is not the user's password" })
  if (!(yield* hasher.verify(input.currentPassword, user.value.passwordHash)) || Bytes.hasLoneSurrogate(input.currentPassword)) return yield* wrong()
  if (input.newPassword === input.currentPassword) {
    return yield* new InvalidRequest({ field: "new_password", message: "new_password must differ from current_password" })
  }
  const passwordHash = yield* hasher.hash(input.newPassword)
  return yield* atomic(Effect.gen(function*() {
    if (!(yield* replacePassword(user.value.id, passwordHash, user.value.passwordHash))) return yield* wrong()
    return yield* issuePair({ ...user.value, passwordHash }, null)
  }))
})

/**
 * Operator: sets a user's password (a forgotten or leaked one) and ends every session of the user.
 * The operator hands the password over out of band; the user may change it afterwards.
 */
export const resetPassword = Traced.fn("Auth.resetPassword")(function*(userId: string, password: string) {
  const refused = passwordProblem("password", password)
  if (refused !== null) return yield* refused
  const accounts = yield* AccountRepository
  const user = yield* accounts.getUser(userId.toLowerCase())
  if (Option.isNone(user)) return yield* NotFound.of("user")
  const passwordHash = yield* (yield* PasswordHasher).hash(password)
  if (!(yield* atomic(replacePassword(user.value.id, passwordHash)))) return yield* NotFound.of("user")
  return { ok: true as const }
})

/**
 * Exchanges a refresh token for a new pair; the old token stops working. Presenting a token already
 * exchanged is reuse (a stolen copy, or the thief's after the owner's): the whole family is revoked,
 * also when the two exchanges run at once and this one loses the race for the token.
 */
export const refresh = Traced.fn("Auth.refresh")(function*(refreshToken: string) {
  const invalid = () => new Unauthenticated({ message: "invalid or expired refresh token" })
  const hash = yield* (yield* Digest).sha256Hex(refreshToken)
  const sessions = yield* SessionRepository
  /** Reuse: the family revoked in a transaction of its own, after the exchange's, which wrote nothing. */
  const reused = (familyId: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.andThen(atomic(sessions.revokeFamily(familyId, now)), Effect.fail(invalid())))
  const presented = yield* sessions.findByHash(hash)
  if (Option.isSome(presented) && presented.value.revokedAt !== null) return yield* reused(presented.value.familyId)
  const exchanged = yield* atomic(Effect.gen(function*() {
    const session = yield* sessions.findByHash(hash)
    if (Option.isNone(session)) return yield* invalid()
    // Revoked since the check above: another exchange of the same token won.
    if (session.value.revokedAt !== null) return { _tag: "Reused" as const, familyId: session.value.familyId }
    const now = yield* Clock.currentTimeMillis
    if (session.value.expiresAt <= now) return yield* invalid()
    if (!(yield* sessions.revoke(session.value.id, now))) return { _tag: "Reused" as const, familyId: session.value.familyId }
    const user = yield* (yield* AccountRepository).getUser(session.value.userId)
    if (Option.isNone(user)) return yield* invalid()
    return { _tag: "Issued" as const, pair: yield* issuePair(user.value, session.value.familyId) }
  }))
  return exchanged._tag === "Issued" ? exchanged.pair : yield* reused(exchanged.familyId)
})

/**
 * Logout: revokes the refresh family of the given refresh token, or else of the bearer access token;
 * every token of the family stops working at once. Repeating it is harmless.
 */
export const logout = Traced.fn("Auth.logout")(function*(input: { readonly refreshToken?: string | undefined; readonly accessToken?: string | undefined }) {
  const sessions = yield* SessionRepository
  const now = yield* Clock.currentTimeMillis
  let familyId: string
  if (input.refreshToken !== undefined) {
    const session = yield* sessions.findByHash(yield* (yield* Digest).sha256Hex(input.refreshToken))
    if (Option.isNone(session)) return yield* new Unauthenticated({ message: "invalid or expired refresh token" })
    familyId = session.value.familyId
  } else if (input.accessToken !== undefined) {
    familyId = (yield* liveClaims(input.accessToken)).familyId
  } else {
    return yield* new Unauthenticated({ message: "a bearer access token or refresh_token is required" })
  }
  yield* atomic(sessions.revokeFamily(familyId, now))
  return { ok: true as const }
})

/** Operator: ends every session of a user (all refresh families; their access tokens stop working). */
export const logoutUser = Traced.fn("Auth.logoutUser")(function*(userId: string) {
  const user = yield* (yield* AccountRepository).getUser(userId.toLowerCase())
  if (Option.isNone(user)) return yield* NotFound.of("user")
  yield* atomic((yield* SessionRepository).revokeUser(user.value.id, yield* Clock.currentTimeMillis))
  return { ok: true as const }
})
