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

describe("fromNumeric", () => {
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

  it("keeps the sign, and zero stays zero", () => {
    expect(fromNumeric("-0.5", 2)).toBe(-50n)
    expect(fromNumeric("-1234.000001", 6)).toBe(-1234000001n)
    expect(fromNumeric("0.00", 2)).toBe(0n)
    expect(fromNumeric("-0", 2)).toBe(0n)
  })

  it("is the inverse of toNumeric", () => {
    fc.assert(fc.property(fc.bigInt({ min: -(10n ** 22n), max: 10n ** 22n }), fc.constantFrom(0, 2, 6), (minor, scale) => {
      expect(fromNumeric(toNumeric(minor, scale), scale)).toBe(minor)
    }))
  })
})
