/**
 * Moves of a subscription that other use cases trigger, in the caller's transaction:
 * activation by a paid first payment, review after a failed one, the charge-cycle bookkeeping
 * and the stop protocol with the acquirer.
 *
 * The stop runs in three steps so no acquirer call happens inside a transaction: mark
 * `stop_pending` (no more charges), ask the acquirer, then record `stopped` or `review`.
 * A stop whose acquirer call never finished is picked up again by `finishPendingStops`.
 */
import { Clock, Effect, Option, Result } from "effect"
import type { Charge } from "../Charge.js"
import { PaydeskConfig } from "../Config.js"
import { InvalidTransition, NotFound, OperationNotAllowed, StopFailed } from "../Errors.js"
import { isFirstOf, type Payment } from "../Payment.js"
import { isUuid } from "../Id.js"
import { chargeAt } from "../Schedule.js"
import * as StateMachine from "../StateMachine.js"
import * as Subscription from "../Subscription.js"
import { ChargeRepository } from "../ports/ChargeRepository.js"
import { Entropy } from "../ports/Entropy.js"
import { PaymentRepository } from "../ports/PaymentRepository.js"
import { SubscriptionRepository } from "../ports/SubscriptionRepository.js"
import * as TestClock from "../TestClock.js"
import * as Acquirers from "./Acquirers.js"
import { atomic, wakeup } from "./Atomic.js"
import * as Traced from "../Traced.js"

type Sub = Subscription.Subscription

/** Cycle number of the k-th scheduled charge (k >= 1); the first payment is k = 0. */
export const cycleNumberOf = (sub: Sub, k: number): number => sub.terms.mode === "ceiling" ? k : k + 1

/** Moves a subscription by `event`, failing on a move the table forbids. */
export const move = (sub: Sub, event: Subscription.Event, now: number): Result.Result<Sub, InvalidTransition> =>
  Result.map(
    StateMachine.transition(Subscription.machine, Subscription.stateOf(sub), event),
    (edge) => ({ ...sub, ...Subscription.fieldsOf(edge.to), updatedAt: now })
  )

/** Loads a subscription by id (no access check: operator and internal use). */
export const load = Traced.fn("SubscriptionLifecycle.load")(function*(id: string) {
  const key = id.toLowerCase()
  if (!isUuid(key)) return yield* NotFound.of("subscription")
  const sub = yield* (yield* SubscriptionRepository).get(key)
  if (Option.isNone(sub)) return yield* NotFound.of("subscription")
  return sub.value
})

/** Time of the k-th scheduled charge (from the activation anchor). */
export const chargeTimeOf = (sub: Sub, k: number): number =>
  sub.activatedAt === null ? sub.createdAt : chargeAt(sub.terms, sub.activatedAt, k)

/** Loads a subscription with a row lock. */
export const locked = Effect.fnUntraced(function*(id: string) {
  const key = id.toLowerCase()
  if (!isUuid(key)) return yield* NotFound.of("subscription")
  const found = yield* (yield* SubscriptionRepository).getForUpdate(key)
  if (Option.isNone(found)) return yield* NotFound.of("subscription")
  return found.value
})

/** Writes `next` over `prev` with the version bumped; a new `nextChargeAt` is a `charge` wakeup. */
export const save = Effect.fnUntraced(function*(prev: Sub, next: Sub) {
  const saved = { ...next, version: prev.version + 1 }
  yield* (yield* SubscriptionRepository).update(saved)
  if (saved.nextChargeAt !== null && saved.nextChargeAt !== prev.nextChargeAt) {
    yield* wakeup({ kind: "charge", subscriptionId: saved.id, at: saved.nextChargeAt })
  }
  return saved
})

/** The merchant's amount per charge of a subscription. */
export const merchantAmountOf = Traced.fn("SubscriptionLifecycle.merchantAmountOf")(function*(subscriptionId: string) {
  const found = yield* (yield* SubscriptionRepository).get(subscriptionId)
  if (Option.isNone(found)) return yield* NotFound.of("subscription")
  return found.value.terms.merchantAmount
})

