/**
 * Use cases of recurring subscriptions: plans for merchants, creation with every rule of the
 * spec, reading, charge history, stop, the payer's consent, the scheduled charge runner and the
 * operator's resume out of review.
 *
 * No charge ever happens before the payer's consent (or, on H2H terminals, before creation,
 * which carries the merchant's consent). Every acquirer charge carries a key derived from
 * (subscription, cycle, attempt) and is recorded `pending` first, so a crash or a second worker
 * reconciles with the acquirer instead of charging twice.
 */
import { Clock, Effect, Option, Predicate, Result } from "effect"
import * as Access from "../Access.js"
import type { Principal } from "../Access.js"
import { formatRub, parseRub } from "../Amount.js"
import * as Charge from "../Charge.js"
import { PaydeskConfig } from "../Config.js"
import {
  AmountExceedsCeiling,
  IdempotencyConflict,
  InvalidJsonBody,
  InvalidRequest,
  NotFound,
  OperationNotAllowed,
  PlanNotAvailable,
  RecurringNotConfigured,
  SubscriptionFieldsMissing,
  CsrfRejected,
  TerminalIdRequired,
  TerminalUnavailable
} from "../Errors.js"
import * as Idempotency from "../Idempotency.js"
import { isUuid } from "../Id.js"
import type { Payment } from "../Payment.js"
import type { Plan } from "../Plan.js"
import { intervalLabelRu } from "../Schedule.js"
import * as Subscription from "../Subscription.js"
import type { Terminal } from "../Terminal.js"
import { Acquirer, type ChargeOutcome } from "../ports/Acquirer.js"
import { ChargeRepository } from "../ports/ChargeRepository.js"
import { Entropy } from "../ports/Entropy.js"
import { IdempotencyStore } from "../ports/IdempotencyStore.js"
import { PaymentRepository } from "../ports/PaymentRepository.js"
import { PlanRepository } from "../ports/PlanRepository.js"
import { SubscriptionRepository } from "../ports/SubscriptionRepository.js"
import { TerminalRepository } from "../ports/TerminalRepository.js"
import { atomic } from "./Atomic.js"
import * as Payments from "./Payments.js"
import * as Lifecycle from "./SubscriptionLifecycle.js"
import * as Outbox from "./Outbox.js"
import * as Settlement from "./Settlement.js"

type Sub = Subscription.Subscription

const bytes = (s: string): number => new TextEncoder().encode(s).length
const invalid = (field: string, message: string) => new InvalidRequest({ field, message })

/** Plans of a terminal; 503 when the terminal has no recurring configuration at all. */
export const listPlans = Effect.fn("Subscriptions.listPlans")(function*(principal: Principal, terminalId: string | null | undefined) {
  if (terminalId === undefined || terminalId === null || terminalId === "") {
    return yield* TerminalIdRequired.of()
  }
  const terminal = yield* Access.resolveTerminal(principal, terminalId, "read")
  const plans = yield* (yield* PlanRepository).listForTerminal(terminal.id, { activeOnly: false })
  if (plans.length === 0) return yield* RecurringNotConfigured.plans()
  return plans.filter((plan) => plan.active)
})

/** The fields a creation body may carry. */
export const createFields = ["terminal_id", "plan_id", "amount", "payer_id", "merchant_subscription_ref", "description"] as const

/** The creation body, after the rule "unknown fields are `invalid json body`". */
interface CreateBody {
  readonly terminal_id?: string
  readonly plan_id?: string
  readonly amount?: string
  readonly payer_id?: string
  readonly merchant_subscription_ref?: string
  readonly description?: string
}

const decodeBody = (body: unknown): Result.Result<CreateBody, InvalidJsonBody> => {
  if (!Predicate.isObject(body) || Array.isArray(body)) return Result.fail(InvalidJsonBody.of())
  for (const [key, value] of Object.entries(body)) {
    if (!(createFields as ReadonlyArray<string>).includes(key)) return Result.fail(InvalidJsonBody.of())
    if (value !== null && typeof value !== "string") return Result.fail(InvalidJsonBody.of())
  }
  const clean = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null)) as CreateBody
  return Result.succeed(clean)
}

