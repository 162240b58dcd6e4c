import { EntropyContract, Keccak256Contract, PasswordHasherContract, SecretCipherContract } from "@paydesk/testkit/contracts"
import { describe, expect, it } from "vitest"
import { randomBytes } from "node:crypto"
import { aesGcmSecretCipher, layerAesGcmSecretCipher, layerCryptoEntropy, layerKeccak256, layerScryptPasswordHasher, parseKey, pooledTokens } from "../src/NodeSecurity.js"

const key = parseKey("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
const otherKey = parseKey(Buffer.alloc(32, 7).toString("base64"))

// A cheaper N keeps the suite fast; the production default is checked by its parameters' use in `hash`.
PasswordHasherContract.suite("scrypt", layerScryptPasswordHasher({ N: 1024, r: 8, p: 1, keyLength: 32 }))
Keccak256Contract.suite("@noble/hashes", layerKeccak256)
SecretCipherContract.suite("aes-256-gcm", layerAesGcmSecretCipher(key), { foreign: layerAesGcmSecretCipher(otherKey) })
SecretCipherContract.suite("aes-256-gcm with previous keys", layerAesGcmSecretCipher(key, [randomBytes(32), randomBytes(32)]), { foreign: layerAesGcmSecretCipher(otherKey) })
EntropyContract.suite("node crypto", layerCryptoEntropy)

describe("NodeSecurity.pooledTokens", () => {
  it("draws every token from fresh bytes across refills of a small pool, and a token larger than the pool on its own", () => {
    const token = pooledTokens(40)
    const seen = new Set<string>()
    // 24 + 24 > 40: every second token refills the pool; 17 does not fit after 24 either.
    for (let i = 0; i < 3_000; i++) {
      const size = [24, 17, 40, 1][i % 4]!
      const drawn = token(size)
      expect(Buffer.from(drawn, "base64url")).toHaveLength(size)
      if (size >= 16) {
        expect(seen.has(drawn)).toBe(false)
        seen.add(drawn)
      }
    }
    expect(Buffer.from(token(100), "base64url")).toHaveLength(100)
  })
})

describe("NodeSecurity.layerAesGcmSecretCipher", () => {
  it("opens only what it writes: no extra part, stray character, padding or cut tag (GCM checks a tag only as far as it is given)", async () => {
    const { Effect, Exit } = await import("effect")
    const { SecretCipher } = await import("@paydesk/core")
    const opens = (text: string) =>
      Effect.runPromise(Effect.exit(Effect.flatMap(SecretCipher, (cipher) => cipher.decrypt(text))).pipe(Effect.provide(layerAesGcmSecretCipher(key))))
    const sealed = await Effect.runPromise(Effect.flatMap(SecretCipher, (cipher) => cipher.encrypt("feed:secret")).pipe(Effect.provide(layerAesGcmSecretCipher(key))))
    expect(Exit.isSuccess(await opens(sealed))).toBe(true)
    const [version, iv, tag, data] = sealed.split(".") as [string, string, string, string]
    const cutTag = Buffer.from(tag, "base64url").subarray(0, 4).toString("base64url")
    for (const altered of [`${sealed}.junk`, `${sealed}A`, `${sealed}=`, ` ${sealed}`, [version, iv, cutTag, data].join("."), [version, `${iv}A`, tag, data].join(".")]) {
      expect([altered, Exit.isFailure(await opens(altered))]).toEqual([altered, true])
    }
  })
})

describe("NodeSecurity.aesGcmSecretCipher with previous keys (a rotation of the secret key)", () => {
  it("opens what the key or any previous key wrote, writes with the key alone, and refuses what none of them wrote", async () => {
    const { Effect, Exit } = await import("effect")
    const [older, oldest, stranger] = [randomBytes(32), randomBytes(32), randomBytes(32)]
    const rotated = aesGcmSecretCipher(key, [older, oldest])
    const run = <A>(effect: import("effect").Effect.Effect<A>) => Effect.runPromise(Effect.exit(effect))
    for (const writer of [key, older, oldest]) {
      const sealed = await Effect.runPromise(aesGcmSecretCipher(writer).encrypt("sk_sign_rotating"))
      expect(await run(rotated.decrypt(sealed))).toEqual(Exit.succeed("sk_sign_rotating"))
    }
    expect(Exit.isFailure(await run(rotated.decrypt(await Effect.runPromise(aesGcmSecretCipher(stranger).encrypt("x")))))).toBe(true)
    const written = await Effect.runPromise(rotated.encrypt("sk_sign_new"))
    expect(await run(aesGcmSecretCipher(key).decrypt(written))).toEqual(Exit.succeed("sk_sign_new"))
    expect(Exit.isFailure(await run(aesGcmSecretCipher(older).decrypt(written)))).toBe(true)
  })
})

describe("NodeSecurity.parseKey", () => {
  it("reads 32 bytes as base64 (with or without its padding, or base64url) or 64 hex characters, and nothing more or less", () => {
    const bytes = randomBytes(32)
    expect(parseKey(bytes.toString("base64")).equals(bytes)).toBe(true)
    expect(parseKey(bytes.toString("base64").replace(/=$/, "")).equals(bytes)).toBe(true)
    expect(parseKey(bytes.toString("base64url")).equals(bytes)).toBe(true)
    expect(parseKey(bytes.toString("hex")).equals(bytes)).toBe(true)
    expect(parseKey(bytes.toString("hex").toUpperCase()).equals(bytes)).toBe(true)
    // Blanks around it (a key file's newline carried into the environment) are not part of it.
    expect(parseKey(` ${bytes.toString("base64")}\r\n`).equals(bytes)).toBe(true)
    const other = randomBytes(32).toString("base64")
    for (const bad of [
      `${bytes.toString("base64")},${other}`, `${bytes.toString("base64")}junk`, `${bytes.toString("base64")} ${bytes.toString("base64")}`,
      randomBytes(31).toString("base64"), randomBytes(33).toString("base64"), `${bytes.toString("hex")}00`, ""
    ]) {
      expect(() => parseKey(bad), bad).toThrow(/the secret key must be 32 bytes/)
    }
  })
})
