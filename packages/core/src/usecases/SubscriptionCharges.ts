/**
 * Scheduled charges of subscriptions: prepare an attempt, ask the acquirer, book its answer;
 * the runner of due charges; the operator's resume out of review; and the settling of attempts
 * left open on subscriptions that stopped meanwhile.
 *
 * Every attempt is written `pending` with a key derived from (subscription, cycle, attempt) before
 * the acquirer hears of it, so a crash or a second worker asks again with the same key and the
 * acquirer replays instead of charging twice. An answer is always booked: a charge the acquirer
 * reports paid becomes a paid payment with its ledger entries and `payment.paid`, whatever state
 * the subscription reached during the call ("stopping does not cancel an operation already
 * started"). An attempt that was written but not sent when the subscription stopped is voided at
 * the acquirer and booked `stop`, so no open attempt is left without a way to finish.
 */
import { type Cause, Clock, Effect, type Exit, Fiber, Option, Request, Result, Stream } from "effect"
import * as Batching from "../Batching.js"
import * as Charge from "../Charge.js"
import { PaydeskConfig } from "../Config.js"
import { NotFound, OperationNotAllowed, type WriteConflict } from "../Errors.js"
import * as Payment from "../Payment.js"
import * as StateMachine from "../StateMachine.js"
import * as Subscription from "../Subscription.js"
import { ChargeRepository } from "../ports/ChargeRepository.js"
import { Entropy } from "../ports/Entropy.js"
import { SubscriptionRepository } from "../ports/SubscriptionRepository.js"
import { TerminalRepository } from "../ports/TerminalRepository.js"
import type { Transactions } from "../ports/Transactions.js"
import * as TestClock from "../TestClock.js"
import * as Acquirers from "./Acquirers.js"
import { atomic, atomicEach } from "./Atomic.js"
import { claimedBatches } from "./Jobs.js"
import * as Payments from "./Payments.js"
import * as Settlement from "./Settlement.js"
import * as Lifecycle from "./SubscriptionLifecycle.js"
import { forObject } from "./TestClockScope.js"
import * as Traced from "../Traced.js"

/**
 * Writes (or finds, after a crash) the pending attempt of a due subscription's current cycle; none
 * when it is not due. Inside the caller's transaction (`atomic` or `atomicEach`).
 */
const prepareLocked = Traced.fn("Subscriptions.prepareLocked")(function*(subscriptionId: string) {
  const sub = yield* Lifecycle.locked(subscriptionId)
  const now = yield* Clock.currentTimeMillis
  if (!Subscription.isChargeable(sub) || sub.nextChargeAt === null || sub.nextChargeAt > now) return Option.none()
  // A subscription on a test clock is charged by its clock's work only (at the clock's time).
  if (sub.testClockId !== (yield* TestClock.Scope)) return Option.none()
  const cycle = Lifecycle.cycleNumberOf(sub, sub.nextCycleIndex)
  const repo = yield* ChargeRepository
  const attempts = yield* repo.listForCycle(sub.id, cycle)
  const last = attempts.at(-1)
  if (last !== undefined && last.status === "pending") return Option.some(last)
  // A new attempt only after one that took no money; an unconfirmed one is settled by resume first.
  if (last !== undefined && last.status !== "fail" && last.status !== "stop") return Option.none()
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
})

