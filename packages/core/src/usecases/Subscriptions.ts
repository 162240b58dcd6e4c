/**
 * Use cases of recurring subscriptions for merchants and payers: reading, listing, charge
 * history and stop; the payer's consent on the form. Creation lives in `SubscriptionCreation`,
 * charges, resume and the settling of open attempts in `SubscriptionCharges`; both are re-exported
 * here, so callers read `Subscriptions.create`, `Subscriptions.runDueCharges`.
 *
 * No charge ever happens before the payer's consent (or, on H2H terminals, before creation,
 * which carries the merchant's consent).
 */
import { Effect, Option } from "effect"
import * as Access from "../Access.js"
import type { Principal } from "../Access.js"
import { AccessDenied, CsrfRejected, InvalidRequest, InvalidTransition, NotFound, RecurringNotConfigured, TerminalUnavailable } from "../Errors.js"
import { isUuid } from "../Id.js"
import * as Paging from "../Paging.js"
import type { Payment } from "../Payment.js"
import { timingSafeEqual } from "../Signature.js"
import * as Subscription from "../Subscription.js"
import { Acquirer } from "../ports/Acquirer.js"
import { ChargeRepository } from "../ports/ChargeRepository.js"
import { Entropy } from "../ports/Entropy.js"
import { PaymentRepository } from "../ports/PaymentRepository.js"
import { PlanRepository } from "../ports/PlanRepository.js"
import { SubscriptionRepository } from "../ports/SubscriptionRepository.js"
import { TerminalRepository } from "../ports/TerminalRepository.js"
import type * as Charge from "../Charge.js"
import * as Acquirers from "./Acquirers.js"
import { atomic } from "./Atomic.js"
import { startFirstPayment } from "./SubscriptionCreation.js"
import * as Payments from "./Payments.js"
import * as Lifecycle from "./SubscriptionLifecycle.js"
import { forObject } from "./TestClockScope.js"
import * as Traced from "../Traced.js"

export {
  create,
  type CreateCommand,
  listPlans,
  maxDescriptionBytes,
  maxPayerIdBytes,
  maxReferenceBytes
} from "./SubscriptionCreation.js"
export { chargeBatchesPerPass, chargeConcurrency, chargeOne, maxVoidWaitMs, openCharge, resume, runDueCharges, settleStoppedCharges, voidBackoff } from "./SubscriptionCharges.js"

type Sub = Subscription.Subscription

const invalid = (field: string, message: string) => new InvalidRequest({ field, message })

/**
 * 503 `subscriptions not configured` when no terminal the principal acts for has a plan connected
 * (the key's terminal; for a dashboard user, any terminal of the account).
 */
const ensureConfigured = Traced.fn("Subscriptions.ensureConfigured")(function*(principal: Principal) {
  const plans = yield* PlanRepository
  const terminalIds = principal._tag === "ApiKey"
    ? [principal.terminalId]
    : (yield* (yield* TerminalRepository).listByAccount(principal.accountId)).map((t) => t.id)
  for (const terminalId of terminalIds) {
    if ((yield* plans.listForTerminal(terminalId, { activeOnly: false })).length > 0) return
  }
  return yield* RecurringNotConfigured.subscriptions()
})

/** Loads a subscription the principal may see (not found for others). */
const find = Traced.fn("Subscriptions.find")(function*(principal: Principal, id: string) {
  const key = id.toLowerCase()
  const found = isUuid(key) ? yield* (yield* SubscriptionRepository).get(key) : Option.none<Sub>()
  if (Option.isNone(found) || !(yield* Access.canSee(principal, found.value.terminalId))) {
    return yield* NotFound.of("subscription")
  }
  return found.value
})

/** Reads a subscription: 503 without any recurring configuration, 404 when not visible. */
export const get = Traced.fn("Subscriptions.get")(function*(principal: Principal, id: string) {
  yield* ensureConfigured(principal)
  return yield* find(principal, id)
})

/** Subscriptions per page of the list. */
export const pageSize = 50

/** Lists subscriptions, newest first, 50 per page, with the total. */
export const list = Traced.fn("Subscriptions.list")(function*(
  principal: Principal,
  query: Paging.Request & {
    readonly terminalId?: string | null | undefined
    readonly state?: string | null | undefined
    /** `sandbox`, `all`, or live only (`prod`, the default), as for payments. */
    readonly environment?: "sandbox" | "all" | "prod" | null | undefined
  }
) {
  const state = query.state ?? null
  if (state !== null && state !== "new" && state !== "active" && state !== "stop") {
    return yield* invalid("state", "state must be one of: new, active, stop")
  }
  const window = yield* Paging.resolve(query, pageSize)
  let terminalIds: ReadonlyArray<string>
  // An empty terminal_id is given, not absent: a 403 (Access.resolveTerminal), not the account's terminals.
  if (principal._tag === "User" && (query.terminalId === undefined || query.terminalId === null)) {
    terminalIds = (yield* (yield* TerminalRepository).listByAccount(principal.accountId)).map((t) => t.id)
  } else {
    terminalIds = [(yield* Access.resolveTerminal(principal, query.terminalId, "read")).id]
  }
  const environment = query.environment === "all" ? null : query.environment === "sandbox" ? "sandbox" as const : "prod" as const
  const result = yield* (yield* SubscriptionRepository).list({ terminalIds, providerState: state, environment }, Paging.read(window))
  const { items, nextCursor } = Paging.answer(window, result.items)
  return { items, total: result.total, page: window.page, pageSize: window.limit, nextCursor }
})