/** Marks the subscription stop_pending when it has reached `max_cycles`. */
const stopIfComplete = (sub: Sub, now: number): Sub => {
  if (sub.terms.maxCycles === null || sub.successfulCycles < sub.terms.maxCycles) return sub
  const next = move(sub, "request_stop", now)
  return Result.isSuccess(next) ? { ...next.success, nextChargeAt: null, chargeLeaseUntil: null } : sub
}

/** Records a booked charge (first payment or scheduled) in the history. */
export const recordCharge = Effect.fnUntraced(function*(input: Omit<Charge, "id" | "createdAt" | "updatedAt">) {
  const now = yield* Clock.currentTimeMillis
  const charge: Charge = { ...input, id: yield* (yield* Entropy).uuid, createdAt: now, updatedAt: now }
  yield* (yield* ChargeRepository).insert(charge)
  return charge
})

/**
 * Books a first payment in the history (cycle 0 in ceiling mode, 1 for a fixed tariff): paid, or
 * refused (`fail`, with the payment and why: the merchant reads why the subscription went to
 * review). `attempt` counts the cycle's records (a late payment after a refusal is the second).
 */
const recordFirstPayment = (sub: Sub, payment: Payment, now: number, attempt = 1) => recordCharge(firstPaymentCharge(sub, payment, now, attempt))

/**
 * A first payment paid once the subscription no longer waits for one (it stopped, or went to review)
 * and none of its first payments was paid: booked as the cycle's next record, `successful_cycles` + 1,
 * without a move (`booked`: the cycle's records so far).
 */
const bookLateFirst = (sub: Sub, payment: Payment, now: number, booked: ReadonlyArray<Charge>) =>
  Effect.andThen(
    recordFirstPayment(sub, payment, now, booked.length + 1),
    save(sub, { ...sub, successfulCycles: sub.successfulCycles + 1, updatedAt: now })
  )

/**
 * The first payments of `booked` (the cycle's records) booked paid whose payment is still paid (not
 * refunded or charged back since), but `except`. Read in the caller's transaction, which holds the
 * subscription: a refund locks it too, so it comes wholly before or after.
 */
const stillPaidFirsts = Effect.fnUntraced(function*(booked: ReadonlyArray<Charge>, except?: string) {
  const payments = yield* PaymentRepository
  const found: Array<{ readonly charge: Charge; readonly payment: Payment }> = []
  for (const charge of booked) {
    if (charge.kind !== "first" || charge.status !== "payed" || charge.paymentId === null || charge.paymentId === except) continue
    const payment = yield* payments.get(charge.paymentId)
    if (Option.isSome(payment) && payment.value.status === "paid") found.push({ charge, payment: payment.value })
  }
  return found
})

/**
 * A first payment paid late, once the subscription no longer waits for one: when another first
 * payment of it is paid (and not refunded since), the payer paid once more: booked for the merchant to
 * see and settle (a refund), not as a cycle. Else it is the cycle's payment: booked so, and counted
 * (`bookLateFirst`) unless an earlier one was counted and refunded since (`booked`: the cycle's records).
 */
const bookLate = Effect.fnUntraced(function*(sub: Sub, payment: Payment, now: number, booked: ReadonlyArray<Charge>) {
  if ((yield* stillPaidFirsts(booked, payment.id)).length > 0) {
    return yield* recordCharge({
      ...firstPaymentCharge(sub, payment, now, booked.length + 1),
      validationStatus: "review",
      validationReason: "superseded_first_payment",
      message: "first payment paid after another first payment of the subscription was paid: the payer paid twice"
    })
  }
  if (booked.some((c) => c.kind === "first" && c.status === "payed" && c.validationStatus === "accepted")) {
    return yield* recordFirstPayment(sub, payment, now, booked.length + 1)
  }
  return yield* bookLateFirst(sub, payment, now, booked)
})