/** Books a paid charge: its payment (credited to the balance), `payment.paid`, the attempt and the cycle counters. */
const bookPaid = Effect.fnUntraced(function*(
  sub: Subscription.Subscription,
  charge: Charge.Charge,
  to: Charge.Status,
  options: { readonly resume: boolean; readonly contradicted: boolean }
) {
  // A live charge credits by the terminal's conversion mode, held until the commit (see `Payments.apply`).
  const terminals = yield* TerminalRepository
  const terminal = yield* (sub.environment === "prod" ? terminals.getForCredit(sub.terminalId) : terminals.get(sub.terminalId))
  if (Option.isNone(terminal)) return yield* NotFound.of("terminal")
  const entropy = yield* Entropy
  const now = yield* Clock.currentTimeMillis
  const payment = Payment.makeRecurring({
    id: yield* entropy.uuid,
    subscription: sub,
    cycle: charge.cycleNumber,
    amount: charge.amount,
    payToken: yield* entropy.token(24),
    csrfToken: yield* entropy.token(24),
    qrPayload: null,
    expiresAt: null,
    now
  })
  // Sandbox charges never touch the ledger or the balance.
  const credited = sub.environment === "prod"
    ? { ...payment, settlement: yield* Settlement.credit(terminal.value, payment, sub.terms.merchantAmount) }
    : payment
  // New in this transaction: stored with its `payment.paid` (numbered 1) in one write, under the
  // cycle's order id, or the next free one when a payment has it (a merchant may name its own
  // payments so). Looked up only then: a query before every insert took charges side by side in a
  // transaction one at a time (bench:work's due charges 1,500 -> 545/s). Another conflict (the
  // cycle's order id free after all), or one that aborted the transaction (the lookup then fails),
  // is given back as it was, which retries the transaction whole.
  yield* Payments.insertNew(terminal.value, credited, "payment.paid").pipe(
    Effect.catchTag("WriteConflict", (conflict) =>
      Effect.gen(function*() {
        const free = yield* Effect.exit(Payments.freeRecurringOrderNumber(sub, charge.cycleNumber))
        if (free._tag === "Failure" || free.value === 1) return yield* conflict
        yield* Payments.insertNew(terminal.value, { ...credited, orderId: Payment.recurringOrderId(sub.id, charge.cycleNumber, free.value) }, "payment.paid")
      }))
  )
  yield* (yield* ChargeRepository).update({
    ...charge,
    status: to,
    validationStatus: options.contradicted ? "review" : "accepted",
    validationReason: options.contradicted ? "acquirer_paid_after_refusal" : null,
    // What an unconfirmed attempt said ("acquirer timeout") no longer stands once it is paid; a
    // contradicted refusal keeps its reason beside the review.
    message: options.contradicted ? charge.message : null,
    paymentId: credited.id,
    // The spec's "actual time of the charge": when the bank call that took the money was answered.
    // An unconfirmed attempt the bank settles later keeps its call's time, while the payment is booked
    // now (its `created_at` and `paid_at`), when the money is known to have come. A refused or voided
    // attempt that the bank reports paid after all takes this answer's time: the earlier answer
    // (a refusal, or the void of a stop) was not the call that took the money.
    actualAt: options.contradicted ? now : charge.actualAt ?? now,
    updatedAt: now
  })
  // Resume's own answer moves review -> enabled; a stop committed meanwhile wins (no move, still booked).
  const resumed = options.resume && Subscription.stateOf(sub) === "active/review" ? Lifecycle.move(sub, "resume", now) : Result.succeed(sub)
  if (Result.isFailure(resumed)) return yield* resumed.failure
  // A charge made later than its cycle's time because a resume moved it (the subscription was in
  // review) does not make up the cycles that fell due in review, up to the resume (an outside probe
  // saw a resume after three months in review charge all three at once, 4 x 4000 RUB against a
  // monthly ceiling). Cycles due after the resume are caught up as usual.
  const skipUntil = options.resume
    ? now
    : charge.scheduledAt > Lifecycle.chargeTimeOf(sub, sub.nextCycleIndex)
    ? charge.scheduledAt
    : null
  const next = Lifecycle.afterPaidCharge(resumed.success, charge.cycleNumber, now, { skipUntil })
  // (A cycle due before the review began is still charged after the resume: `afterPaidCharge` reads
  // `reviewSince`, set when the review began.)
  if (Result.isFailure(next)) return yield* next.failure
  return yield* Lifecycle.save(sub, next.success)
})

