/**
 * The recurring-billing ports on PostgreSQL: plans, subscriptions and charge attempts.
 *
 * A plan's terminals live in `plan_terminals`, their order kept by `position`; a subscription's
 * terms are flattened into columns of `subscriptions`. Unique keys become `WriteConflict`: plan
 * `(code, version)`, subscription `pay_token`, charge `(subscription_id, cycle_number, attempt)`
 * and every primary key. Subscription updates are optimistic (`version` one above the stored
 * one). The claims lease rows in one `UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED)`
 * statement, so concurrent workers never take the same row; they take the rows of the given test
 * clock only (of none by default).
 */
import { Effect, Exit, Layer, Option, Request } from "effect"
import { ChargeRepository, Id, PlanRepository, SubscriptionRepository, WriteConflict } from "@paydesk/core"
import type { Charge, Plan, Schedule, Subscription } from "@paydesk/core"
import { SqlClient } from "effect/sql"
import type { Fragment } from "effect/sql/Statement"
import {
  byIds,
  byUuid,
  conflictOfBatch,
  conflictOnUnique,
  first,
  fromRub,
  fromTime,
  fromTimeOrNull,
  insertRows,
  ofClock,
  keysetAfter,
  orDie,
  rounds,
  rub,
  sideBySide,
  time,
  timeOrNull,
  together,
  updateRows
} from "./PgSupport.js"

type Time = Date | string
type Numeric = string

interface PlanRow {
  readonly id: string
  readonly code: string
  readonly version: number
  readonly name: string
  readonly interval: Schedule.Interval
  readonly schedule: Schedule.ScheduleKind
  readonly mode: Subscription.Mode
  readonly cap_amount: Numeric | null
  readonly payer_amount: Numeric | null
  readonly merchant_amount: Numeric | null
  readonly max_cycles: number | null
  readonly consent_text: string
  readonly policy_version: string
  readonly active: boolean
  readonly created_at: Time
  readonly terminal_ids: ReadonlyArray<string>
}

interface SubscriptionRow {
  readonly id: string
  readonly terminal_id: string
  readonly plan_id: string
  readonly payer_id: string | null
  readonly merchant_subscription_ref: string | null
  readonly description: string | null
  readonly provider_state: Subscription.ProviderState
  readonly billing_status: Subscription.BillingStatus
  readonly mode: Subscription.Mode
  readonly plan_code: string
  readonly plan_version: number
  readonly interval: Schedule.Interval
  readonly schedule: Schedule.ScheduleKind
  readonly merchant_amount: Numeric
  readonly payer_amount: Numeric
  readonly max_cycles: number | null
  readonly consent_text: string
  readonly policy_version: string
  readonly h2h: boolean
  readonly environment: "prod" | "sandbox"
  readonly test_clock_id: string | null
  readonly successful_cycles: number
  readonly consecutive_failures: number
  readonly next_cycle_index: number
  readonly next_charge_at: Time | null
  readonly charge_lease_until: Time | null
  readonly first_payment_id: string | null
  readonly review_reason: string | null
  readonly review_since: Time | null
  readonly pay_token: string
  readonly csrf_token: string
  readonly redirect_url: string | null
  readonly created_at: Time
  readonly updated_at: Time
  readonly activated_at: Time | null
  readonly stopped_at: Time | null
  readonly version: number
}

interface ChargeRow {
  readonly id: string
  readonly subscription_id: string
  readonly terminal_id: string
  readonly cycle_number: number
  readonly attempt: number
  readonly kind: Charge.Charge["kind"]
  readonly status: Charge.Status
  readonly validation_status: Charge.ValidationStatus
  readonly validation_reason: string | null
  readonly payment_id: string | null
  readonly amount: Numeric
  readonly expected_amount: Numeric
  readonly idempotency_key: string
  readonly message: string | null
  readonly scheduled_at: Time
  readonly actual_at: Time | null
  readonly created_at: Time
  readonly updated_at: Time
}

const rubOrNull = (kopecks: bigint | null): string | null => (kopecks === null ? null : rub(kopecks))
const fromRubOrNull = (value: Numeric | null): bigint | null => (value === null ? null : fromRub(value))

