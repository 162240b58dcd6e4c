/**
 * `PaymentRepository` on PostgreSQL (table `payments`).
 *
 * Amounts are `numeric` (kopecks, micro-USDT and micro-RUB rates scaled back to bigints), times
 * `timestamptz`, metadata `jsonb`; a settlement lives in the `settlement_*` columns (all null
 * without one). Unique order ids and pay tokens are unique constraints, so a taken one is a
 * `WriteConflict`; updates are optimistic on `version`. The claims lock the rows they return and
 * skip rows other transactions hold; the caller changes them in the same transaction. Claims take
 * the rows of the given test clock only (of none by default).
 */
import { Effect, Exit, Layer, Option, Request } from "effect"
import { Batching, Payment, PaymentRepository, Traced, UnknownTimeZone, WriteConflict } from "@paydesk/core"
import type { Callback, DailyStats, PaymentFilter, StatusStats } from "@paydesk/core"
import { SqlClient } from "effect/sql"
import { deliveryColumns, eventColumns } from "./PgOutboxRepository.js"
import {
  groupCommitted,
  conflictOnUnique,
  fromMicro,
  fromRub,
  fromTime,
  fromTimeOrNull,
  jsonRows,
  micro,
  ofClock,
  keysetAfter,
  orDie,
  rub,
  sqlStateOf,
  time,
  timeOrNull,
  writeConflict
} from "./PgSupport.js"

/** A `payments` row as the driver returns it. */
interface PaymentRow {
  readonly id: string
  readonly terminal_id: string
  readonly order_id: string
  readonly amount: string
  readonly currency: "RUB"
  readonly description: string | null
  readonly metadata: Readonly<Record<string, unknown>> | null
  readonly payment_method: string
  readonly environment: Payment.Environment
  readonly test_clock_id: string | null
  readonly status: Payment.Status
  readonly pay_token: string
  readonly csrf_token: string
  readonly subscription_id: string | null
  readonly fingerprint: string
  readonly qr_payload: string | null
  readonly expires_at: Date | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly paid_at: Date | null
  readonly settlement_merchant_amount: string | null
  readonly settlement_usdt: string | null
  readonly settlement_rate: string | null
  readonly settlement_converted_at: Date | null
  readonly version: number
}

const toSettlement = (row: PaymentRow): Payment.Settlement | null =>
  row.settlement_merchant_amount === null
    ? null
    : {
      merchantAmount: fromRub(row.settlement_merchant_amount),
      usdt: row.settlement_usdt === null ? null : fromMicro(row.settlement_usdt),
      rate: row.settlement_rate === null ? null : fromMicro(row.settlement_rate),
      convertedAt: fromTimeOrNull(row.settlement_converted_at)
    }

/** A row back to the core's payment. */
const toEntity = (row: PaymentRow): Payment.Payment => ({
  id: row.id,
  terminalId: row.terminal_id,
  orderId: row.order_id,
  amount: fromRub(row.amount),
  currency: row.currency,
  description: row.description,
  metadata: row.metadata,
  paymentMethod: row.payment_method,
  environment: row.environment,
  testClockId: row.test_clock_id,
  status: row.status,
  payToken: row.pay_token,
  csrfToken: row.csrf_token,
  subscriptionId: row.subscription_id,
  fingerprint: row.fingerprint,
  qrPayload: row.qr_payload,
  expiresAt: fromTimeOrNull(row.expires_at),
  createdAt: fromTime(row.created_at),
  updatedAt: fromTime(row.updated_at),
  paidAt: fromTimeOrNull(row.paid_at),
  settlement: toSettlement(row),
  version: row.version
})

