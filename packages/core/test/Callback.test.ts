import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Callback from "../src/Callback.js"

const second = 1_000
const minute = 60 * second

/** Offset of attempt `n` (1-based) from the first attempt when every earlier attempt failed. */
const offsetOf = (attempt: number): number => {
  let offset = 0
  for (let failed = 1; failed < attempt; failed++) {
    const delay = Callback.retryDelayMs(failed)
    if (delay === null) assert.fail(`no attempt follows failed attempt ${failed}`)
    offset += delay
  }
  return offset
}

describe("Callback", () => {
  describe("retryDelayMs", () => {
    it.each([
      [1, 30 * second],
      [2, 1 * minute],
      [3, 2 * minute],
      [4, 4 * minute],
      [5, 8 * minute],
      [6, 16 * minute],
      [7, 32 * minute]
    ])("after failed attempt %i waits %i ms", (failed, expected) => {
      assert.strictEqual(Callback.retryDelayMs(failed), expected)
    })

    it("is 30 s x 2^(n-1) for every failed attempt before the last", () => {
      for (let n = 1; n < Callback.maxAttempts; n++) {
        assert.strictEqual(Callback.retryDelayMs(n), 30 * second * 2 ** (n - 1))
      }
    })

    it("schedules nothing after the 8th failed attempt or later", () => {
      assert.isNull(Callback.retryDelayMs(8))
      fc.assert(fc.property(fc.integer({ min: 8, max: 10_000 }), (n) => Callback.retryDelayMs(n) === null))
    })

    it("doubles from one failed attempt to the next", () => {
      for (let n = 2; n < Callback.maxAttempts; n++) {
        assert.strictEqual(Callback.retryDelayMs(n), 2 * (Callback.retryDelayMs(n - 1) ?? Number.NaN))
      }
    })
  })

  describe("limits", () => {
    it("allows 8 attempts, each answered within 10 s", () => {
      assert.strictEqual(Callback.maxAttempts, 8)
      assert.strictEqual(Callback.timeoutMs, 10_000)
      assert.strictEqual(Callback.baseDelayMs, 30_000)
    })

    it("places attempts 1..8 at 0, 30 s, 90 s, 210 s, 450 s, 930 s, 1890 s, 3810 s from the first", () => {
      const offsets = Array.from({ length: Callback.maxAttempts }, (_, i) => offsetOf(i + 1))
      assert.deepStrictEqual(
        offsets,
        [0, 30, 90, 210, 450, 930, 1890, 3810].map((s) => s * second)
      )
    })

    it("makes the last attempt about an hour after the first", () => {
      const last = offsetOf(Callback.maxAttempts)
      assert.isAbove(last, 55 * minute)
      assert.isBelow(last, 65 * minute)
    })
  })

  describe("isSuccess", () => {
    it("is true for 200 to 299 and false around them", () => {
      for (const code of [200, 201, 202, 204, 250, 299]) assert.isTrue(Callback.isSuccess(code), String(code))
      for (const code of [0, 100, 199, 300, 301, 302, 304, 400, 404, 408, 429, 500, 502, 503, 504]) {
        assert.isFalse(Callback.isSuccess(code), String(code))
      }
    })

    it("is true exactly for 200..299 among all integer codes", () => {
      fc.assert(
        fc.property(fc.integer({ min: -1_000, max: 10_000 }), (code) =>
          Callback.isSuccess(code) === (code >= 200 && code <= 299))
      )
    })
  })
})
