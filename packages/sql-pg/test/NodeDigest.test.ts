/**
 * The server's synchronous `Digest` (Node's crypto) gives what the core's Web Crypto default gives:
 * SHA-256 hex and HMAC-SHA256, with RFC 4231's test vector, an empty secret and non-ASCII text.
 */
import { describe, expect, it } from "vitest"
import { createHmac } from "node:crypto"
import { Effect } from "effect"
import { Digest, Signature, StandardWebhooks, webHmacSha256, webSha256Hex } from "@paydesk/core"
import { hmacKeys, layerSyncDigest } from "../src/NodeSecurity.js"

const node = Effect.runSync(Effect.provide(Effect.gen(function*() { return yield* Digest }), layerSyncDigest))
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex")

describe("NodeSecurity.layerSyncDigest", () => {
  it("matches Web Crypto for SHA-256 and HMAC-SHA256, RFC 4231 case 2 included", async () => {
    expect(hex(Effect.runSync(node.hmacSha256("Jefe", "what do ya want for nothing?"))))
      .toBe("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    for (const [secret, message] of [["Jefe", "what do ya want for nothing?"], ["", "body"], ["секрет", "{\"amount\":\"1000.50\",\"note\":\"привет\"}"]] as const) {
      expect(hex(Effect.runSync(node.hmacSha256(secret, message)))).toBe(hex(await Effect.runPromise(webHmacSha256(secret, message))))
      expect(Effect.runSync(node.sha256Hex(message))).toBe(await Effect.runPromise(webSha256Hex(message)))
    }
  })

  it("signs callbacks as the default does, X-Signature and webhook-signature alike", async () => {
    const input = { secret: "whsec-like secret", timestamp: 1_780_000_000, body: "{\"event_type\":\"payment.paid\"}" }
    const withNode = <A>(effect: Effect.Effect<A>) => Effect.runPromise(Effect.provide(effect, layerSyncDigest))
    expect(await withNode(Signature.sign(input))).toBe(await Effect.runPromise(Signature.sign(input)))
    const header = { secrets: ["one", "two"], id: "evt-1", timestamp: input.timestamp, body: input.body }
    expect(await withNode(StandardWebhooks.signatureHeader(header))).toBe(await Effect.runPromise(StandardWebhooks.signatureHeader(header)))
  })

  it("prepares one HMAC key per secret, keeps the ones used last, and signs the same after one is dropped", () => {
    const keyOf = hmacKeys(2)
    const a = keyOf("a")
    expect(keyOf("a")).toBe(a)
    const b = keyOf("b")
    keyOf("a") // a used last: b goes first
    keyOf("c")
    expect(keyOf("a")).toBe(a)
    expect(keyOf("b")).not.toBe(b)
    expect(keyOf("b").export().toString("utf8")).toBe("b")
    // Many secrets through the layer's cache: every signature is the one of its own secret.
    for (let i = 0; i < 600; i++) {
      const secret = `secret-${i % 300}`
      expect(hex(Effect.runSync(node.hmacSha256(secret, "body")))).toBe(createHmac("sha256", secret).update("body").digest("hex"))
    }
  })
})