/** Checks the mode rules of a plan and returns the amounts of one charge (kopecks). */
const termsFor = Effect.fn("Subscriptions.termsFor")(function*(plan: Plan, body: CreateBody) {
  if (plan.mode === "ceiling") {
    if (body.payer_id !== undefined || body.description !== undefined) {
      return yield* invalid(
        body.payer_id !== undefined ? "payer_id" : "description",
        "payer_id and description are not accepted for a plan with a ceiling"
      )
    }
    if (body.amount === undefined) return yield* SubscriptionFieldsMissing.of(["amount"])
    const amount = parseRub(body.amount)
    if (Result.isFailure(amount)) return yield* amount.failure
    const cap = plan.capAmount ?? 0n
    if (amount.success > cap) {
      const ceiling = formatRub(cap)
      return yield* new AmountExceedsCeiling({
        ceiling,
        interval: plan.interval,
        message: `Сумма превышает лимит ${ceiling} RUB за ${intervalLabelRu(plan.interval)}`
      })
    }
    return { payerAmount: amount.success, merchantAmount: amount.success }
  }
  if (body.amount !== undefined) return yield* invalid("amount", "amount is not accepted for a fixed-tariff plan")
  if (body.payer_id === undefined || body.payer_id.length === 0) {
    return yield* invalid("payer_id", "payer_id is required for a fixed-tariff plan")
  }
  if (bytes(body.payer_id) > 32) return yield* invalid("payer_id", "payer_id must be at most 32 bytes")
  if (body.description !== undefined && bytes(body.description) > 128) {
    return yield* invalid("description", "description must be at most 128 bytes")
  }
  return { payerAmount: plan.payerAmount ?? 0n, merchantAmount: plan.merchantAmount ?? plan.payerAmount ?? 0n }
})

/** Creates a subscription (201), or replays the one created with this Idempotency-Key (200). */
export const create = Effect.fn("Subscriptions.create")(function*(
  principal: Principal,
  input: { readonly idempotencyKey: string | null | undefined; readonly body: unknown }
) {
  const decoded = decodeBody(input.body)
  if (Result.isFailure(decoded)) return yield* decoded.failure
  const body = decoded.success
  if (body.terminal_id === undefined || body.terminal_id === "") {
    return yield* TerminalIdRequired.of()
  }
  const terminal = yield* Access.resolveTerminal(principal, body.terminal_id, "subscription_write")
  const plans = yield* PlanRepository
  if ((yield* plans.listForTerminal(terminal.id, { activeOnly: false })).length === 0) {
    return yield* RecurringNotConfigured.subscriptions()
  }
  const key = input.idempotencyKey ?? ""
  const missing = [
    ...(body.plan_id === undefined || body.plan_id === "" ? ["plan_id"] : []),
    ...(key === "" ? ["Idempotency-Key"] : [])
  ]
  if (missing.length > 0) return yield* SubscriptionFieldsMissing.of(missing)
  const validKey = Idempotency.validateKey(key)
  if (Result.isFailure(validKey)) return yield* validKey.failure
  if (body.merchant_subscription_ref !== undefined && bytes(body.merchant_subscription_ref) > 128) {
    return yield* invalid("merchant_subscription_ref", "merchant_subscription_ref must be at most 128 bytes")
  }
  const planId = (body.plan_id ?? "").toLowerCase()
  const found = isUuid(planId) ? yield* plans.get(planId) : Option.none<Plan>()
  if (Option.isNone(found) || !found.value.active || !found.value.terminalIds.includes(terminal.id)) {
    return yield* PlanNotAvailable.of()
  }
  const plan = found.value
  const amounts = yield* termsFor(plan, body)
  const print = yield* Idempotency.fingerprint({
    terminal_id: terminal.id,
    plan_id: plan.id,
    amount: plan.mode === "ceiling" ? amounts.payerAmount.toString() : null,
    payer_id: body.payer_id ?? null,
    merchant_subscription_ref: body.merchant_subscription_ref ?? null,
    description: body.description ?? null
  })
  const store = yield* IdempotencyStore
  const subs = yield* SubscriptionRepository
  const replay = Effect.fn("Subscriptions.replay")(function*(resourceId: string) {
    const existing = yield* subs.get(resourceId)
    if (Option.isNone(existing)) return yield* IdempotencyConflict.of()
    return { subscription: existing.value, created: false }
  })
  const early = Idempotency.decide(yield* store.find(terminal.id, "subscription", key), print)
  if (Result.isFailure(early)) return yield* early.failure
  if (early.success._tag === "Replay") return yield* replay(early.success.resourceId)

  const entropy = yield* Entropy
  const id = yield* entropy.uuid
  const redirectUrl = terminal.h2h
    ? (yield* (yield* Acquirer).startBinding({
      subscriptionId: id,
      terminalId: terminal.id,
      h2h: true,
      payerAmount: amounts.payerAmount
    })).redirectUrl
    : null
  const payToken = yield* entropy.token(24)
  const csrfToken = yield* entropy.token(24)
  return yield* atomic(Effect.gen(function*() {
    const decision = Idempotency.decide(yield* store.find(terminal.id, "subscription", key), print)
    if (Result.isFailure(decision)) return yield* decision.failure
    if (decision.success._tag === "Replay") return yield* replay(decision.success.resourceId)
    const now = yield* Clock.currentTimeMillis
    const subscription: Sub = {
      id,
      terminalId: terminal.id,
      planId: plan.id,
      payerId: body.payer_id ?? null,
      merchantSubscriptionRef: body.merchant_subscription_ref ?? null,
      description: body.description ?? null,
      providerState: "new",
      billingStatus: "consent_pending",
      terms: {
        mode: plan.mode,
        planCode: plan.code,
        planVersion: plan.version,
        interval: plan.interval,
        schedule: plan.schedule,
        merchantAmount: amounts.merchantAmount,
        payerAmount: amounts.payerAmount,
        maxCycles: plan.maxCycles,
        consentText: plan.consentText,
        policyVersion: plan.policyVersion
      },
      h2h: terminal.h2h,
      successfulCycles: 0,
      consecutiveFailures: 0,
      nextCycleIndex: 0,
      nextChargeAt: null,
      chargeLeaseUntil: null,
      firstPaymentId: null,
      reviewReason: null,
      payToken,
      csrfToken,
      redirectUrl,
      createdAt: now,
      updatedAt: now,
      activatedAt: null,
      stoppedAt: null,
      version: 1
    }
    yield* subs.insert(subscription)
    yield* store.insert({ terminalId: terminal.id, scope: "subscription", key, fingerprint: print, resourceId: id, createdAt: now })
    const started = terminal.h2h ? yield* consentAndStartFirstPayment(terminal, subscription, null) : subscription
    return { subscription: started, created: true }
  }))
})

