/**
 * Money movements of live payments on the ledger, in the caller's transaction.
 *
 * A live paid payment credits the merchant amount: converted to USDT at the current rate in
 * `instant` mode, or kept as roubles until the scheduled conversion. Refund and chargeback
 * reverse exactly what was credited. Sandbox payments never reach this module.
 */
import { Clock, Effect } from "effect"
import { rubToUsdt } from "../Amount.js"
import type { Kind } from "../Ledger.js"
import type { Payment, Settlement } from "../Payment.js"
import type { Terminal } from "../Terminal.js"
import { Entropy } from "../ports/Entropy.js"
import { LedgerRepository } from "../ports/LedgerRepository.js"
import { RateSource } from "../ports/RateSource.js"
import * as Traced from "../Traced.js"

/** Credits a live paid payment and returns its settlement. */
export const credit = Effect.fnUntraced(function*(
  terminal: Terminal,
  payment: Payment,
  merchantAmount: bigint
) {
  const ledger = yield* LedgerRepository
  const entropy = yield* Entropy
  // At the payment's own time: an instant conversion's `converted_at` is its `paid_at` (a second read
  // of the clock could be a millisecond later).
  const now = payment.paidAt ?? (yield* Clock.currentTimeMillis)
  if (terminal.conversionMode === "instant") {
    const { rate } = yield* (yield* RateSource).current(terminal.id)
    const usdt = rubToUsdt(merchantAmount, rate)
    yield* ledger.append([{
      id: yield* entropy.uuid,
      terminalId: terminal.id,
      account: "usdt_available",
      currency: "USDT",
      amount: usdt,
      kind: "payment_credit",
      refId: payment.id,
      createdAt: now
    }])
    return { merchantAmount, usdt, rate, convertedAt: now } satisfies Settlement
  }
  yield* ledger.append([{
    id: yield* entropy.uuid,
    terminalId: terminal.id,
    account: "rub_pending",
    currency: "RUB",
    amount: merchantAmount,
    kind: "payment_credit",
    refId: payment.id,
    createdAt: now
  }])
  return { merchantAmount, usdt: null, rate: null, convertedAt: null } satisfies Settlement
})

/** Converts a payment's pending roubles at `rate` and returns the new settlement. */
export const convert = Traced.fn("Settlement.convert")(function*(payment: Payment, settlement: Settlement, rate: bigint) {
  const ledger = yield* LedgerRepository
  const entropy = yield* Entropy
  const now = yield* Clock.currentTimeMillis
  const usdt = rubToUsdt(settlement.merchantAmount, rate)
  yield* ledger.append([
    {
      id: yield* entropy.uuid,
      terminalId: payment.terminalId,
      account: "rub_pending",
      currency: "RUB",
      amount: -settlement.merchantAmount,
      kind: "conversion",
      refId: payment.id,
      createdAt: now
    },
    {
      id: yield* entropy.uuid,
      terminalId: payment.terminalId,
      account: "usdt_available",
      currency: "USDT",
      amount: usdt,
      kind: "conversion",
      refId: payment.id,
      createdAt: now
    }
  ])
  return { ...settlement, usdt, rate, convertedAt: now } satisfies Settlement
})

/** Reverses what a payment credited (refund or chargeback). */
export const reverse = Traced.fn("Settlement.reverse")(function*(payment: Payment, kind: Extract<Kind, "refund" | "chargeback">) {
  const settlement = payment.settlement
  if (settlement === null) return
  const ledger = yield* LedgerRepository
  const entropy = yield* Entropy
  const now = yield* Clock.currentTimeMillis
  yield* ledger.append([
    settlement.usdt === null
      ? {
        id: yield* entropy.uuid,
        terminalId: payment.terminalId,
        account: "rub_pending",
        currency: "RUB",
        amount: -settlement.merchantAmount,
        kind,
        refId: payment.id,
        createdAt: now
      }
      : {
        id: yield* entropy.uuid,
        terminalId: payment.terminalId,
        account: "usdt_available",
        currency: "USDT",
        amount: -settlement.usdt,
        kind,
        refId: payment.id,
        createdAt: now
      }
  ])
})