/** The column values of a payment (metadata as JSON text, which the server reads as `jsonb`). */
const toColumns = (p: Payment.Payment) => ({
  id: p.id,
  terminal_id: p.terminalId,
  order_id: p.orderId,
  amount: rub(p.amount),
  currency: p.currency,
  description: p.description,
  metadata: p.metadata === null ? null : JSON.stringify(p.metadata),
  payment_method: p.paymentMethod,
  environment: p.environment,
  test_clock_id: p.testClockId,
  status: p.status,
  pay_token: p.payToken,
  csrf_token: p.csrfToken,
  subscription_id: p.subscriptionId,
  fingerprint: p.fingerprint,
  qr_payload: p.qrPayload,
  expires_at: timeOrNull(p.expiresAt),
  created_at: time(p.createdAt),
  updated_at: time(p.updatedAt),
  paid_at: timeOrNull(p.paidAt),
  settlement_merchant_amount: p.settlement === null ? null : rub(p.settlement.merchantAmount),
  settlement_usdt: p.settlement === null || p.settlement.usdt === null ? null : micro(p.settlement.usdt),
  settlement_rate: p.settlement === null || p.settlement.rate === null ? null : micro(p.settlement.rate),
  settlement_converted_at: timeOrNull(p.settlement === null ? null : p.settlement.convertedAt),
  version: p.version
})

const statusOrder = (status: Payment.Status): number => Payment.statuses.indexOf(status)

/** One `insertCreated` waiting to be committed with the concurrent ones. */
class InsertCreated extends Request.Class<{
  readonly payment: Payment.Payment
  readonly event: Callback.OutboxEvent
  readonly delivery: Callback.Delivery | undefined
}, void, WriteConflict> {}

/** Batches of `insertCreated` running at once at most; the creations arriving meanwhile wait for the next one. */
export const creationBatchesInFlight = 2
/** Creations in one batch at most. */
export const maxCreationBatch = 200
/**
 * A creation batch still running after this long (its payments' terminal row held by another
 * session, say) no longer holds back the next (one such batch at a time: `Batching.batchResolver`'s
 * `maxStalled`). The requests in it, and in any later batch that needs the same row, still wait.
 */
export const creationStallMs = 2_000

/** The columns each row of a table is written with (a row of the same function's keys). */
const columnList = (row: object): string => Object.keys(row).join(", ")

