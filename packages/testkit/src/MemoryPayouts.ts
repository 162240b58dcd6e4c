/**
 * Memory adapters of the balance ports: payouts and the append-only ledger.
 *
 * Payout updates are optimistic (`version` must be the stored one plus one); `claimDue` leases the
 * payouts it returns (`leaseUntil`, `version` + 1). The ledger keeps entries in append order; a
 * batch with a duplicate id dies before writing anything, so `append` is all or none.
 */
import { Effect, Layer, Option } from "effect"
import { LedgerRepository, Payout, PayoutRepository } from "@paydesk/core"
import type { Ledger } from "@paydesk/core"
import { compareText, duplicateKey, MemoryDatabase, newestFirst, pageOf, writeConflict } from "./MemoryDatabase.js"

/** Memory `PayoutRepository`. */
export const layerPayoutRepository: Layer.Layer<PayoutRepository, never, MemoryDatabase> = Layer.effect(
  PayoutRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { payouts } = db.tables
    const get = (id: string) => db.atomically(Effect.sync(() => Option.fromUndefinedOr(payouts.get(id))))
    const ofTerminal = (terminalId: string) => [...payouts.values()].filter((p) => p.terminalId === terminalId)
    return PayoutRepository.of({
      insert: (payout) =>
        db.atomically(Effect.suspend(() => {
          if (payouts.has(payout.id)) return Effect.fail(writeConflict("payouts_pkey"))
          payouts.set(payout.id, payout)
          return Effect.void
        })),
      get,
      getForUpdate: get,
      update: (payout) =>
        db.atomically(Effect.suspend(() => {
          const stored = payouts.get(payout.id)
          if (stored === undefined || payout.version !== stored.version + 1) {
            return Effect.fail(writeConflict("payouts_version"))
          }
          payouts.set(payout.id, payout)
          return Effect.void
        })),
      list: (terminalId, page) =>
        db.atomically(Effect.sync(() => {
          const all = ofTerminal(terminalId).sort(newestFirst)
          return { items: pageOf(all, page), total: all.length }
        })),
      countActive: (terminalId) =>
        db.atomically(Effect.sync(() => ofTerminal(terminalId).filter((p) => Payout.activeStatuses.includes(p.status)).length)),
      claimDue: (status, now, leaseUntil, limit) =>
        db.atomically(Effect.sync(() => {
          const due = [...payouts.values()]
            .filter((p) => p.status === status && (p.leaseUntil === null || p.leaseUntil <= now))
            .sort((a, b) => a.createdAt - b.createdAt || compareText(a.id, b.id))
            .slice(0, Math.max(0, limit))
          return due.map((p) => {
            const leased = { ...p, leaseUntil, version: p.version + 1 }
            payouts.set(p.id, leased)
            return leased
          })
        }))
    })
  })
)

const accountField = {
  rub_pending: "rubPending",
  usdt_available: "usdtAvailable",
  usdt_hold: "usdtHold"
} as const satisfies Record<Ledger.Account, keyof Ledger.Balance>

/** Memory `LedgerRepository`. */
export const layerLedgerRepository: Layer.Layer<LedgerRepository, never, MemoryDatabase> = Layer.effect(
  LedgerRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { ledger } = db.tables
    return LedgerRepository.of({
      append: (entries) =>
        db.atomically(Effect.suspend(() => {
          const ids = new Set<string>()
          for (const entry of entries) {
            if (ledger.has(entry.id) || ids.has(entry.id)) return duplicateKey("ledger_entries", entry.id)
            ids.add(entry.id)
          }
          for (const entry of entries) ledger.set(entry.id, entry)
          return Effect.void
        })),
      balance: (terminalId) =>
        db.atomically(Effect.sync(() => {
          const balance = { rubPending: 0n, usdtAvailable: 0n, usdtHold: 0n }
          for (const entry of ledger.values()) {
            if (entry.terminalId === terminalId) balance[accountField[entry.account]] += entry.amount
          }
          return balance
        })),
      entriesFor: (refId) =>
        db.atomically(Effect.sync(() =>
          // Array.prototype.sort is stable: equal timestamps keep append order.
          [...ledger.values()].filter((e) => e.refId === refId).sort((a, b) => a.createdAt - b.createdAt)
        ))
    })
  })
)
