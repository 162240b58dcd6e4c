/**
 * Byte helpers of the Web Crypto adapters (core's and the testkit's): base64url text and
 * constant-time comparison; and the test for text no JSON store keeps (a lone surrogate).
 */
import { Result } from "effect"
import { Base64, Base64Url } from "effect/encoding"

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })

/** UTF-8 bytes of a string, typed for Web Crypto. */
export const utf8 = (text: string): Uint8Array<ArrayBuffer> => encoder.encode(text)

/** The string of UTF-8 bytes, or undefined when they are not valid UTF-8. */
export const fromUtf8 = (bytes: Uint8Array): string | undefined => {
  try {
    return decoder.decode(bytes)
  } catch {
    return undefined
  }
}

/** Unpadded base64url of bytes. */
export const toBase64Url = (bytes: Uint8Array | ArrayBuffer): string =>
  Base64Url.encode(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes))

/** Bytes of unpadded base64url text, or undefined when it is not canonical base64url. */
export const fromBase64Url = (text: string): Uint8Array<ArrayBuffer> | undefined => {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined
  const decoded = Base64Url.decode(text)
  if (Result.isFailure(decoded)) return undefined
  const bytes = new Uint8Array(decoded.success)
  // Reject non-canonical encodings (stray bits in the last character), so a changed token never verifies.
  return toBase64Url(bytes) === text ? bytes : undefined
}

/** Standard padded base64 of bytes. */
export const toBase64 = (bytes: Uint8Array | ArrayBuffer): string =>
  Base64.encode(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes))

/** Bytes of standard base64 text, or undefined when it is malformed. */
export const fromBase64 = (text: string): Uint8Array<ArrayBuffer> | undefined => {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined
  const decoded = Base64.decode(text)
  return Result.isFailure(decoded) ? undefined : new Uint8Array(decoded.success)
}

/** Byte equality that looks at every byte of the longer array, with no early exit. */
export const constantTimeEqual = (a: Uint8Array, b: Uint8Array): boolean => {
  const length = Math.max(a.length, b.length)
  let diff = a.length ^ b.length
  for (let i = 0; i < length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0)
  return diff === 0
}

/** A UTF-16 surrogate without its other half. */
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
const loneSurrogates = new RegExp(loneSurrogate.source, "g")

/**
 * Whether `text` holds a surrogate without its other half: not Unicode text, and a store writes it
 * as U+FFFD (so two such texts can be stored alike, and an answer would not show what was stored).
 */
export const hasLoneSurrogate = (text: string): boolean => loneSurrogate.test(text)

/**
 * Whether `text` holds a control character (C0, DEL and C1: Unicode's `Cc`) or a line or paragraph
 * separator (U+2028, U+2029): never part of an identifier or a name, and each breaks a log line, a
 * terminal (C1's CSI begins an escape sequence) or a line-based reader of an export.
 */
export const hasControlCharacter = (text: string): boolean => controlCharacter.test(text)
const controlCharacter = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/

/**
 * The characters of `text` (code points), as a limit in "characters" counts them, JSON Schema's
 * `maxLength` and PostgreSQL's `length` too: `text.length` counts UTF-16 units, an emoji two (a fuzz
 * found 65 emoji refused as more than 128 characters). A lone surrogate counts as one.
 */
export const characterCount = (text: string): number => text.length - (text.match(surrogatePair)?.length ?? 0)
const surrogatePair = /[\ud800-\udbff][\udc00-\udfff]/g

/** The message refusing a field with a lone surrogate (keys and URLs, which are never rewritten). */
export const unicodeOnly = (field: string) => `${field} must be valid Unicode text (a surrogate without its pair was sent)`

/** `text` with each surrogate without its other half as U+FFFD, as UTF-8 encoding writes it. */
export const withoutLoneSurrogates = (text: string): string => text.replace(loneSurrogates, "\ufffd")

/** A `\uD800`-`\uDFFF` escape (not an escaped backslash followed by `u`). */
const loneSurrogateEscape = /(?<!\\)(?:\\\\)*\\u[dD][89a-fA-F][0-9a-fA-F]{2}/

/**
 * Whether JSON text made by `JSON.stringify` holds a surrogate without its other half: it writes
 * those (and only those) as `\uD800`-`\uDFFF` escapes, which PostgreSQL's `jsonb` refuses.
 */
export const hasLoneSurrogateEscape = (json: string): boolean => loneSurrogateEscape.test(json)