/** How `reviewReason` starts when the acquirer refused the merchant's stop (`completeStop`). */
export const stopFailedReason = "stop failed:"

const firstPaymentCharge = (sub: Sub, payment: Payment, now: number, attempt: number): Omit<Charge, "id" | "createdAt" | "updatedAt"> => ({
  subscriptionId: sub.id,
  terminalId: sub.terminalId,
  cycleNumber: cycleNumberOf(sub, 0),
  attempt,
  kind: "first",
  status: payment.status === "paid" ? "payed" : "fail",
  // Expired while processing: the payer started paying and no answer came, as an unconfirmed charge.
  validationStatus: payment.status === "expired" ? "review" : "accepted",
  validationReason: payment.status === "expired" ? "outcome_unconfirmed" : null,
  paymentId: payment.id,
  amount: payment.amount,
  expectedAmount: sub.terms.payerAmount,
  idempotencyKey: payment.status === "paid" ? `first:${payment.id}` : `first:${payment.id}:${payment.status}`,
  message: payment.status === "paid" ? null : `first payment ${payment.status}`,
  scheduledAt: payment.createdAt,
  actualAt: now
})

/**
 * Reacts to a status change of a subscription's current first payment, in the caller's
 * transaction. While it waits for that payment: `processing` (the payer pays) makes it
 * `pending`; `paid` activates it (through `pending`); `canceled` (a refused payment) moves it to
 * `review` through `pending`, and `expired` from `pending` too (the payer paid, no confirmation
 * came); `expired` from `consent_pending` (the payer never paid) takes the consent back, so the
 * payer can confirm again. A first payment paid after the subscription began stopping, or went to
 * review, is booked in the history without a move: the money came, the subscription stays as it is.
 *
 * An earlier first payment whose consent was taken back, paid late (`expired` then `paid`), is the
 * first payment if the subscription still waits for one: it activates it as its own would, and the
 * later first payment, if still unpaid (`created`), is answered (`superseded`) for the caller to end
 * (it expires), so the payer is not asked to pay twice. If the subscription went on without it and
 * no first payment was paid, it is booked as a late current one is; if another first payment was
 * paid, it is booked for review (`superseded_first_payment`), not as a cycle. Answers the id of the
 * payment to end, else null.
 */
