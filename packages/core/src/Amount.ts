/**
 * Exact money: parsing of merchant notation and formatting for the API, on `bigint` only.
 *
 * RUB amounts are integer kopecks (1/100), USDT amounts integer micro-units (1/1,000,000) and the
 * USDT/RUB rate integer micro-roubles per 1 USDT. Rouble input accepts `1000`, `1000.50`, `1000,50`
 * (at most two decimals) and is always formatted with two decimals after a point; USDT input and
 * rates use a point and at most six decimals. Conversion has exactly one rounding rule: roubles to
 * USDT round DOWN to a whole micro-USDT (`rubToUsdt`), so a merchant is never credited more than
 * the roubles are worth; the remainder below one micro-USDT stays with the platform.
 */
import { Result } from "effect"
import { AmountMalformed, AmountNotPositive, UsdtAmountMalformed } from "./Errors.js"

const RUB_PATTERN = /^(\d+)(?:[.,](\d{1,2}))?$/
const MICRO_PATTERN = /^(\d+)(?:\.(\d{1,6}))?$/

const KOPECKS_PER_RUB = 100n
const MICRO_PER_UNIT = 1_000_000n
/** kopecks * 10^10 / (micro-RUB per USDT) = micro-USDT: 10^6 (micro-USDT) * 10^6 (micro-RUB) / 10^2 (kopecks). */
const RUB_TO_USDT_SCALE = 10_000_000_000n

/** Options of the rouble parser. */
export interface ParseRubOptions {
  /** Accept `0` / `0.00` (for filters and balances); amounts to charge must stay positive. */
  readonly allowZero?: boolean | undefined
  /** The request field the errors name (default `amount`). */
  readonly field?: string | undefined
}

const parseScaled = (
  input: unknown,
  pattern: RegExp,
  decimals: number
): bigint | undefined => {
  if (typeof input !== "string") return undefined
  const match = pattern.exec(input)
  if (match === null) return undefined
  const whole = match[1] ?? "0"
  const fraction = (match[2] ?? "").padEnd(decimals, "0")
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction)
}

const formatScaled = (value: bigint, decimals: number): string => {
  const negative = value < 0n
  const abs = negative ? -value : value
  const unit = 10n ** BigInt(decimals)
  const whole = (abs / unit).toString()
  const fraction = (abs % unit).toString().padStart(decimals, "0")
  return `${negative ? "-" : ""}${whole}.${fraction}`
}

/** Parses merchant rouble notation (`1000`, `1000.50`, `1000,50`) into kopecks; rejects zero unless allowed. */
export const parseRub = (
  input: unknown,
  options?: ParseRubOptions
): Result.Result<bigint, AmountMalformed | AmountNotPositive> => {
  const kopecks = parseScaled(input, RUB_PATTERN, 2)
  const field = options?.field ?? "amount"
  if (kopecks === undefined) return Result.fail(AmountMalformed.of(field))
  if (kopecks === 0n && options?.allowZero !== true) return Result.fail(AmountNotPositive.of(field))
  return Result.succeed(kopecks)
}

/** Formats kopecks as the API's rouble string: always two decimals after a point (`1000.50`, `-5.00`). */
export const formatRub = (kopecks: bigint): string => formatScaled(kopecks, 2)

/** Parses a positive USDT amount (`12.5`, point only, at most six decimals) into micro-USDT; the errors name `field` (default `amount_usdt`). */
export const parseUsdt = (input: unknown, field = "amount_usdt"): Result.Result<bigint, UsdtAmountMalformed | AmountNotPositive> => {
  const micro = parseScaled(input, MICRO_PATTERN, 6)
  if (micro === undefined) return Result.fail(UsdtAmountMalformed.of(field))
  if (micro === 0n) return Result.fail(AmountNotPositive.of(field))
  return Result.succeed(micro)
}

/** Formats micro-USDT with exactly six decimals (`12.500000`, `0.000000`, `-1.000000`). */
export const formatUsdt = (micro: bigint): string => formatScaled(micro, 6)

/** The largest USDT amount an amount field holds, in micro-USDT: 14 digits before the point, 6 after (99999999999999.999999). */
export const maxUsdtMicro = 10n ** 20n - 1n

/** The highest USDT/RUB rate taken, in micro-RUB per USDT (1 000 000 RUB; the store holds 14 digits before the point). */
export const maxRateMicro = 1_000_000_000_000n

/** What a rate must be, for messages. */
export const rateRule = `a decimal greater than zero and at most ${maxRateMicro / 1_000_000n}, with at most six decimals`

/** Whether a rate in micro-RUB per USDT is within `rateRule`: above zero and at most `maxRateMicro`. */
export const isRate = (micro: bigint): boolean => micro > 0n && micro <= maxRateMicro

/**
 * Parses a positive USDT/RUB rate (`95.5`, point only, at most six decimals, at most `maxRateMicro`)
 * into micro-RUB per USDT; a higher one is malformed.
 */
export const parseRate = (input: unknown): Result.Result<bigint, UsdtAmountMalformed | AmountNotPositive> => {
  const rate = parseUsdt(input, "rate")
  return Result.isSuccess(rate) && rate.success > maxRateMicro ? Result.fail(UsdtAmountMalformed.of("rate")) : rate
}

/** Formats a rate with two to six decimals, dropping trailing zeros beyond the second (`95.50`, `95.123456`). */
export const formatRate = (micro: bigint): string => formatScaled(micro, 6).replace(/(\.\d\d\d*?)0+$/, "$1")

/**
 * Converts kopecks to micro-USDT at a rate in micro-RUB per USDT, rounding DOWN to a whole micro-USDT.
 * Guarantees `result * rate <= kopecks * 10^10 < (result + 1) * rate`. Negative kopecks or a rate
 * that is not positive are programmer errors and throw a `RangeError` (a defect, not a failure).
 */
export const rubToUsdt = (kopecks: bigint, rateMicro: bigint): bigint => {
  if (kopecks < 0n) throw new RangeError(`rubToUsdt: kopecks must be >= 0, got ${kopecks}`)
  if (rateMicro <= 0n) throw new RangeError(`rubToUsdt: rate must be > 0, got ${rateMicro}`)
  return (kopecks * RUB_TO_USDT_SCALE) / rateMicro
}

/** Kopecks of whole roubles: `rub(4000n)` is `400000n`. */
export const rub = (roubles: bigint): bigint => roubles * KOPECKS_PER_RUB

/** Micro-USDT of whole USDT: `usdt(5n)` is `5000000n`. */
export const usdt = (units: bigint): bigint => units * MICRO_PER_UNIT

/** Exact sum of minor units (`0n` for none). */
export const sum = (values: Iterable<bigint>): bigint => {
  let total = 0n
  for (const value of values) total += value
  return total
}

/** The smaller of two amounts. */
export const min = (a: bigint, b: bigint): bigint => (a < b ? a : b)

/** The larger of two amounts. */
export const max = (a: bigint, b: bigint): bigint => (a > b ? a : b)