/** Consent given: new/pending, and the first payment is created (live, in RUB, `sbp_recurrent`). */
const consentAndStartFirstPayment = Effect.fn("Subscriptions.consentAndStartFirstPayment")(function*(
  terminal: Terminal,
  sub: Sub,
  registered: { readonly paymentId: string; readonly qrPayload: string } | null
) {
  const now = yield* Clock.currentTimeMillis
  const consented = Lifecycle.move(sub, "consent", now)
  if (Result.isFailure(consented)) return yield* consented.failure
  const entropy = yield* Entropy
  const config = yield* PaydeskConfig
  const paymentId = registered?.paymentId ?? (yield* entropy.uuid)
  const payment: Payment = {
    id: paymentId,
    terminalId: sub.terminalId,
    orderId: `sub-${sub.id}-first`,
    amount: sub.terms.payerAmount,
    currency: "RUB",
    description: sub.description,
    metadata: null,
    paymentMethod: "sbp_recurrent",
    environment: "prod",
    status: "created",
    payToken: yield* entropy.token(24),
    csrfToken: yield* entropy.token(24),
    subscriptionId: sub.id,
    fingerprint: `subscription:${sub.id}:first`,
    // H2H: the payer binds and pays at the acquirer's redirect_url; form flow: the acquirer's QR.
    qrPayload: registered?.qrPayload ?? sub.redirectUrl,
    expiresAt: now + config.paymentLifetimeMs,
    createdAt: now,
    updatedAt: now,
    paidAt: null,
    settlement: null,
    version: 1
  }
  yield* Payments.insertNew(terminal, payment)
  return yield* Lifecycle.save(sub, { ...consented.success, firstPaymentId: paymentId })
})

/** Loads a subscription the principal may see. */
export const get = Effect.fn("Subscriptions.get")(function*(principal: Principal, id: string) {
  const key = id.toLowerCase()
  const found = isUuid(key) ? yield* (yield* SubscriptionRepository).get(key) : Option.none<Sub>()
  if (Option.isNone(found) || !(yield* Access.canSee(principal, found.value.terminalId))) {
    return yield* NotFound.of("subscription")
  }
  return found.value
})

/** Subscriptions per page of the list. */
export const pageSize = 50

