/**
 * A `SecretCipher` on Web Crypto: AES-256-GCM with a key derived from a passphrase.
 *
 * The key is PBKDF2-SHA256 of the passphrase (fixed salt, 1000 iterations: a testkit, not a key
 * store). Each encryption draws a random 12-byte IV; the output is `v1.<iv>.<ciphertext>` in
 * base64url, the ciphertext carrying GCM's 16-byte tag. `decrypt` dies on a malformed, tampered or
 * foreign ciphertext, as the port requires.
 */
import { Effect, Layer } from "effect"
import { SecretCipher } from "@paydesk/core"
import { fromBase64Url, fromUtf8, toBase64Url, utf8 } from "./Bytes.js"

/** The passphrase of `layer()` when none is given. */
export const defaultPassphrase = "paydesk-testkit-secret-passphrase"

const deriveKey = (passphrase: string) =>
  Effect.promise(async () => {
    const material = await globalThis.crypto.subtle.importKey("raw", utf8(passphrase), "PBKDF2", false, ["deriveKey"])
    return globalThis.crypto.subtle.deriveKey(
      { name: "PBKDF2", hash: "SHA-256", salt: utf8("paydesk-testkit/SecretCipher"), iterations: 1000 },
      material,
      { name: "AES-GCM", length: 256 },
      false,
      ["encrypt", "decrypt"]
    )
  })

const undecryptable = (reason: string) => Effect.die(new Error(`SecretCipher: cannot decrypt (${reason})`))

/** Builds an AES-256-GCM `SecretCipher` keyed by `passphrase`. */
export const make = (passphrase: string = defaultPassphrase): Effect.Effect<SecretCipher["Service"]> =>
  Effect.map(deriveKey(passphrase), (key) =>
    SecretCipher.of({
      encrypt: (plaintext) =>
        Effect.promise(async () => {
          const iv = globalThis.crypto.getRandomValues(new Uint8Array(12))
          const sealed = await globalThis.crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, utf8(plaintext))
          return `v1.${toBase64Url(iv)}.${toBase64Url(sealed)}`
        }),
      decrypt: (ciphertext) =>
        Effect.suspend(() => {
          const parts = ciphertext.split(".")
          if (parts.length !== 3 || parts[0] !== "v1") return undecryptable("malformed")
          const iv = fromBase64Url(parts[1]!)
          const sealed = fromBase64Url(parts[2]!)
          if (iv === undefined || iv.length !== 12 || sealed === undefined || sealed.length < 16) {
            return undecryptable("malformed")
          }
          return Effect.tryPromise(() => globalThis.crypto.subtle.decrypt({ name: "AES-GCM", iv }, key, sealed)).pipe(
            Effect.catch(() => undecryptable("authentication failed")),
            Effect.flatMap((plain) => {
              const text = fromUtf8(new Uint8Array(plain))
              return text === undefined ? undecryptable("not UTF-8") : Effect.succeed(text)
            })
          )
        })
    }))

/** The AES-256-GCM `SecretCipher` keyed by `passphrase` (a fixed test passphrase by default). */
export const layer = (passphrase: string = defaultPassphrase): Layer.Layer<SecretCipher> =>
  Layer.effect(SecretCipher, make(passphrase))
