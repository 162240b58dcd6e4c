/**
 * The balance ports on PostgreSQL: `PayoutRepository` (table `payouts`) and the append-only
 * `LedgerRepository` (table `ledger_entries`).
 *
 * Payout updates are optimistic on `version`; `claimDue` leases due payouts in one statement,
 * skipping rows other transactions hold. Ledger amounts share one `numeric(20,6)` column: RUB
 * entries are kopecks (two decimals), USDT entries micro-USDT (six decimals). `append` is one
 * multi-row insert, so a batch is stored whole or not at all.
 */
import { Effect, Exit, Layer, Option, Request } from "effect"
import { LedgerRepository, PayoutRepository, Traced, WriteConflict } from "@paydesk/core"
import type { Ledger, Payout } from "@paydesk/core"
import { SqlClient } from "effect/sql"
import {
  conflictOnUnique,
  fromMicro,
  fromNumeric,
  fromTime,
  fromTimeOrNull,
  insertRows,
  keysetAfter,
  micro,
  orDie,
  sideBySide,
  time,
  timeOrNull,
  toNumeric
} from "./PgSupport.js"

/** A `payouts` row as the driver returns it. */
interface PayoutRow {
  readonly id: string
  readonly terminal_id: string
  readonly amount_usdt: string
  readonly wallet_address: string
  readonly network: string
  readonly status: Payout.Status
  readonly idempotency_key: string | null
  readonly fingerprint: string
  readonly network_tx_id: string | null
  readonly reject_reason: string | null
  readonly lease_until: Date | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly version: number
}

/** A row back to the core's payout. */
const toPayout = (row: PayoutRow): Payout.Payout => ({
  id: row.id,
  terminalId: row.terminal_id,
  amountUsdt: fromMicro(row.amount_usdt),
  walletAddress: row.wallet_address,
  network: row.network,
  status: row.status,
  idempotencyKey: row.idempotency_key,
  fingerprint: row.fingerprint,
  networkTxId: row.network_tx_id,
  rejectReason: row.reject_reason,
  leaseUntil: fromTimeOrNull(row.lease_until),
  createdAt: fromTime(row.created_at),
  updatedAt: fromTime(row.updated_at),
  version: row.version
})

/** The column values of a payout. */
const payoutColumns = (p: Payout.Payout) => ({
  id: p.id,
  terminal_id: p.terminalId,
  amount_usdt: micro(p.amountUsdt),
  wallet_address: p.walletAddress,
  network: p.network,
  status: p.status,
  idempotency_key: p.idempotencyKey,
  fingerprint: p.fingerprint,
  network_tx_id: p.networkTxId,
  reject_reason: p.rejectReason,
  lease_until: timeOrNull(p.leaseUntil),
  created_at: time(p.createdAt),
  updated_at: time(p.updatedAt),
  version: p.version
})

/** `PayoutRepository` on the `SqlClient` in context. */
export const layerPayoutRepository: Layer.Layer<PayoutRepository, never, SqlClient.SqlClient> = Layer.effect(
  PayoutRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const one = (rows: ReadonlyArray<PayoutRow>): Option.Option<Payout.Payout> =>
      Option.map(Option.fromUndefinedOr(rows[0]), toPayout)

    return PayoutRepository.of({
      insert: Traced.fn("PgPayoutRepository.insert")(function*(payout) {
        yield* sql`INSERT INTO payouts ${sql.insert(payoutColumns(payout))}`.pipe(conflictOnUnique("payouts_pkey"))
      }),

      get: Traced.fn("PgPayoutRepository.get")(function*(id) {
        return one(yield* orDie(sql<PayoutRow>`SELECT * FROM payouts WHERE id = ${id}`))
      }),

      getForUpdate: Traced.fn("PgPayoutRepository.getForUpdate")(function*(id) {
        return one(yield* orDie(sql<PayoutRow>`SELECT * FROM payouts WHERE id = ${id} FOR UPDATE`))
      }),

      update: Traced.fn("PgPayoutRepository.update")(function*(payout) {
        const rows = yield* sql`UPDATE payouts SET ${sql.update(payoutColumns(payout), ["id"])}
          WHERE id = ${payout.id} AND version = ${payout.version - 1}
          RETURNING id`.pipe(conflictOnUnique("payouts_pkey"))
        if (rows.length === 0) {
          return yield* new WriteConflict({
            constraint: "payouts_version",
            message: `payout ${payout.id} is not at version ${payout.version - 1}`
          })
        }
      }),

      list: Traced.fn("PgPayoutRepository.list")(function*(terminalId, page) {
        const after = keysetAfter(sql, page.after, (id) => sql`SELECT created_at FROM payouts WHERE id = ${id}::uuid AND terminal_id = ${terminalId}`)
        const rows = yield* orDie(sql<PayoutRow>`SELECT * FROM payouts WHERE terminal_id = ${terminalId} ${after}
          ORDER BY created_at DESC, id DESC
          LIMIT ${Math.max(0, page.limit)} OFFSET ${Math.max(0, page.offset)}`)
        const counted = yield* orDie(
          sql<{ readonly total: number }>`SELECT count(*)::int AS total FROM payouts WHERE terminal_id = ${terminalId}`
        )
        return { items: rows.map(toPayout), total: counted[0]?.total ?? 0 }
      }),

      countActive: Traced.fn("PgPayoutRepository.countActive")(function*(terminalId) {
        const rows = yield* orDie(sql<{ readonly active: number }>`SELECT count(*)::int AS active FROM payouts
          WHERE terminal_id = ${terminalId} AND status IN ('created', 'pending', 'processing')`)
        return rows[0]?.active ?? 0
      }),

      claimDue: Traced.fn("PgPayoutRepository.claimDue")(function*(status, now, leaseUntil, limit) {
        const rows = yield* orDie(sql<PayoutRow>`WITH claimed AS (
            UPDATE payouts SET lease_until = ${time(leaseUntil)}, version = version + 1
            WHERE id IN (
              SELECT id FROM payouts
              WHERE status = ${status} AND (lease_until IS NULL OR lease_until <= ${time(now)})
              ORDER BY created_at, id
              LIMIT ${Math.max(0, limit)}
              FOR UPDATE SKIP LOCKED
            )
            RETURNING *
          )
          SELECT * FROM claimed ORDER BY created_at, id`)
        return rows.map(toPayout)
      })
    })
  })
)