/** Lists subscriptions, newest first, 50 per page, with the total. */
export const list = Effect.fn("Subscriptions.list")(function*(
  principal: Principal,
  query: { readonly terminalId?: string | null | undefined; readonly state?: string | null | undefined; readonly page?: number | null | undefined }
) {
  const state = query.state ?? null
  if (state !== null && state !== "new" && state !== "active" && state !== "stop") {
    return yield* invalid("state", "state must be one of: new, active, stop")
  }
  const page = query.page ?? 1
  if (!Number.isInteger(page) || page < 1) return yield* invalid("page", "page must be a positive integer")
  let terminalIds: ReadonlyArray<string>
  if (principal._tag === "User" && (query.terminalId === undefined || query.terminalId === null || query.terminalId === "")) {
    terminalIds = (yield* (yield* TerminalRepository).listByAccount(principal.accountId)).map((t) => t.id)
  } else {
    terminalIds = [(yield* Access.resolveTerminal(principal, query.terminalId, "read")).id]
  }
  const result = yield* (yield* SubscriptionRepository).list(
    { terminalIds, providerState: state },
    { limit: pageSize, offset: (page - 1) * pageSize }
  )
  return { ...result, page }
})

/** Charge history: up to 100 newest records. */
export const charges = Effect.fn("Subscriptions.charges")(function*(principal: Principal, id: string) {
  const sub = yield* get(principal, id)
  const records = yield* (yield* ChargeRepository).listBySubscription(sub.id, 100)
  return records.filter((c) => c.status !== "pending")
})

/** Merchant stop: 200 `{ok: true}` once stopped (also when already stopped). */
export const stop = Effect.fn("Subscriptions.stop")(function*(principal: Principal, id: string) {
  const sub = yield* get(principal, id)
  yield* Access.resolveTerminal(principal, principal._tag === "ApiKey" ? null : sub.terminalId, "subscription_stop")
  return yield* stopById(sub.id)
})

/** Stops a subscription by id (merchant, operator, or `max_cycles`). */
export const stopById = Effect.fn("Subscriptions.stopById")(function*(id: string) {
  const requested = yield* Lifecycle.requestStop(id)
  if (requested.billingStatus === "stopped") return requested
  return yield* Lifecycle.completeStop(id)
})

/** The subscription and terminal behind a public page token. */
export const findPublic = Effect.fn("Subscriptions.findPublic")(function*(token: string) {
  const found = yield* (yield* SubscriptionRepository).findByPayToken(token)
  if (Option.isNone(found)) return yield* NotFound.of("subscription")
  const terminal = yield* (yield* TerminalRepository).get(found.value.terminalId)
  if (Option.isNone(terminal)) return yield* NotFound.of("subscription")
  const firstPayment = found.value.firstPaymentId === null
    ? Option.none<Payment>()
    : yield* (yield* PaymentRepository).get(found.value.firstPaymentId)
  return { subscription: found.value, terminal: terminal.value, firstPayment }
})

/** The payer confirms the terms on the form: pending, and the first payment starts. Idempotent. */
export const confirm = Effect.fn("Subscriptions.confirm")(function*(token: string, csrfToken: string) {
  const { subscription } = yield* findPublic(token)
  if (csrfToken !== subscription.csrfToken) return yield* CsrfRejected.of()
  if (subscription.billingStatus !== "consent_pending") return yield* findPublic(token)
  // Register the first payment's QR with the acquirer before the transaction (no remote call inside it).
  const paymentId = yield* (yield* Entropy).uuid
  const { qrPayload } = yield* (yield* Acquirer).createPayment({
    paymentId,
    terminalId: subscription.terminalId,
    amount: subscription.terms.payerAmount,
    description: subscription.description
  })
  yield* atomic(Effect.gen(function*() {
    const sub = yield* Lifecycle.locked(subscription.id)
    if (sub.billingStatus !== "consent_pending") return sub
    const terminal = yield* (yield* TerminalRepository).get(sub.terminalId)
    if (Option.isNone(terminal)) return yield* NotFound.of("terminal")
    if (terminal.value.status !== "active") return yield* TerminalUnavailable.of()
    return yield* consentAndStartFirstPayment(terminal.value, sub, { paymentId, qrPayload })
  }))
  return yield* findPublic(token)
})