const toPlan = (row: PlanRow): Plan.Plan => ({
  id: row.id,
  code: row.code,
  name: row.name,
  version: row.version,
  interval: row.interval,
  schedule: row.schedule,
  mode: row.mode,
  capAmount: fromRubOrNull(row.cap_amount),
  payerAmount: fromRubOrNull(row.payer_amount),
  merchantAmount: fromRubOrNull(row.merchant_amount),
  maxCycles: row.max_cycles,
  consentText: row.consent_text,
  policyVersion: row.policy_version,
  active: row.active,
  terminalIds: [...row.terminal_ids],
  createdAt: fromTime(row.created_at)
})

const toSubscription = (row: SubscriptionRow): Subscription.Subscription => ({
  id: row.id,
  terminalId: row.terminal_id,
  planId: row.plan_id,
  payerId: row.payer_id,
  merchantSubscriptionRef: row.merchant_subscription_ref,
  description: row.description,
  providerState: row.provider_state,
  billingStatus: row.billing_status,
  terms: {
    mode: row.mode,
    planCode: row.plan_code,
    planVersion: row.plan_version,
    interval: row.interval,
    schedule: row.schedule,
    merchantAmount: fromRub(row.merchant_amount),
    payerAmount: fromRub(row.payer_amount),
    maxCycles: row.max_cycles,
    consentText: row.consent_text,
    policyVersion: row.policy_version
  },
  h2h: row.h2h,
  environment: row.environment,
  testClockId: row.test_clock_id,
  successfulCycles: row.successful_cycles,
  consecutiveFailures: row.consecutive_failures,
  nextCycleIndex: row.next_cycle_index,
  nextChargeAt: fromTimeOrNull(row.next_charge_at),
  chargeLeaseUntil: fromTimeOrNull(row.charge_lease_until),
  firstPaymentId: row.first_payment_id,
  reviewReason: row.review_reason,
  reviewSince: fromTimeOrNull(row.review_since),
  payToken: row.pay_token,
  csrfToken: row.csrf_token,
  redirectUrl: row.redirect_url,
  createdAt: fromTime(row.created_at),
  updatedAt: fromTime(row.updated_at),
  activatedAt: fromTimeOrNull(row.activated_at),
  stoppedAt: fromTimeOrNull(row.stopped_at),
  version: row.version
})

/** The columns of a subscription, as parameters. */
const subscriptionColumns = (s: Subscription.Subscription) => ({
  id: s.id,
  terminal_id: s.terminalId,
  plan_id: s.planId,
  payer_id: s.payerId,
  merchant_subscription_ref: s.merchantSubscriptionRef,
  description: s.description,
  provider_state: s.providerState,
  billing_status: s.billingStatus,
  mode: s.terms.mode,
  plan_code: s.terms.planCode,
  plan_version: s.terms.planVersion,
  interval: s.terms.interval,
  schedule: s.terms.schedule,
  merchant_amount: rub(s.terms.merchantAmount),
  payer_amount: rub(s.terms.payerAmount),
  max_cycles: s.terms.maxCycles,
  consent_text: s.terms.consentText,
  policy_version: s.terms.policyVersion,
  h2h: s.h2h,
  environment: s.environment,
  test_clock_id: s.testClockId,
  successful_cycles: s.successfulCycles,
  consecutive_failures: s.consecutiveFailures,
  next_cycle_index: s.nextCycleIndex,
  next_charge_at: timeOrNull(s.nextChargeAt),
  charge_lease_until: timeOrNull(s.chargeLeaseUntil),
  first_payment_id: s.firstPaymentId,
  review_reason: s.reviewReason,
  review_since: timeOrNull(s.reviewSince),
  pay_token: s.payToken,
  csrf_token: s.csrfToken,
  redirect_url: s.redirectUrl,
  created_at: time(s.createdAt),
  updated_at: time(s.updatedAt),
  activated_at: timeOrNull(s.activatedAt),
  stopped_at: timeOrNull(s.stoppedAt),
  version: s.version
})

const toCharge = (row: ChargeRow): Charge.Charge => ({
  id: row.id,
  subscriptionId: row.subscription_id,
  terminalId: row.terminal_id,
  cycleNumber: row.cycle_number,
  attempt: row.attempt,
  kind: row.kind,
  status: row.status,
  validationStatus: row.validation_status,
  validationReason: row.validation_reason,
  paymentId: row.payment_id,
  amount: fromRub(row.amount),
  expectedAmount: fromRub(row.expected_amount),
  idempotencyKey: row.idempotency_key,
  message: row.message,
  scheduledAt: fromTime(row.scheduled_at),
  actualAt: fromTimeOrNull(row.actual_at),
  createdAt: fromTime(row.created_at),
  updatedAt: fromTime(row.updated_at)
})

