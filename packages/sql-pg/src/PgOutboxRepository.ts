/**
 * `OutboxRepository` on PostgreSQL: callback events (`outbox_events`), their deliveries
 * (`deliveries`) and the attempt log (`delivery_attempts`).
 *
 * Insertion order is the `seq` column of events and deliveries. `claimDue` leases due pending
 * deliveries in one statement (oldest `next_attempt_at` first, ties by insertion; read in the order
 * of `deliveries_due`, bitmap scans off in its transaction), skipping rows other transactions hold,
 * and stamps them in the same statement when asked, then loads their events; it takes the
 * deliveries of the given test clock only (of none by default), and `purge` keeps the events of test
 * clocks. `recordAttempts` is one statement; concurrent `recordAttempt` calls outside a transaction
 * are batched into `recordAttempts` (Effect request batching: those made in the same scheduler
 * turn, and those made while the batch before is being written, one at a time), so a pass records
 * its attempts in a few statements instead of one each. The ports here have no expected failure: a
 * duplicate id or a delivery of an unknown event is a defect.
 */
import { Effect, Exit, Layer, Option, Request } from "effect"
import { OutboxRepository, Traced, type AttemptRecord } from "@paydesk/core"
import type { Callback } from "@paydesk/core"
import { SqlClient } from "effect/sql"
import { Batching, Id } from "@paydesk/core"
import { fromTime, fromTimeOrNull, groupCommitted, inOneTransaction, jsonRows, ofClock, orDie, rounds, time, timeOrNull, together } from "./PgSupport.js"

/** The first key of the advisory locks of event recoveries (the second is the terminal id's hash). */
const recoveryLockSpace = 72_261_703

/** A delivery row read back from `to_jsonb` (times as ISO text). */
const fromJson = (row: DeliveryRow): DeliveryRow => {
  const at = (value: unknown): Date | null => value === null ? null : new Date(value as string)
  return {
    ...row,
    next_attempt_at: at(row.next_attempt_at),
    sending_at: at(row.sending_at),
    created_at: at(row.created_at)!,
    updated_at: at(row.updated_at)!,
    delivered_at: at(row.delivered_at)
  }
}

/** An `outbox_events` row as the driver returns it. */
interface EventRow {
  readonly id: string
  readonly terminal_id: string
  readonly event_type: Callback.EventType
  readonly payment_id: string | null
  readonly payout_id: string | null
  readonly body: string
  readonly test: boolean
  readonly test_clock_id: string | null
  readonly sequence: number
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
  testClockId: row.test_clock_id,
  sequence: row.sequence,
  createdAt: fromTime(row.created_at)
})

