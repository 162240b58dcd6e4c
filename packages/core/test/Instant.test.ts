import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import * as fc from "fast-check"
import * as Instant from "../src/Instant.js"

const iso = (input: string): number => Option.getOrThrow(Instant.parseIso(input))

// 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z
const instants = fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_999 })

describe("Instant", () => {
  it("formats epoch milliseconds as UTC ISO", () => {
    assert.strictEqual(Instant.formatIso(0), "1970-01-01T00:00:00.000Z")
    assert.strictEqual(Instant.formatIso(1_772_262_000_000), "2026-02-28T07:00:00.000Z")
    assert.strictEqual(Instant.formatIso(1_763_712_000_123), "2025-11-21T08:00:00.123Z")
  })

  it("formats as Date.prototype.toISOString does, whatever came before", () => {
    // Whole milliseconds from 1970 to 9999 are written by hand, others by Effect's DateTime; the
    // last instant written is remembered, so each instant comes after another (or the same).
    const edges = [0, 1, 999, 86_399_999, 86_400_000, 951_782_400_000, 4_107_542_399_999, 253_402_300_799_999, 253_402_300_800_000, -1, -62_135_596_800_000, 0.5, 1_772_262_000_000.25]
    const any = fc.oneof(instants, fc.integer({ min: 0, max: 253_402_300_799_999 }), fc.constantFrom(...edges))
    fc.assert(fc.property(fc.array(any, { minLength: 1, maxLength: 4 }), (sequence) =>
      sequence.every((ms) => Instant.formatIso(ms) === new Date(ms).toISOString())
    ), { numRuns: 20_000 })
  })

  describe("parseIso", () => {
    it.each([
      ["2026-02-28T07:00:00.000Z", 1_772_262_000_000],
      ["2026-02-28T07:00:00Z", 1_772_262_000_000],
      ["2026-02-28T07:00Z", 1_772_262_000_000],
      ["2026-02-28T10:00:00+03:00", 1_772_262_000_000],
      ["2026-02-28T10:00+03:00", 1_772_262_000_000],
      ["2026-02-28T02:30:00-04:30", 1_772_262_000_000],
      ["2026-02-28T07:00:00.5Z", 1_772_262_000_500],
      ["2026-02-28T07:00:00.123456789Z", 1_772_262_000_123],
      ["1970-01-01T00:00:00Z", 0],
      ["1969-12-31T23:59:59.999Z", -1],
      ["2028-02-29T00:00:00Z", Date.UTC(2028, 1, 29)]
    ])("parses %j", (input, expected) => {
      assert.deepStrictEqual(Instant.parseIso(input), Option.some(expected))
    })

    it.each([
      "",
      "garbage",
      "2026-02-28",
      "2026-02-28 07:00:00Z",
      "2026-02-28T07:00:00",
      "2026-02-30T07:00:00Z",
      "2027-02-29T07:00:00Z",
      "2026-13-01T07:00:00Z",
      "2026-00-01T07:00:00Z",
      "2026-02-28T24:00:00Z",
      "2026-02-28T07:60:00Z",
      "2026-02-28T07:00:60Z",
      "2026-02-28T07:00:00+0300",
      "2026-02-28T07:00:00+24:00",
      "2026-02-28T07:00:00.Z",
      " 2026-02-28T07:00:00Z",
      "2026-02-28T07:00:00Z ",
      "Sat, 28 Feb 2026 07:00:00 GMT",
      "1772262000000"
    ])("rejects %j", (input) => {
      assert.isTrue(Option.isNone(Instant.parseIso(input)))
    })

    it("round-trips formatIso", () => {
      fc.assert(fc.property(instants, (ms) => iso(Instant.formatIso(ms)) === ms))
    })
  })

  it("converts to and from Unix seconds", () => {
    assert.strictEqual(Instant.toUnixSeconds(1_763_712_000_999), 1_763_712_000)
    assert.strictEqual(Instant.toUnixSeconds(-1), -1)
    assert.strictEqual(Instant.fromUnixSeconds(1_763_712_000), 1_763_712_000_000)
  })

  describe("civil dates", () => {
    it.each([
      [1970, 1, 1, 0],
      [1969, 12, 31, -1],
      [2000, 3, 1, 11_017],
      [2026, 2, 28, 20_512],
      [2028, 2, 29, 21_243],
      [1, 1, 1, -719_162]
    ])("%i-%i-%i is day %i", (year, month, day, days) => {
      assert.strictEqual(Instant.daysFromCivil(year, month, day), days)
      assert.deepStrictEqual(Instant.civilFromDays(days), { year, month, day })
    })

    it("agrees with the platform calendar", () => {
      // Date.UTC reads years 0-99 as 1900-1999, so the oracle starts in year 326.
      fc.assert(
        fc.property(fc.integer({ min: -600_000, max: 2_000_000 }), (days) => {
          const { day, month, year } = Instant.civilFromDays(days)
          return Date.UTC(year, month - 1, day) === days * Instant.DAY_MS &&
            Instant.daysFromCivil(year, month, day) === days
        })
      )
    })

    it("knows month lengths and leap years", () => {
      assert.strictEqual(Instant.daysInMonth(2026, 1), 31)
      assert.strictEqual(Instant.daysInMonth(2026, 2), 28)
      assert.strictEqual(Instant.daysInMonth(2028, 2), 29)
      assert.strictEqual(Instant.daysInMonth(1900, 2), 28)
      assert.strictEqual(Instant.daysInMonth(2000, 2), 29)
      assert.strictEqual(Instant.daysInMonth(2026, 4), 30)
      assert.strictEqual(Instant.daysInMonth(2026, 12), 31)
    })
  })

  describe("Moscow time", () => {
    it("is UTC+03:00", () => {
      assert.strictEqual(Instant.MOSCOW_OFFSET_MS, 10_800_000)
    })

    it("reads wall-clock fields, crossing midnight", () => {
      assert.deepStrictEqual(Instant.moscowParts(iso("2026-01-31T22:30:15.250Z")), {
        year: 2026,
        month: 2,
        day: 1,
        hour: 1,
        minute: 30,
        second: 15,
        millisecond: 250
      })
      assert.deepStrictEqual(Instant.moscowParts(iso("2025-12-31T21:00:00Z")), {
        year: 2026,
        month: 1,
        day: 1,
        hour: 0,
        minute: 0,
        second: 0,
        millisecond: 0
      })
      assert.deepStrictEqual(Instant.moscowParts(-10_800_001), {
        year: 1969,
        month: 12,
        day: 31,
        hour: 23,
        minute: 59,
        second: 59,
        millisecond: 999
      })
    })

    it("builds instants from wall-clock fields", () => {
      const parts = { year: 2026, month: 2, day: 28, hour: 10, minute: 0, second: 0, millisecond: 0 }
      assert.strictEqual(Instant.fromMoscowParts(parts), iso("2026-02-28T07:00:00Z"))
    })

    it("round-trips every instant", () => {
      fc.assert(fc.property(instants, (ms) => Instant.fromMoscowParts(Instant.moscowParts(ms)) === ms))
    })
  })
})
