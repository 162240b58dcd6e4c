/**
 * A fast `PasswordHasher` for tests: PBKDF2-SHA256 on Web Crypto with a random 16-byte salt.
 *
 * Hashes read `pbkdf2$<iterations>$<salt base64>$<hash base64>`. The default of 1000 iterations is
 * far too low for production (which uses scrypt) and keeps test suites fast. `verify` honours the
 * iteration count written in the hash and answers false for anything malformed.
 */
import { Effect, Layer } from "effect"
import { PasswordHasher } from "@paydesk/core"
import { constantTimeEqual, fromBase64, toBase64, utf8 } from "./Bytes.js"

/** Iterations of the testkit hasher. */
export const defaultIterations = 1000

const derive = (password: string, salt: Uint8Array<ArrayBuffer>, iterations: number): Effect.Effect<Uint8Array> =>
  Effect.promise(async () => {
    const key = await globalThis.crypto.subtle.importKey("raw", utf8(password), "PBKDF2", false, ["deriveBits"])
    const bits = await globalThis.crypto.subtle.deriveBits(
      { name: "PBKDF2", hash: "SHA-256", salt, iterations },
      key,
      256
    )
    return new Uint8Array(bits)
  })

/** A PBKDF2 `PasswordHasher` with the given iteration count. */
export const make = (iterations: number = defaultIterations): PasswordHasher["Service"] =>
  PasswordHasher.of({
    hash: (password) =>
      Effect.gen(function*() {
        const salt = globalThis.crypto.getRandomValues(new Uint8Array(16))
        const hash = yield* derive(password, salt, iterations)
        return `pbkdf2$${iterations}$${toBase64(salt)}$${toBase64(hash)}`
      }),
    verify: (password, encoded) =>
      Effect.gen(function*() {
        const parts = encoded.split("$")
        if (parts.length !== 4 || parts[0] !== "pbkdf2" || !/^[1-9]\d{0,6}$/.test(parts[1]!)) return false
        const salt = fromBase64(parts[2]!)
        const expected = fromBase64(parts[3]!)
        if (salt === undefined || expected === undefined || salt.length === 0 || expected.length !== 32) return false
        const actual = yield* derive(password, salt, Number(parts[1]))
        return constantTimeEqual(actual, expected)
      })
  })

/** The PBKDF2 `PasswordHasher` (1000 iterations unless told otherwise). */
export const layer = (iterations: number = defaultIterations): Layer.Layer<PasswordHasher> =>
  Layer.succeed(PasswordHasher)(make(iterations))