/** A `deliveries` row as the driver returns it. */
interface DeliveryRow {
  readonly id: string
  readonly event_id: string
  readonly terminal_id: string
  readonly kind: Callback.DeliveryKind
  readonly test_clock_id: string | null
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
  kind: row.kind,
  testClockId: row.test_clock_id,
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

/** The column values of an event. */
export const eventColumns = (event: Callback.OutboxEvent) => ({
  id: event.id,
  terminal_id: event.terminalId,
  event_type: event.eventType,
  payment_id: event.paymentId,
  payout_id: event.payoutId,
  body: event.body,
  test: event.test,
  test_clock_id: event.testClockId,
  sequence: event.sequence,
  created_at: time(event.createdAt)
})

/** The column values of a delivery. */
export const deliveryColumns = (d: Callback.Delivery) => ({
  id: d.id,
  event_id: d.eventId,
  terminal_id: d.terminalId,
  kind: d.kind,
  test_clock_id: d.testClockId,
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
  readonly response_body: string | null
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
  error: row.error,
  responseBody: row.response_body
})

/**
 * The rows of a `recordAttempts` statement: each record with its position, as one JSON parameter
 * (the delivery's columns as stored; `Date`s become ISO 8601 text in JSON).
 */
const recordRows = (records: ReadonlyArray<AttemptRecord>) =>
  jsonRows(records.map(({ attempt: a, delivery, expectedAttempts }, ord) => ({
    ord, expected: expectedAttempts, expected_status: "pending",
    ...deliveryColumns(delivery),
    a_id: a.id, a_number: a.attemptNumber, a_at: time(a.at), a_url: a.url, a_status_code: a.statusCode, a_latency_ms: a.latencyMs,
    a_error: a.error, a_response_body: a.responseBody
  })))

/** One `recordAttempt` waiting to be batched. */
class RecordAttempt extends Request.Class<AttemptRecord, boolean> {}

/**
 * `recordAttempts` statements of concurrent `recordAttempt`s running at once at most: the answers
 * arriving meanwhile wait for the next one. A pass's answers come one by one (the receivers answer
 * when they do); with one statement in flight they gather behind it, about 12 to a statement
 * instead of 8, and each statement's planning and commit is shared by more of them.
 */
export const recordBatchesInFlight = 1
/** Records in one `recordAttempts` statement at most. */
export const maxRecordBatch = 200
/**
 * A record statement still running after this long (waiting for a delivery's row lock, say) no longer
 * holds back the next: the records of the other deliveries go on in the next statement. One such
 * statement at a time (`Batching.batchResolver`'s `maxStalled`): a second one stuck holds the others
 * back until one of the two ends.
 */
export const recordStallMs = 2_000

/** `OutboxRepository` on the `SqlClient` in context. */
export const layer: Layer.Layer<OutboxRepository, never, SqlClient.SqlClient> = Layer.effect(
  OutboxRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** A delivery's stamp after stamping it at `now`: the one it holds when at or after `keepFrom`, else `now`. */
    const stampedAt = (now: number, keepFrom: number) =>
      sql`CASE WHEN sending_at IS NOT NULL AND sending_at >= ${time(keepFrom)} THEN sending_at ELSE ${time(now)} END`

    /**
     * Records of distinct deliveries in one statement: the guarded updates, and the attempts of those that matched.
     * Each delivery is read by its primary key, whatever the statistics say. Joined on the JSON rows alone
     * (estimated at 100) with `status = 'pending'` written as a constant, the planner read every pending
     * delivery through `deliveries_due` to hash-join them, so each statement grew with the backlog: the
     * expected status now comes from the rows (no partial index matches it), and the ids are also an
     * array (one parameter, so one statement text) matched on the primary key: a custom plan sees its
     * length, a generic one estimates 10, and either reads by key.
     */
    const recordRound = (records: ReadonlyArray<AttemptRecord>) =>
      Effect.map(
        orDie(sql<{ readonly ord: number }>`WITH v AS (
            SELECT * FROM jsonb_to_recordset(${recordRows(records)}::jsonb) AS v(
              ord int, expected int, expected_status text, id uuid, event_id uuid, terminal_id uuid, kind text, test_clock_id uuid, status text,
              attempts int, next_attempt_at timestamptz, sending_at timestamptz, last_status_code int, last_error text,
              created_at timestamptz, updated_at timestamptz, delivered_at timestamptz,
              a_id uuid, a_number int, a_at timestamptz, a_url text, a_status_code int, a_latency_ms int, a_error text, a_response_body text)
          ), d AS (
            UPDATE deliveries SET event_id = v.event_id, terminal_id = v.terminal_id, kind = v.kind, test_clock_id = v.test_clock_id,
              status = v.status, attempts = v.attempts, next_attempt_at = v.next_attempt_at, sending_at = v.sending_at,
              last_status_code = v.last_status_code, last_error = v.last_error, created_at = v.created_at,
              updated_at = v.updated_at, delivered_at = v.delivered_at
            FROM v
            WHERE deliveries.id = v.id AND deliveries.status = v.expected_status AND deliveries.attempts = v.expected
              AND deliveries.id = ANY(${`{${records.map(({ delivery }) => delivery.id).join(",")}}`}::uuid[])
            RETURNING v.ord
          )
          INSERT INTO delivery_attempts (id, delivery_id, attempt_number, at, url, status_code, latency_ms, error, response_body)
          SELECT v.a_id, v.id, v.a_number, v.a_at, v.a_url, v.a_status_code, v.a_latency_ms, v.a_error, v.a_response_body
          FROM v JOIN d ON d.ord = v.ord
          RETURNING (SELECT v.ord FROM v WHERE v.id = delivery_attempts.delivery_id) AS ord`),
        (rows) => {
          const recorded = new Set(rows.map((row) => row.ord))
          return records.map((_, ord) => recorded.has(ord))
        }
      )

    const recordAttempts = Traced.fn("PgOutboxRepository.recordAttempts")(function*(records: ReadonlyArray<AttemptRecord>) {
      const results = new Array<boolean>(records.length).fill(false)
      const all = rounds(records, (record) => record.delivery.id.toLowerCase())
      // Several rounds commit together, so a batch that dies and is redone records nothing twice.
      yield* inOneTransaction(sql, all.length, Effect.gen(function*() {
        for (const round of all) {
          const recorded = yield* recordRound(round.map((index) => records[index]!))
          round.forEach((index, i) => results[index] = recorded[i]!)
        }
      }))
      return results
    })

    // Concurrent `recordAttempt`s become one `recordAttempts`: those of one scheduler turn, and those
    // made while the statement before is in flight (group commit). When the batch dies (text
    // PostgreSQL refuses in one of them), each is recorded alone, so only its own fails.
    const recordBatch = (requests: ReadonlyArray<RecordAttempt>) =>
      Effect.map(recordAttempts(requests), (recorded) => recorded.map((value) => Exit.succeed(value)))
    const recordTogether = groupCommitted(
      sql,
      recordBatch,
      Batching.batchResolver<RecordAttempt>(recordBatch, { maxInFlight: recordBatchesInFlight, maxBatch: maxRecordBatch, stallMs: recordStallMs })
    )

    return OutboxRepository.of({
      insertEvent: Traced.fn("PgOutboxRepository.insertEvent")(function*(event, delivery) {
        const columns = sql.insert(eventColumns(event))
        // With its delivery: one statement (the delivery's foreign key is checked at its end).
        yield* orDie(delivery === undefined
          ? sql`INSERT INTO outbox_events ${columns}`
          : sql`WITH event AS (INSERT INTO outbox_events ${columns} RETURNING id)
              INSERT INTO deliveries ${sql.insert(deliveryColumns(delivery))}`)
      }),

      getEvent: Traced.fn("PgOutboxRepository.getEvent")(function*(id) {
        const rows = yield* orDie(sql<EventRow>`SELECT * FROM outbox_events WHERE id = ${id}`)
        return Option.map(Option.fromUndefinedOr(rows[0]), toEvent)
      }),

      listEvents: Traced.fn("PgOutboxRepository.listEvents")(function*(filter) {
        const condition = sql.and([
          ...(filter.paymentId === undefined ? [] : [sql`payment_id = ${filter.paymentId}`]),
          ...(filter.terminalId === undefined ? [] : [sql`terminal_id = ${filter.terminalId}`]),
          ...(filter.test === undefined ? [] : [sql`test = ${filter.test}`])
        ])
        const limit = filter.limit === undefined ? sql`` : sql`LIMIT ${filter.limit}`
        const rows = yield* orDie(sql<EventRow>`SELECT * FROM outbox_events WHERE ${condition} ORDER BY created_at, seq ${limit}`)
        return rows.map(toEvent)
      }),

      // The feed follows insertion order alone (`outbox_events_terminal`: terminal_id, seq).
      feedEvents: Traced.fn("PgOutboxRepository.feedEvents")(function*(filter) {
        const test = filter.test === undefined ? sql`` : sql`AND test = ${filter.test}`
        const rows = yield* orDie(sql<EventRow & { readonly seq: string }>`SELECT * FROM outbox_events
          WHERE terminal_id = ${filter.terminalId} AND seq > ${filter.afterPosition} ${test}
          ORDER BY seq LIMIT ${filter.limit}`)
        return rows.map((row) => ({ event: toEvent(row), position: Number(row.seq) }))
      }),

      eventPosition: Traced.fn("PgOutboxRepository.eventPosition")(function*(id) {
        const rows = yield* orDie(sql<{ terminal_id: string; seq: string }>`SELECT terminal_id, seq FROM outbox_events WHERE id = ${id}`)
        return Option.map(Option.fromUndefinedOr(rows[0]), (row) => ({ terminalId: row.terminal_id, position: Number(row.seq) }))
      }),

      // `issued` from the sequence itself: the events it numbered may be deleted or rolled back.
      feedPositions: Traced.fn("PgOutboxRepository.feedPositions")(function*(terminalId) {
        const rows = yield* orDie(sql<{ newest: string; issued: string }>`SELECT
          coalesce((SELECT max(seq) FROM outbox_events WHERE terminal_id = ${terminalId}), 0) AS newest,
          (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM outbox_events_seq_seq) AS issued`)
        return { newest: Number(rows[0]?.newest ?? 0), issued: Number(rows[0]?.issued ?? 0) }
      }),

      insertDelivery: Traced.fn("PgOutboxRepository.insertDelivery")(function*(delivery) {
        yield* orDie(sql`INSERT INTO deliveries ${sql.insert(deliveryColumns(delivery))}`)
      }),

      getDelivery: Traced.fn("PgOutboxRepository.getDelivery")(function*(id) {
        const rows = yield* orDie(sql<DeliveryRow>`SELECT * FROM deliveries WHERE id = ${id}`)
        return Option.map(Option.fromUndefinedOr(rows[0]), toDelivery)
      }),

      updateDelivery: Traced.fn("PgOutboxRepository.updateDelivery")(function*(delivery) {
        yield* orDie(sql`UPDATE deliveries SET ${sql.update(deliveryColumns(delivery), ["id"])} WHERE id = ${delivery.id}`)
      }),

      stampSending: Traced.fn("PgOutboxRepository.stampSending")(function*(id, now, keepFrom) {
        const rows = yield* orDie(sql<{ sending_at: Date }>`UPDATE deliveries SET sending_at = ${stampedAt(now, keepFrom)}
          WHERE id = ${id}
          RETURNING sending_at`)
        return rows[0] === undefined ? now : fromTime(rows[0].sending_at)
      }),

      renewLease: Traced.fn("PgOutboxRepository.renewLease")(function*(id, heldUntil, leaseUntil) {
        const rows = yield* orDie(sql<{ id: string }>`UPDATE deliveries SET next_attempt_at = ${time(leaseUntil)}
          WHERE id = ${id} AND status = 'pending' AND next_attempt_at = ${time(heldUntil)}
          RETURNING id`)
        return rows.length === 1
      }),

      endPending: Traced.fn("PgOutboxRepository.endPending")(function*(eventId, at) {
        if (!Id.isUuid(eventId)) return 0
        const rows = yield* orDie(sql<{ id: string }>`UPDATE deliveries
          SET status = 'delivered', delivered_at = ${time(at)}, next_attempt_at = NULL, sending_at = NULL, updated_at = ${time(at)}
          WHERE event_id = ${eventId} AND status = 'pending' AND NOT (kind = 'resend' AND next_attempt_at IS NOT NULL AND next_attempt_at > ${time(at)})
          RETURNING id`)
        return rows.length
      }),

      claimDue: Traced.fn("PgOutboxRepository.claimDue")(function*(now, leaseUntil, limit, testClockId, stamp) {
        // The due deliveries are read in the order of `deliveries_due`, stopping at `limit`. The table
        // changes faster than autovacuum analyses it, so under a backlog the planner (believing few
        // rows pending) chose a bitmap scan that read and sorted every due delivery, the whole backlog,
        // in each claim. Without bitmap scans (for the rest of the transaction: the caller's, or one of
        // its own), the ordered index scan is the plan. (Not sorts too: the final ORDER BY needs one, and
        // the penalty of a disabled sort made PostgreSQL 15 JIT-compile every claim, 120 ms each.)
        // The CTE keeps each delivery's due time, so the lease does not erase the claim order.
        const rows = yield* orDie(together(sql, 2, Effect.andThen(sql`SET LOCAL enable_bitmapscan = off`, sql<DeliveryRow>`WITH due AS (
            SELECT id, next_attempt_at AS due_at FROM deliveries
            WHERE status = 'pending' AND next_attempt_at <= ${time(now)} AND ${ofClock(sql, testClockId)}
            ORDER BY next_attempt_at, seq
            LIMIT ${Math.max(0, limit)}
            FOR UPDATE SKIP LOCKED
          ), claimed AS (
            UPDATE deliveries AS d SET next_attempt_at = ${time(leaseUntil)}${stamp === undefined ? sql`` : sql`, sending_at = ${stampedAt(now, stamp.keepFrom)}`}
            FROM due WHERE d.id = due.id
            RETURNING d.*, due.due_at
          )
          SELECT * FROM claimed ORDER BY due_at, seq`)))
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

      listDeliveries: Traced.fn("PgOutboxRepository.listDeliveries")(function*(filter) {
        const condition = sql.and([
          ...(filter.terminalId === undefined ? [] : [sql`terminal_id = ${filter.terminalId}`]),
          ...(filter.status === undefined ? [] : [sql`status = ${filter.status}`]),
          ...(filter.paymentId === undefined
            ? []
            : [sql`event_id IN (SELECT id FROM outbox_events WHERE payment_id = ${filter.paymentId})`]),
          ...(filter.test === undefined ? [] : [sql`event_id IN (SELECT id FROM outbox_events WHERE test = ${filter.test})`])
        ])
        // In the order they were written (a clock's deliveries carry the clock's time).
        const rows = yield* orDie(sql<DeliveryRow>`SELECT * FROM deliveries WHERE ${condition}
          ORDER BY seq DESC
          LIMIT ${Math.max(0, filter.limit)}`)
        return rows.map(toDelivery)
      }),

      insertAttempt: Traced.fn("PgOutboxRepository.insertAttempt")(function*(attempt) {
        yield* orDie(sql`INSERT INTO delivery_attempts ${
          sql.insert({
            id: attempt.id,
            delivery_id: attempt.deliveryId,
            attempt_number: attempt.attemptNumber,
            at: time(attempt.at),
            url: attempt.url,
            status_code: attempt.statusCode,
            latency_ms: attempt.latencyMs,
            error: attempt.error,
            response_body: attempt.responseBody
          })
        }`)
      }),

      // Outside a transaction: batched with the concurrent ones. Inside one: with the calls made side by side in it.
      recordAttempt: Traced.fn("PgOutboxRepository.recordAttempt")(function*(attempt, delivery, expectedAttempts) {
        return yield* recordTogether(new RecordAttempt({ attempt, delivery, expectedAttempts }))
      }),

      recordAttempts,

      listAttempts: Traced.fn("PgOutboxRepository.listAttempts")(function*(deliveryId) {
        const rows = yield* orDie(sql<AttemptRow>`SELECT * FROM delivery_attempts WHERE delivery_id = ${deliveryId}
          ORDER BY at, attempt_number`)
        return rows.map(toAttempt)
      }),

      pageEvents: Traced.fn("PgOutboxRepository.pageEvents")(function*(filter) {
        const terminalIds = filter.terminalIds.filter(Id.isUuid)
        if (terminalIds.length === 0) return []
        const status = filter.deliveryStatus
        const condition = sql.and([
          sql`e.terminal_id IN ${sql.in(terminalIds)}`,
          ...(filter.test === null ? [] : [sql`e.test = ${filter.test}`]),
          ...(filter.eventType === undefined ? [] : [sql`e.event_type = ${filter.eventType}`]),
          ...(filter.objectId === undefined || !Id.isUuid(filter.objectId)
            ? filter.objectId === undefined ? [] : [sql`false`]
            : [sql`(e.payment_id = ${filter.objectId} OR e.payout_id = ${filter.objectId})`]),
          ...(filter.createdFrom === undefined ? [] : [sql`e.created_at >= ${time(filter.createdFrom)}`]),
          ...(filter.createdBefore === undefined ? [] : [sql`e.created_at < ${time(filter.createdBefore)}`]),
          // Live events are on no clock: the plain bound, which the listing index scan stops at.
          ...(filter.retainedFrom === undefined
            ? []
            : filter.test === false
            ? [sql`e.created_at >= ${time(filter.retainedFrom)}`]
            : [sql`(e.created_at >= ${time(filter.retainedFrom)} OR e.test_clock_id IS NOT NULL)`]),
          ...(status === undefined ? [] : status === "none" ? [sql`d.id IS NULL`] : [sql`d.status = ${status}`]),
          ...(filter.before === undefined
            ? []
            : [sql`(e.created_at, e.sequence, e.id) < (${time(filter.before.createdAt)}, ${filter.before.sequence}, ${filter.before.id}::uuid)`])
        ])
        const rows = yield* orDie(sql<EventRow & { readonly delivery: DeliveryRow | null }>`
          SELECT e.*, to_jsonb(d.*) AS delivery FROM outbox_events e
          LEFT JOIN LATERAL (SELECT * FROM deliveries WHERE event_id = e.id ORDER BY status = 'delivered' DESC, status = 'pending' DESC, seq DESC LIMIT 1) d ON true
          WHERE ${condition}
          ORDER BY e.created_at DESC, e.sequence DESC, e.id DESC
          LIMIT ${Math.max(0, filter.limit)}`)
        return rows.map((row) => ({ event: toEvent(row), delivery: row.delivery === null ? null : toDelivery(fromJson(row.delivery)) }))
      }),

      // An advisory lock per terminal, taken in the order of the locks' keys (two recoveries of several
      // terminals never wait on each other crosswise, even when two ids hash alike).
      lockRecovery: (terminalIds) =>
        terminalIds.length === 0 ? Effect.void : Effect.asVoid(orDie(sql`
          SELECT pg_advisory_xact_lock(${recoveryLockSpace}::int4, t.k)
          FROM (SELECT DISTINCT hashtext(id) AS k FROM unnest(${[...terminalIds]}::text[]) AS u(id) ORDER BY k) AS t`)),

      deliveriesOf: Traced.fn("PgOutboxRepository.deliveriesOf")(function*(eventId) {
        if (!Id.isUuid(eventId)) return []
        const rows = yield* orDie(sql<DeliveryRow>`SELECT * FROM deliveries WHERE event_id = ${eventId} ORDER BY seq`)
        return rows.map(toDelivery)
      }),

      lastSequence: Traced.fn("PgOutboxRepository.lastSequence")(function*(objectId) {
        if (!Id.isUuid(objectId)) return 0
        const rows = yield* orDie(sql<{ readonly last: number | null }>`
          SELECT max(sequence)::int AS last FROM outbox_events WHERE payment_id = ${objectId} OR payout_id = ${objectId}`)
        return rows[0]?.last ?? 0
      }),

      attemptFacts: Traced.fn("PgOutboxRepository.attemptFacts")(function*(terminalId) {
        if (!Id.isUuid(terminalId)) return { last: null, lastSuccessAt: null, firstFailureAfterSuccess: null }
        // A test clock's attempts carry its time, not the endpoint's: they are not the endpoint's health.
        const ofTerminal = sql`delivery_id IN (SELECT id FROM deliveries WHERE terminal_id = ${terminalId} AND test_clock_id IS NULL)`
        const last = yield* orDie(sql<AttemptRow>`SELECT * FROM delivery_attempts WHERE ${ofTerminal}
          ORDER BY at DESC, attempt_number DESC LIMIT 1`)
        const success = yield* orDie(sql<{ readonly at: Date | null }>`SELECT max(at) AS at FROM delivery_attempts
          WHERE ${ofTerminal} AND error IS NULL`)
        const lastSuccessAt = fromTimeOrNull(success[0]?.at ?? null)
        const after = lastSuccessAt === null ? sql`true` : sql`at > ${time(lastSuccessAt)}`
        const failure = yield* orDie(sql<{ readonly at: Date | null }>`SELECT min(at) AS at FROM delivery_attempts
          WHERE ${ofTerminal} AND error IS NOT NULL AND ${after}`)
        return {
          last: last[0] === undefined ? null : toAttempt(last[0]),
          lastSuccessAt,
          firstFailureAfterSuccess: fromTimeOrNull(failure[0]?.at ?? null)
        }
      }),

      purge: Traced.fn("PgOutboxRepository.purge")(function*(before) {
        return yield* orDie(sql.withTransaction(Effect.gen(function*() {
          const old = yield* sql<{ readonly id: string }>`SELECT e.id FROM outbox_events e
            WHERE e.created_at < ${time(before)} AND e.test_clock_id IS NULL
              AND NOT EXISTS (SELECT 1 FROM deliveries p WHERE p.event_id = e.id AND p.status = 'pending')
            LIMIT 1000 FOR UPDATE SKIP LOCKED`
          if (old.length === 0) return 0
          const ids = old.map((r) => r.id)
          yield* sql`DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE event_id IN ${sql.in(ids)})`
          yield* sql`DELETE FROM deliveries WHERE event_id IN ${sql.in(ids)}`
          yield* sql`DELETE FROM outbox_events WHERE id IN ${sql.in(ids)}`
          return ids.length
        })))
      }),

      earliestDelivery: Traced.fn("PgOutboxRepository.earliestDelivery")(function*(testClockId) {
        if (!Id.isUuid(testClockId)) return null
        const rows = yield* orDie(sql<{ readonly at: Date | null }>`SELECT min(next_attempt_at) AS at FROM deliveries
          WHERE test_clock_id = ${testClockId} AND status = 'pending'`)
        return fromTimeOrNull(rows[0]?.at ?? null)
      }),

      releaseLeases: Traced.fn("PgOutboxRepository.releaseLeases")(function*(testClockId, at) {
        if (!Id.isUuid(testClockId)) return 0
        const rows = yield* orDie(sql<{ readonly id: string }>`UPDATE deliveries SET next_attempt_at = ${time(at)}
          WHERE test_clock_id = ${testClockId} AND status = 'pending' AND sending_at IS NOT NULL AND next_attempt_at > ${time(at)}
          RETURNING id`)
        return rows.length
      })
    })
  })
)