/** Operator: out of review back to enabled, after reconciling an unconfirmed charge. */
export const resume = Effect.fn("Subscriptions.resume")(function*(id: string) {
  const sub = yield* Lifecycle.load(id)
  if (Subscription.stateOf(sub) !== "active/review") {
    return yield* new OperationNotAllowed({ message: `subscription in ${Subscription.stateOf(sub)} cannot be resumed` })
  }
  const cycle = Lifecycle.cycleNumberOf(sub, sub.nextCycleIndex)
  const attempts = yield* (yield* ChargeRepository).listForCycle(sub.id, cycle)
  const last = attempts.at(-1)
  if (last !== undefined && (last.status === "unconfirmed" || last.status === "pending")) {
    const answer = yield* (yield* Acquirer).charge({
      subscriptionId: sub.id,
      cycleNumber: cycle,
      idempotencyKey: last.idempotencyKey,
      amount: last.amount
    })
    if (answer._tag === "Unknown") {
      return yield* new OperationNotAllowed({ message: "the last charge is still unconfirmed by the acquirer" })
    }
    yield* recordOutcome(sub.id, last.id, answer, { resume: true })
    if (answer._tag === "Paid") return yield* Lifecycle.load(sub.id)
  }
  return yield* atomic(Effect.gen(function*() {
    const locked = yield* Lifecycle.locked(sub.id)
    const now = yield* Clock.currentTimeMillis
    const moved = Lifecycle.move(locked, "resume", now)
    if (Result.isFailure(moved)) return yield* moved.failure
    const due = Math.max(now, Lifecycle.chargeTimeOf(locked, locked.nextCycleIndex))
    return yield* Lifecycle.save(locked, { ...moved.success, nextChargeAt: due, reviewReason: null, chargeLeaseUntil: null })
  }))
})

/** Records the acquirer's answer for a pending (or unconfirmed) attempt. */
const recordOutcome = Effect.fn("Subscriptions.recordOutcome")(function*(
  subscriptionId: string,
  chargeId: string,
  answer: ChargeOutcome,
  options: { readonly resume: boolean }
) {
  return yield* atomic(Effect.gen(function*() {
    const sub = yield* Lifecycle.locked(subscriptionId)
    const chargesRepo = yield* ChargeRepository
    const found = yield* chargesRepo.get(chargeId)
    if (Option.isNone(found)) return yield* NotFound.of("subscription")
    const charge = found.value
    const now = yield* Clock.currentTimeMillis
    const event: Charge.Event = charge.status === "unconfirmed"
      ? (answer._tag === "Paid" ? "reconciled_paid" : "reconciled_failed")
      : answer._tag === "Paid"
      ? "paid"
      : answer._tag === "Failed"
      ? "failed"
      : "unknown"
    if (!(charge.status === "pending" || charge.status === "unconfirmed")) return sub
    const edge = Charge.machine.table[charge.status][event]
    if (edge === undefined) return sub
    if (answer._tag === "Paid") {
      const terminal = yield* (yield* TerminalRepository).get(sub.terminalId)
      if (Option.isNone(terminal)) return yield* NotFound.of("terminal")
      const entropy = yield* Entropy
      const paymentId = yield* entropy.uuid
      const base: Payment = {
        id: paymentId,
        terminalId: sub.terminalId,
        orderId: `sub-${sub.id}-c${charge.cycleNumber}`,
        amount: charge.amount,
        currency: "RUB",
        description: sub.description,
        metadata: null,
        paymentMethod: "sbp_recurrent",
        environment: "prod",
        status: "paid",
        payToken: yield* entropy.token(24),
        csrfToken: yield* entropy.token(24),
        subscriptionId: sub.id,
        fingerprint: `subscription:${sub.id}:cycle:${charge.cycleNumber}`,
        qrPayload: null,
        expiresAt: null,
        createdAt: now,
        updatedAt: now,
        paidAt: now,
        settlement: null,
        version: 1
      }
      const payment = { ...base, settlement: yield* Settlement.credit(terminal.value, base, sub.terms.merchantAmount) }
      yield* (yield* PaymentRepository).insert(payment)
      yield* Outbox.paymentEvents(terminal.value, payment, ["payment.paid"])
      yield* chargesRepo.update({
        ...charge,
        status: edge.to,
        validationStatus: "accepted",
        validationReason: null,
        paymentId,
        actualAt: now,
        updatedAt: now
      })
      const base2 = options.resume ? Lifecycle.move(sub, "resume", now) : Result.succeed(sub)
      if (Result.isFailure(base2)) return yield* base2.failure
      const next = Lifecycle.afterPaidCharge(base2.success, now)
      if (Result.isFailure(next)) return yield* next.failure
      return yield* Lifecycle.save(sub, next.success)
    }
    yield* chargesRepo.update({
      ...charge,
      status: edge.to,
      validationStatus: answer._tag === "Failed" ? "accepted" : "review",
      validationReason: answer._tag === "Failed" ? null : "outcome_unconfirmed",
      message: answer.reason,
      actualAt: now,
      updatedAt: now
    })
    if (Subscription.stateOf(sub) !== "active/enabled") return sub
    const review = Lifecycle.move(sub, "charge_failed", now)
    if (Result.isFailure(review)) return yield* review.failure
    return yield* Lifecycle.save(sub, {
      ...review.success,
      consecutiveFailures: sub.consecutiveFailures + 1,
      nextChargeAt: null,
      chargeLeaseUntil: null,
      reviewReason: answer._tag === "Failed" ? `charge failed: ${answer.reason}` : `charge unconfirmed: ${answer.reason}`
    })
  }))
})

