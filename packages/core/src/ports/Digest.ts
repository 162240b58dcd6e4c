/**
 * Port: the SHA-256 behind API-key and refresh-token lookups (both stored as hex hashes).
 *
 * Contract: `sha256Hex(text)` is the lowercase hex SHA-256 of the UTF-8 bytes of `text`. The
 * default is Web Crypto (any runtime). On Node, Web Crypto digests run on libuv's thread pool,
 * where memory-hard password hashing can keep them waiting; the reference server provides a
 * synchronous digest (`NodeSecurity.layerSyncDigest`) so authenticating a request never waits on it.
 */
import { Context, type Effect } from "effect"
import { sha256Hex } from "../Signature.js"

export class Digest extends Context.Reference<{
  sha256Hex(text: string): Effect.Effect<string>
}>("@paydesk/core/Digest", { defaultValue: () => ({ sha256Hex }) }) {}