/** Books the acquirer's answer for an open attempt (pending or unconfirmed); a booked attempt is left alone. */
const recordOutcome = (subscriptionId: string, chargeId: string, answer: Charge.VoidOutcome, options: { readonly resume: boolean }) =>
  atomic(recordLocked({ subscriptionId, chargeId, answer, resume: options.resume }))

/** An acquirer's answer to book. */
interface Outcome {
  readonly subscriptionId: string
  readonly chargeId: string
  readonly answer: Charge.VoidOutcome
  /** Booked by the operator's resume (a paid answer moves review -> enabled). */
  readonly resume: boolean
}

/** `recordOutcome` inside the caller's transaction; answers the subscription as it is after. */
const recordLocked = Traced.fn("Subscriptions.recordLocked")(function*({ subscriptionId, chargeId, answer, resume }: Outcome) {
  const sub = yield* Lifecycle.locked(subscriptionId)
  const chargesRepo = yield* ChargeRepository
  const found = yield* chargesRepo.get(chargeId)
  if (Option.isNone(found)) return yield* NotFound.of("subscription")
  const charge = found.value
  if (charge.status === "payed") return sub
  if (charge.status === "fail" || charge.status === "stop") {
    if (answer._tag !== "Paid") return sub
    // The acquirer breaks its contract (a refused or voided key is paid after all): the money came,
    // so it is booked anyway, flagged for review, and logged for the operator.
    yield* Effect.logError("acquirer reports paid for a charge it had refused or voided; booked for review", { chargeId, status: charge.status })
    const edge = StateMachine.transition(Charge.machine, charge.status, "contradicted_paid")
    if (Result.isFailure(edge)) return yield* edge.failure
    return yield* bookPaid(sub, charge, edge.success.to, { resume: false, contradicted: true })
  }
  const event = Charge.eventOf(charge.status, answer, Subscription.isStopping(sub))
  if (event === null) return sub
  const edge = StateMachine.transition(Charge.machine, charge.status, event)
  if (Result.isFailure(edge)) return yield* edge.failure
  if (answer._tag === "Paid") return yield* bookPaid(sub, charge, edge.success.to, { resume, contradicted: false })
  const now = yield* Clock.currentTimeMillis
  const reason = answer._tag === "Voided" ? "voided: the subscription stopped before the charge was sent" : answer.reason
  yield* chargesRepo.update({
    ...charge,
    status: edge.success.to,
    validationStatus: edge.success.to === "unconfirmed" ? "review" : "accepted",
    validationReason: edge.success.to === "unconfirmed" ? "outcome_unconfirmed" : null,
    message: reason,
    actualAt: now,
    updatedAt: now
  })
  if (edge.success.to === "stop" || Subscription.stateOf(sub) !== "active/enabled") return sub
  const review = Lifecycle.move(sub, "charge_failed", now)
  if (Result.isFailure(review)) return yield* review.failure
  return yield* Lifecycle.save(sub, {
    ...review.success,
    consecutiveFailures: sub.consecutiveFailures + 1,
    nextChargeAt: null,
    chargeLeaseUntil: null,
    reviewReason: answer._tag === "Failed" ? `charge failed: ${reason}` : `charge unconfirmed: ${reason}`,
    // The first of reviews one after another (a resume whose retry is refused again): the cycles
    // that fell due since the first one began were all in review.
    reviewSince: sub.reviewSince ?? now
  })
})

/**
 * Asks the acquirer about a prepared attempt: the outcome to book, or `true` when the attempt is
 * left open and `false` when the subscription is gone. Best effort: a stop committed since the
 * attempt was written voids it instead of sending it (a stop committing during the call cannot stop
 * it; its answer is booked like any). A subscription that went to review meanwhile keeps the attempt
 * open for the operator's resume, which sends it.
 */
