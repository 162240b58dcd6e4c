/**
 * The credential lifecycle of a terminal: API keys (create, list, revoke) and the callback signing
 * secret (rotate), for the operator and for the account owner's dashboard token.
 *
 * A revoked key is refused at once (`invalid api key`). A rotation makes a new signing secret (shown
 * once, also in its Standard Webhooks `whsec_` form); the replaced secret keeps signing beside it for
 * the overlap (`PaydeskConfig.signingSecretOverlapMs`, 24 h), during which `X-Signature` is still
 * the previous secret's (see `Callbacks.headersFor`), until the overlap ends or the owner retires the
 * previous secret. An API key cannot manage credentials (`account owner access required`).
 * Creating a key needs an active terminal; revoking and rotating are always possible.
 */
import { Clock, Effect, Option, Result } from "effect"
import * as Access from "../Access.js"
import type { Principal } from "../Access.js"
import { AccessDenied, IdempotencyConflict, NotFound } from "../Errors.js"
import * as Idempotency from "../Idempotency.js"
import { IdempotencyStore } from "../ports/IdempotencyStore.js"
import { wallTime } from "../TestClock.js"
import { isUuid } from "../Id.js"
import type { Terminal } from "../Terminal.js"
import { ApiKeyRepository } from "../ports/ApiKeyRepository.js"
import { Digest } from "../ports/Digest.js"
import { Entropy } from "../ports/Entropy.js"
import { SecretCipher } from "../ports/SecretCipher.js"
import { TerminalRepository } from "../ports/TerminalRepository.js"
import { PaydeskConfig } from "../Config.js"
import * as StandardWebhooks from "../StandardWebhooks.js"
import { atomic } from "./Atomic.js"
import * as Traced from "../Traced.js"

/** Who manages credentials: the operator, or a merchant principal (only an owner's bearer passes). */
export type Manager = { readonly _tag: "Operator" } | Principal

/** The operator as a `Manager`. */
export const operator: Manager = { _tag: "Operator" }

const terminalOf = Traced.fn("Credentials.terminalOf")(function*(who: Manager, terminalId: string, purpose: "read" | "write") {
  if (who._tag === "Operator") {
    const id = terminalId.toLowerCase()
    const found = isUuid(id) ? yield* (yield* TerminalRepository).get(id) : Option.none<Terminal>()
    if (Option.isNone(found)) return yield* NotFound.of("terminal")
    return found.value
  }
  if (who._tag !== "User" || who.role !== "owner") return yield* AccessDenied.owner()
  return yield* Access.resolveTerminal(who, terminalId, purpose)
})

/** Stores a new key for a terminal (in the caller's transaction); returns the key, shown only now. */
export const newApiKey = Traced.fn("Credentials.newApiKey")(function*(terminalId: string, subscriptionWrite: boolean) {
  const entropy = yield* Entropy
  const key = `pd_${yield* entropy.token(32)}`
  const now = yield* Clock.currentTimeMillis
  const record = {
    id: yield* entropy.uuid,
    terminalId,
    keyHash: yield* (yield* Digest).sha256Hex(key),
    prefix: key.slice(0, 10),
    subscriptionWrite,
    createdAt: now,
    revokedAt: null
  }
  yield* (yield* ApiKeyRepository).insert(record)
  return { key, record }
})

/** Issues another API key for a terminal. */
export const createApiKey = Traced.fn("Credentials.createApiKey")(function*(
  who: Manager,
  terminalId: string,
  options: { readonly subscriptionWrite: boolean }
) {
  const terminal = yield* terminalOf(who, terminalId, "write")
  return yield* atomic(newApiKey(terminal.id, options.subscriptionWrite))
})

/** The terminal's keys (hashes never leave the store), oldest first. */
export const listApiKeys = Traced.fn("Credentials.listApiKeys")(function*(who: Manager, terminalId: string) {
  const terminal = yield* terminalOf(who, terminalId, "read")
  return yield* (yield* ApiKeyRepository).listByTerminal(terminal.id)
})

/** Revokes a key of the terminal; it is refused from now on. Revoking again changes nothing. */
export const revokeApiKey = Traced.fn("Credentials.revokeApiKey")(function*(who: Manager, terminalId: string, keyId: string) {
  const terminal = yield* terminalOf(who, terminalId, "read")
  const now = yield* Clock.currentTimeMillis
  const revoked = yield* atomic((yield* ApiKeyRepository).revoke(terminal.id, keyId.toLowerCase(), now))
  if (Option.isNone(revoked)) return yield* NotFound.of("api key")
  return revoked.value
})

/**
 * The fingerprint an idempotency record of a rotation keeps: which rotation it made, a digest of the
 * secret it made (24 random bytes: the digest does not give it away). Not of its ciphertext, which the
 * secret key's rotation (`PAYDESK_PREVIOUS_SECRET_KEYS`) encrypts anew (a review), nor of its time,
 * which two rotations share under a frozen clock.
 */
