/**
 * Standard Webhooks (https://www.standardwebhooks.com) signing beside the spec's `X-Signature`.
 *
 * A callback carries `webhook-id` (the event id, stable across retries and resends),
 * `webhook-timestamp` (the same Unix seconds as `X-Timestamp`) and `webhook-signature`:
 * space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per secret in force
 * (the current one first; during a rotation's overlap the previous one too). The key is the
 * terminal's signing secret as bytes; merchants configure it in the `whsec_` form, which is
 * `whsec_` followed by the base64 of those bytes.
 */
import { Effect } from "effect"
import { toBase64, utf8 } from "./Bytes.js"
import { Digest } from "./ports/Digest.js"

/** The `whsec_` form of a signing secret (what Standard Webhooks libraries take). */
export const whsecOf = (secret: string): string => `whsec_${toBase64(utf8(secret))}`

/** One `v1,<base64>` signature of `id.timestamp.body` under `secret`. */
export const signOne = (input: { readonly secret: string; readonly id: string; readonly timestamp: number; readonly body: string }) =>
  Effect.flatMap(Digest, (digest) =>
    Effect.map(digest.hmacSha256(input.secret, `${input.id}.${input.timestamp}.${input.body}`), (mac) => `v1,${toBase64(mac)}`))

/** The `webhook-signature` value: one signature per secret, space-separated, in the given order. */
export const signatureHeader = (input: {
  readonly secrets: ReadonlyArray<string>
  readonly id: string
  readonly timestamp: number
  readonly body: string
}): Effect.Effect<string> =>
  Effect.map(
    Effect.forEach(input.secrets, (secret) => signOne({ secret, id: input.id, timestamp: input.timestamp, body: input.body })),
    (parts) => parts.join(" ")
  )
