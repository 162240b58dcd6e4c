/**
 * Verifying callbacks: `X-Signature` is the lowercase hex HMAC-SHA256 of `X-Timestamp + "." + raw
 * body` with the terminal's `signing_secret`. `verify` checks it over the exact bytes received
 * (Web Crypto's HMAC verify, which compares in constant time), refuses a timestamp outside the
 * tolerance, and returns the typed event; anything else throws `WebhookVerificationError`.
 *
 * Rotation: during a signing-secret rotation's overlap `X-Signature` is signed with the previous
 * secret and `X-Signature-Next` with the new one; after it (or after `retire-previous`) `X-Signature`
 * alone, with the new one. `verify` accepts a callback when `X-Signature` or `X-Signature-Next`
 * matches any of the secrets given, so pass both while you switch (`[previous, next]`): every
 * genuine callback verifies before, during and after the overlap. With one secret, the new one
 * verifies from the start of the overlap too (through `X-Signature-Next`).
 */
import { webCrypto } from "./Crypto.js"
import { WebhookVerificationError } from "./Errors.js"
import type { WebhookEvent } from "./Types.js"

/** A request body as received: text or bytes (never a re-serialized object). */
export type RawBody = string | Uint8Array | ArrayBuffer

/** Request headers: fetch's `Headers`, or Node's object (any letter case). */
export type HeadersLike = Headers | { readonly [name: string]: string | ReadonlyArray<string> | undefined }

/** Options of `verify`. */
export interface VerifyOptions {
  /** Largest accepted distance between `X-Timestamp` and now, in seconds (default 300). */
  readonly toleranceSeconds?: number
  /** Now, in Unix seconds (default the system clock); for tests. */
  readonly now?: number
}

/** The default tolerance (seconds). */
export const defaultToleranceSeconds = 300

const encoder = new TextEncoder()

const bytesOf = (body: RawBody): Uint8Array =>
  typeof body === "string" ? encoder.encode(body) : body instanceof Uint8Array ? body : new Uint8Array(body)

/** A header's value, whatever the shape and letter case of `headers`. */
export const headerOf = (headers: HeadersLike, name: string): string | undefined => {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined
  for (const [key, value] of Object.entries(headers as Record<string, string | ReadonlyArray<string> | undefined>)) {
    if (key.toLowerCase() === name) return typeof value === "string" ? value : value?.[0]
  }
  return undefined
}

const hmacKey = async (secret: string, usage: "sign" | "verify") =>
  (await webCrypto()).subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [usage])

/** `prefix` (`<timestamp>.` for `X-Signature`, `<id>.<timestamp>.` for `webhook-signature`) then the body's own bytes. */
const signedBytes = (prefix: string, body: RawBody): Uint8Array<ArrayBuffer> => {
  const head = encoder.encode(prefix)
  const data = bytesOf(body)
  const out = new Uint8Array(head.length + data.length)
  out.set(head)
  out.set(data, head.length)
  return out
}

const fail = (reason: WebhookVerificationError["reason"], message: string) => new WebhookVerificationError(reason, message)

/**
 * Verifies a callback and returns its event; throws `WebhookVerificationError` when it must not be
 * trusted. `secret` is the terminal's signing secret, or several (the previous and the new one
 * during a rotation): the callback is genuine when `X-Signature` or `X-Signature-Next` matches one.
 * In a list, an absent entry (`undefined`, `null` or `""`: a variable not set yet, such as the next
 * secret before a rotation) is skipped; at least one secret must be given.
 */
