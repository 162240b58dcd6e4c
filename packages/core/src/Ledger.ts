/**
 * The ledger: every balance change of a terminal as an immutable signed entry.
 *
 * Balances are sums of entries per (terminal, account). Live paid payments credit
 * `usdt_available` (instant conversion) or `rub_pending` (scheduled conversion); the
 * conversion moves `rub_pending` to `usdt_available`; payouts move `usdt_available` to
 * `usdt_hold` and out. Sandbox payments never write entries.
 */

export type Account = "rub_pending" | "usdt_available" | "usdt_hold"

export type Kind =
  | "payment_credit"
  | "conversion"
  | "payout_hold"
  | "payout_release"
  | "payout_sent"
  | "refund"
  | "chargeback"

/** One entry. `amount` is signed, in kopecks for RUB and micro-USDT for USDT. */
export interface Entry {
  readonly id: string
  readonly terminalId: string
  readonly account: Account
  readonly currency: "RUB" | "USDT"
  readonly amount: bigint
  readonly kind: Kind
  readonly refId: string
  readonly createdAt: number
}

/** The currency each account is kept in. */
export const currencyOf = (account: Account): "RUB" | "USDT" => account === "rub_pending" ? "RUB" : "USDT"

/** Balances of a terminal. */
export interface Balance {
  readonly rubPending: bigint
  readonly usdtAvailable: bigint
  readonly usdtHold: bigint
}
