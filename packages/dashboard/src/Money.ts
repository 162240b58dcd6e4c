/**
 * Exact amounts in the browser: decimal strings from the API to integer minor units (`bigint`)
 * and back, so sums and comparisons never go through floating point.
 */

/** Kopecks of a decimal rouble string ("1000.50" → 100050n). */
export const kopecks = (amount: string): bigint => {
  const [whole = "0", fraction = ""] = amount.split(".")
  return BigInt(whole) * 100n + BigInt(fraction.padEnd(2, "0").slice(0, 2))
}

/** A decimal rouble string of kopecks (100050n → "1000.50"). */
export const rubles = (k: bigint): string => `${k / 100n}.${String(k % 100n).padStart(2, "0")}`

/** A USDT amount in micro-USDT, or null when it is not a decimal with at most six digits after the point. */
export const microUsdt = (text: string): bigint | null => {
  const match = /^(\d+)(?:\.(\d{1,6}))?$/.exec(text.trim())
  if (match === null) return null
  return BigInt(match[1]!) * 1_000_000n + BigInt((match[2] ?? "").padEnd(6, "0"))
}

/**
 * A balance in micro-USDT, which may be negative ("-10.000000": a refund or chargeback after a
 * payout's hold took more than was left), or null when it is not such a decimal. An amount typed
 * in is read with `microUsdt`, which refuses a sign.
 */
export const signedMicroUsdt = (text: string): bigint | null => {
  const trimmed = text.trim()
  const negative = /^-\d/.test(trimmed)
  const magnitude = microUsdt(negative ? trimmed.slice(1) : trimmed)
  return magnitude === null ? null : negative ? -magnitude : magnitude
}