export const onFirstPayment = Traced.fn("SubscriptionLifecycle.onFirstPayment")(function*(payment: Payment) {
  if (payment.subscriptionId === null) return null
  const lateFirst = payment.status === "paid" && isFirstOf(payment.subscriptionId, payment)
  if (lateFirst) {
    // The subscription's current first payment, if another, is locked before the subscription, as
    // its own transitions lock them (payment, then subscription): the other order deadlocked with a
    // transition of it at the same moment (PostgreSQL then aborted one, retried a second later).
    const current = yield* (yield* SubscriptionRepository).get(payment.subscriptionId)
    const other = Option.isSome(current) ? current.value.firstPaymentId : null
    if (other !== null && other !== payment.id) yield* (yield* PaymentRepository).getForUpdate(other)
  }
  let sub = yield* locked(payment.subscriptionId)
  const now = yield* Clock.currentTimeMillis
  let superseded: string | null = null
  if (sub.firstPaymentId !== payment.id) {
    // Another first payment of the subscription (one whose consent was taken back when it expired
    // unpaid, money arriving late), or a charge's payment (refunded, say): only money matters.
    if (!lateFirst) return null
    const waiting = Subscription.stateOf(sub)
    if (waiting !== "new/consent_pending" && waiting !== "new/pending") {
      const booked = yield* (yield* ChargeRepository).listForCycle(sub.id, cycleNumberOf(sub, 0))
      if (booked.some((c) => c.paymentId === payment.id && c.status === "payed")) return null
      // No first payment was paid (the next one was refused, or the subscription stopped before
      // any): it is the one, booked as a late current first payment is. Else the subscription went on
      // without it: the payer paid once more (below).
      yield* bookLate(sub, payment, now, booked)
      return null
    }
    // Still waiting for its first payment: this one is it (the payer must not be asked to pay
    // again). A later first payment still unpaid ends (`superseded`); one the payer is paying
    // stays, and is booked as above if its money comes too.
    superseded = sub.firstPaymentId
    sub = { ...sub, firstPaymentId: payment.id }
  }
  const state = Subscription.stateOf(sub)
  if (state !== "new/consent_pending" && state !== "new/pending") {
    if (payment.status !== "paid" || state === "active/enabled") return null
    const booked = yield* (yield* ChargeRepository).listForCycle(sub.id, cycleNumberOf(sub, 0))
    if (booked.some((c) => c.kind === "first" && c.paymentId === payment.id && c.status === "payed")) return null
    // (Another first payment of it paid late before this one: the payer paid twice, a review found
    // both booked as cycles.)
    yield* bookLate(sub, payment, now, booked)
    return null
  }
  if (state === "new/consent_pending" && payment.status === "expired") {
    yield* save(sub, { ...sub, firstPaymentId: null, updatedAt: now })
    return null
  }
  const started = state === "new/consent_pending" ? move(sub, "first_payment_started", now) : Result.succeed(sub)
  if (Result.isFailure(started)) return yield* started.failure
  if (payment.status === "processing") {
    if (started.success !== sub) yield* save(sub, started.success)
  } else if (payment.status === "paid") {
    const activated = move(started.success, "first_payment_paid", now)
    if (Result.isFailure(activated)) return yield* activated.failure
    yield* recordFirstPayment(sub, payment, now)
    const next = stopIfComplete({
      ...activated.success,
      activatedAt: now,
      successfulCycles: sub.successfulCycles + 1,
      consecutiveFailures: 0,
      nextCycleIndex: 1,
      nextChargeAt: chargeAt(sub.terms, now, 1)
    }, now)
    yield* save(sub, next)
  } else if (payment.status === "canceled" || payment.status === "expired") {
    const review = move(started.success, "first_payment_failed", now)
    if (Result.isFailure(review)) return yield* review.failure
    // In the history too (a conformance probe found a subscription in review with one failure and no record of it).
    yield* recordFirstPayment(sub, payment, now)
    yield* save(sub, {
      ...review.success,
      consecutiveFailures: sub.consecutiveFailures + 1,
      reviewReason: `first payment ${payment.status}`
    })
  }
  return superseded
})

/**
 * The operator's resume of a subscription in `new/review` (its first payment refused, or expired
 * while the payer paid with no answer) once one of its first payments was paid after all (booked
 * late) and is still paid: activated as that payment would have activated it, at the resume
 * (`activated_at` now, the next charge one period later). Before, the payer had paid and the
 * subscription could only be stopped (an outside probe). Without such a payment, or when the review
 * is a stop the acquirer refused, it cannot be resumed.
 */
/**
 * A resume of a subscription in no review state: a move its state machine does not have (409), as a
 * payout's approval in the wrong state; also when another resume or a stop got there first.
 */
export const notResumable = (state: string): InvalidTransition =>
  new InvalidTransition({ entity: "subscription", from: state, event: "resume", message: `subscription in ${state} cannot be resumed` })