export const verify = async (
  rawBody: RawBody,
  headers: HeadersLike,
  secret: string | ReadonlyArray<string | null | undefined>,
  options: VerifyOptions = {}
): Promise<WebhookEvent> => {
  if (typeof secret !== "string" && !Array.isArray(secret)) {
    throw new TypeError(`webhooks.verify: no signing secret given (${secret === undefined ? "undefined" : typeof secret}): pass the terminal's signing_secret, or a list of them`)
  }
  const given = typeof secret === "string" ? [secret] : secret.filter((s) => s !== undefined && s !== null && s !== "")
  if (given.length === 0 || given.some((s) => typeof s !== "string" || s === "")) {
    throw new TypeError("webhooks.verify: secret must be a non-empty string or a list holding at least one")
  }
  const secrets = given as ReadonlyArray<string>
  const signature = headerOf(headers, "x-signature")?.trim()
  const timestamp = headerOf(headers, "x-timestamp")?.trim()
  if (signature === undefined || timestamp === undefined) throw fail("missing_header", "X-Signature and X-Timestamp headers are required")
  if (!/^[0-9a-fA-F]{64}$/.test(signature)) throw fail("malformed_signature", "X-Signature must be 64 hex characters")
  if (!/^\d{1,12}$/.test(timestamp)) throw fail("malformed_signature", "X-Timestamp must be Unix seconds")
  const tolerance = options.toleranceSeconds ?? defaultToleranceSeconds
  const now = options.now ?? Date.now() / 1000
  // NaN compares false with everything: the check would pass any timestamp (a tolerance read from an unset variable).
  if (typeof tolerance !== "number" || !(tolerance >= 0)) {
    throw new TypeError(`webhooks.verify: toleranceSeconds must be a number of seconds, 0 or more: ${String(tolerance)}`)
  }
  if (typeof now !== "number" || !Number.isFinite(now)) throw new TypeError(`webhooks.verify: now must be Unix seconds: ${String(now)}`)
  if (Math.abs(now - Number(timestamp)) > tolerance) {
    throw fail("timestamp_out_of_tolerance", `X-Timestamp is more than ${tolerance} s away from now`)
  }
  const crypto = await webCrypto()
  const keys = await Promise.all(secrets.map((s) => hmacKey(s, "verify")))
  const data = signedBytes(`${timestamp}.`, rawBody)
  const matches = async (hex: string) => {
    const mac = Uint8Array.from(hex.match(/../g)!.map((pair) => parseInt(pair, 16)))
    // Every key is tried (no early exit), so the time taken says nothing about which one matched.
    const results = await Promise.all(keys.map((key) => crypto.subtle.verify("HMAC", key, mac, data)))
    return results.some(Boolean)
  }
  const next = headerOf(headers, "x-signature-next")?.trim()
  const candidates = [signature, ...(next !== undefined && /^[0-9a-fA-F]{64}$/.test(next) ? [next] : [])]
  const valid = (await Promise.all(candidates.map(matches))).some(Boolean)
  if (!valid) throw fail("signature_mismatch", "X-Signature does not match the body (wrong signing_secret, or a body that was changed or re-serialized)")
  let event: unknown
  try {
    event = JSON.parse(typeof rawBody === "string" ? rawBody : new TextDecoder().decode(bytesOf(rawBody)))
  } catch {
    throw fail("malformed_body", "the body is not JSON")
  }
  if (typeof event !== "object" || event === null || typeof (event as { event_type?: unknown }).event_type !== "string") {
    throw fail("malformed_body", "the body is not a callback event")
  }
  return event as WebhookEvent
}

/** The signature of a body at a timestamp (lowercase hex): for tests that post signed callbacks. */
export const sign = async (rawBody: RawBody, secret: string, timestamp: number | string): Promise<string> => {
  const mac = await (await webCrypto()).subtle.sign("HMAC", await hmacKey(secret, "sign"), signedBytes(`${timestamp}.`, rawBody))
  return [...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("")
}

/** Options of `testHeaders`. */
export interface TestHeadersOptions {
  /** Unix seconds (default now). */
  readonly timestamp?: number
  /** `X-Test-Mode: true` (default true). */
  readonly test?: boolean
  /** The event's id, `evt_<uuid>` (default a new one). */
  readonly eventId?: string
  /** The event's sequence number (default 1). */
  readonly sequence?: number
}

/**
 * Headers of a signed callback for `rawBody` (now unless `timestamp` is given), as a delivery
 * carries them: `X-Signature`, `X-Timestamp`, `X-Test-Mode`, `X-Event-Id`, `X-Event-Sequence` and
 * Standard Webhooks' `webhook-id`, `webhook-timestamp`, `webhook-signature`: for tests.
 */
export const testHeaders = async (rawBody: RawBody, secret: string, options: TestHeadersOptions = {}) => {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000))
  const eventId = options.eventId ?? `evt_${(await webCrypto()).randomUUID()}`
  // Over the body's own bytes (as X-Signature): decoded to text, a BOM or invalid UTF-8 would change them.
  const mac = await (await webCrypto()).subtle.sign("HMAC", await hmacKey(secret, "sign"), signedBytes(`${eventId}.${timestamp}.`, rawBody))
  return {
    "content-type": "application/json",
    "x-signature": await sign(rawBody, secret, timestamp),
    "x-timestamp": timestamp,
    ...(options.test === false ? {} : { "x-test-mode": "true" }),
    "x-event-id": eventId,
    "x-event-sequence": String(options.sequence ?? 1),
    "webhook-id": eventId,
    "webhook-timestamp": timestamp,
    "webhook-signature": `v1,${base64Of(new Uint8Array(mac))}`
  }
}

const base64Of = (bytes: Uint8Array): string => {
  let binary = ""
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}