const ask = Traced.fn("Subscriptions.ask")(function*(subscriptionId: string, charge: Charge.Charge) {
  const current = yield* (yield* SubscriptionRepository).get(subscriptionId)
  if (Option.isNone(current)) return false
  if (!Subscription.isChargeable(current.value) && !Subscription.isStopping(current.value)) return true
  const acquirer = yield* Acquirers.acquirerFor(current.value.environment)
  const answer: Charge.VoidOutcome = Subscription.isStopping(current.value)
    ? yield* acquirer.voidCharge({ subscriptionId, idempotencyKey: charge.idempotencyKey })
    : yield* acquirer.charge({
      subscriptionId,
      cycleNumber: charge.cycleNumber,
      idempotencyKey: charge.idempotencyKey,
      amount: charge.amount
    })
  return { subscriptionId, chargeId: charge.id, answer, resume: false } satisfies Outcome
})

/**
 * Touches an attempt (its `updatedAt` set to now) under its subscription's lock while its status is
 * one `sendable` accepts; none when it is not (another worker booked it meanwhile). Inside the
 * caller's transaction.
 */
const touchLocked = Traced.fn("Subscriptions.touchLocked")(function*(
  subscriptionId: string,
  chargeId: string,
  sendable: (status: Charge.Status) => boolean
) {
  yield* Lifecycle.locked(subscriptionId)
  const repo = yield* ChargeRepository
  const found = yield* repo.get(chargeId)
  if (Option.isNone(found) || !sendable(found.value.status)) return Option.none()
  const touched = { ...found.value, updatedAt: yield* Clock.currentTimeMillis }
  yield* repo.update(touched)
  return Option.some(touched)
})

/**
 * The pending attempt to send now: as it is when it was written or touched less than a quarter of a
 * lease ago, else touched first (none when it is no longer pending). The settling of stopped
 * subscriptions' attempts takes only attempts untouched for a lease, so it never voids an attempt
 * during a call that starts within a quarter of a lease of its last touch and keeps to the
 * acquirer's contract (at most half a lease); the quarter left covers the subscription's read
 * before the call and the clocks of the processes differing by seconds, not more. An attempt waits
 * that long only behind slow calls (it is written with its batch, before the calls of the batch) or
 * when a crashed worker left it.
 */
const freshAttempt = Effect.fnUntraced(function*(subscriptionId: string, charge: Charge.Charge) {
  const config = yield* PaydeskConfig
  const now = yield* Clock.currentTimeMillis
  if (now - charge.updatedAt < config.leaseMs / 4) return Option.some(charge)
  return yield* atomic(touchLocked(subscriptionId, charge.id, (status) => status === "pending"))
})

/** After a booked answer: a subscription that reached its last cycle (or stopped during the call) completes its stop. */
const afterBooking = (sub: Subscription.Subscription) =>
  sub.billingStatus === "stop_pending" ? Effect.ignore(Lifecycle.completeStop(sub.id)) : Effect.void

/** Charges one claimed subscription: prepare, ask the acquirer (or void when it stopped meanwhile), book. */
export const chargeOne = Traced.fn("Subscriptions.chargeOne")(function*(subscriptionId: string) {
  const prepared = yield* atomic(prepareLocked(subscriptionId))
  if (Option.isNone(prepared)) return false
  const attempt = yield* freshAttempt(subscriptionId, prepared.value)
  if (Option.isNone(attempt)) return false
  const asked = yield* ask(subscriptionId, attempt.value)
  if (typeof asked === "boolean") return asked
  yield* afterBooking(yield* atomic(recordLocked(asked)))
  return true
})

/** Claimed subscriptions charged at once by one run. */
export const chargeConcurrency = 32

/** A subscription a pass claimed, with how writing its attempt (with the others of its batch) ended. */
interface Claimed {
  readonly sub: Subscription.Subscription
  readonly prepared: Exit.Exit<Option.Option<Charge.Charge>, Effect.Error<ReturnType<typeof prepareLocked>> | WriteConflict>
}