/** Writes (or finds, after a crash) the pending attempt of a due subscription's current cycle. */
const prepareCharge = Effect.fn("Subscriptions.prepareCharge")(function*(subscriptionId: string) {
  return yield* atomic(Effect.gen(function*() {
    const sub = yield* Lifecycle.locked(subscriptionId)
    const now = yield* Clock.currentTimeMillis
    if (!Subscription.isChargeable(sub) || sub.nextChargeAt === null || sub.nextChargeAt > now) return Option.none()
    const cycle = Lifecycle.cycleNumberOf(sub, sub.nextCycleIndex)
    const repo = yield* ChargeRepository
    const attempts = yield* repo.listForCycle(sub.id, cycle)
    const last = attempts.at(-1)
    if (last !== undefined && last.status === "pending") return Option.some(last)
    if (last !== undefined && last.status !== "fail") return Option.none()
    const attempt = attempts.length + 1
    const charge = yield* Lifecycle.recordCharge({
      subscriptionId: sub.id,
      terminalId: sub.terminalId,
      cycleNumber: cycle,
      attempt,
      kind: "recurring",
      status: "pending",
      validationStatus: "accepted",
      validationReason: null,
      paymentId: null,
      amount: sub.terms.payerAmount,
      expectedAmount: sub.terms.payerAmount,
      idempotencyKey: Charge.idempotencyKey(sub.id, cycle, attempt),
      message: null,
      scheduledAt: sub.nextChargeAt,
      actualAt: null
    })
    return Option.some(charge)
  }))
})

/** Charges one claimed subscription: prepare, ask the acquirer, record. */
export const chargeOne = Effect.fn("Subscriptions.chargeOne")(function*(subscriptionId: string) {
  const prepared = yield* prepareCharge(subscriptionId)
  if (Option.isNone(prepared)) return false
  const charge = prepared.value
  const answer = yield* (yield* Acquirer).charge({
    subscriptionId,
    cycleNumber: charge.cycleNumber,
    idempotencyKey: charge.idempotencyKey,
    amount: charge.amount
  })
  const sub = yield* recordOutcome(subscriptionId, charge.id, answer, { resume: false })
  if (sub.billingStatus === "stop_pending") yield* Effect.ignore(Lifecycle.completeStop(sub.id))
  return true
})

/** Claimed subscriptions charged at once by one run. */
export const chargeConcurrency = 8

/** Runs every scheduled charge due now; returns how many charges were attempted. Idempotent. */
export const runDueCharges = Effect.fn("Subscriptions.runDueCharges")(function*() {
  const config = yield* PaydeskConfig
  const now = yield* Clock.currentTimeMillis
  const claimed = yield* atomic((yield* SubscriptionRepository).claimDue(now, now + config.leaseMs, config.batchSize))
  // Different subscriptions are charged side by side (an acquirer call takes a while). Whoever
  // else charges one of them at the same time (a flow, another process after a lapsed lease)
  // reuses its pending attempt's idempotency key under the subscription's row lock, so the
  // acquirer replays rather than charges again.
  const outcomes = yield* Effect.forEach(
    claimed,
    (sub) =>
      // A failure of one subscription leaves it leased and retried later; the others go on.
      chargeOne(sub.id).pipe(
        Effect.catchCause((cause) => Effect.as(Effect.logError("scheduled charge failed", cause), false))
      ),
    { concurrency: chargeConcurrency }
  )
  return outcomes.filter(Boolean).length
})

