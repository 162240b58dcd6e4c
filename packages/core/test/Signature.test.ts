import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import * as Signature from "../src/Signature.js"

const secret = "sk_sign_3f9a1c"
const timestamp = "1763712000"
const body = `{"event_type":"payment.paid","payment_id":"pay_5b0e7a52-3c1d-4a8e-9f00-2f6f0d1c9a11",` +
  `"order_id":"ord-1001","status":"paid","amount":"1000.50","currency":"RUB","test":false}`
const expected = "3f57ff91ed364a0368fd227d92bd6a5d5bfb067781add500dda0beabf1f332a9"
const now = 1_763_712_000

describe("Signature", () => {
  it.effect("signs the spec's test vector", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* Signature.sign({ secret, timestamp, body }), expected)
      assert.strictEqual(yield* Signature.sign({ secret, timestamp: now, body }), expected)
      assert.strictEqual(yield* Signature.hmacSha256Hex(secret, `${timestamp}.${body}`), expected)
    }))

  it.effect("computes RFC 4231 HMAC-SHA256 and FIPS 180 SHA-256", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* Signature.hmacSha256Hex("Jefe", "what do ya want for nothing?"),
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
      )
      assert.strictEqual(
        yield* Signature.sha256Hex("abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
      )
      assert.strictEqual(
        yield* Signature.sha256Hex(""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
      )
    }))

  describe("timingSafeEqual", () => {
    it("compares strings", () => {
      assert.isTrue(Signature.timingSafeEqual("", ""))
      assert.isTrue(Signature.timingSafeEqual(expected, expected))
      assert.isFalse(Signature.timingSafeEqual(expected, expected.slice(0, 63)))
      assert.isFalse(Signature.timingSafeEqual("abc", "abd"))
      assert.isFalse(Signature.timingSafeEqual("abc", "abc\u0000"))
      assert.isFalse(Signature.timingSafeEqual("", "a"))
    })

    it("agrees with ===", () => {
      fc.assert(fc.property(fc.string(), fc.string(), (a, b) => Signature.timingSafeEqual(a, b) === (a === b)))
      fc.assert(fc.property(fc.string(), (a) => Signature.timingSafeEqual(a, a)))
    })
  })

  describe("verify", () => {
    const input = { secret, timestamp, body, signature: expected, nowSeconds: now }

    it.effect("accepts a fresh, intact callback", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* Signature.verify(input), { ok: true })
        assert.deepStrictEqual(yield* Signature.verify({ ...input, timestamp: now }), { ok: true })
        assert.deepStrictEqual(yield* Signature.verify({ ...input, nowSeconds: now + 300 }), { ok: true })
        assert.deepStrictEqual(yield* Signature.verify({ ...input, nowSeconds: now - 300 }), { ok: true })
      }))

    it.effect("rejects a stale callback, too old or too far in the future", () =>
      Effect.gen(function*() {
        const stale: Signature.VerifyResult = { ok: false, reason: "stale" }
        assert.deepStrictEqual(yield* Signature.verify({ ...input, nowSeconds: now + 301 }), stale)
        assert.deepStrictEqual(yield* Signature.verify({ ...input, nowSeconds: now - 301 }), stale)
        assert.deepStrictEqual(yield* Signature.verify({ ...input, nowSeconds: now + 61, toleranceSeconds: 60 }), stale)
      }))

    it.effect("reads now from the Clock when not given", () =>
      Effect.gen(function*() {
        const { nowSeconds: _, ...withoutNow } = input
        yield* TestClock.setTime(now * 1000 + 299_999)
        assert.deepStrictEqual(yield* Signature.verify(withoutNow), { ok: true })
        yield* TestClock.setTime(now * 1000 + 301_000)
        assert.deepStrictEqual(yield* Signature.verify(withoutNow), { ok: false, reason: "stale" })
      }))

    it.effect("rejects a changed body, a re-serialized body, another secret or timestamp", () =>
      Effect.gen(function*() {
        const mismatch: Signature.VerifyResult = { ok: false, reason: "mismatch" }
        const oneByte = body.replace("1000.50", "1000.51")
        assert.deepStrictEqual(yield* Signature.verify({ ...input, body: oneByte }), mismatch)
        assert.deepStrictEqual(yield* Signature.verify({ ...input, body: `${body} ` }), mismatch)
        assert.deepStrictEqual(
          yield* Signature.verify({ ...input, body: JSON.stringify(JSON.parse(body), null, 2) }),
          mismatch
        )
        assert.deepStrictEqual(yield* Signature.verify({ ...input, secret: "sk_sign_3f9a1d" }), mismatch)
        assert.deepStrictEqual(yield* Signature.verify({ ...input, timestamp: "1763712001" }), mismatch)
        assert.deepStrictEqual(yield* Signature.verify({ ...input, signature: "0".repeat(64) }), mismatch)
      }))

    it.effect("rejects malformed headers", () =>
      Effect.gen(function*() {
        const malformed: Signature.VerifyResult = { ok: false, reason: "malformed" }
        for (const ts of ["", "abc", "1763712000.5", "-1763712000", "+1763712000", " 1763712000", "1.7e9", undefined]) {
          assert.deepStrictEqual(yield* Signature.verify({ ...input, timestamp: ts }), malformed)
        }
        for (const ts of [1_763_712_000.5, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
          assert.deepStrictEqual(yield* Signature.verify({ ...input, timestamp: ts }), malformed)
        }
        for (const signature of [undefined, "", expected.slice(1), `${expected}0`, `sha256=${expected}`]) {
          assert.deepStrictEqual(yield* Signature.verify({ ...input, signature }), malformed)
        }
      }))

    it.effect("accepts only lowercase hex, as the spec produces", () =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* Signature.verify({ ...input, signature: expected.toUpperCase() }), {
          ok: false,
          reason: "malformed"
        })
      }))

    it.effect("accepts what sign produces", () =>
      Effect.gen(function*() {
        const samples = fc.sample(fc.tuple(fc.string(), fc.string(), fc.integer({ min: 0, max: 2 ** 40 })), 25)
        for (const [key, payload, ts] of samples) {
          const signature = yield* Signature.sign({ secret: key, timestamp: ts, body: payload })
          assert.match(signature, /^[0-9a-f]{64}$/)
          const result = yield* Signature.verify({
            secret: key,
            timestamp: String(ts),
            body: payload,
            signature,
            nowSeconds: ts
          })
          assert.deepStrictEqual(result, { ok: true })
        }
      }))
  })
})