/** An outcome waiting to be booked with the others of its pass. */
class Booking extends Request.Class<{ readonly outcome: Outcome }, Subscription.Subscription, Effect.Error<ReturnType<typeof recordLocked>>> {}

/** Batches of `batchSize` due subscriptions one charge pass claims at most. */
export const chargeBatchesPerPass = 5

/**
 * Runs every scheduled charge due now (of the test clock in scope, or of none), in batches of
 * `batchSize` (at most `chargeBatchesPerPass`); returns how many charges were attempted. Idempotent.
 *
 * The attempts of a claimed batch are written together, in one transaction right after the claim's,
 * before any of them is sent. Then at most `chargeConcurrency` of its subscriptions are charged at
 * once: the acquirer is asked with the attempt's key (or the attempt is voided when the subscription
 * stopped meanwhile) and the answer booked after, as `chargeOne` does. The answers waiting while one
 * transaction of them commits are written together in the next, and an answer's booking does not hold
 * a call's place. An item that cannot be written with the others is written alone, so one
 * subscription's failure fails only its own charge; it stays leased and is retried after its lease
 * (an attempt written but not sent is found and sent with the same key then). An attempt that waited
 * behind slow calls is touched before its own (`freshAttempt`).
 *
 * The next batch is claimed once every subscription of the one before has started, while the last of
 * them are still being charged, so the charging does not wait for a claim between batches (as a
 * callback pass does). A subscription the pass claims again while it still holds it (its lease ran
 * out meanwhile) is left to the claim that holds it; one whose charge the pass has finished is
 * charged again when its next cycle is due already. A later batch that cannot be claimed ends the
 * pass; the first one's failure is the pass's.
 */
export const runDueCharges = Traced.fn("Subscriptions.runDueCharges")(function*() {
  const config = yield* PaydeskConfig
  const subscriptions = yield* SubscriptionRepository
  const testClock = yield* TestClock.Scope
  // The subscriptions this pass has claimed and not finished (charged and booked, or given up).
  const taken = new Set<string>()
  const finished = (id: string) => Effect.sync(() => void taken.delete(id))
  const claim = Traced.fn("Subscriptions.claimDueBatch")(function*(batch: number) {
    const now = yield* Clock.currentTimeMillis
    const all = yield* atomic(subscriptions.claimDue(now, now + config.leaseMs, config.batchSize, testClock))
    // One the pass still holds (its lease ran out while it waited, or while the acquirer answered)
    // is left to the claim that holds it, so one pass never asks twice at once; one it finished and
    // claims again (its next cycle is due already, after a catch-up) is charged again.
    const claimed = all.filter((sub) => !taken.has(sub.id))
    for (const sub of claimed) taken.add(sub.id)
    // The batch's attempts, written together in one transaction before any of them is sent (one
    // that cannot be written with the others is written alone; its failure is that subscription's).
    const prepared = yield* atomicEach(claimed, (sub) => prepareLocked(sub.id))
    const more = all.length === config.batchSize && batch + 1 < chargeBatchesPerPass
    return [claimed.map((sub, i): Claimed => ({ sub, prepared: prepared[i]! })), more ? Option.some(batch + 1) : Option.none<number>()] as const
  })
  // The pass's own resolvers, in its context (its test clock, its clock): no other pass shares them.
  const context = yield* Effect.context<Effect.Services<ReturnType<typeof recordLocked>> | Transactions>()
  const booker = Batching.batchResolver<Booking>(
    (bookings) => Effect.provideContext(atomicEach(bookings, (booking) => recordLocked(booking.outcome)), context),
    { maxInFlight: 1 }
  )
  const failed = (cause: Cause.Cause<unknown>) => Effect.as(Effect.logError("scheduled charge failed", cause), false)
  return yield* Effect.scoped(Effect.gen(function*() {
    const scope = yield* Effect.scope
    // Different subscriptions are charged side by side (an acquirer call takes a while). Whoever
    // else charges one of them at the same time (a flow, another process after a lapsed lease)
    // reuses its pending attempt's idempotency key under the subscription's row lock, so the
    // acquirer replays rather than charges again. A failure of one subscription leaves it leased
    // and retried later; the others go on.
    const charge = ({ sub, prepared: written }: Claimed) =>
      Effect.gen(function*() {
        const prepared = yield* written
        if (Option.isNone(prepared)) return false
        const attempt = yield* freshAttempt(sub.id, prepared.value)
        if (Option.isNone(attempt)) return false
        const outcome = yield* ask(sub.id, attempt.value)
        if (typeof outcome === "boolean") return outcome
        const booked = Effect.request(new Booking({ outcome }), booker).pipe(Effect.flatMap(afterBooking), Effect.as(true), Effect.catchCause(failed))
        return yield* Effect.forkIn(Effect.ensuring(booked, finished(sub.id)), scope)
      }).pipe(Effect.catchCause(failed), Effect.tap((result) => typeof result === "boolean" ? finished(sub.id) : Effect.void))
    const asked = yield* claimedBatches("due charges not claimed", claim).pipe(
      Stream.mapEffect(charge, { concurrency: chargeConcurrency, unordered: true }),
      Stream.runCollect
    )
    const outcomes = yield* Effect.forEach(asked, (one) => typeof one === "boolean" ? Effect.succeed(one) : Fiber.join(one))
    return outcomes.filter(Boolean).length
  }))
})