/** The columns of a charge attempt, as parameters. */
const chargeColumns = (c: Charge.Charge) => ({
  id: c.id,
  subscription_id: c.subscriptionId,
  terminal_id: c.terminalId,
  cycle_number: c.cycleNumber,
  attempt: c.attempt,
  kind: c.kind,
  status: c.status,
  validation_status: c.validationStatus,
  validation_reason: c.validationReason,
  payment_id: c.paymentId,
  amount: rub(c.amount),
  expected_amount: rub(c.expectedAmount),
  idempotency_key: c.idempotencyKey,
  message: c.message,
  scheduled_at: time(c.scheduledAt),
  actual_at: timeOrNull(c.actualAt),
  created_at: time(c.createdAt),
  updated_at: time(c.updatedAt)
})

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** `Charge.nextVoidAt` of the attempt `c`, in SQL. */
const nextVoidAt = (sql: SqlClient.SqlClient, backoff: Charge.VoidBackoff): Fragment =>
  sql`(c.updated_at + CASE WHEN c.status = 'unconfirmed'
    THEN LEAST(GREATEST(c.updated_at - c.created_at, ${backoff.minMs}::float8 * interval '1 millisecond'), ${backoff.maxMs}::float8 * interval '1 millisecond')
    ELSE ${backoff.minMs}::float8 * interval '1 millisecond' END)`

