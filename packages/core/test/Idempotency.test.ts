import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, Result } from "effect"
import * as fc from "fast-check"
import * as Idempotency from "../src/Idempotency.js"

/** A deterministic permutation of `items` seeded by `seed` (Fisher-Yates with an LCG). */
const shuffle = <A>(items: ReadonlyArray<A>, seed: number): Array<A> => {
  const out = [...items]
  let state = seed >>> 0
  for (let i = out.length - 1; i > 0; i--) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
    const j = state % (i + 1)
    const tmp = out[i] as A
    out[i] = out[j] as A
    out[j] = tmp
  }
  return out
}

/** Rebuilds `value` with the keys of every nested object in another order. */
const reorder = (value: unknown, seed: number): unknown => {
  if (Array.isArray(value)) return value.map((item, i) => reorder(item, seed + i + 1))
  if (value === null || typeof value !== "object") return value
  const entries = shuffle(Object.entries(value as Record<string, unknown>), seed)
  return Object.fromEntries(entries.map(([k, v], i) => [k, reorder(v, seed * 31 + i)]))
}

const invalidFailure = (result: Result.Result<string, { readonly _tag: string; readonly message: string }>) => {
  if (Result.isSuccess(result)) assert.fail(`expected the key to be rejected, got ${JSON.stringify(result.success)}`)
  assert.strictEqual(result.failure._tag, "InvalidRequest")
  return result.failure
}