/** The longest rest between two asks about an open attempt of a stopping subscription (see `voidBackoff`). */
export const maxVoidWaitMs = 86_400_000

/**
 * How often an open attempt of a stopping subscription is asked about (`Charge.nextVoidAt`): a
 * `pending` one (never answered) every lease; an `unconfirmed` one (the acquirer does not know)
 * after resting as long as it has been open, at least a lease, at most a day. An acquirer that keeps
 * not knowing is asked about 11 times in the first day and daily after, not every minute for ever
 * (on a test clock, a year's advance would otherwise step through every minute of it).
 */
export const voidBackoff = (leaseMs: number): Charge.VoidBackoff => ({ minMs: leaseMs, maxMs: Math.max(leaseMs, maxVoidWaitMs) })

/**
 * Settles attempts left open on stopping or stopped subscriptions (a crash between writing an
 * attempt and booking its answer, or an unconfirmed answer): the acquirer is asked to void each
 * key, which books the charge paid if it was performed, `stop` if it was not (or was refused), and
 * leaves it for a later pass while the acquirer still cannot tell (`voidBackoff`). Only attempts
 * untouched for a lease are taken, so a charge still in its call is never settled under it. Returns
 * how many attempts were booked. Idempotent.
 */
export const settleStoppedCharges = Traced.fn("Subscriptions.settleStoppedCharges")(function*() {
  const config = yield* PaydeskConfig
  const now = yield* Clock.currentTimeMillis
  const claimed = yield* atomic((yield* ChargeRepository).claimOpenOfStopped(now, voidBackoff(config.leaseMs), config.batchSize, yield* TestClock.Scope))
  let booked = 0
  for (const charge of claimed) {
    // One attempt that cannot be booked now (say the rate is missing) is retried after its rest
    // (`Charge.nextVoidAt`: a lease while pending, up to a day once unconfirmed); the others go on.
    const settled = yield* Effect.gen(function*() {
      const sub = yield* Lifecycle.load(charge.subscriptionId)
      const acquirer = yield* Acquirers.acquirerFor(sub.environment)
      const answer = yield* acquirer.voidCharge({ subscriptionId: charge.subscriptionId, idempotencyKey: charge.idempotencyKey })
      yield* recordOutcome(charge.subscriptionId, charge.id, answer, { resume: false })
      const after = yield* (yield* ChargeRepository).get(charge.id)
      return Option.isSome(after) && !Charge.isOpen(after.value.status)
    }).pipe(Effect.catchCause((cause) => Effect.as(Effect.logError("open charge not settled", cause), false)))
    if (settled) booked++
  }
  return booked
})