export const activateLatePaid = Traced.fn("SubscriptionLifecycle.activateLatePaid")(function*(id: string) {
  return yield* atomic(Effect.gen(function*() {
    const sub = yield* locked(id)
    const state = Subscription.stateOf(sub)
    if (state !== "new/review") return yield* notResumable(state)
    // The merchant asked to stop it and the acquirer refused the stop: not started again.
    if (sub.reviewReason?.startsWith(stopFailedReason) === true) {
      return yield* new OperationNotAllowed({ message: "subscription in new/review cannot be resumed: its stop failed; stop it again" })
    }
    // A first payment booked paid and still paid: the cycle's own first, else one booked as paid twice
    // (the cycle's own refunded since).
    const charges = yield* ChargeRepository
    const stillPaid = yield* stillPaidFirsts(yield* charges.listForCycle(sub.id, cycleNumberOf(sub, 0)))
    const chosen = stillPaid.find((found) => found.charge.validationStatus === "accepted") ?? stillPaid[0]
    if (chosen === undefined) {
      return yield* new OperationNotAllowed({ message: "subscription in new/review cannot be resumed: none of its first payments is paid; stop it" })
    }
    const paid = chosen.payment
    const now = yield* Clock.currentTimeMillis
    const moved = move(sub, "resume", now)
    if (Result.isFailure(moved)) return yield* moved.failure
    // One booked as the payer paying twice (the one before it refunded or charged back since) is now
    // the first payment: its record says so, so that access is granted from it (it kept the flag).
    if (chosen.charge.validationReason === "superseded_first_payment") {
      yield* charges.update({
        ...chosen.charge,
        validationStatus: "accepted",
        validationReason: "activated_on_resume",
        message: "first payment: the operator's resume activated the subscription on it (the first payment paid before it was refunded or charged back)",
        updatedAt: now
      })
    }
    return yield* save(sub, stopIfComplete({
      ...moved.success,
      // The payment that activates it is its first payment: another paid later is then booked as the
      // payer paying twice (`superseded_first_payment`), not as a cycle.
      firstPaymentId: paid.id,
      activatedAt: now,
      consecutiveFailures: 0,
      nextCycleIndex: 1,
      nextChargeAt: chargeAt(sub.terms, now, 1),
      reviewReason: null,
      chargeLeaseUntil: null
    }, now))
  }))
})

/** Step 1 of a stop, in a transaction: stop_pending, no next charge. Returns the subscription. */
export const requestStop = Traced.fn("SubscriptionLifecycle.requestStop")(function*(id: string) {
  return yield* atomic(Effect.gen(function*() {
    const sub = yield* locked(id)
    if (sub.billingStatus === "stopped" || sub.billingStatus === "stop_pending") return sub
    const now = yield* Clock.currentTimeMillis
    const next = move(sub, "request_stop", now)
    if (Result.isFailure(next)) return yield* next.failure
    return yield* save(sub, { ...next.success, nextChargeAt: null, chargeLeaseUntil: null })
  }))
})

/** Steps 2 and 3 of a stop: ask the acquirer (when a binding exists), then record the result. */
export const completeStop = Traced.fn("SubscriptionLifecycle.completeStop")(function*(id: string) {
  const pending = yield* (yield* SubscriptionRepository).get(id)
  if (Option.isNone(pending)) return yield* NotFound.of("subscription")
  if (pending.value.billingStatus !== "stop_pending") return pending.value
  const bindingStarted = pending.value.h2h || pending.value.firstPaymentId !== null
  const answer = bindingStarted
    ? yield* (yield* Acquirers.acquirerFor(pending.value.environment)).stopBinding({ subscriptionId: id })
    : { _tag: "Stopped" as const }
  const result = yield* atomic(Effect.gen(function*() {
    const sub = yield* locked(id)
    if (sub.billingStatus !== "stop_pending") return sub
    const now = yield* Clock.currentTimeMillis
    if (answer._tag === "Stopped") {
      const stopped = move(sub, "stop_confirmed", now)
      if (Result.isFailure(stopped)) return yield* stopped.failure
      return yield* save(sub, { ...stopped.success, stoppedAt: now, nextChargeAt: null, chargeLeaseUntil: null })
    }
    const review = move(sub, "stop_failed", now)
    if (Result.isFailure(review)) return yield* review.failure
    return yield* save(sub, { ...review.success, reviewReason: `${stopFailedReason} ${answer.reason}`, chargeLeaseUntil: null })
  }))
  if (result.billingStatus === "review") return yield* StopFailed.of()
  return result
})

