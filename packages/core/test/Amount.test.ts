import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as fc from "fast-check"
import * as Amount from "../src/Amount.js"

const ok = <A, E>(result: Result.Result<A, E>): A => {
  if (Result.isFailure(result)) assert.fail(`expected success, got ${String(result.failure)}`)
  return result.success
}

const failTag = <A, E extends { readonly _tag: string }>(result: Result.Result<A, E>): string => {
  if (Result.isSuccess(result)) assert.fail(`expected failure, got ${String(result.success)}`)
  return result.failure._tag
}

const kopecks = fc.bigInt({ min: 1n, max: 10n ** 15n })

describe("Amount", () => {
  describe("parseRub", () => {
    it.each([
      ["1000", 100_000n],
      ["1000.50", 100_050n],
      ["1000,50", 100_050n],
      ["1000.5", 100_050n],
      ["1000,5", 100_050n],
      ["0.01", 1n],
      ["0,01", 1n],
      ["007.00", 700n],
      ["500.00", 50_000n],
      ["24000", 2_400_000n]
    ])("accepts %j", (input, expected) => {
      assert.strictEqual(ok(Amount.parseRub(input)), expected)
    })

    it.each([
      "1000.505",
      "0.001",
      "+1",
      "-1",
      "-1.00",
      "1e3",
      "1E3",
      " 1",
      "1 ",
      "1 000",
      "1\u00a0000",
      "\t1",
      "",
      " ",
      "1.000,50",
      "1,000.50",
      "1'000",
      "₽100",
      "100р",
      "100 RUB",
      "$100",
      "1000.",
      "1000,",
      ".50",
      ",50",
      "1..5",
      "1.5.0",
      "0x10",
      "١٠٠",
      "１００",
      "Infinity",
      "NaN"
    ])("rejects %j as malformed", (input) => {
      assert.strictEqual(failTag(Amount.parseRub(input)), "AmountMalformed")
    })

    it.each([1000, 1000.5, 100_050n, null, undefined, true, {}, ["1000"]])(
      "rejects the non-string %s as malformed",
      (input) => {
        assert.strictEqual(failTag(Amount.parseRub(input)), "AmountMalformed")
      }
    )

    it.each(["0", "0.00", "0,00", "0.0", "000"])("rejects %j as not positive", (input) => {
      assert.strictEqual(failTag(Amount.parseRub(input)), "AmountNotPositive")
    })

    it("accepts zero when allowZero is set", () => {
      assert.strictEqual(ok(Amount.parseRub("0,00", { allowZero: true })), 0n)
      assert.strictEqual(failTag(Amount.parseRub("-0", { allowZero: true })), "AmountMalformed")
    })

    it("carries the spec's message", () => {
      const malformed = Amount.parseRub("1000.505")
      const zero = Amount.parseRub("0")
      assert.isTrue(Result.isFailure(malformed) && malformed.failure.message.includes("at most two decimals"))
      assert.isTrue(Result.isFailure(zero) && zero.failure.message === "amount must be greater than zero")
    })

    it("round-trips through formatRub", () => {
      fc.assert(fc.property(kopecks, (k) => ok(Amount.parseRub(Amount.formatRub(k))) === k))
    })

    it("reads a comma exactly like a point", () => {
      fc.assert(
        fc.property(fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.stringMatching(/^\d{1,2}$/), (whole, fraction) => {
          const comma = Amount.parseRub(`${whole},${fraction}`)
          const point = Amount.parseRub(`${whole}.${fraction}`)
          assert.deepStrictEqual(comma, point)
        })
      )
    })
  })

  describe("formatRub", () => {
    it.each([
      [100_050n, "1000.50"],
      [100_000n, "1000.00"],
      [1n, "0.01"],
      [10n, "0.10"],
      [0n, "0.00"],
      [-500n, "-5.00"],
      [-1n, "-0.01"],
      [2_400_000n, "24000.00"]
    ])("formats %s as %s", (input, expected) => {
      assert.strictEqual(Amount.formatRub(input), expected)
    })
  })

  describe("parseUsdt and formatUsdt", () => {
    it.each([
      ["12.5", 12_500_000n],
      ["12.500000", 12_500_000n],
      ["0.000001", 1n],
      ["100", 100_000_000n]
    ])("parses %j", (input, expected) => {
      assert.strictEqual(ok(Amount.parseUsdt(input)), expected)
    })

    it.each(["12,5", "0.0000001", "-1", "+1", "1e2", " 1", "", "1.", ".5", "1 000", 12.5])(
      "rejects %j as malformed",
      (input) => {
        assert.strictEqual(failTag(Amount.parseUsdt(input)), "UsdtAmountMalformed")
      }
    )

    it.each(["0", "0.000000"])("rejects %j as not positive", (input) => {
      assert.strictEqual(failTag(Amount.parseUsdt(input)), "AmountNotPositive")
    })

    it.each([
      [12_500_000n, "12.500000"],
      [0n, "0.000000"],
      [1n, "0.000001"],
      [-1_000_000n, "-1.000000"]
    ])("formats %s as %s", (input, expected) => {
      assert.strictEqual(Amount.formatUsdt(input), expected)
    })

    it("round-trips", () => {
      fc.assert(
        fc.property(fc.bigInt({ min: 1n, max: 10n ** 18n }), (micro) =>
          ok(Amount.parseUsdt(Amount.formatUsdt(micro))) === micro)
      )
    })
  })

  describe("parseRate and formatRate", () => {
    it.each([
      ["95.5", 95_500_000n],
      ["95", 95_000_000n],
      ["95.123456", 95_123_456n],
      ["0.000001", 1n]
    ])("parses %j", (input, expected) => {
      assert.strictEqual(ok(Amount.parseRate(input)), expected)
    })

    it("rejects malformed and zero rates", () => {
      assert.strictEqual(failTag(Amount.parseRate("95,5")), "UsdtAmountMalformed")
      assert.strictEqual(failTag(Amount.parseRate("95.1234567")), "UsdtAmountMalformed")
      assert.strictEqual(failTag(Amount.parseRate("0.0")), "AmountNotPositive")
    })

    it("takes rates up to 1000000 only (the store holds 14 digits before the point)", () => {
      assert.strictEqual(ok(Amount.parseRate("1000000")), Amount.maxRateMicro)
      assert.strictEqual(failTag(Amount.parseRate("1000000.000001")), "UsdtAmountMalformed")
      assert.strictEqual(failTag(Amount.parseRate("99999999999999")), "UsdtAmountMalformed")
    })

    it.each([
      [95_500_000n, "95.50"],
      [95_000_000n, "95.00"],
      [95_123_456n, "95.123456"],
      [95_123_450n, "95.12345"],
      [95_100_000n, "95.10"],
      [95_001_000n, "95.001"],
      [1n, "0.000001"]
    ])("formats %s as %s", (input, expected) => {
      assert.strictEqual(Amount.formatRate(input), expected)
    })

    it("round-trips", () => {
      fc.assert(
        fc.property(fc.bigInt({ min: 1n, max: Amount.maxRateMicro }), (micro) =>
          ok(Amount.parseRate(Amount.formatRate(micro))) === micro)
      )
    })
  })

  describe("rubToUsdt", () => {
    it.each([
      [100_000n, 100_000_000n, 10_000_000n], // 1000 RUB at 100 = 10 USDT
      [100_050n, 95_500_000n, 10_476_439n], // 1000.50 / 95.5 = 10.4764397...
      [1n, 95_500_000n, 104n], // 0.01 RUB = 0.0001047 USDT
      [0n, 95_500_000n, 0n]
    ])("converts %s kopecks at %s", (k, rate, expected) => {
      assert.strictEqual(Amount.rubToUsdt(k, rate), expected)
    })

    it("rejects misuse as a defect", () => {
      assert.throws(() => Amount.rubToUsdt(-1n, 95_500_000n), RangeError)
      assert.throws(() => Amount.rubToUsdt(1n, 0n), RangeError)
    })

    const rates = fc.bigInt({ min: 1n, max: 10n ** 12n })

    it("never over-credits and loses less than one micro-USDT", () => {
      fc.assert(
        fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), rates, (k, rate) => {
          const micro = Amount.rubToUsdt(k, rate)
          const exact = k * 10n ** 10n
          return micro * rate <= exact && exact < (micro + 1n) * rate
        })
      )
    })

    it("is monotonic in kopecks", () => {
      fc.assert(
        fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.bigInt({ min: 0n, max: 10n ** 6n }), rates, (k, d, r) =>
          Amount.rubToUsdt(k, r) <= Amount.rubToUsdt(k + d, r))
      )
    })
  })

  describe("helpers", () => {
    it("sums, bounds and builds exact units", () => {
      assert.strictEqual(Amount.sum([1n, 2n, 100_050n]), 100_053n)
      assert.strictEqual(Amount.sum([]), 0n)
      assert.strictEqual(Amount.min(3n, -1n), -1n)
      assert.strictEqual(Amount.max(3n, -1n), 3n)
      assert.strictEqual(Amount.rub(4000n), 400_000n)
      assert.strictEqual(Amount.usdt(5n), 5_000_000n)
    })
  })
})