/**
 * The attempt of the subscription's current cycle whose outcome is not booked (`pending`: never
 * answered, `unconfirmed`: the acquirer did not know), if any: the charge an operator asks the bank
 * about before `resume`.
 */
export const openCharge = Traced.fn("Subscriptions.openCharge")(function*(id: string) {
  const sub = yield* Lifecycle.load(id)
  const attempts = yield* (yield* ChargeRepository).listForCycle(sub.id, Lifecycle.cycleNumberOf(sub, sub.nextCycleIndex))
  const last = attempts.at(-1)
  return last !== undefined && Charge.isOpen(last.status) ? Option.some(last) : Option.none<Charge.Charge>()
})

/** Operator: out of review back to enabled, after reconciling an unconfirmed (or unsent) attempt (at a test clock's time for its subscriptions). */
export const resume = Traced.fn("Subscriptions.resume")(function*(id: string) {
  const sub = yield* Lifecycle.load(id)
  return yield* forObject(sub.testClockId, resumeLoaded(sub))
})

const resumeLoaded = Traced.fn("Subscriptions.resumeLoaded")(function*(sub: Subscription.Subscription) {
  if (Subscription.stateOf(sub) === "new/review") return yield* Lifecycle.activateLatePaid(sub.id)
  if (Subscription.stateOf(sub) !== "active/review") return yield* Lifecycle.notResumable(Subscription.stateOf(sub))
  // The merchant asked to stop it and the acquirer refused the stop: charging on would go against the
  // merchant's request (a review found it so); stopping again is the way out.
  if (sub.reviewReason?.startsWith(Lifecycle.stopFailedReason) === true) {
    return yield* new OperationNotAllowed({ message: "subscription in active/review cannot be resumed: its stop failed; stop it again" })
  }
  const cycle = Lifecycle.cycleNumberOf(sub, sub.nextCycleIndex)
  const attempts = yield* (yield* ChargeRepository).listForCycle(sub.id, cycle)
  const open = attempts.at(-1)
  // Touched first, however old it is (resume is rare), so that a stop committed during the call does
  // not let the settling take it as untouched for a lease and void it under the call.
  const last = open !== undefined && Charge.isOpen(open.status)
    ? yield* atomic(touchLocked(sub.id, open.id, Charge.isOpen))
    : Option.none()
  if (Option.isSome(last)) {
    const answer = yield* (yield* Acquirers.acquirerFor(sub.environment)).charge({
      subscriptionId: sub.id,
      cycleNumber: cycle,
      idempotencyKey: last.value.idempotencyKey,
      amount: last.value.amount
    })
    if (answer._tag === "Unknown") {
      return yield* new OperationNotAllowed({ message: "the last charge is still unconfirmed by the acquirer" })
    }
    const booked = yield* recordOutcome(sub.id, last.value.id, answer, { resume: true })
    if (answer._tag === "Paid" || Subscription.stateOf(booked) !== "active/review") return booked
  }
  return yield* atomic(Effect.gen(function*() {
    const locked = yield* Lifecycle.locked(sub.id)
    if (Subscription.stateOf(locked) !== "active/review") {
      // Another resume (or a stop) got there first.
      return yield* Lifecycle.notResumable(Subscription.stateOf(locked))
    }
    const now = yield* Clock.currentTimeMillis
    const moved = Lifecycle.move(locked, "resume", now)
    if (Result.isFailure(moved)) return yield* moved.failure
    const due = Math.max(now, Lifecycle.chargeTimeOf(locked, locked.nextCycleIndex))
    return yield* Lifecycle.save(locked, { ...moved.success, nextChargeAt: due, reviewReason: null, chargeLeaseUntil: null })
  }))
})
