/**
 * `jsonRows`, the one JSON parameter of the batched statements: its `Date` columns are written as
 * ISO text by hand (off `JSON.stringify`'s slow path), and the text must stay what `JSON.stringify`
 * wrote before, so PostgreSQL reads the same rows. And `fromNumeric`, which reads every amount of
 * every row read back to exact minor units.
 */
import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import { fromNumeric, jsonRows, toNumeric } from "../src/PgSupport.js"

describe("PgSupport.jsonRows", () => {
  it("writes rows as JSON.stringify does, Date columns included", () => {
    // Instants drawn from a few, as a row's created_at and updated_at often are the same one (the
    // formatter remembers the last), and from anywhere in years 1 to 9999.
    const instant = fc.oneof(
      fc.constantFrom(0, 1_772_262_000_000, 1_772_262_000_001, 253_402_300_799_999),
      fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_999 })
    )
    const value = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      instant.map((ms) => new Date(ms)),
      fc.constant(new Date(Number.NaN)),
      fc.dictionary(fc.string(), instant.map((ms) => new Date(ms)))
    )
    fc.assert(fc.property(fc.array(fc.dictionary(fc.string(), value)), (rows) => {
      expect(jsonRows(rows)).toBe(JSON.stringify(rows))
    }), { numRuns: 2_000 })
  })

  it("leaves a Date of a subclass, or with a toJSON of its own, to write itself", () => {
    class Stamp extends Date {
      override toJSON() {
        return "stamp"
      }
    }
    const own = Object.assign(new Date(0), { toJSON: () => "own" })
    const rows = [{ a: new Stamp(0), b: own, c: new Date(0) }]
    expect(jsonRows(rows)).toBe(`[{"a":"stamp","b":"own","c":"1970-01-01T00:00:00.000Z"}]`)
  })

  it("keeps the rows it is given as they are", () => {
    const row = { id: "a", created_at: new Date(1_772_262_000_000), paid_at: null }
    expect(jsonRows([row])).toBe(`[{"id":"a","created_at":"2026-02-28T07:00:00.000Z","paid_at":null}]`)
    expect(row.created_at).toBeInstanceOf(Date)
  })

  it("writes a lone surrogate as U+FFFD, in a row with a Date too", () => {
    const rows = [{ note: "a\ud800b", at: new Date(0) }]
    expect(jsonRows(rows)).toBe(`[{"note":"a\ufffdb","at":"1970-01-01T00:00:00.000Z"}]`)
  })
})

/** `fromNumeric` as it was before round eighteen of docs/performance.md (a power of ten and a product per call). */
const fromNumericBefore = (value: string, scale: number): bigint => {
  const negative = value.startsWith("-")
  const [whole = "0", fraction = ""] = (negative ? value.slice(1) : value).split(".")
  const padded = (fraction + "0".repeat(scale)).slice(0, scale)
  const minor = BigInt(whole) * 10n ** BigInt(scale) + (scale === 0 ? 0n : BigInt(padded))
  return negative ? -minor : minor
}

/** Text as PostgreSQL writes a `numeric`: an optional minus, digits, and an optional fraction of any length. */
const numericText = fc.tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.option(fc.stringMatching(/^[0-9]{1,12}$/), { nil: undefined }))
  .map(([negative, whole, fraction]) => `${negative ? "-" : ""}${whole}${fraction === undefined ? "" : `.${fraction}`}`)

describe("PgSupport.fromNumeric", () => {
  it("reads numeric text back to minor units, exactly, whatever the fraction's length", () => {
    expect(fromNumeric("1000.50", 2)).toBe(100050n)
    expect(fromNumeric("0.01", 2)).toBe(1n)
    expect(fromNumeric("7", 2)).toBe(700n)
    expect(fromNumeric("7.5", 6)).toBe(7500000n)
    expect(fromNumeric("12345678901234.123456", 6)).toBe(12345678901234123456n)
    expect(fromNumeric("1.239", 2)).toBe(123n)
    expect(fromNumeric("42.99", 0)).toBe(42n)
    expect(fromNumeric(".5", 2)).toBe(50n)
    expect(fromNumeric(3, 2)).toBe(300n)
    expect(fromNumeric(5n, 6)).toBe(5000000n)
  })

  it("keeps the sign; digits past the scale are dropped toward zero", () => {
    expect(fromNumeric("-0.5", 2)).toBe(-50n)
    expect(fromNumeric("-1234.000001", 6)).toBe(-1234000001n)
    expect(fromNumeric("-0.001", 2)).toBe(0n)
    expect(fromNumeric("-1.239", 2)).toBe(-123n)
  })

  it("refuses what is not a numeric's digits, and a scale that is not a whole number of decimals", () => {
    expect(() => fromNumeric("NaN", 2)).toThrow(SyntaxError)
    expect(() => fromNumeric("1e+21", 2)).toThrow(SyntaxError)
    expect(() => fromNumeric("1.5", -1)).toThrow(RangeError)
    expect(() => fromNumeric("1.5", 2.5)).toThrow(RangeError)
  })

  it("is the inverse of toNumeric", () => {
    fc.assert(fc.property(fc.bigInt({ min: -(10n ** 22n), max: 10n ** 22n }), fc.constantFrom(0, 2, 6), (minor, scale) => {
      expect(fromNumeric(toNumeric(minor, scale), scale)).toBe(minor)
    }))
  })

  it("reads every numeric text as the power-of-ten version did", () => {
    fc.assert(fc.property(numericText, fc.constantFrom(0, 2, 6), (text, scale) => {
      expect(fromNumeric(text, scale)).toBe(fromNumericBefore(text, scale))
    }), { numRuns: 2000 })
  })
})