describe("Idempotency", () => {
  describe("validateKey", () => {
    it("accepts 128 printable ASCII characters", () => {
      const key = "k".repeat(128)
      assert.deepStrictEqual(Idempotency.validateKey(key), Result.succeed(key))
      assert.strictEqual(Idempotency.maxKeyLength, 128)
    })

    it("accepts a UUID and every printable ASCII character", () => {
      const uuid = "0b7f3c1e-5d2a-4e8b-9c61-2f4a7d9e0c13"
      assert.isTrue(Result.isSuccess(Idempotency.validateKey(uuid)))
      const printable = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join("")
      assert.isTrue(Result.isSuccess(Idempotency.validateKey(printable)))
    })

    it("rejects 129 characters with a message naming 128", () => {
      const error = invalidFailure(Idempotency.validateKey("k".repeat(129)))
      assert.include(error.message, "128")
    })

    it("rejects an empty key", () => {
      invalidFailure(Idempotency.validateKey(""))
    })

    it.each(["ключ", "key-é", "emoji-\u{1f600}", "key with spaces", " key", "key ", "tab\tkey", "new\nline", "\u0000"])(
      "rejects %j",
      (key) => {
        invalidFailure(Idempotency.validateKey(key))
      }
    )

    it("names the field it checks", () => {
      const error = invalidFailure(Idempotency.validateKey("x".repeat(129), "merchant_subscription_ref"))
      assert.include(error.message, "merchant_subscription_ref")
      assert.strictEqual((error as unknown as { field: string }).field, "merchant_subscription_ref")
    })

    it("accepts exactly the printable ASCII strings of 1..128 characters", () => {
      fc.assert(
        fc.property(fc.oneof(fc.string({ maxLength: 140 }), fc.string({ maxLength: 140, unit: "binary" })), (key) => {
          const ok = key.length >= 1 && key.length <= 128 && [...key].every((c) => c >= "!" && c <= "~")
          assert.strictEqual(Result.isSuccess(Idempotency.validateKey(key)), ok, JSON.stringify(key))
        })
      )
    })
  })

  describe("canonicalJson", () => {
    it("sorts keys at every depth", () => {
      assert.strictEqual(
        Idempotency.canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: "x" } }),
        `{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}`
      )
    })

    it("is independent of key order", () => {
      fc.assert(
        fc.property(fc.jsonValue(), fc.integer(), (value, seed) => {
          assert.strictEqual(Idempotency.canonicalJson(reorder(value, seed)), Idempotency.canonicalJson(value))
        })
      )
    })

    it("is a fixed point of JSON.parse", () => {
      fc.assert(
        fc.property(fc.jsonValue(), (value) => {
          const once = Idempotency.canonicalJson(value)
          assert.strictEqual(Idempotency.canonicalJson(JSON.parse(once)), once)
        })
      )
    })

    it("drops undefined properties", () => {
      assert.strictEqual(Idempotency.canonicalJson({ a: 1, b: undefined }), `{"a":1}`)
      assert.strictEqual(
        Idempotency.canonicalJson({ plan_id: "p", description: undefined }),
        Idempotency.canonicalJson({ plan_id: "p" })
      )
    })

    it("serializes bigint as a string", () => {
      assert.strictEqual(Idempotency.canonicalJson(100_050n), `"100050"`)
      assert.strictEqual(Idempotency.canonicalJson({ amount: 100_050n }), `{"amount":"100050"}`)
      assert.strictEqual(Idempotency.canonicalJson([1n, -2n]), `["1","-2"]`)
    })
  })

  describe("fingerprint", () => {
    it.effect("is a SHA-256 hex digest", () =>
      Effect.gen(function*() {
        assert.match(yield* Idempotency.fingerprint({ plan_id: "p", amount: "100.00" }), /^[0-9a-f]{64}$/)
      }))

    it.effect("is equal for equal bodies in any key order", () =>
      Effect.gen(function*() {
        const a = yield* Idempotency.fingerprint({ plan_id: "p", amount: "100.00", payer: { id: "u1", tag: null } })
        const b = yield* Idempotency.fingerprint({ payer: { tag: null, id: "u1" }, amount: "100.00", plan_id: "p" })
        assert.strictEqual(a, b)
        const samples = fc.sample(fc.tuple(fc.jsonValue(), fc.integer()), { numRuns: 100, seed: 42 })
        for (const [value, seed] of samples) {
          assert.strictEqual(yield* Idempotency.fingerprint(reorder(value, seed)), yield* Idempotency.fingerprint(value))
        }
      }))

    it.effect("differs for different values", () =>
      Effect.gen(function*() {
        assert.notStrictEqual(
          yield* Idempotency.fingerprint({ plan_id: "p", amount: "100.00" }),
          yield* Idempotency.fingerprint({ plan_id: "p", amount: "100.01" })
        )
        assert.notStrictEqual(
          yield* Idempotency.fingerprint({ payer_id: "a" }),
          yield* Idempotency.fingerprint({ payer_id: "b" })
        )
        assert.notStrictEqual(yield* Idempotency.fingerprint({ a: 1 }), yield* Idempotency.fingerprint({ a: "1" }))
        const samples = fc.sample(fc.tuple(fc.jsonValue(), fc.jsonValue()), { numRuns: 100, seed: 7 })
        for (const [a, b] of samples) {
          if (Idempotency.canonicalJson(a) === Idempotency.canonicalJson(b)) continue
          assert.notStrictEqual(yield* Idempotency.fingerprint(a), yield* Idempotency.fingerprint(b))
        }
      }))
  })

  describe("decide", () => {
    const fingerprint = "f".repeat(64)

    it("is New when no record exists", () => {
      assert.deepStrictEqual(Idempotency.decide(Option.none(), fingerprint), Result.succeed({ _tag: "New" }))
    })

    it("replays the stored resource on the same fingerprint", () => {
      const decision = Idempotency.decide(Option.some({ fingerprint, resourceId: "sub-1" }), fingerprint)
      assert.deepStrictEqual(decision, Result.succeed({ _tag: "Replay", resourceId: "sub-1" }))
    })

    it("conflicts on another fingerprint", () => {
      const decision = Idempotency.decide(Option.some({ fingerprint, resourceId: "sub-1" }), "0".repeat(64))
      if (Result.isSuccess(decision)) assert.fail("expected a conflict")
      assert.strictEqual(decision.failure._tag, "IdempotencyConflict")
      assert.strictEqual(decision.failure.message, "idempotency key conflicts with another request")
    })

    it.effect("replays the same body sent with keys in another order, conflicts on another body", () =>
      Effect.gen(function*() {
        const stored = { fingerprint: yield* Idempotency.fingerprint({ plan_id: "p", amount: "5.00" }), resourceId: "s" }
        const same = yield* Idempotency.fingerprint({ amount: "5.00", plan_id: "p" })
        const other = yield* Idempotency.fingerprint({ amount: "6.00", plan_id: "p" })
        assert.deepStrictEqual(Idempotency.decide(Option.some(stored), same), Result.succeed({ _tag: "Replay", resourceId: "s" }))
        assert.isTrue(Result.isFailure(Idempotency.decide(Option.some(stored), other)))
      }))
  })
})