/** A `ledger_entries` row as the driver returns it. */
interface EntryRow {
  readonly id: string
  readonly terminal_id: string
  readonly account: Ledger.Account
  readonly currency: "RUB" | "USDT"
  readonly amount: string
  readonly kind: Ledger.Kind
  readonly ref_id: string
  readonly created_at: Date
}

/** Decimals of an amount in minor units of `currency`: kopecks or micro-USDT. */
const scaleOf = (currency: "RUB" | "USDT"): number => (currency === "RUB" ? 2 : 6)

/** A row back to the core's ledger entry. */
const toEntry = (row: EntryRow): Ledger.Entry => ({
  id: row.id,
  terminalId: row.terminal_id,
  account: row.account,
  currency: row.currency,
  amount: fromNumeric(row.amount, scaleOf(row.currency)),
  kind: row.kind,
  refId: row.ref_id,
  createdAt: fromTime(row.created_at)
})

/** The column values of a ledger entry. */
const entryColumns = (e: Ledger.Entry) => ({
  id: e.id,
  terminal_id: e.terminalId,
  account: e.account,
  currency: e.currency,
  amount: toNumeric(e.amount, scaleOf(e.currency)),
  kind: e.kind,
  ref_id: e.refId,
  created_at: time(e.createdAt)
})

/** Entries appended, with the ones appended side by side. */
class Append extends Request.Class<{ readonly entries: ReadonlyArray<Ledger.Entry> }, void> {}

/** `LedgerRepository` on the `SqlClient` in context. */
export const layerLedgerRepository: Layer.Layer<LedgerRepository, never, SqlClient.SqlClient> = Layer.effect(
  LedgerRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Appends made side by side (the charge runner's bookings) go as one statement, in their order.
    const appendTogether = sideBySide(sql, (requests: ReadonlyArray<Append>) =>
      Effect.as(orDie(insertRows(sql, "ledger_entries", requests.flatMap((r) => r.entries.map(entryColumns)))), requests.map(() => Exit.void)))
    return LedgerRepository.of({
      append: Traced.fn("PgLedgerRepository.append")(function*(entries) {
        if (entries.length === 0) return
        yield* appendTogether(new Append({ entries }))
      }),

      balance: Traced.fn("PgLedgerRepository.balance")(function*(terminalId) {
        const rows = yield* orDie(sql<{ readonly rub_pending: string; readonly usdt_available: string; readonly usdt_hold: string }>`
          SELECT
            COALESCE(sum(amount) FILTER (WHERE account = 'rub_pending'), 0) AS rub_pending,
            COALESCE(sum(amount) FILTER (WHERE account = 'usdt_available'), 0) AS usdt_available,
            COALESCE(sum(amount) FILTER (WHERE account = 'usdt_hold'), 0) AS usdt_hold
          FROM ledger_entries WHERE terminal_id = ${terminalId}`)
        const row = rows[0]
        return row === undefined
          ? { rubPending: 0n, usdtAvailable: 0n, usdtHold: 0n }
          : {
            rubPending: fromNumeric(row.rub_pending, scaleOf("RUB")),
            usdtAvailable: fromNumeric(row.usdt_available, scaleOf("USDT")),
            usdtHold: fromNumeric(row.usdt_hold, scaleOf("USDT"))
          }
      }),

      entriesFor: Traced.fn("PgLedgerRepository.entriesFor")(function*(refId) {
        const rows = yield* orDie(sql<EntryRow>`SELECT * FROM ledger_entries WHERE ref_id = ${refId} ORDER BY created_at, seq`)
        return rows.map(toEntry)
      })
    })
  })
)