/** Records of the charge history at most. */
export const historySize = 100

/** Charge history: up to 100 newest booked records (attempts in flight are not listed). */
export const charges = Traced.fn("Subscriptions.charges")(function*(principal: Principal, id: string) {
  const sub = yield* find(principal, id)
  return yield* (yield* ChargeRepository).listBySubscription(sub.id, historySize, { bookedOnly: true })
})

/** Charges an upcoming preview shows by default, and at most. */
export const upcomingDefault = 12
export const upcomingMax = 60

/**
 * The next charges of an enabled subscription: their cycle, time and amount, computed by the
 * schedule code that charges (the first is `next_charge_at`, which a resume may have moved to a
 * later moment). A subscription that is not `active/enabled` has no automatic charge coming: empty.
 * `max_cycles` ends the list.
 */
export const upcoming = Traced.fn("Subscriptions.upcoming")(function*(principal: Principal, id: string, count: number = upcomingDefault) {
  if (!Number.isInteger(count) || count < 1 || count > upcomingMax) {
    return yield* invalid("count", `count must be an integer from 1 to ${upcomingMax}`)
  }
  const sub = yield* find(principal, id)
  if (!Subscription.isChargeable(sub) || sub.nextChargeAt === null) return []
  const left = sub.terms.maxCycles === null ? count : Math.min(count, sub.terms.maxCycles - sub.successfulCycles)
  // A charge a resume moved past its cycle's time is followed by the cycles due before the review
  // began, at the same time, then by the first cycle after it (the cycles of the review are not made
  // up: `SubscriptionLifecycle.afterPaidCharge`).
  const first = sub.nextCycleIndex
  const moved = sub.nextChargeAt > Lifecycle.chargeTimeOf(sub, first)
  const items: Array<{ readonly cycleNumber: number; readonly scheduledAt: number; readonly amount: bigint }> = []
  let chained = moved
  for (let i = 0, k = first; i < Math.max(0, left); i++) {
    items.push({ cycleNumber: Lifecycle.cycleNumberOf(sub, k), scheduledAt: i === 0 || chained ? sub.nextChargeAt : Lifecycle.chargeTimeOf(sub, k), amount: sub.terms.payerAmount })
    const beforeReview = chained && Lifecycle.dueBeforeReview(sub, k + 1, sub.nextChargeAt)
    k = !chained || beforeReview ? k + 1 : Lifecycle.firstCycleAfter(sub, k + 1, sub.nextChargeAt)
    chained = beforeReview
  }
  return items
})

/**
 * The merchant programs the sandbox acquirer's answers to a sandbox subscription's next charges.
 * 409 on one that is stopped or stopping: no charge of it will come, so the outcomes would never be
 * used (an outside probe got 200 for them). One in review may still be resumed and charged. On a
 * test clock's subscription it is an action on the clock's object (`forObject`): 404 once the clock is
 * deleted, 409 while it advances.
 */
export const programSandboxCharges = Traced.fn("Subscriptions.programSandboxCharges")(function*(
  principal: Principal,
  id: string,
  outcomes: ReadonlyArray<Charge.Program>
) {
  // A write, as a stop: another terminal's of the same account is the spec's 403 (an outside probe saw 404 here, 403 on stop).
  const sub = yield* Effect.catchTag(find(principal, id), "NotFound", (notFound) => notWritable(principal, id, notFound))
  yield* Access.resolveTerminal(principal, principal._tag === "ApiKey" ? null : sub.terminalId, "subscription_owner")
  if (sub.environment !== "sandbox") return yield* invalid("subscription", "charge outcomes can be programmed for sandbox subscriptions only")
  if (outcomes.length === 0 || outcomes.length > 100) return yield* invalid("outcomes", "outcomes must have 1 to 100 entries")
  if (sub.billingStatus === "stopped" || sub.billingStatus === "stop_pending") {
    return yield* new InvalidTransition({
      entity: "subscription", from: Subscription.stateOf(sub), event: "program_charges",
      message: `charge outcomes cannot be programmed: the subscription is ${Subscription.stateOf(sub)} and will not be charged again`
    })
  }
  const sandbox = yield* Acquirers.sandbox
  if (Option.isNone(sandbox)) return yield* invalid("test", Acquirers.sandboxUnavailable)
  // An action on a clock's object: 404 once its clock is deleted, 409 while it advances (as a stop).
  yield* forObject(sub.testClockId, sandbox.value.programCharges(sub.id, outcomes))
  return { subscription: sub, outcomes }
})

