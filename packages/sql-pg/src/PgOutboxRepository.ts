/**
 * `OutboxRepository` on PostgreSQL: callback events (`outbox_events`), their deliveries
 * (`deliveries`) and the attempt log (`delivery_attempts`).
 *
 * Insertion order is the `seq` column of events and deliveries. `claimDue` leases due pending
 * deliveries in one statement (oldest `next_attempt_at` first, ties by insertion), skipping rows
 * other transactions hold, then loads their events. The ports here have no expected failure:
 * a duplicate id or a delivery of an unknown event is a defect.
 */
import { Effect, Layer, Option } from "effect"
import { OutboxRepository } from "@paydesk/core"
import type { Callback } from "@paydesk/core"
import { SqlClient } from "effect/sql"
import { fromTime, fromTimeOrNull, orDie, time, timeOrNull } from "./PgSupport.js"

/** An `outbox_events` row as the driver returns it. */
interface EventRow {
  readonly id: string
  readonly terminal_id: string
  readonly event_type: Callback.EventType
  readonly payment_id: string | null
  readonly payout_id: string | null
  readonly body: string
  readonly test: boolean
  readonly created_at: Date
}

/** A row back to the core's outbox event. */
const toEvent = (row: EventRow): Callback.OutboxEvent => ({
  id: row.id,
  terminalId: row.terminal_id,
  eventType: row.event_type,
  paymentId: row.payment_id,
  payoutId: row.payout_id,
  body: row.body,
  test: row.test,
  createdAt: fromTime(row.created_at)
})

/** A `deliveries` row as the driver returns it. */
interface DeliveryRow {
  readonly id: string
  readonly event_id: string
  readonly terminal_id: string
  readonly status: Callback.DeliveryStatus
  readonly attempts: number
  readonly next_attempt_at: Date | null
  readonly sending_at: Date | null
  readonly last_status_code: number | null
  readonly last_error: string | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly delivered_at: Date | null
}

/** A row back to the core's delivery. */
const toDelivery = (row: DeliveryRow): Callback.Delivery => ({
  id: row.id,
  eventId: row.event_id,
  terminalId: row.terminal_id,
  status: row.status,
  attempts: row.attempts,
  nextAttemptAt: fromTimeOrNull(row.next_attempt_at),
  sendingAt: fromTimeOrNull(row.sending_at),
  lastStatusCode: row.last_status_code,
  lastError: row.last_error,
  createdAt: fromTime(row.created_at),
  updatedAt: fromTime(row.updated_at),
  deliveredAt: fromTimeOrNull(row.delivered_at)
})

/** The column values of a delivery. */
const deliveryColumns = (d: Callback.Delivery) => ({
  id: d.id,
  event_id: d.eventId,
  terminal_id: d.terminalId,
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: timeOrNull(d.nextAttemptAt),
  sending_at: timeOrNull(d.sendingAt),
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  created_at: time(d.createdAt),
  updated_at: time(d.updatedAt),
  delivered_at: timeOrNull(d.deliveredAt)
})

/** A `delivery_attempts` row as the driver returns it. */
interface AttemptRow {
  readonly id: string
  readonly delivery_id: string
  readonly attempt_number: number
  readonly at: Date
  readonly url: string
  readonly status_code: number | null
  readonly latency_ms: number
  readonly error: string | null
}

/** A row back to the core's attempt. */
const toAttempt = (row: AttemptRow): Callback.Attempt => ({
  id: row.id,
  deliveryId: row.delivery_id,
  attemptNumber: row.attempt_number,
  at: fromTime(row.at),
  url: row.url,
  statusCode: row.status_code,
  latencyMs: row.latency_ms,
  error: row.error
})

