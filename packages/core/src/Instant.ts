/**
 * Instants as integer epoch milliseconds, and the civil-calendar arithmetic the core needs on them.
 *
 * The core never reads the wall clock (time comes from Effect's `Clock`) and never builds a `Date`;
 * this module converts between epoch milliseconds, ISO 8601 strings, Unix seconds and civil dates.
 * Civil dates use Howard Hinnant's `days_from_civil` / `civil_from_days` on the proleptic Gregorian
 * calendar. Moscow time is UTC+03:00 all year round (no daylight saving since 2014), so Moscow wall
 * time is a fixed offset from UTC and needs no time-zone database.
 */
import { DateTime, Option } from "effect"

/** Milliseconds in one day (24 hours). */
export const DAY_MS = 86_400_000

/** Offset of Moscow time from UTC: +03:00, no daylight saving. */
export const MOSCOW_OFFSET_MS = 3 * 3_600_000

/** Wall-clock fields of an instant; `month` is 1-12. */
export interface CivilParts {
  readonly year: number
  readonly month: number
  readonly day: number
  readonly hour: number
  readonly minute: number
  readonly second: number
  readonly millisecond: number
}

/** A civil date; `month` is 1-12. */
export interface CivilDate {
  readonly year: number
  readonly month: number
  readonly day: number
}

/** The last instant from 1970 that `formatIso` writes itself: 9999-12-31T23:59:59.999Z. */
const LAST_FOUR_DIGIT_YEAR_MS = 253_402_300_799_999

/** "00" to "99". */
const twoDigits: ReadonlyArray<string> = Array.from({ length: 100 }, (_, n) => (n < 10 ? "0" : "") + n)

/** The instant `formatIso` wrote last and its text: rows and views written together share their instants. */
let lastMs = Number.NaN
let lastIso = ""

/**
 * Formats epoch milliseconds as UTC ISO 8601 (`2026-02-28T07:00:00.000Z`), as
 * `Date.prototype.toISOString` does. Whole milliseconds from 1970 to 9999 (the instants the product
 * makes) are written here with `civilFromDays`, in about a fifth of the time Effect's
 * `DateTime.formatIso` takes (`bench/micro.ts`); others go through `DateTime`, which fails on an
 * invalid instant (NaN, ±Infinity) as before.
 */
export const formatIso = (ms: number): string => {
  if (ms === lastMs) return lastIso
  if (!(Number.isInteger(ms) && ms >= 0 && ms <= LAST_FOUR_DIGIT_YEAR_MS)) return DateTime.formatIso(DateTime.makeUnsafe(ms))
  const days = Math.floor(ms / DAY_MS)
  const { year, month, day } = civilFromDays(days)
  const inDay = ms - days * DAY_MS
  const hour = Math.floor(inDay / 3_600_000)
  const minute = Math.floor(inDay / 60_000) % 60
  const second = Math.floor(inDay / 1000) % 60
  const millisecond = inDay % 1000
  const milli = millisecond < 10 ? `00${millisecond}` : millisecond < 100 ? `0${millisecond}` : `${millisecond}`
  const text = `${twoDigits[Math.floor(year / 100)]}${twoDigits[year % 100]}-${twoDigits[month]}-${twoDigits[day]}` +
    `T${twoDigits[hour]}:${twoDigits[minute]}:${twoDigits[second]}.${milli}Z`
  lastMs = ms
  lastIso = text
  return text
}

/** ISO 8601 in Moscow time with its offset (`2026-02-28T10:00:00.000+03:00`), for display. */
export const formatMoscow = (ms: number): string => formatIso(ms + MOSCOW_OFFSET_MS).replace(/Z$/, "+03:00")

/** Whole Unix seconds of an instant, rounded down. */
export const toUnixSeconds = (ms: number): number => Math.floor(ms / 1000)

/** Epoch milliseconds of Unix seconds. */
export const fromUnixSeconds = (seconds: number): number => seconds * 1000

/** Whether `year` is a Gregorian leap year. */
export const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0

/** Number of days in a month (`month` 1-12). */
export const daysInMonth = (year: number, month: number): number =>
  month === 2 ? (isLeapYear(year) ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31

/** Days since 1970-01-01 of a civil date (Hinnant's `days_from_civil`). */
export const daysFromCivil = (year: number, month: number, day: number): number => {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146_097 + doe - 719_468
}

/** Civil date of a day count since 1970-01-01 (Hinnant's `civil_from_days`). */
export const civilFromDays = (days: number): CivilDate => {
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const doe = z - era * 146_097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day }
}

/** Civil fields of an instant shifted by a fixed offset from UTC. */
export const partsAtOffset = (ms: number, offsetMs: number): CivilParts => {
  const local = ms + offsetMs
  const days = Math.floor(local / DAY_MS)
  let rest = local - days * DAY_MS
  const hour = Math.floor(rest / 3_600_000)
  rest -= hour * 3_600_000
  const minute = Math.floor(rest / 60_000)
  rest -= minute * 60_000
  const second = Math.floor(rest / 1000)
  return { ...civilFromDays(days), hour, minute, second, millisecond: rest - second * 1000 }
}

/** Epoch milliseconds of civil fields read at a fixed offset from UTC; fields are not range-checked. */
export const fromPartsAtOffset = (parts: CivilParts, offsetMs: number): number =>
  daysFromCivil(parts.year, parts.month, parts.day) * DAY_MS +
  parts.hour * 3_600_000 +
  parts.minute * 60_000 +
  parts.second * 1000 +
  parts.millisecond -
  offsetMs

/** Moscow wall-clock fields of an instant. */
export const moscowParts = (ms: number): CivilParts => partsAtOffset(ms, MOSCOW_OFFSET_MS)

/** Epoch milliseconds of a Moscow wall-clock time; fields are not range-checked. */
export const fromMoscowParts = (parts: CivilParts): number => fromPartsAtOffset(parts, MOSCOW_OFFSET_MS)

const ISO_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:Z|([+-])(\d{2}):(\d{2}))$/

/**
 * Parses an ISO 8601 date-time with `Z` or a `±HH:MM` offset (`2026-01-31T10:00:00+03:00`); seconds
 * and fractions are optional, fractions beyond milliseconds are truncated. Anything else is none.
 */
export const parseIso = (input: string): Option.Option<number> => {
  const m = ISO_PATTERN.exec(input)
  if (m === null) return Option.none()
  const [, y, mo, d, h, mi, s, frac, sign, oh, om] = m
  const year = Number(y)
  const month = Number(mo)
  const day = Number(d)
  const hour = Number(h)
  const minute = Number(mi)
  const second = s === undefined ? 0 : Number(s)
  const millisecond = frac === undefined ? 0 : Number(frac.slice(0, 3).padEnd(3, "0"))
  const offsetHours = oh === undefined ? 0 : Number(oh)
  const offsetMinutes = om === undefined ? 0 : Number(om)
  const valid = month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month) && hour <= 23 &&
    minute <= 59 && second <= 59 && offsetHours <= 23 && offsetMinutes <= 59
  if (!valid) return Option.none()
  const offsetMs = (sign === "-" ? -1 : 1) * (offsetHours * 3_600_000 + offsetMinutes * 60_000)
  return Option.some(fromPartsAtOffset({ year, month, day, hour, minute, second, millisecond }, offsetMs))
}