/**
 * A subscription an API key cannot see: the spec's 403 `subscription write access required` when
 * it belongs to another terminal of the key's own account ("the key is issued for another
 * terminal"), else `notFound` (another merchant's subscription is not revealed).
 */
const notWritable = Effect.fnUntraced(function*(principal: Principal, id: string, notFound: NotFound) {
  if (principal._tag !== "ApiKey") return yield* notFound
  const key = id.toLowerCase()
  const found = isUuid(key) ? yield* (yield* SubscriptionRepository).get(key) : Option.none<Sub>()
  if (Option.isNone(found)) return yield* notFound
  if (yield* Access.sameAccount(principal.terminalId, found.value.terminalId)) return yield* AccessDenied.subscriptionWrite()
  return yield* notFound
})

/** Merchant stop: 200 `{ok: true}` once stopped (also when already stopped). */
export const stop = Traced.fn("Subscriptions.stop")(function*(principal: Principal, id: string) {
  const sub = yield* Effect.catchTag(get(principal, id), "NotFound", (notFound) => notWritable(principal, id, notFound))
  yield* Access.resolveTerminal(principal, principal._tag === "ApiKey" ? null : sub.terminalId, "subscription_owner")
  return yield* stopById(sub.id)
})

/** Stops a subscription by id (merchant, operator, or `max_cycles`); one on a test clock stops at the clock's time. */
export const stopById = Traced.fn("Subscriptions.stopById")(function*(id: string) {
  const sub = yield* Lifecycle.load(id)
  return yield* forObject(sub.testClockId, Effect.gen(function*() {
    const requested = yield* Lifecycle.requestStop(sub.id)
    // Its first payment, if still unpaid, is offered to the payer no more (before the acquirer is
    // asked: a stop it refuses leaves the subscription in review, with no payment open either). Its
    // failure does not hold up the stop: the payment then expires at the end of its lifetime, and
    // money paid for it before is booked on the stopped subscription, as for one paid late.
    yield* Payments.expireFirstOfStopping(requested).pipe(
      Effect.catchCause((cause) => Effect.logWarning(`the first payment of stopping subscription ${requested.id} was not expired`, cause))
    )
    if (requested.billingStatus === "stopped") return requested
    return yield* Lifecycle.completeStop(sub.id)
  }))
})

/** The subscription and terminal behind a public page token. */
export const findPublic = Traced.fn("Subscriptions.findPublic")(function*(token: string) {
  const found = yield* (yield* SubscriptionRepository).findByPayToken(token)
  if (Option.isNone(found)) return yield* NotFound.of("subscription")
  const terminal = yield* (yield* TerminalRepository).get(found.value.terminalId)
  if (Option.isNone(terminal)) return yield* NotFound.of("subscription")
  const firstPayment = found.value.firstPaymentId === null
    ? Option.none<Payment>()
    : yield* (yield* PaymentRepository).get(found.value.firstPaymentId)
  return { subscription: found.value, terminal: terminal.value, firstPayment }
})

/**
 * The payer confirms the terms on the form: the first payment is created for the payer to pay
 * (the subscription is `pending` once the payer pays it). Idempotent.
 */
export const confirm = Traced.fn("Subscriptions.confirm")(function*(token: string, csrfToken: string) {
  const { subscription } = yield* findPublic(token)
  if (!timingSafeEqual(csrfToken, subscription.csrfToken)) return yield* CsrfRejected.of()
  if (subscription.billingStatus !== "consent_pending" || Subscription.hasConsent(subscription)) return yield* findPublic(token)
  // On a test clock the payer consents at the clock's time.
  yield* forObject(subscription.testClockId, consent(subscription))
  return yield* findPublic(token)
})

/** The consent itself: the first payment's QR, then the first payment, unless consent came meanwhile. */
const consent = Traced.fn("Subscriptions.consent")(function*(subscription: Sub) {
  // Register the first payment's QR with the acquirer before the transaction (no remote call
  // inside it); a sandbox first payment has a stub QR and is paid by simulation, like any sandbox payment.
  const paymentId = yield* (yield* Entropy).uuid
  const { qrPayload } = subscription.environment === "sandbox"
    ? { qrPayload: `sandbox-qr:${paymentId}` }
    : yield* (yield* Acquirer).createPayment({
      paymentId,
      terminalId: subscription.terminalId,
      amount: subscription.terms.payerAmount,
      description: subscription.description
    })
  yield* atomic(Effect.gen(function*() {
    const sub = yield* Lifecycle.locked(subscription.id)
    if (sub.billingStatus !== "consent_pending" || Subscription.hasConsent(sub)) return sub
    const terminal = yield* (yield* TerminalRepository).get(sub.terminalId)
    if (Option.isNone(terminal)) return yield* NotFound.of("terminal")
    if (terminal.value.status !== "active") return yield* TerminalUnavailable.of()
    return yield* startFirstPayment(terminal.value, sub, { paymentId, qrPayload })
  }))
})