/** `PlanRepository` on the `SqlClient` in context. */
export const layerPlanRepository: Layer.Layer<PlanRepository, never, SqlClient.SqlClient> = Layer.effect(
  PlanRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const terminalIds = sql`ARRAY(SELECT pt.terminal_id::text FROM plan_terminals pt
      WHERE pt.plan_id = p.id ORDER BY pt.position) AS terminal_ids`
    return PlanRepository.of({
      insert: (p) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO plans (id, code, version, name, interval, schedule, mode, cap_amount, payer_amount,
              merchant_amount, max_cycles, consent_text, policy_version, active, created_at)
            VALUES (${p.id}, ${p.code}, ${p.version}, ${p.name}, ${p.interval}, ${p.schedule}, ${p.mode},
              ${rubOrNull(p.capAmount)}, ${rubOrNull(p.payerAmount)}, ${rubOrNull(p.merchantAmount)}, ${p.maxCycles},
              ${p.consentText}, ${p.policyVersion}, ${p.active}, ${time(p.createdAt)})`
          if (p.terminalIds.length > 0) {
            yield* sql`INSERT INTO plan_terminals (plan_id, terminal_id, position)
              SELECT ${p.id}, t.id::uuid, t.ord - 1
              FROM unnest(${p.terminalIds}::text[]) WITH ORDINALITY AS t(id, ord)`
          }
        })).pipe(conflictOnUnique("plans_code_version")),
      get: (id) =>
        byUuid(id, (id) =>
          orDie(sql<PlanRow>`SELECT p.*, ${terminalIds} FROM plans p WHERE p.id = ${id}`).pipe(
            Effect.map((rows) => first(rows, toPlan))
          )),
      latestVersion: (code) =>
        orDie(sql<{ readonly latest: number }>`SELECT COALESCE(MAX(version), 0) AS latest FROM plans
          WHERE code = ${code}`).pipe(Effect.map((rows) => rows[0]?.latest ?? 0)),
      deactivateOlder: (code, version) =>
        orDie(sql`UPDATE plans SET active = false WHERE code = ${code} AND version < ${version} AND active`).pipe(
          Effect.asVoid
        ),
      activeVersions: (code) =>
        orDie(sql<PlanRow>`SELECT p.*, ${terminalIds} FROM plans p WHERE p.code = ${code} AND p.active ORDER BY p.version`).pipe(
          Effect.map((rows) => rows.map(toPlan))
        ),
      listForTerminal: (terminalId, options) =>
        Id.isUuid(terminalId)
          ? orDie(sql<PlanRow>`SELECT p.*, ${terminalIds} FROM plans p
              JOIN plan_terminals own ON own.plan_id = p.id AND own.terminal_id = ${terminalId}
              WHERE ${options.activeOnly} = false OR p.active
              ORDER BY p.code COLLATE "C", p.version`).pipe(Effect.map((rows) => rows.map(toPlan)))
          : Effect.succeed([])
    })
  })
)

const stale = (s: Subscription.Subscription): WriteConflict =>
  new WriteConflict({
    constraint: "subscriptions_version",
    message: `subscription ${s.id} is not at version ${s.version - 1}`
  })

const byNextCharge = (a: Subscription.Subscription, b: Subscription.Subscription): number =>
  (a.nextChargeAt ?? 0) - (b.nextChargeAt ?? 0) || compareText(a.id, b.id)
const byUpdate = (a: Subscription.Subscription, b: Subscription.Subscription): number =>
  a.updatedAt - b.updatedAt || compareText(a.id, b.id)

/** A subscription read by id, with the ones read side by side. */
class SubscriptionById extends Request.Class<{ readonly id: string }, Option.Option<Subscription.Subscription>> {}
/** A subscription written, with the ones written side by side. */
class SubscriptionUpdate extends Request.Class<{ readonly subscription: Subscription.Subscription }, void, WriteConflict> {}

/** `SubscriptionRepository` on the `SqlClient` in context. */
export const layerSubscriptionRepository: Layer.Layer<SubscriptionRepository, never, SqlClient.SqlClient> = Layer.effect(
  SubscriptionRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Reads, locks and writes made side by side (the charge runner's) go as one statement each.
    const getTogether = sideBySide(
      sql,
      byIds<SubscriptionById, SubscriptionRow, Subscription.Subscription>(sql, (ids) => sql<SubscriptionRow>`SELECT * FROM subscriptions WHERE id IN (${ids})`, toSubscription)
    )
    // Locked in id order, so two batches locking the same rows wait for each other instead of deadlocking.
    const lockTogether = sideBySide(
      sql,
      byIds<SubscriptionById, SubscriptionRow, Subscription.Subscription>(
        sql,
        (ids) => sql<SubscriptionRow>`SELECT * FROM subscriptions WHERE id IN (${ids}) ORDER BY id FOR UPDATE`,
        toSubscription
      )
    )
    const updateTogether = sideBySide(sql, (requests: ReadonlyArray<SubscriptionUpdate>, inTransaction) =>
      Effect.gen(function*() {
        const updated = new Set<number>()
        // One statement per round (a subscription written twice side by side goes in a later one).
        const all = rounds(requests, (r) => r.subscription.id.toLowerCase())
        const write = Effect.forEach(all, (round) =>
          Effect.map(
            updateRows(sql, "subscriptions", round.map((i) => subscriptionColumns(requests[i]!.subscription)), sql`t.version = r.version - 1`),
            (rows) => {
              const ids = new Set(rows.map((row) => row.id))
              for (const i of round) if (ids.has(requests[i]!.subscription.id.toLowerCase())) updated.add(i)
            }
          ), { discard: true })
        return yield* together(sql, all.length, write).pipe(
          conflictOnUnique("subscriptions_pay_token"),
          Effect.map(() => requests.map((r, i) => updated.has(i) ? Exit.void : Exit.fail(stale(r.subscription)))),
          Effect.catchTag("WriteConflict", conflictOfBatch<void>(requests.length, inTransaction))
        )
      }))
    const unleased = (now: number) => sql`(charge_lease_until IS NULL OR charge_lease_until <= ${time(now)})`
    // One statement: the subquery locks the due rows (skipping held ones), the update leases them.
    const lease = (due: Fragment, leaseUntil: number, order: typeof byUpdate) =>
      orDie(sql<SubscriptionRow>`UPDATE subscriptions
        SET charge_lease_until = ${time(leaseUntil)}, version = version + 1
        WHERE id IN (${due})
        RETURNING *`).pipe(Effect.map((rows) => rows.map(toSubscription).sort(order)))
    return SubscriptionRepository.of({
      insert: (s) =>
        sql`INSERT INTO subscriptions ${sql.insert(subscriptionColumns(s))}`.pipe(
          Effect.asVoid,
          conflictOnUnique("subscriptions_pay_token")
        ),
      get: (id) => byUuid(id, (id) => getTogether(new SubscriptionById({ id }))),
      getForUpdate: (id) => byUuid(id, (id) => lockTogether(new SubscriptionById({ id }))),
      update: (subscription) => updateTogether(new SubscriptionUpdate({ subscription })),
      findByPayToken: (token) =>
        orDie(sql<SubscriptionRow>`SELECT * FROM subscriptions WHERE pay_token = ${token}`).pipe(
          Effect.map((rows) => first(rows, toSubscription))
        ),
      list: (filter, page) => {
        const terminalIds = filter.terminalIds.filter(Id.isUuid)
        if (terminalIds.length === 0) return Effect.succeed({ items: [], total: 0 })
        const where = sql`terminal_id IN ${sql.in(terminalIds)}
          AND (${filter.providerState}::text IS NULL OR provider_state = ${filter.providerState})
          AND (${filter.environment ?? null}::text IS NULL OR environment = ${filter.environment ?? null})`
        const after = keysetAfter(sql, page.after, (id) =>
          sql`SELECT created_at FROM subscriptions WHERE id = ${id}::uuid AND terminal_id IN ${sql.in(terminalIds)}`)
        return orDie(Effect.all({
          items: sql<SubscriptionRow>`SELECT * FROM subscriptions WHERE ${where} ${after}
            ORDER BY created_at DESC, id DESC
            LIMIT ${Math.max(0, page.limit)} OFFSET ${Math.max(0, page.offset)}`,
          total: sql<{ readonly total: number }>`SELECT count(*)::int AS total FROM subscriptions WHERE ${where}`
        })).pipe(Effect.map(({ items, total }) => ({ items: items.map(toSubscription), total: total[0]?.total ?? 0 })))
      },
      claimDue: (now, leaseUntil, limit, testClockId) =>
        lease(
          sql`SELECT id FROM subscriptions
            WHERE provider_state = 'active' AND billing_status = 'enabled'
              AND next_charge_at <= ${time(now)} AND ${unleased(now)} AND ${ofClock(sql, testClockId)}
            ORDER BY next_charge_at, id
            LIMIT ${Math.max(0, limit)}
            FOR UPDATE SKIP LOCKED`,
          leaseUntil,
          byNextCharge
        ),
      claimStopPending: (now, leaseUntil, limit, testClockId) =>
        lease(
          sql`SELECT id FROM subscriptions
            WHERE billing_status = 'stop_pending' AND ${unleased(now)} AND ${ofClock(sql, testClockId)}
            ORDER BY updated_at, id
            LIMIT ${Math.max(0, limit)}
            FOR UPDATE SKIP LOCKED`,
          leaseUntil,
          byUpdate
        ),
      earliestDue: (testClockId) =>
        Id.isUuid(testClockId)
          ? orDie(sql<{ readonly at: Date | null }>`SELECT min(CASE
                WHEN billing_status = 'stop_pending' THEN coalesce(charge_lease_until, updated_at)
                WHEN provider_state = 'active' AND billing_status = 'enabled' AND next_charge_at IS NOT NULL
                  THEN greatest(next_charge_at, charge_lease_until)
              END) AS at
              FROM subscriptions WHERE test_clock_id = ${testClockId}`).pipe(Effect.map((rows) => fromTimeOrNull(rows[0]?.at ?? null)))
          : Effect.succeed(null),
      anyOngoing: (testClockId) =>
        Id.isUuid(testClockId)
          ? orDie(sql`SELECT 1 FROM subscriptions WHERE test_clock_id = ${testClockId} AND billing_status <> 'stopped' LIMIT 1`).pipe(
            Effect.map((rows) => rows.length > 0)
          )
          : Effect.succeed(false)
    })
  })
)

/** A charge read by id, with the ones read side by side. */
class ChargeById extends Request.Class<{ readonly id: string }, Option.Option<Charge.Charge>> {}
/** A cycle's attempts read, with the ones read side by side. */
class CycleAttempts extends Request.Class<{ readonly subscriptionId: string; readonly cycleNumber: number }, ReadonlyArray<Charge.Charge>> {}
/** A charge written (inserted or updated), with the ones written side by side. */
class ChargeWrite extends Request.Class<{ readonly charge: Charge.Charge }, void, WriteConflict> {}
/** A charge updated, with the ones updated side by side. */
class ChargeUpdate extends Request.Class<{ readonly charge: Charge.Charge }, void> {}

/** `ChargeRepository` on the `SqlClient` in context. */
export const layerChargeRepository: Layer.Layer<ChargeRepository, never, SqlClient.SqlClient> = Layer.effect(
  ChargeRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Reads and writes made side by side (the charge runner's) go as one statement each.
    const getTogether = sideBySide(
      sql,
      byIds<ChargeById, ChargeRow, Charge.Charge>(sql, (ids) => sql<ChargeRow>`SELECT * FROM charges WHERE id IN (${ids})`, toCharge)
    )
    const insertTogether = sideBySide(sql, (requests: ReadonlyArray<ChargeWrite>, inTransaction) =>
      insertRows(sql, "charges", requests.map((r) => chargeColumns(r.charge))).pipe(
        conflictOnUnique("charges_subscription_cycle_attempt"),
        Effect.as(requests.map(() => Exit.void)),
        Effect.catchTag("WriteConflict", conflictOfBatch<void>(requests.length, inTransaction))
      ))
    const updateTogether = sideBySide(sql, (requests: ReadonlyArray<ChargeUpdate>) =>
      Effect.gen(function*() {
        // One statement per round (a charge written twice side by side goes in a later one).
        const all = rounds(requests, (r) => r.charge.id.toLowerCase())
        const write = Effect.forEach(all, (round) => updateRows(sql, "charges", round.map((i) => chargeColumns(requests[i]!.charge))), { discard: true })
        yield* orDie(together(sql, all.length, write))
        return requests.map(() => Exit.void)
      }))
    const cyclesTogether = sideBySide(sql, (requests: ReadonlyArray<CycleAttempts>) =>
      Effect.gen(function*() {
        const key = (subscriptionId: string, cycleNumber: number) => `${subscriptionId.toLowerCase()}/${cycleNumber}`
        // Each (subscription, cycle) once, whoever asked for it twice.
        const cycles = [...new Map(requests.map((r) => [key(r.subscriptionId, r.cycleNumber), { s: r.subscriptionId, n: r.cycleNumber }])).values()]
        const rows = yield* orDie(sql<ChargeRow>`SELECT * FROM charges
          WHERE (subscription_id, cycle_number) IN (SELECT s, n FROM jsonb_to_recordset(${JSON.stringify(cycles)}::jsonb) AS v(s uuid, n int))
          ORDER BY attempt`)
        const found = new Map<string, Array<Charge.Charge>>()
        for (const row of rows) {
          const k = key(row.subscription_id, row.cycle_number)
          found.set(k, [...(found.get(k) ?? []), toCharge(row)])
        }
        return requests.map((r) => Exit.succeed(found.get(key(r.subscriptionId, r.cycleNumber)) ?? []))
      }))
    return ChargeRepository.of({
      insert: (charge) => insertTogether(new ChargeWrite({ charge })),
      get: (id) => byUuid(id, (id) => getTogether(new ChargeById({ id }))),
      update: (charge) => updateTogether(new ChargeUpdate({ charge })),
      listForCycle: (subscriptionId, cycleNumber) =>
        Id.isUuid(subscriptionId) ? cyclesTogether(new CycleAttempts({ subscriptionId, cycleNumber })) : Effect.succeed([]),
      listBySubscription: (subscriptionId, limit, options) =>
        Id.isUuid(subscriptionId)
          ? orDie(sql<ChargeRow>`SELECT * FROM charges WHERE subscription_id = ${subscriptionId}
              AND (${options?.bookedOnly === true} = false OR status <> 'pending')
              ORDER BY created_at DESC, cycle_number DESC, attempt DESC
              LIMIT ${Math.max(0, limit)}`).pipe(Effect.map((rows) => rows.map(toCharge)))
          : Effect.succeed([]),
      claimOpenOfStopped: (now, backoff, limit, testClockId) =>
        orDie(sql<ChargeRow>`UPDATE charges SET updated_at = ${time(now)}
          WHERE id IN (
            SELECT c.id FROM charges c JOIN subscriptions s ON s.id = c.subscription_id
            WHERE c.status IN ('pending', 'unconfirmed') AND c.updated_at <= ${time(now - backoff.minMs)}
              AND ${nextVoidAt(sql, backoff)} <= ${time(now)}
              AND s.billing_status IN ('stop_pending', 'stopped') AND ${ofClock(sql, testClockId, sql`s.test_clock_id`)}
            ORDER BY c.updated_at, c.id
            LIMIT ${Math.max(0, limit)}
            FOR UPDATE OF c SKIP LOCKED)
          RETURNING *`).pipe(Effect.map((rows) => rows.map(toCharge).sort((a, b) => a.createdAt - b.createdAt))),
      earliestOpenOfStopped: (testClockId, backoff) =>
        Id.isUuid(testClockId)
          ? orDie(sql<{ readonly at: Date | null }>`SELECT min(${nextVoidAt(sql, backoff)}) AS at
              FROM charges c JOIN subscriptions s ON s.id = c.subscription_id
              WHERE s.test_clock_id = ${testClockId} AND c.status IN ('pending', 'unconfirmed')
                AND s.billing_status IN ('stop_pending', 'stopped')`).pipe(Effect.map((rows) => fromTimeOrNull(rows[0]?.at ?? null)))
          : Effect.succeed(null)
    })
  })
)
