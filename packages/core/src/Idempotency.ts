/**
 * The idempotency rule: a key of at most 128 printable ASCII characters and a fingerprint
 * of the request body. The same key with the same fingerprint replays the first result;
 * the same key with another fingerprint is a conflict (409). The keys of payments last
 * `PaydeskConfig.moneyIdempotencyRetentionMs` (24 h, Stripe's) of wall time; the keys of payouts
 * (the spec's own `idempotency_key`: money leaves) and subscriptions last
 * `idempotencyRetentionMs` (7 days), and the background pass purges them.
 */
import { Effect, Option, Result } from "effect"
import { PaydeskConfig } from "./Config.js"
import { IdempotencyConflict, InvalidRequest } from "./Errors.js"
import { type IdempotencyRecord, IdempotencyStore } from "./ports/IdempotencyStore.js"
import { Digest } from "./ports/Digest.js"
import { wallTime } from "./TestClock.js"
import * as Traced from "./Traced.js"

/** Longest accepted key. */
export const maxKeyLength = 128

/** Checks a key: non-empty, at most 128 characters, printable ASCII only. */
export const validateKey = (key: string, field = "Idempotency-Key"): Result.Result<string, InvalidRequest> =>
  key.length > maxKeyLength
    ? Result.fail(new InvalidRequest({ field, message: `${field} must be at most ${maxKeyLength} characters` }))
    : /^[\x21-\x7e]+$/.test(key)
    ? Result.succeed(key)
    : Result.fail(new InvalidRequest({ field, message: `${field} must be 1 to 128 printable ASCII characters` }))

/** JSON with object keys sorted, so equal values always serialize equally. bigint as string. */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== "object") {
    return typeof value === "bigint" ? JSON.stringify(value.toString()) : JSON.stringify(value) ?? "null"
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`
}

/** SHA-256 hex of the canonical JSON of a normalized request. */
export const fingerprint = (value: unknown): Effect.Effect<string> =>
  Effect.flatMap(Digest, (digest) => digest.sha256Hex(canonicalJson(value)))

/** What to do with a request given the stored record of its key. */
export type Decision =
  | { readonly _tag: "New" }
  | { readonly _tag: "Replay"; readonly resourceId: string }

/** Replay on the same fingerprint, conflict on another, new when no record exists. */
export const decide = (
  existing: Option.Option<Pick<IdempotencyRecord, "fingerprint" | "resourceId">>,
  requestFingerprint: string
): Result.Result<Decision, IdempotencyConflict> =>
  Option.match(existing, {
    onNone: () => Result.succeed({ _tag: "New" } as const),
    onSome: (record) =>
      record.fingerprint === requestFingerprint
        ? Result.succeed({ _tag: "Replay", resourceId: record.resourceId } as const)
        : Result.fail(IdempotencyConflict.of())
  })

/**
 * The record of a payment's, payout's, rotation's or operator move's key while it lasts
 * (`moneyIdempotencyRetentionMs` for a payment, a rotation or a move, `idempotencyRetentionMs` for a
 * payout, of wall time since it was stored, also for objects on a test clock): an older record is
 * removed, so the key starts afresh even before the background pass purges it.
 */
export const findMoneyKey = Traced.fn("Idempotency.findMoneyKey")(function*(terminalId: string, scope: "payment" | "payout" | "rotation" | "operator", key: string) {
  const store = yield* IdempotencyStore
  const found = yield* store.find(terminalId, scope, key)
  if (Option.isNone(found)) return found
  const config = yield* PaydeskConfig
  const retention = scope === "payout" ? config.idempotencyRetentionMs : config.moneyIdempotencyRetentionMs
  if (found.value.createdAt >= (yield* wallTime) - retention) return found
  yield* store.remove(terminalId, scope, key)
  return Option.none<IdempotencyRecord>()
})

/**
 * An operator's move on one payment or payout (refund, chargeback, approve, reject) under its
 * `Idempotency-Key`: the move, the object and what the move was given (a rejection's reason).
 */
export interface OperatorMove {
  readonly move: "refund" | "chargeback" | "approve" | "reject"
  /** The object's id (its UUID). */
  readonly objectId: string
  /** The object's terminal: the key's record is the terminal's. */
  readonly terminalId: string
  readonly details?: unknown
}

/**
 * The options of an operator's move (`Payments.refund`/`chargeback`, `Payouts.approve`/`reject`): with
 * an `idempotencyKey`, a repeat of the key for the same move answers the object as it is now and
 * moves nothing; the key used for another move, object or reason is 409 (`operatorMoveReplayed`).
 */
export interface OperatorMoveOptions {
  readonly idempotencyKey?: string | undefined
}

/** Checks an operator move's key before anything runs (400 naming `Idempotency-Key`); none is fine. */
export const validateOptionalKey = (key: string | undefined): Effect.Effect<void, InvalidRequest> => {
  if (key === undefined) return Effect.void
  const valid = validateKey(key)
  return Result.isFailure(valid) ? Effect.fail(valid.failure) : Effect.void
}

const moveFingerprint = (move: OperatorMove) => fingerprint({ move: move.move, object: move.objectId, details: move.details ?? null })

/**
 * Inside the move's transaction, with the object's row locked: whether `key` already made this very
 * move (a retry after a lost answer: the caller answers the object as it is now and does nothing
 * more); 409 `idempotency key conflicts with another request` when the key made another move, on
 * another object or with other details. Without a key, false. Kept 24 hours (`findMoneyKey`).
 */
export const operatorMoveReplayed = Traced.fn("Idempotency.operatorMoveReplayed")(function*(key: string | undefined, move: OperatorMove) {
  if (key === undefined) return false
  const found = yield* findMoneyKey(move.terminalId, "operator", key)
  if (Option.isNone(found)) return false
  if (found.value.fingerprint !== (yield* moveFingerprint(move)) || found.value.resourceId !== move.objectId) return yield* IdempotencyConflict.of()
  return true
})

/**
 * Stores `key` with the move it made, in the move's transaction (so a move that fails stores
 * nothing). Without a key, nothing. The key stored meanwhile by another request (the same key at once
 * for another object of the terminal: the objects' locks do not order the two) is a `WriteConflict`:
 * the move's transaction rolls back and `atomic` runs it again, which then finds that record
 * (`operatorMoveReplayed`: 409, or the replay when it was this very move).
 */
export const recordOperatorMove = Traced.fn("Idempotency.recordOperatorMove")(function*(key: string | undefined, move: OperatorMove) {
  if (key === undefined) return
  yield* (yield* IdempotencyStore).insert({
    terminalId: move.terminalId,
    scope: "operator",
    key,
    fingerprint: yield* moveFingerprint(move),
    resourceId: move.objectId,
    createdAt: yield* wallTime
  })
})
