/**
 * Memory adapter of `PaymentRepository`.
 *
 * Unique keys: `id`, `(terminalId, environment, orderId)` and `payToken`; a taken one is a
 * `WriteConflict`, on insert and on an update that would take it. `update` is an optimistic write:
 * the record's `version` must be the stored one plus one. Listings sort newest first
 * (`createdAt` desc, then `id` desc); claims sort by the time that made the row due and take the
 * rows of the given test clock only (of none by default).
 */
import { Effect, Layer, Option } from "effect"
import { OutboxRepository, Payment, PaymentRepository } from "@paydesk/core"
import type { DailyStats, PaymentFilter, StatusStats } from "@paydesk/core"
import { compareText, earliest, MemoryDatabase, newestFirst, pageOf, writeConflict } from "./MemoryDatabase.js"
import * as MemoryOutboxRepository from "./MemoryOutboxRepository.js"

/** Whether a payment passes a listing filter. */
export const matches = (filter: PaymentFilter) => (p: Payment.Payment): boolean =>
  p.terminalId === filter.terminalId &&
  (filter.environment === "all" || p.environment === filter.environment) &&
  (filter.recurring === null || (p.subscriptionId !== null) === filter.recurring) &&
  (filter.status === undefined || p.status === filter.status) &&
  (filter.orderId === undefined || p.orderId === filter.orderId) &&
  (filter.createdFrom === undefined || p.createdAt >= filter.createdFrom) &&
  (filter.createdBefore === undefined || p.createdAt < filter.createdBefore)

/** The calendar day (`YYYY-MM-DD`) of an instant in an IANA time zone. */
const dayIn = (timeZone: string) => {
  const format = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" })
  return (ms: number): string => {
    const parts = Object.fromEntries(format.formatToParts(ms).map((part) => [part.type, part.value]))
    return `${parts["year"]}-${parts["month"]}-${parts["day"]}`
  }
}

const orderKey = (p: Pick<Payment.Payment, "terminalId" | "environment" | "orderId">): string =>
  `${p.terminalId}\u0000${p.environment}\u0000${p.orderId}`

/**
 * Memory `PaymentRepository` on the `MemoryDatabase` in context; `insertCreated` writes the event
 * and delivery through the memory `OutboxRepository` (the same one the store's graph builds).
 */
export const layer: Layer.Layer<PaymentRepository, never, MemoryDatabase> = Layer.effect(
  PaymentRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const outbox = yield* OutboxRepository
    const { payments } = db.tables

    const uniqueViolation = (candidate: Payment.Payment): string | null => {
      const key = orderKey(candidate)
      for (const p of payments.values()) {
        if (p.id === candidate.id) continue
        if (orderKey(p) === key) return "payments_terminal_environment_order_id"
        if (p.payToken === candidate.payToken) return "payments_pay_token"
      }
      return null
    }

    const get = (id: string) => db.atomically(Effect.sync(() => Option.fromUndefinedOr(payments.get(id))))

    /** The payments of a listing filter, newest first (`list`'s and `listAfter`'s order). */
    const listed = (filter: PaymentFilter) => [...payments.values()].filter(matches(filter)).sort(newestFirst)

    const findFirst = (predicate: (p: Payment.Payment) => boolean) =>
      db.atomically(Effect.sync(() => {
        for (const p of payments.values()) if (predicate(p)) return Option.some(p)
        return Option.none<Payment.Payment>()
      }))

    const insert = (payment: Payment.Payment) =>
      db.atomically(Effect.suspend(() => {
        if (payments.has(payment.id)) return Effect.fail(writeConflict("payments_pkey"))
        const violated = uniqueViolation(payment)
        if (violated !== null) return Effect.fail(writeConflict(violated))
        payments.set(payment.id, payment)
        return Effect.void
      }))

    return PaymentRepository.of({
      insert,
      insertCreated: (payment, event, delivery) => db.transaction(Effect.andThen(insert(payment), outbox.insertEvent(event, delivery))),
      get,
      getForUpdate: get,
      update: (payment) =>
        db.atomically(Effect.suspend(() => {
          const stored = payments.get(payment.id)
          if (stored === undefined || payment.version !== stored.version + 1) {
            return Effect.fail(writeConflict("payments_version"))
          }
          const violated = uniqueViolation(payment)
          if (violated !== null) return Effect.fail(writeConflict(violated))
          payments.set(payment.id, payment)
          return Effect.void
        })),
      findByOrderId: (terminalId, environment, orderId) =>
        findFirst((p) => p.terminalId === terminalId && p.environment === environment && p.orderId === orderId),
      findByPayToken: (token) => findFirst((p) => p.payToken === token),
      list: (filter, page) =>
        db.atomically(Effect.sync(() => {
          const all = listed(filter)
          return { items: pageOf(all, page), total: all.length }
        })),
      listAfter: (filter, after, limit) =>
        db.atomically(Effect.sync(() =>
          listed(filter).filter((p) => after === null || newestFirst(after, p) < 0).slice(0, Math.max(0, limit))
        )),
      stats: (filter) =>
        db.atomically(Effect.sync(() => {
          const byStatus = new Map<Payment.Status, { count: number; amount: bigint }>()
          for (const p of payments.values()) {
            if (!matches(filter)(p)) continue
            const current = byStatus.get(p.status) ?? { count: 0, amount: 0n }
            byStatus.set(p.status, { count: current.count + 1, amount: current.amount + p.amount })
          }
          const stats: Array<StatusStats> = []
          for (const status of Payment.statuses) {
            const s = byStatus.get(status)
            if (s !== undefined) stats.push({ status, count: s.count, amount: s.amount })
          }
          return stats
        })),
      daily: (filter, timeZone) =>
        db.atomically(Effect.sync(() => {
          const day = dayIn(timeZone)
          const byKey = new Map<string, DailyStats>()
          for (const p of payments.values()) {
            if (!matches(filter)(p)) continue
            const d = day(p.createdAt)
            const key = `${d} ${Payment.statuses.indexOf(p.status)}`
            const current = byKey.get(key)
            byKey.set(key, { day: d, status: p.status, count: (current?.count ?? 0) + 1, amount: (current?.amount ?? 0n) + p.amount })
          }
          return [...byKey.entries()].sort(([a], [b]) => compareText(a, b)).map(([, row]) => row)
        })),
      claimExpired: (now, limit, testClockId) =>
        db.atomically(Effect.sync(() =>
          [...payments.values()]
            .filter((p) => Payment.isOpen(p.status) && p.expiresAt !== null && p.expiresAt <= now && p.testClockId === (testClockId ?? null))
            .sort((a, b) => (a.expiresAt ?? 0) - (b.expiresAt ?? 0) || compareText(a.id, b.id))
            .slice(0, Math.max(0, limit))
        )),
      earliestExpiry: (testClockId) =>
        db.atomically(Effect.sync(() =>
          earliest([...payments.values()]
            .filter((p) => p.testClockId === testClockId && Payment.isOpen(p.status))
            .map((p) => p.expiresAt))
        )),
      claimUnconverted: (terminalId, limit) =>
        db.atomically(Effect.sync(() =>
          [...payments.values()]
            .filter((p) =>
              p.terminalId === terminalId && p.environment === "prod" && p.status === "paid" &&
              p.settlement !== null && p.settlement.usdt === null
            )
            .sort((a, b) => (a.paidAt ?? a.createdAt) - (b.paidAt ?? b.createdAt) || compareText(a.id, b.id))
            .slice(0, Math.max(0, limit))
        ))
    })
  })
).pipe(Layer.provide(MemoryOutboxRepository.layer))
