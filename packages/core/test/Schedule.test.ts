import { assert, describe, it } from "@effect/vitest"
import { Option } from "effect"
import * as fc from "fast-check"
import * as Instant from "../src/Instant.js"
import * as Schedule from "../src/Schedule.js"

const iso = (input: string): number => Option.getOrThrow(Instant.parseIso(input))
const at = (spec: Schedule.ScheduleSpec, anchor: string, n: number): string =>
  Instant.formatIso(Schedule.chargeAt(spec, iso(anchor), n))

const monthly: Schedule.ScheduleSpec = { schedule: "calendar", interval: "month" }
const quarterly: Schedule.ScheduleSpec = { schedule: "calendar", interval: "quarter" }
const yearly: Schedule.ScheduleSpec = { schedule: "calendar", interval: "year" }

// 2000-01-01 .. 2100-01-01
const anchors = fc.integer({ min: 946_684_800_000, max: 4_102_444_800_000 })
const calendarMonthly = fc.constantFrom<Schedule.Interval>("month", "quarter", "half_year", "year")

const timeOfDay = (ms: number): number => {
  const { hour, millisecond, minute, second } = Instant.moscowParts(ms)
  return ((hour * 60 + minute) * 60 + second) * 1000 + millisecond
}

describe("Schedule", () => {
  describe("calendar", () => {
    it("monthly from 31 January clamps to the month's last day", () => {
      assert.strictEqual(at(monthly, "2026-01-31T10:00+03:00", 0), "2026-01-31T07:00:00.000Z")
      assert.strictEqual(Schedule.chargeAt(monthly, iso("2026-01-31T10:00+03:00"), 1), iso("2026-02-28T10:00+03:00"))
      assert.strictEqual(Schedule.chargeAt(monthly, iso("2026-01-31T10:00+03:00"), 2), iso("2026-03-31T10:00+03:00"))
      assert.strictEqual(Schedule.chargeAt(monthly, iso("2026-01-31T10:00+03:00"), 3), iso("2026-04-30T10:00+03:00"))
    })

    it("monthly counts in Moscow time: 2026-01-31T22:30Z is already 1 February", () => {
      assert.strictEqual(Schedule.chargeAt(monthly, iso("2026-01-31T22:30Z"), 1), iso("2026-02-28T22:30Z"))
      assert.strictEqual(at(monthly, "2026-01-31T22:30Z", 1), "2026-02-28T22:30:00.000Z")
    })

    it("monthly from 31 January runs thirteen months from the anchor, not chained", () => {
      const expected = [
        "2026-02-28",
        "2026-03-31",
        "2026-04-30",
        "2026-05-31",
        "2026-06-30",
        "2026-07-31",
        "2026-08-31",
        "2026-09-30",
        "2026-10-31",
        "2026-11-30",
        "2026-12-31",
        "2027-01-31",
        "2027-02-28"
      ]
      const anchor = iso("2026-01-31T10:00+03:00")
      expected.forEach((date, i) => {
        assert.strictEqual(Schedule.chargeAt(monthly, anchor, i + 1), iso(`${date}T10:00+03:00`))
      })
    })

    it("quarterly from 30 November", () => {
      const anchor = iso("2025-11-30T12:00+03:00")
      assert.strictEqual(Schedule.chargeAt(quarterly, anchor, 1), iso("2026-02-28T12:00+03:00"))
      assert.strictEqual(Schedule.chargeAt(quarterly, anchor, 2), iso("2026-05-30T12:00+03:00"))
      assert.strictEqual(Schedule.chargeAt(quarterly, anchor, 3), iso("2026-08-30T12:00+03:00"))
    })

    it("yearly from 29 February", () => {
      const anchor = iso("2028-02-29T09:15+03:00")
      assert.strictEqual(Schedule.chargeAt(yearly, anchor, 1), iso("2029-02-28T09:15+03:00"))
      assert.strictEqual(Schedule.chargeAt(yearly, anchor, 2), iso("2030-02-28T09:15+03:00"))
      assert.strictEqual(Schedule.chargeAt(yearly, anchor, 4), iso("2032-02-29T09:15+03:00"))
    })

    it("half-yearly and daily", () => {
      const anchor = iso("2026-08-31T10:00+03:00")
      assert.strictEqual(
        Schedule.chargeAt({ schedule: "calendar", interval: "half_year" }, anchor, 1),
        iso("2027-02-28T10:00+03:00")
      )
      assert.strictEqual(
        Schedule.chargeAt({ schedule: "calendar", interval: "day" }, anchor, 3),
        iso("2026-09-03T10:00+03:00")
      )
    })

    it("charge n is strictly increasing in n", () => {
      fc.assert(
        fc.property(calendarMonthly, anchors, fc.integer({ min: 0, max: 240 }), (interval, anchor, n) => {
          const spec: Schedule.ScheduleSpec = { schedule: "calendar", interval }
          return Schedule.chargeAt(spec, anchor, n) < Schedule.chargeAt(spec, anchor, n + 1)
        })
      )
    })

    it("monthly charge keeps the anchor's day, clamped, and its Moscow time of day", () => {
      fc.assert(
        fc.property(anchors, fc.integer({ min: 0, max: 1200 }), (anchor, n) => {
          const charge = Schedule.chargeAt(monthly, anchor, n)
          const start = Instant.moscowParts(anchor)
          const target = Instant.moscowParts(charge)
          const months = start.year * 12 + start.month - 1 + n
          assert.strictEqual(target.year * 12 + target.month - 1, months)
          assert.strictEqual(target.day, Math.min(start.day, Instant.daysInMonth(target.year, target.month)))
          assert.strictEqual(timeOfDay(charge), timeOfDay(anchor))
        })
      )
    })
  })

  describe("fixed days", () => {
    it("30 days from 31 January is 2 March", () => {
      assert.strictEqual(
        Schedule.chargeAt({ schedule: "fixed_days", interval: "month" }, iso("2026-01-31T10:00Z"), 1),
        iso("2026-03-02T10:00Z")
      )
    })

    it("charge n is the anchor plus n periods of exact days", () => {
      const intervals = fc.constantFrom(...Schedule.intervals)
      fc.assert(
        fc.property(intervals, anchors, fc.integer({ min: 0, max: 1000 }), (interval, anchor, n) =>
          Schedule.chargeAt({ schedule: "fixed_days", interval }, anchor, n) - anchor ===
            n * Schedule.fixedDays(interval) * 86_400_000)
      )
    })
  })

  it("rejects a cycle number that is not a non-negative integer", () => {
    assert.throws(() => Schedule.chargeAt(monthly, 0, -1), RangeError)
    assert.throws(() => Schedule.chargeAt(monthly, 0, 1.5), RangeError)
  })

  describe("nextChargeAfter", () => {
    it("finds the first charge strictly after a time", () => {
      const anchor = iso("2026-01-31T10:00+03:00")
      assert.deepStrictEqual(Schedule.nextChargeAfter(monthly, anchor, anchor), {
        n: 1,
        at: iso("2026-02-28T10:00+03:00")
      })
      assert.deepStrictEqual(Schedule.nextChargeAfter(monthly, anchor, iso("2026-02-28T10:00+03:00")), {
        n: 2,
        at: iso("2026-03-31T10:00+03:00")
      })
    })

    it("agrees with chargeAt", () => {
      const specs = fc.record({
        schedule: fc.constantFrom<Schedule.ScheduleKind>("calendar", "fixed_days"),
        interval: fc.constantFrom(...Schedule.intervals)
      })
      fc.assert(
        fc.property(specs, anchors, fc.integer({ min: 0, max: 20 * 366 * 86_400_000 }), (spec, anchor, delta) => {
          const { at, n } = Schedule.nextChargeAfter(spec, anchor, anchor + delta)
          return n >= 1 && at === Schedule.chargeAt(spec, anchor, n) && at > anchor + delta &&
            (n === 1 || Schedule.chargeAt(spec, anchor, n - 1) <= anchor + delta)
        })
      )
    })
  })

  it("names periods in Russian and knows their constants", () => {
    assert.deepStrictEqual(Schedule.intervals.map(Schedule.intervalLabelRu), [
      "день",
      "месяц",
      "квартал",
      "полугодие",
      "год"
    ])
    assert.deepStrictEqual(Schedule.intervals.map(Schedule.fixedDays), [1, 30, 90, 180, 365])
    assert.deepStrictEqual(Schedule.intervals.map(Schedule.defaultCeilingKopecks), [
      Option.some(50_000n),
      Option.some(400_000n),
      Option.some(900_000n),
      Option.none(),
      Option.some(2_400_000n)
    ])
    assert.isTrue(Schedule.isInterval("half_year"))
    assert.isFalse(Schedule.isInterval("week"))
  })
})
