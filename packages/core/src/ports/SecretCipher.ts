/**
 * Port: encryption of secrets at rest (terminal signing secrets).
 *
 * Contract: `decrypt(encrypt(s))` is `s`; the ciphertext does not contain `s`; two encryptions
 * of one secret differ (random nonce); `decrypt` of a tampered or foreign ciphertext dies.
 */
import { Context, type Effect } from "effect"

export class SecretCipher extends Context.Service<SecretCipher, {
  encrypt(plaintext: string): Effect.Effect<string>
  decrypt(ciphertext: string): Effect.Effect<string>
}>()("@paydesk/core/SecretCipher") {}