/** `OutboxRepository` on the `SqlClient` in context. */
export const layer: Layer.Layer<OutboxRepository, never, SqlClient.SqlClient> = Layer.effect(
  OutboxRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    return OutboxRepository.of({
      insertEvent: Effect.fn("PgOutboxRepository.insertEvent")(function*(event) {
        yield* orDie(sql`INSERT INTO outbox_events ${
          sql.insert({
            id: event.id,
            terminal_id: event.terminalId,
            event_type: event.eventType,
            payment_id: event.paymentId,
            payout_id: event.payoutId,
            body: event.body,
            test: event.test,
            created_at: time(event.createdAt)
          })
        }`)
      }),

      getEvent: Effect.fn("PgOutboxRepository.getEvent")(function*(id) {
        const rows = yield* orDie(sql<EventRow>`SELECT * FROM outbox_events WHERE id = ${id}`)
        return Option.map(Option.fromUndefinedOr(rows[0]), toEvent)
      }),

      listEvents: Effect.fn("PgOutboxRepository.listEvents")(function*(filter) {
        const condition = sql.and([
          ...(filter.paymentId === undefined ? [] : [sql`payment_id = ${filter.paymentId}`]),
          ...(filter.terminalId === undefined ? [] : [sql`terminal_id = ${filter.terminalId}`])
        ])
        const rows = yield* orDie(sql<EventRow>`SELECT * FROM outbox_events WHERE ${condition} ORDER BY created_at, seq`)
        return rows.map(toEvent)
      }),

      insertDelivery: Effect.fn("PgOutboxRepository.insertDelivery")(function*(delivery) {
        yield* orDie(sql`INSERT INTO deliveries ${sql.insert(deliveryColumns(delivery))}`)
      }),

      getDelivery: Effect.fn("PgOutboxRepository.getDelivery")(function*(id) {
        const rows = yield* orDie(sql<DeliveryRow>`SELECT * FROM deliveries WHERE id = ${id}`)
        return Option.map(Option.fromUndefinedOr(rows[0]), toDelivery)
      }),

      updateDelivery: Effect.fn("PgOutboxRepository.updateDelivery")(function*(delivery) {
        yield* orDie(sql`UPDATE deliveries SET ${sql.update(deliveryColumns(delivery), ["id"])} WHERE id = ${delivery.id}`)
      }),

      stampSending: Effect.fn("PgOutboxRepository.stampSending")(function*(id, now, keepFrom) {
        const rows = yield* orDie(sql<{ sending_at: Date }>`UPDATE deliveries
          SET sending_at = CASE WHEN sending_at IS NOT NULL AND sending_at >= ${time(keepFrom)} THEN sending_at ELSE ${time(now)} END
          WHERE id = ${id}
          RETURNING sending_at`)
        return rows[0] === undefined ? now : fromTime(rows[0].sending_at)
      }),

      claimDue: Effect.fn("PgOutboxRepository.claimDue")(function*(now, leaseUntil, limit) {
        // The CTE keeps each delivery's due time, so the lease does not erase the claim order.
        const rows = yield* orDie(sql<DeliveryRow>`WITH due AS (
            SELECT id, next_attempt_at AS due_at FROM deliveries
            WHERE status = 'pending' AND next_attempt_at <= ${time(now)}
            ORDER BY next_attempt_at, seq
            LIMIT ${Math.max(0, limit)}
            FOR UPDATE SKIP LOCKED
          ), claimed AS (
            UPDATE deliveries AS d SET next_attempt_at = ${time(leaseUntil)}
            FROM due WHERE d.id = due.id
            RETURNING d.*, due.due_at
          )
          SELECT * FROM claimed ORDER BY due_at, seq`)
        const deliveries = rows.map(toDelivery)
        if (deliveries.length === 0) return []
        const events = yield* orDie(
          sql<EventRow>`SELECT * FROM outbox_events WHERE id IN ${sql.in(deliveries.map((d) => d.eventId))}`
        )
        const byId = new Map(events.map((row) => [row.id, toEvent(row)] as const))
        return deliveries.flatMap((delivery) => {
          const event = byId.get(delivery.eventId)
          return event === undefined ? [] : [{ delivery, event }]
        })
      }),

      listDeliveries: Effect.fn("PgOutboxRepository.listDeliveries")(function*(filter) {
        const condition = sql.and([
          ...(filter.terminalId === undefined ? [] : [sql`terminal_id = ${filter.terminalId}`]),
          ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`]),
          ...(filter.paymentId === undefined
            ? []
            : [sql`event_id IN (SELECT id FROM outbox_events WHERE payment_id = ${filter.paymentId})`])
        ])
        const rows = yield* orDie(sql<DeliveryRow>`SELECT * FROM deliveries WHERE ${condition}
          ORDER BY created_at DESC, id DESC
          LIMIT ${Math.max(0, filter.limit)}`)
        return rows.map(toDelivery)
      }),

      insertAttempt: Effect.fn("PgOutboxRepository.insertAttempt")(function*(attempt) {
        yield* orDie(sql`INSERT INTO delivery_attempts ${
          sql.insert({
            id: attempt.id,
            delivery_id: attempt.deliveryId,
            attempt_number: attempt.attemptNumber,
            at: time(attempt.at),
            url: attempt.url,
            status_code: attempt.statusCode,
            latency_ms: attempt.latencyMs,
            error: attempt.error
          })
        }`)
      }),

      listAttempts: Effect.fn("PgOutboxRepository.listAttempts")(function*(deliveryId) {
        const rows = yield* orDie(sql<AttemptRow>`SELECT * FROM delivery_attempts WHERE delivery_id = ${deliveryId}
          ORDER BY at, attempt_number`)
        return rows.map(toAttempt)
      })
    })
  })
)
