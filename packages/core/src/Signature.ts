/**
 * Callback signing and verification on the `Digest` port (Web Crypto by default, so the core runs on
 * any JavaScript runtime).
 *
 * A callback carries `X-Timestamp` (Unix seconds of sending) and `X-Signature`: the lowercase hex
 * HMAC-SHA256, keyed with the terminal's `signing_secret`, of `timestamp + "." + raw body` (the exact
 * bytes sent, never re-serialized JSON). `verify` is what merchants (and our SDK and examples) run:
 * it rejects a malformed header, a timestamp outside the tolerance window (default 300 s either way)
 * and a mismatch, comparing signatures in constant time. Only lowercase hex is accepted, as the spec
 * produces it; an uppercase signature is reported as malformed.
 */
import { Clock, Effect } from "effect"
import { Digest } from "./ports/Digest.js"

const toHex = (bytes: Uint8Array): string => {
  let hex = ""
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0")
  return hex
}

/** Default accepted distance between `X-Timestamp` and now, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300

/** Lowercase hex HMAC-SHA256 of a UTF-8 message under a UTF-8 secret (the `Digest` port's, Web Crypto by default). */
export const hmacSha256Hex = (secret: string, message: string): Effect.Effect<string> =>
  Effect.flatMap(Digest, (digest) => Effect.map(digest.hmacSha256(secret, message), toHex))

/** Lowercase hex SHA-256 of a UTF-8 string (the `Digest` port's, Web Crypto by default). */
export const sha256Hex = (input: string): Effect.Effect<string> =>
  Effect.flatMap(Digest, (digest) => digest.sha256Hex(input))

/** String equality that inspects every position of the longer string, with no early exit. */
export const timingSafeEqual = (a: string, b: string): boolean => {
  const length = Math.max(a.length, b.length)
  let diff = a.length ^ b.length
  for (let i = 0; i < length; i++) {
    // NaN (past the end of the shorter string) | 0 is 0; the length difference already counts.
    diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0)
  }
  return diff === 0
}

/** What is signed: the callback's Unix-seconds timestamp and its exact raw body. */
export interface SignInput {
  readonly secret: string
  readonly timestamp: number | string
  readonly body: string
}

/** The `X-Signature` value of a callback: hex HMAC-SHA256 of `${timestamp}.${body}`. */
export const sign = (input: SignInput): Effect.Effect<string> =>
  hmacSha256Hex(input.secret, `${input.timestamp}.${input.body}`)

/** A received callback to check; header values may be missing. */
export interface VerifyInput {
  readonly secret: string
  readonly timestamp: number | string | undefined
  readonly body: string
  readonly signature: string | undefined
  /** Now in Unix seconds; read from Effect's `Clock` when absent. */
  readonly nowSeconds?: number | undefined
  readonly toleranceSeconds?: number | undefined
}

/** Why a callback failed verification. */
export type VerifyFailure = "malformed" | "stale" | "mismatch"

/** Outcome of `verify`. */
export type VerifyResult = { readonly ok: true } | { readonly ok: false; readonly reason: VerifyFailure }

const TIMESTAMP_PATTERN = /^\d{1,15}$/
const SIGNATURE_PATTERN = /^[0-9a-f]{64}$/

const parseTimestamp = (timestamp: number | string | undefined): number | undefined => {
  if (typeof timestamp === "number") return Number.isSafeInteger(timestamp) && timestamp >= 0 ? timestamp : undefined
  if (typeof timestamp === "string" && TIMESTAMP_PATTERN.test(timestamp)) return Number(timestamp)
  return undefined
}

const failure = (reason: VerifyFailure): VerifyResult => ({ ok: false, reason })

/**
 * Checks a callback: `malformed` when the timestamp is not a non-negative integer or the signature
 * not 64 lowercase hex digits, `stale` when |now - timestamp| exceeds the tolerance, `mismatch` when
 * the constant-time comparison with the expected signature fails.
 */
export const verify = Effect.fnUntraced(function*(input: VerifyInput): Effect.fn.Return<VerifyResult> {
  const timestamp = parseTimestamp(input.timestamp)
  const signature = input.signature
  if (timestamp === undefined || signature === undefined || !SIGNATURE_PATTERN.test(signature)) {
    return failure("malformed")
  }
  const now = input.nowSeconds ?? Math.floor((yield* Clock.currentTimeMillis) / 1000)
  if (Math.abs(now - timestamp) > (input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) return failure("stale")
  const expected = yield* hmacSha256Hex(input.secret, `${input.timestamp}.${input.body}`)
  return timingSafeEqual(expected, signature) ? { ok: true } : failure("mismatch")
})