const rotationMark = (secret: string): Effect.Effect<string> =>
  Effect.flatMap(Digest, (digest) => digest.sha256Hex(`rotation:${secret}`))

/**
 * Replaces the terminal's signing secret; returns the new secret (the only time it is shown).
 *
 * With an `Idempotency-Key`, a repeat of the same key (a retry after a lost answer) answers the
 * same rotation, its secret again, while no later rotation replaced it (kept 24 h, as payments'
 * keys): a repeat without one is a second rotation, which makes the unseen secret the previous one,
 * signing `X-Signature` (an outside probe's retry broke every signature check). Once a later rotation
 * replaced it, the key is 409: that secret is the previous one then (until `retire-previous` or the
 * overlap's end), not the new one the key's answer named.
 */
export const rotateSigningSecret = Traced.fn("Credentials.rotateSigningSecret")(function*(
  who: Manager,
  terminalId: string,
  options: { readonly idempotencyKey?: string | undefined } = {}
) {
  const terminal = yield* terminalOf(who, terminalId, "read")
  const key = options.idempotencyKey
  if (key !== undefined) {
    const valid = Idempotency.validateKey(key)
    if (Result.isFailure(valid)) return yield* valid.failure
  }
  const signingSecret = `sk_sign_${yield* (yield* Entropy).token(24)}`
  const encrypted = yield* (yield* SecretCipher).encrypt(signingSecret)
  const { signingSecretOverlapMs } = yield* PaydeskConfig
  return yield* atomic(Effect.gen(function*() {
    const terminals = yield* TerminalRepository
    const locked = yield* terminals.getForUpdate(terminal.id)
    if (Option.isNone(locked)) return yield* NotFound.of("terminal")
    // Under the terminal's lock: two repeats at once answer one rotation.
    const record = key === undefined ? Option.none() : yield* Idempotency.findMoneyKey(terminal.id, "rotation", key)
    if (Option.isSome(record)) {
      const rotatedAt = locked.value.signingSecretRotatedAt
      const current = yield* (yield* SecretCipher).decrypt(locked.value.signingSecretEncrypted)
      if (rotatedAt === null || record.value.fingerprint !== (yield* rotationMark(current))) {
        // The secret this key made is now the previous one (it signs `X-Signature` until the overlap
        // ends or `retire-previous`), or gone: not shown again as if it were the new one.
        return yield* IdempotencyConflict.rotationReplaced()
      }
      // The overlap as it is now: ended by `retire-previous` (or its time), the repeat says so.
      const overlapEnd = yield* previousSecretExpiresAt(locked.value)
      return {
        terminal: locked.value,
        signingSecret: current,
        signingSecretWhsec: StandardWebhooks.whsecOf(current),
        rotatedAt,
        previousSecretExpiresAt: overlapEnd ?? rotatedAt
      }
    }
    const now = yield* Clock.currentTimeMillis
    const next: Terminal = {
      ...locked.value,
      signingSecretEncrypted: encrypted,
      previousSigningSecretEncrypted: locked.value.signingSecretEncrypted,
      signingSecretRotatedAt: now,
      updatedAt: now
    }
    yield* terminals.update(next)
    if (key !== undefined) {
      yield* (yield* IdempotencyStore).insert({
        terminalId: terminal.id, scope: "rotation", key, fingerprint: yield* rotationMark(signingSecret), resourceId: terminal.id, createdAt: yield* wallTime
      })
    }
    return {
      terminal: next,
      signingSecret,
      signingSecretWhsec: StandardWebhooks.whsecOf(signingSecret),
      rotatedAt: now,
      previousSecretExpiresAt: now + signingSecretOverlapMs
    }
  }))
})

/**
 * Ends a rotation's overlap now: the previous secret stops signing, `X-Signature` carries the new
 * one. For a receiver that deployed the new secret and checks only `X-Signature`.
 */
export const retirePreviousSecret = Traced.fn("Credentials.retirePreviousSecret")(function*(who: Manager, terminalId: string) {
  const terminal = yield* terminalOf(who, terminalId, "read")
  return yield* atomic(Effect.gen(function*() {
    const terminals = yield* TerminalRepository
    const locked = yield* terminals.getForUpdate(terminal.id)
    if (Option.isNone(locked)) return yield* NotFound.of("terminal")
    if (locked.value.previousSigningSecretEncrypted === null) return locked.value
    const next: Terminal = { ...locked.value, previousSigningSecretEncrypted: null, updatedAt: yield* Clock.currentTimeMillis }
    yield* terminals.update(next)
    return next
  }))
})

/** When a terminal's previous signing secret stops signing (null when none is in its overlap). */
export const previousSecretExpiresAt = Traced.fn("Credentials.previousSecretExpiresAt")(function*(terminal: Terminal) {
  const { signingSecretOverlapMs } = yield* PaydeskConfig
  const now = yield* Clock.currentTimeMillis
  if (terminal.previousSigningSecretEncrypted === null || terminal.signingSecretRotatedAt === null) return null
  const end = terminal.signingSecretRotatedAt + signingSecretOverlapMs
  return end > now ? end : null
})