/** `PaymentRepository` on the `SqlClient` in context. */
export const layer: Layer.Layer<PaymentRepository, never, SqlClient.SqlClient> = Layer.effect(
  PaymentRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const one = (rows: ReadonlyArray<PaymentRow>): Option.Option<Payment.Payment> =>
      Option.map(Option.fromUndefinedOr(rows[0]), toEntity)

    const where = (filter: PaymentFilter) =>
      sql.and([
        sql`terminal_id = ${filter.terminalId}`,
        ...(filter.environment === "all" ? [] : [sql`environment = ${filter.environment}`]),
        ...(filter.recurring === null
          ? []
          : [filter.recurring ? sql`subscription_id IS NOT NULL` : sql`subscription_id IS NULL`]),
        ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`]),
        ...(filter.orderId === undefined ? [] : [sql`order_id = ${filter.orderId}`]),
        ...(filter.createdFrom === undefined ? [] : [sql`created_at >= ${time(filter.createdFrom)}`]),
        ...(filter.createdBefore === undefined ? [] : [sql`created_at < ${time(filter.createdBefore)}`])
      ])

    /**
     * New payments with their events and deliveries in one statement (so one commit): a payment a
     * unique rule refuses is skipped with its event and delivery, the others are stored. Answers
     * which were stored, in order.
     */
    const insertCreatedMany = (requests: ReadonlyArray<InsertCreated>) =>
      Effect.suspend(() => {
        const payments = requests.map(({ payment }) => ({ ...toColumns(payment), metadata: payment.metadata }))
        const events = requests.map(({ event }) => eventColumns(event))
        const deliveries = requests.flatMap(({ delivery }) => delivery === undefined ? [] : [deliveryColumns(delivery)])
        const [paymentColumns, eventColumnList] = [sql.literal(columnList(payments[0]!)), sql.literal(columnList(events[0]!))]
        const deliveryPart = deliveries.length === 0 ? sql`` : sql`, d AS (
            INSERT INTO deliveries (${sql.literal(columnList(deliveries[0]!))})
            SELECT ${sql.literal(columnList(deliveries[0]!))} FROM jsonb_populate_recordset(NULL::deliveries, ${jsonRows(deliveries)}::jsonb)
            WHERE event_id IN (SELECT id FROM e)
          )`
        return Effect.map(
          sql<{ readonly id: string }>`WITH p AS (
              INSERT INTO payments (${paymentColumns})
              SELECT ${paymentColumns} FROM jsonb_populate_recordset(NULL::payments, ${jsonRows(payments)}::jsonb)
              ON CONFLICT (terminal_id, environment, order_id) DO NOTHING
              RETURNING id
            ), e AS (
              INSERT INTO outbox_events (${eventColumnList})
              SELECT ${eventColumnList} FROM jsonb_populate_recordset(NULL::outbox_events, ${jsonRows(events)}::jsonb)
              WHERE payment_id IN (SELECT id FROM p)
              RETURNING id
            )${deliveryPart}
            SELECT id FROM p`.pipe(
            // Another unique rule (an id or pay token taken, which random values never do) or a
            // concurrency abort: every request retries as after a taken order_id (`insert` does the same).
            conflictOnUnique("payments_unique"),
            Effect.map((rows) => new Set(rows.map((row) => row.id))),
            Effect.catchTag("WriteConflict", () => Effect.succeed(new Set<string>()))
          ),
          (stored) => {
            // Made only when a request lost (an error captures a stack trace).
            const taken = stored.size === requests.length ? undefined : writeConflict("payments_unique")
            return requests.map(({ payment }) => stored.has(payment.id) ? Exit.void : Exit.fail(taken!))
          }
        )
      })

    // Outside a transaction, concurrent creations are committed together: while a batch runs, the
    // ones arriving wait and go in the next (group commit), each answered after its own commit.
    const createTogether = groupCommitted(
      sql,
      insertCreatedMany,
      Batching.batchResolver<InsertCreated>(insertCreatedMany, {
        maxInFlight: creationBatchesInFlight,
        maxBatch: maxCreationBatch,
        stallMs: creationStallMs
      })
    )

    /** The keyset of `payments_list` (terminal_id, created_at DESC, id DESC) after a position of the terminal's list. */
    const afterPosition = (terminalId: string, after: { readonly createdAt: number; readonly id: string } | null | undefined) =>
      keysetAfter(sql, after, (id) => sql`SELECT created_at FROM payments WHERE id = ${id}::uuid AND terminal_id = ${terminalId}`)

    return PaymentRepository.of({
      insert: Traced.fn("PgPaymentRepository.insert")(function*(payment) {
        yield* sql`INSERT INTO payments ${sql.insert(toColumns(payment))}`.pipe(conflictOnUnique("payments_unique"))
      }),

      // Inside a transaction: with the calls made side by side in it. Outside: with the concurrent ones (see `createTogether`).
      insertCreated: Traced.fn("PgPaymentRepository.insertCreated")(function*(payment, event, delivery) {
        return yield* createTogether(new InsertCreated({ payment, event, delivery }))
      }),

      get: Traced.fn("PgPaymentRepository.get")(function*(id) {
        return one(yield* orDie(sql<PaymentRow>`SELECT * FROM payments WHERE id = ${id}`))
      }),

      getForUpdate: Traced.fn("PgPaymentRepository.getForUpdate")(function*(id) {
        return one(yield* orDie(sql<PaymentRow>`SELECT * FROM payments WHERE id = ${id} FOR UPDATE`))
      }),

      update: Traced.fn("PgPaymentRepository.update")(function*(payment) {
        const rows = yield* sql`UPDATE payments SET ${sql.update(toColumns(payment), ["id"])}
          WHERE id = ${payment.id} AND version = ${payment.version - 1}
          RETURNING id`.pipe(conflictOnUnique("payments_unique"))
        if (rows.length === 0) {
          return yield* new WriteConflict({
            constraint: "payments_version",
            message: `payment ${payment.id} is not at version ${payment.version - 1}`
          })
        }
      }),

      findByOrderId: Traced.fn("PgPaymentRepository.findByOrderId")(function*(terminalId, environment, orderId) {
        return one(
          yield* orDie(sql<PaymentRow>`SELECT * FROM payments
            WHERE terminal_id = ${terminalId} AND environment = ${environment} AND order_id = ${orderId}`)
        )
      }),

      findByPayToken: Traced.fn("PgPaymentRepository.findByPayToken")(function*(token) {
        return one(yield* orDie(sql<PaymentRow>`SELECT * FROM payments WHERE pay_token = ${token}`))
      }),

      list: Traced.fn("PgPaymentRepository.list")(function*(filter, page) {
        const condition = where(filter)
        const rows = yield* orDie(sql<PaymentRow>`SELECT * FROM payments WHERE ${condition} ${afterPosition(filter.terminalId, page.after)}
          ORDER BY created_at DESC, id DESC
          LIMIT ${Math.max(0, page.limit)} OFFSET ${Math.max(0, page.offset)}`)
        const counted = yield* orDie(sql<{ readonly total: number }>`SELECT count(*)::int AS total FROM payments WHERE ${condition}`)
        return { items: rows.map(toEntity), total: counted[0]?.total ?? 0 }
      }),

      listAfter: Traced.fn("PgPaymentRepository.listAfter")(function*(filter, after, limit) {
        const rows = yield* orDie(sql<PaymentRow>`SELECT * FROM payments WHERE ${where(filter)} ${afterPosition(filter.terminalId, after)}
          ORDER BY created_at DESC, id DESC
          LIMIT ${Math.max(0, limit)}`)
        return rows.map(toEntity)
      }),

      stats: Traced.fn("PgPaymentRepository.stats")(function*(filter) {
        const rows = yield* orDie(sql<{ readonly status: Payment.Status; readonly count: number; readonly amount: string }>`
          SELECT status, count(*)::int AS count, sum(amount) AS amount FROM payments WHERE ${where(filter)}
          GROUP BY status`)
        return rows
          .map((row): StatusStats => ({ status: row.status, count: row.count, amount: fromRub(row.amount) }))
          .sort((a, b) => statusOrder(a.status) - statusOrder(b.status))
      }),

      daily: Traced.fn("PgPaymentRepository.daily")(function*(filter, timeZone) {
        const rows = yield* sql<{ readonly day: string; readonly status: Payment.Status; readonly count: number; readonly amount: string }>`
          SELECT to_char(created_at AT TIME ZONE ${timeZone}, 'YYYY-MM-DD') AS day, status, count(*)::int AS count, sum(amount) AS amount
          FROM payments WHERE ${where(filter)}
          GROUP BY 1, 2`.pipe(
          // 22023 invalid_parameter_value: "time zone ... not recognized" (PostgreSQL's zone table lacks it).
          Effect.catch((error) => sqlStateOf(error) === "22023" ? Effect.fail(new UnknownTimeZone({ timeZone })) : orDie(Effect.fail(error)))
        )
        return rows
          .map((row): DailyStats => ({ day: row.day, status: row.status, count: row.count, amount: fromRub(row.amount) }))
          .sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : statusOrder(a.status) - statusOrder(b.status)))
      }),

      claimExpired: Traced.fn("PgPaymentRepository.claimExpired")(function*(now, limit, testClockId) {
        const rows = yield* orDie(sql<PaymentRow>`SELECT * FROM payments
          WHERE status IN ('created', 'processing') AND expires_at <= ${time(now)} AND ${ofClock(sql, testClockId)}
          ORDER BY expires_at, id
          LIMIT ${Math.max(0, limit)}
          FOR UPDATE SKIP LOCKED`)
        return rows.map(toEntity)
      }),

      earliestExpiry: Traced.fn("PgPaymentRepository.earliestExpiry")(function*(testClockId) {
        const rows = yield* orDie(sql<{ readonly at: Date | null }>`SELECT min(expires_at) AS at FROM payments
          WHERE test_clock_id = ${testClockId} AND status IN ('created', 'processing')`)
        return fromTimeOrNull(rows[0]?.at ?? null)
      }),

      claimUnconverted: Traced.fn("PgPaymentRepository.claimUnconverted")(function*(terminalId, limit) {
        const rows = yield* orDie(sql<PaymentRow>`SELECT * FROM payments
          WHERE terminal_id = ${terminalId} AND environment = 'prod' AND status = 'paid'
            AND settlement_merchant_amount IS NOT NULL AND settlement_usdt IS NULL
          ORDER BY COALESCE(paid_at, created_at), id
          LIMIT ${Math.max(0, limit)}
          FOR UPDATE SKIP LOCKED`)
        return rows.map(toEntity)
      })
    })
  })
)
