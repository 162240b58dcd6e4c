/**
 * Production adapters of the core's security ports on Node's crypto: scrypt password hashes
 * (memory-hard, bounded in concurrency), AES-256-GCM encryption of secrets at rest with a key from
 * configuration, cryptographically secure identifiers and tokens, a synchronous SHA-256 for
 * API-key lookups, and Keccak-256 for Ethereum address checksums (`@noble/hashes`: Node's crypto has
 * none).
 *
 * scrypt runs on libuv's thread pool (4 threads by default), which Web Crypto digests and file
 * system calls share. At most `maxConcurrent` hashes run at once (default 2, so half the pool stays
 * free), at most `maxQueued` more wait (default 16), and past that a hash fails at once with
 * `ServiceBusy` (503) instead of growing memory and latency for everyone.
 */
import { Effect, Layer, Semaphore } from "effect"
import { Digest, Entropy, Keccak256, PasswordHasher, SecretCipher, ServiceBusy } from "@paydesk/core"
import { keccak_256 } from "@noble/hashes/sha3.js"
import { createCipheriv, createDecipheriv, createHmac, createSecretKey, type KeyObject, hash, randomBytes, randomFillSync, randomUUID, scrypt, timingSafeEqual } from "node:crypto"

/** scrypt parameters: N = 2^15, r = 8, p = 1 (32 MiB of memory per hash), 32-byte key. */
export const scryptParams: ScryptParams = { N: 32768, r: 8, p: 1, keyLength: 32 }

/** Cost parameters of scrypt. */
export interface ScryptParams {
  readonly N: number
  readonly r: number
  readonly p: number
  readonly keyLength: number
}

const scryptAsync = (password: string, salt: Buffer, params: ScryptParams) =>
  Effect.callback<Buffer>((resume) => {
    scrypt(password, salt, params.keyLength, { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r }, (error, key) =>
      resume(error ? Effect.die(error) : Effect.succeed(key)))
  })

/** How many scrypt hashes run at once and how many may wait. */
export interface HashingLimits {
  readonly maxConcurrent: number
  readonly maxQueued: number
}

/** Two at once (half of libuv's default pool), sixteen waiting. */
export const defaultHashingLimits: HashingLimits = { maxConcurrent: 2, maxQueued: 16 }

/** Runs effects at most `maxConcurrent` at once with at most `maxQueued` waiting; past that fails with `ServiceBusy`. */
export const boundedRunner = (limits: HashingLimits) => {
  const semaphore = Semaphore.makeUnsafe(limits.maxConcurrent)
  let admitted = 0
  return <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E | ServiceBusy> =>
    Effect.suspend((): Effect.Effect<A, E | ServiceBusy> => {
      if (admitted >= limits.maxConcurrent + limits.maxQueued) return Effect.fail(ServiceBusy.of())
      admitted++
      return semaphore.withPermits(1)(effect).pipe(Effect.ensuring(Effect.sync(() => void admitted--)))
    })
}