/** Retries stops whose acquirer call did not finish (crash or acquirer unavailable). Idempotent. */
export const finishPendingStops = Traced.fn("SubscriptionLifecycle.finishPendingStops")(function*() {
  const config = yield* PaydeskConfig
  const now = yield* Clock.currentTimeMillis
  const claimed = yield* atomic((yield* SubscriptionRepository).claimStopPending(now, now + config.leaseMs, config.batchSize, yield* TestClock.Scope))
  let done = 0
  for (const sub of claimed) {
    const outcome = yield* Effect.result(completeStop(sub.id))
    if (Result.isSuccess(outcome) || (outcome.failure as { _tag: string })._tag === "StopFailed") done++
  }
  return done
})

/** Longest run of cycles `firstCycleAfter` steps over (a daily plan's 270 years). */
const maxSkippedCycles = 100_000

/** The first cycle index from `k` on whose charge time is after `now`. */
export const firstCycleAfter = (sub: Sub, k: number, now: number): number => {
  let index = k
  while (index < k + maxSkippedCycles && chargeTimeOf(sub, index) <= now) index++
  return index
}

/**
 * Whether cycle index `k`, reached by a charge a resume delayed until `until`, fell due before the
 * review began (`reviewSince`): a catch-up the review interrupted, still to be charged.
 */
export const dueBeforeReview = (sub: Sub, k: number, until: number): boolean =>
  sub.reviewSince !== null && sub.reviewSince <= until && chargeTimeOf(sub, k) < sub.reviewSince

/**
 * The subscription after a paid scheduled charge of `cycleNumber`. While enabled: the next
 * cycle is scheduled (`charge_paid`), or the stop begins when `max_cycles` is reached. In review
 * or while stopping the charge is booked without a move: the counters change (a later resume
 * charges the cycle after it) and `next_charge_at` stays empty.
 *
 * `skipUntil`: the charge was made after a review (the moment of the resume, which moved it past
 * its cycle's time). Charges are suspended in review, so the cycles that fell due in it are not made
 * up: the next is the first cycle after that moment. A cycle that fell due before the review began
 * (`reviewSince`: a catch-up after an outage that the refusal interrupted) is charged first, at that
 * same moment, so that its own booking skips in turn (and a process of the version before, which
 * skips after a charge made later than its cycle's time, does the same); `reviewSince` is cleared
 * once no such cycle is left. Otherwise (and for cycles due after it) a cycle already due is
 * charged next (a catch-up after the service could not charge on time).
 */
export const afterPaidCharge = (
  sub: Sub,
  cycleNumber: number,
  now: number,
  options: { readonly skipUntil?: number | null } = {}
): Result.Result<Sub, InvalidTransition> => {
  const current = cycleNumber === cycleNumberOf(sub, sub.nextCycleIndex)
  const following = current ? sub.nextCycleIndex + 1 : sub.nextCycleIndex
  const skipUntil = current ? options.skipUntil ?? null : null
  // A cycle due before the review began, left by the catch-up the review interrupted.
  const beforeReview = skipUntil !== null && dueBeforeReview(sub, following, skipUntil)
  const counted: Sub = {
    ...sub,
    successfulCycles: sub.successfulCycles + 1,
    consecutiveFailures: 0,
    nextCycleIndex: skipUntil === null || beforeReview ? following : firstCycleAfter(sub, following, skipUntil),
    // Kept through a review (a booking in it) and a chain of cycles due before it; a booking while
    // enabled otherwise ends what is left of any review (a review found one left over from a resume
    // at the refused cycle's own time taken for the start of a later one).
    reviewSince: beforeReview || (skipUntil === null && !Subscription.isChargeable(sub)) ? sub.reviewSince : null,
    chargeLeaseUntil: null,
    updatedAt: now
  }
  if (!Subscription.isChargeable(sub)) return Result.succeed(Subscription.stateOf(sub) === "active/review" ? stopIfComplete(counted, now) : counted)
  return Result.map(move(counted, "charge_paid", now), (moved) =>
    stopIfComplete({ ...moved, nextChargeAt: beforeReview ? skipUntil : chargeTimeOf(sub, counted.nextCycleIndex), reviewReason: null }, now))
}
