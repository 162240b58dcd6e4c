/**
 * Port: the hashing behind API-key and refresh-token lookups (SHA-256, stored as hex), request
 * fingerprints, and the HMAC-SHA256 of callback signatures.
 *
 * Contract: `sha256Hex(text)` is the lowercase hex SHA-256 of the UTF-8 bytes of `text`;
 * `hmacSha256(secret, message)` the HMAC-SHA256 of the UTF-8 bytes of `message` keyed with the
 * UTF-8 bytes of `secret` (an empty secret is the all-zero key, as HMAC pads it). The default is
 * Web Crypto (any runtime). On Node, Web Crypto runs on libuv's thread pool, where memory-hard
 * password hashing can keep it waiting, and costs a promise per call; the reference server provides
 * Node's synchronous functions (`NodeSecurity.layerSyncDigest`).
 */
import { Context, Effect } from "effect"

const encoder = new TextEncoder()

const toHex = (bytes: ArrayBuffer): string => {
  let hex = ""
  for (const byte of new Uint8Array(bytes)) hex += byte.toString(16).padStart(2, "0")
  return hex
}

// HMAC zero-pads keys to the 64-byte block, so an empty secret is the all-zero block; Web Crypto
// refuses zero-length keys, hence the explicit block.
const hmacKeyBytes = (secret: string): Uint8Array<ArrayBuffer> =>
  secret === "" ? new Uint8Array(64) : encoder.encode(secret)

/** Web Crypto's SHA-256, as lowercase hex. */
export const webSha256Hex = (text: string): Effect.Effect<string> =>
  Effect.promise(async () => toHex(await globalThis.crypto.subtle.digest("SHA-256", encoder.encode(text))))

/** Web Crypto's HMAC-SHA256. */
export const webHmacSha256 = (secret: string, message: string): Effect.Effect<Uint8Array> =>
  Effect.promise(async () => {
    const key = await globalThis.crypto.subtle.importKey("raw", hmacKeyBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
    return new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", key, encoder.encode(message)))
  })

export class Digest extends Context.Reference<{
  sha256Hex(text: string): Effect.Effect<string>
  hmacSha256(secret: string, message: string): Effect.Effect<Uint8Array>
}>("@paydesk/core/Digest", { defaultValue: () => ({ sha256Hex: webSha256Hex, hmacSha256: webHmacSha256 }) }) {}