/** `PasswordHasher` with scrypt; hashes look like `scrypt$N$r$p$<salt b64>$<hash b64>`. */
export const layerScryptPasswordHasher = (
  params: ScryptParams = scryptParams,
  limits: HashingLimits = defaultHashingLimits
): Layer.Layer<PasswordHasher> => {
  const bounded = boundedRunner(limits)
  return Layer.succeed(PasswordHasher)(PasswordHasher.of({
    hash: (password) =>
      bounded(Effect.gen(function*() {
        const salt = randomBytes(16)
        const key = yield* scryptAsync(password, salt, params)
        return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString("base64")}$${key.toString("base64")}`
      })),
    verify: (password, hash) =>
      bounded(Effect.gen(function*() {
        const parts = hash.split("$")
        if (parts.length !== 6 || parts[0] !== "scrypt") return false
        const [N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])]
        if (![N, r, p].every((n) => Number.isInteger(n) && n > 0) || N > 1 << 20) return false
        const salt = Buffer.from(parts[4] ?? "", "base64")
        const expected = Buffer.from(parts[5] ?? "", "base64")
        if (expected.length === 0) return false
        const key = yield* scryptAsync(password, salt, { N, r, p, keyLength: expected.length })
        return timingSafeEqual(key, expected)
      }))
  }))
}

/** HMAC keys kept ready at most (the signing secrets of the terminals a worker signs for). */
export const hmacKeysKept = 256

/**
 * HMAC keys as `KeyObject`s, one per secret, the `limit` used last kept. Node checks a raw key's type
 * on every `createHmac` (about 10 µs on Node 24, five times the HMAC of a callback body); a
 * `KeyObject` skips that. A pass signs each callback twice with the few secrets of its terminals.
 */
export const hmacKeys = (limit: number = hmacKeysKept) => {
  const keys = new Map<string, KeyObject>()
  return (secret: string): KeyObject => {
    const known = keys.get(secret)
    if (known !== undefined) {
      // Used last: to the end of the insertion order, so the least recently used goes first.
      keys.delete(secret)
      keys.set(secret, known)
      return known
    }
    const key = createSecretKey(Buffer.from(secret, "utf8"))
    if (keys.size >= limit) keys.delete(keys.keys().next().value!)
    keys.set(secret, key)
    return key
  }
}

/**
 * `Digest` with Node's synchronous SHA-256 and HMAC: API-key and refresh-token lookups and callback
 * signatures never wait on the thread pool (nor cost a promise each). SHA-256 is Node's one-shot
 * `hash` (no `Hash` object per digest: about half the CPU of `createHash` for an API key or a
 * request's canonical JSON). HMAC keys are prepared once per secret (`hmacKeys`).
 */
export const layerSyncDigest = Layer.sync(Digest)(() => {
  const keyOf = hmacKeys()
  return {
    sha256Hex: (text) => Effect.sync(() => hash("sha256", text, "hex")),
    hmacSha256: (secret, message) => Effect.sync(() => new Uint8Array(createHmac("sha256", keyOf(secret)).update(message, "utf8").digest()))
  }
})

/** `Keccak256` from `@noble/hashes` (audited, no dependencies): the EIP-55 checksum of ERC-20 payout addresses. */
export const layerKeccak256: Layer.Layer<Keccak256> = Layer.succeed(Keccak256)({ hash: (bytes) => keccak_256(bytes) })

/** Parses a 32-byte key given as base64 or 64 hex characters. */
export const parseKey = (given: string): Buffer => {
  // Blanks around it (a key file's newline, carried into the environment) are not part of it.
  const text = given.trim()
  // Exactly 32 bytes written out: Node's base64 decoding stops at padding and skips stray characters,
  // so it read "<key>=,<anything>" as the key (a review).
  const hex = /^[0-9a-f]{64}$/i.test(text)
  if (!hex && !/^[A-Za-z0-9+/_-]{42}[AEIMQUYcgkosw048]=?$/.test(text)) {
    throw new Error("the secret key must be 32 bytes (base64 or 64 hex characters)")
  }
  return Buffer.from(text, hex ? "hex" : "base64")
}

/**
 * `SecretCipher` with AES-256-GCM; ciphertexts look like `v1.<iv>.<tag>.<data>` (base64url). It
 * encrypts with `key` and decrypts with `key` or any of `previous` (a rotation of the server's secret
 * key: what was written with an earlier key stays readable until it is encrypted again; GCM's tag
 * tells the keys apart).
 */
export const aesGcmSecretCipher = (key: Buffer, previous: ReadonlyArray<Buffer> = []): SecretCipher["Service"] => {
  const keys = [key, ...previous]
  return SecretCipher.of({
    encrypt: (plaintext) =>
      Effect.sync(() => {
        const iv = randomBytes(12)
        const cipher = createCipheriv("aes-256-gcm", key, iv)
        const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
        return ["v1", iv, cipher.getAuthTag(), data].map((p) => typeof p === "string" ? p : p.toString("base64url")).join(".")
      }),
    decrypt: (ciphertext) =>
      Effect.sync(() => {
        const [version, ...parts] = ciphertext.split(".")
        // Exactly what `encrypt` writes (base64url decoding skips stray characters): a 12-byte nonce, and
        // a whole 16-byte tag (GCM would check one cut to 4 bytes only that far).
        const [iv, tag, data] = parts.map((part) => Buffer.from(part, "base64url"))
        if (version !== "v1" || parts.length !== 3 || iv?.length !== 12 || tag?.length !== 16 || data === undefined ||
          [iv, tag, data].some((bytes, i) => bytes.toString("base64url") !== parts[i])) {
          throw new Error("malformed ciphertext")
        }
        let failure: unknown
        for (const each of keys) {
          const decipher = createDecipheriv("aes-256-gcm", each, iv, { authTagLength: 16 })
          decipher.setAuthTag(tag)
          try {
            return Buffer.concat([decipher.update(data), decipher.final()]).toString("utf8")
          } catch (error) {
            failure = error
          }
        }
        throw failure
      })
  })
}

/** `aesGcmSecretCipher` as a layer. */
export const layerAesGcmSecretCipher = (key: Buffer, previous: ReadonlyArray<Buffer> = []): Layer.Layer<SecretCipher> =>
  Layer.succeed(SecretCipher)(aesGcmSecretCipher(key, previous))

/** Bytes of the CSPRNG drawn at once for tokens. */
export const tokenPoolBytes = 4096

/**
 * Random tokens (base64url) from a pool filled by the CSPRNG `poolBytes` at a time, as Node's
 * `randomUUID` does: one `randomFillSync` per pool instead of a `randomBytes` call per token (about
 * 2 µs each; a payment takes two tokens). Each byte is used once and zeroed once taken; a token
 * larger than the pool is drawn on its own.
 */
export const pooledTokens = (poolBytes: number = tokenPoolBytes) => {
  const pool = Buffer.alloc(poolBytes)
  let next = poolBytes
  return (bytes: number): string => {
    if (bytes > poolBytes) return randomBytes(bytes).toString("base64url")
    if (next + bytes > poolBytes) {
      randomFillSync(pool)
      next = 0
    }
    const token = pool.toString("base64url", next, next + bytes)
    pool.fill(0, next, next + bytes)
    next += bytes
    return token
  }
}

/** `Entropy` from Node's CSPRNG (tokens through `pooledTokens`). */
export const layerCryptoEntropy: Layer.Layer<Entropy> = Layer.sync(Entropy)(() => {
  const token = pooledTokens()
  return Entropy.of({
    uuid: Effect.sync(() => randomUUID()),
    token: (bytes) => Effect.sync(() => token(bytes))
  })
})
