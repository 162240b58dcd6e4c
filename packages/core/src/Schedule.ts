/**
 * Charge times of subscriptions: pure functions from a plan's schedule, an anchor and a cycle number.
 *
 * Calendar plans (ceiling mode) count in Moscow wall time (UTC+03:00, no DST) from the anchor, never
 * by chaining: charge n is the anchor plus n periods (day, 1, 3, 6 or 12 months), with the day of
 * month clamped to the target month's last day and the Moscow time of day kept, so Jan 31 gives
 * Feb 28 (29), Mar 31, Apr 30. Fixed-day plans add exact multiples of 24 hours: 1, 30, 90, 180 or
 * 365 days per period. This module also holds the per-interval constants the spec names: the Russian
 * period labels used in messages and the default one-charge ceilings of ceiling-mode plans.
 */
import { Option } from "effect"
import { DAY_MS, daysInMonth, fromMoscowParts, moscowParts } from "./Instant.js"

/** Period of a plan, as the API spells it. */
export type Interval = "day" | "month" | "quarter" | "half_year" | "year"

/** `calendar`: Moscow calendar periods (ceiling-mode plans); `fixed_days`: fixed day counts. */
export type ScheduleKind = "calendar" | "fixed_days"

/** How a subscription's charges are spaced. */
export interface ScheduleSpec {
  readonly schedule: ScheduleKind
  readonly interval: Interval
}

/** Every interval, in increasing length. */
export const intervals: ReadonlyArray<Interval> = ["day", "month", "quarter", "half_year", "year"]

/** Whether a string is an interval of the API. */
export const isInterval = (input: unknown): input is Interval =>
  typeof input === "string" && (intervals as ReadonlyArray<string>).includes(input)

const FIXED_DAYS: Record<Interval, number> = { day: 1, month: 30, quarter: 90, half_year: 180, year: 365 }
const CALENDAR_MONTHS: Record<Exclude<Interval, "day">, number> = { month: 1, quarter: 3, half_year: 6, year: 12 }

const LABEL_RU: Record<Interval, string> = {
  day: "день",
  month: "месяц",
  quarter: "квартал",
  half_year: "полугодие",
  year: "год"
}

const DEFAULT_CEILING_KOPECKS: Partial<Record<Interval, bigint>> = {
  day: 50_000n,
  month: 400_000n,
  quarter: 900_000n,
  year: 2_400_000n
}

/** Days in one period of a fixed-day plan: 1, 30, 90, 180 or 365. */
export const fixedDays = (interval: Interval): number => FIXED_DAYS[interval]

/** Russian name of a period for messages: день, месяц, квартал, полугодие, год. */
export const intervalLabelRu = (interval: Interval): string => LABEL_RU[interval]

/** The spec's default one-charge ceiling of a ceiling-mode plan in kopecks; none for `half_year`. */
export const defaultCeilingKopecks = (interval: Interval): Option.Option<bigint> =>
  Option.fromNullishOr(DEFAULT_CEILING_KOPECKS[interval])

/** Moscow calendar date-time `months` months after `anchorMs`, day clamped, time of day kept. */
export const addMoscowMonths = (anchorMs: number, months: number): number => {
  const parts = moscowParts(anchorMs)
  const index = parts.year * 12 + (parts.month - 1) + months
  const year = Math.floor(index / 12)
  const month = index - year * 12 + 1
  return fromMoscowParts({ ...parts, year, month, day: Math.min(parts.day, daysInMonth(year, month)) })
}

/**
 * Time (epoch ms) of the n-th charge after the anchor; n = 0 is the anchor itself. A cycle number
 * that is not a non-negative integer is a programmer error and throws a `RangeError`.
 */
export const chargeAt = (spec: ScheduleSpec, anchorMs: number, n: number): number => {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`chargeAt: n must be a non-negative integer, got ${n}`)
  if (spec.schedule === "fixed_days") return anchorMs + n * FIXED_DAYS[spec.interval] * DAY_MS
  if (spec.interval === "day") return anchorMs + n * DAY_MS
  return addMoscowMonths(anchorMs, n * CALENDAR_MONTHS[spec.interval])
}

/** The first charge time strictly after `afterMs` and its cycle number (at least 1). */
export const nextChargeAfter = (
  spec: ScheduleSpec,
  anchorMs: number,
  afterMs: number
): { readonly n: number; readonly at: number } => {
  const periodMs = spec.schedule === "fixed_days"
    ? FIXED_DAYS[spec.interval] * DAY_MS
    : spec.interval === "day"
    ? DAY_MS
    : CALENDAR_MONTHS[spec.interval] * 28 * DAY_MS
  // Start near the answer from a lower bound of the period, then step to the exact cycle.
  let n = Math.max(1, Math.floor((afterMs - anchorMs) / periodMs))
  while (n > 1 && chargeAt(spec, anchorMs, n - 1) > afterMs) n--
  while (chargeAt(spec, anchorMs, n) <= afterMs) n++
  return { n, at: chargeAt(spec, anchorMs, n) }
}
