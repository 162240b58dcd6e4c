import { assert, describe, it } from "@effect/vitest"
import { Cause, Clock, Deferred, Effect, Exit, Fiber, Option } from "effect"
import { TestClock } from "effect/testing"
import {
  Acquirer,
  ChargeRepository,
  Config,
  Instant,
  LedgerRepository,
  PaymentRepository,
  Payments,
  PaydeskConfig,
  Subscription,
  Subscriptions,
  SubscriptionRepository,
  Views,
  Work
} from "@paydesk/core"
import { AcquirerEmulator, Kit, RecordingCallbackTransport } from "@paydesk/testkit"
import { activeMerchant, activeSubscriptions, anchor, consentAndPay, monthlyDates, reload, setup } from "./SubscriptionSupport.js"

const modes = [
  { mode: "ceiling", body: (plans: Kit.Plans) => ({ planId: plans.ceilingMonthly.id, amount: "1500,00" }), payer: 150_000n, merchant: 150_000n, firstCycle: 0 },
  { mode: "fixed", body: (plans: Kit.Plans) => ({ planId: plans.fixedMonthly.id, payerId: "user-77" }), payer: 99_000n, merchant: 95_000n, firstCycle: 1 }
] as const

/** `count` active subscriptions of a fresh merchant, the acquirer emulator, and its charge calls from now on. */
const dueSubscriptions = (count: number) =>
  Effect.gen(function*() {
    const ids = yield* activeSubscriptions(count)
    const emulator = yield* AcquirerEmulator.AcquirerEmulator
    const before = emulator.chargeCalls
    return { ids, emulator, calls: () => emulator.chargeCalls - before }
  })

/** A fresh merchant's monthly ceiling subscription (100.00), active, and the acquirer emulator. */
const activeCeiling = Effect.gen(function*() {
  const { merchant, plans, principal } = yield* setup()
  const emulator = yield* AcquirerEmulator.AcquirerEmulator
  const { subscription } = yield* Subscriptions.create(principal, {
    idempotencyKey: "k",
    terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "100"
  })
  yield* consentAndPay(subscription)
  return { principal, subscription, emulator }
})

/** `activeCeiling` whose first charge the bank has answered `outcome`. */
const firstChargeAnswered = (outcome: AcquirerEmulator.ChargeProgram) =>
  Effect.gen(function*() {
    const active = yield* activeCeiling
    yield* active.emulator.programCharges(active.subscription.id, [outcome])
    yield* TestClock.setTime(monthlyDates[0]!)
    yield* Work.drain()
    return active
  })

describe("Subscriptions scenarios", () => {
  for (const m of modes) {
    it.effect(`${m.mode} mode: consent, first payment, thirteen monthly charges with clamped dates, failure to review, stop`, () =>
      Effect.gen(function*() {
        const { merchant, plans, principal } = yield* setup()
        const emulator = yield* AcquirerEmulator.AcquirerEmulator
        const { subscription: sub, created } = yield* Subscriptions.create(principal, {
          idempotencyKey: "key-1",
          terminalId: merchant.terminal.id, ...m.body(plans)
        })
        assert.isTrue(created)
        const view = Views.subscription(sub, { publicUrl: "https://pay.example", withPayUrl: true })
        assert.strictEqual(view.provider_state, "new")
        assert.strictEqual(view.billing_status, "consent_pending")
        assert.strictEqual(view.successful_cycles, 0)
        assert.strictEqual(view.consecutive_failures, 0)
        assert.match((view as { pay_url: string }).pay_url, /^https:\/\/pay\.example\/public\/subscriptions\//)

        // Nothing is charged before consent, whatever the time.
        yield* TestClock.setTime(monthlyDates[2]!)
        yield* Work.drain()
        assert.strictEqual(emulator.charges.length, 0)
        yield* TestClock.setTime(anchor)

        const first = yield* consentAndPay(sub)
        let current = yield* reload(sub.id)
        assert.strictEqual(Subscription.stateOf(current), "active/enabled")
        assert.strictEqual(current.activatedAt, anchor)
        assert.strictEqual(current.successfulCycles, 1)
        assert.strictEqual(current.nextChargeAt, monthlyDates[0])
        assert.strictEqual(first.amount, m.payer)
        const history = yield* Subscriptions.charges(principal, sub.id)
        assert.deepStrictEqual(history.map((c) => [c.cycleNumber, c.status, c.paymentId]), [[m.firstCycle, "payed", first.id]])

        for (const [i, due] of monthlyDates.entries()) {
          yield* TestClock.setTime(due - 1)
          assert.strictEqual((yield* Work.drain()).charges, 0, `not before ${Instant.formatIso(due)}`)
          yield* TestClock.setTime(due)
          assert.strictEqual((yield* Work.drain()).charges, 1, `charge ${i + 1}`)
          current = yield* reload(sub.id)
          assert.strictEqual(current.successfulCycles, i + 2)
          assert.strictEqual(current.nextChargeAt, i + 1 < monthlyDates.length ? monthlyDates[i + 1] : current.nextChargeAt)
        }
        assert.strictEqual(emulator.charges.length, 13)
        assert.deepStrictEqual(emulator.charges.map((c) => c.amount), Array(13).fill(m.payer))
        assert.strictEqual(current.nextChargeAt, Date.parse("2027-03-31T10:00:00.000+03:00"))

        const charges = yield* Subscriptions.charges(principal, sub.id)
        assert.strictEqual(charges.length, 14)
        assert.deepStrictEqual(charges.map((c) => c.cycleNumber), Array.from({ length: 14 }, (_, k) => m.firstCycle + 13 - k))
        const payments = yield* Payments.list(principal, { recurring: true })
        assert.strictEqual(payments.total, 14)
        for (const p of payments.items) {
          assert.strictEqual(p.status, "paid")
          assert.strictEqual(p.subscriptionId, sub.id)
          assert.strictEqual(p.amount, m.payer)
          assert.strictEqual(p.settlement?.merchantAmount, m.merchant)
        }
        const balance = yield* (yield* LedgerRepository).balance(merchant.terminal.id)
        assert.strictEqual(balance.usdtAvailable, 14n * (m.merchant * 10_000_000_000n / 95_000_000n))

        yield* Work.drain()
        const paidCallbacks = (yield* RecordingCallbackTransport.RecordingCallbackTransport).requests
          .map((r) => JSON.parse(r.body))
          .filter((b) => b.event_type === "payment.paid")
        assert.strictEqual(paidCallbacks.length, 14)
        assert.isTrue(paidCallbacks.every((b) => !("subscription_id" in b)))

        // A failed charge moves it to review; no further charges follow.
        yield* emulator.programCharges(sub.id, ["failed"])
        yield* TestClock.setTime(Date.parse("2027-03-31T10:00:00.000+03:00"))
        assert.strictEqual((yield* Work.drain()).charges, 1)
        current = yield* reload(sub.id)
        assert.strictEqual(Subscription.stateOf(current), "active/review")
        assert.strictEqual(current.consecutiveFailures, 1)
        assert.strictEqual(current.nextChargeAt, null)
        const failed = (yield* Subscriptions.charges(principal, sub.id))[0]!
        assert.deepStrictEqual([failed.status, failed.paymentId], ["fail", null])
        yield* TestClock.setTime(Date.parse("2027-06-30T10:00:00.000+03:00"))
        assert.strictEqual((yield* Work.drain()).charges, 0)
        assert.strictEqual(emulator.charges.length, 14)

        // Stop.
        const stopped = yield* Subscriptions.stop(principal, sub.id)
        assert.strictEqual(Subscription.stateOf(stopped), "stop/stopped")
        assert.strictEqual(stopped.nextChargeAt, null)
        assert.strictEqual(stopped.stoppedAt, Date.parse("2027-06-30T10:00:00.000+03:00"))
        assert.strictEqual(emulator.stops.length, 1)
        const again = yield* Subscriptions.stop(principal, sub.id)
        assert.strictEqual(Subscription.stateOf(again), "stop/stopped")
        assert.strictEqual(emulator.stops.length, 1)
      }).pipe(Effect.provide(Kit.layer)))
  }

  it.effect("an unconfirmable charge goes to review as unconfirmed; resume reconciles without charging twice", () =>
    Effect.gen(function*() {
      const { principal, subscription, emulator } = yield* firstChargeAnswered("unknown")
      let sub = yield* reload(subscription.id)
      assert.strictEqual(Subscription.stateOf(sub), "active/review")
      const record = (yield* Subscriptions.charges(principal, sub.id))[0]!
      assert.deepStrictEqual([record.status, record.validationStatus, record.validationReason], ["unconfirmed", "review", "outcome_unconfirmed"])
      assert.strictEqual(Views.charge(record).status, "fail")
      assert.strictEqual(record.message, "acquirer timeout")
      // Still unknown at the bank: resume refused.
      assert.strictEqual((yield* Effect.flip(Subscriptions.resume(sub.id)))._tag, "OperationNotAllowed")
      // The bank settles it as paid: resume books it, no second charge.
      yield* emulator.resolveCharge(record.idempotencyKey, "paid")
      sub = yield* Subscriptions.resume(sub.id)
      assert.strictEqual(Subscription.stateOf(sub), "active/enabled")
      assert.strictEqual(sub.successfulCycles, 2)
      assert.strictEqual(sub.nextChargeAt, monthlyDates[1])
      assert.strictEqual(emulator.charges.length, 1)
      const booked = (yield* Subscriptions.charges(principal, sub.id))[0]!
      assert.strictEqual(booked.status, "payed")
      assert.isNotNull(booked.paymentId)
      // What the unconfirmed attempt said no longer stands (a probe read "payed" beside "acquirer timeout").
      assert.deepStrictEqual([booked.validationStatus, booked.validationReason, booked.message], ["accepted", null, null])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a resume after months in review charges the failed cycle once; the cycles that fell due in review are not made up", () =>
    Effect.gen(function*() {
      const { principal, subscription, emulator } = yield* firstChargeAnswered("failed")
      assert.strictEqual(Subscription.stateOf(yield* reload(subscription.id)), "active/review")
      // Three more cycles fall due while it is in review; the operator resumes four days after the last.
      const resumedAt = monthlyDates[3]! + 4 * Instant.DAY_MS
      yield* TestClock.setTime(resumedAt)
      assert.strictEqual((yield* Subscriptions.resume(subscription.id)).nextChargeAt, resumedAt)
      // The schedule shown says the same.
      const upcoming = yield* Subscriptions.upcoming(principal, subscription.id, 3)
      assert.deepStrictEqual(upcoming.map((u) => [u.cycleNumber, u.scheduledAt]), [[1, resumedAt], [5, monthlyDates[4]], [6, monthlyDates[5]]])
      // One charge: the failed cycle's second attempt. Then the schedule goes on from the next date ahead
      // (before, each cycle of the review was charged at once: four charges in a second).
      assert.strictEqual((yield* Work.drain()).charges, 1)
      assert.strictEqual((yield* Work.drain()).charges, 0)
      let sub = yield* reload(subscription.id)
      assert.strictEqual(Subscription.stateOf(sub), "active/enabled")
      assert.strictEqual(sub.nextChargeAt, monthlyDates[4])
      assert.strictEqual(sub.successfulCycles, 2)
      yield* TestClock.setTime(monthlyDates[4]!)
      assert.strictEqual((yield* Work.drain()).charges, 1)
      sub = yield* reload(subscription.id)
      assert.strictEqual(sub.nextChargeAt, monthlyDates[5])
      const history = yield* Subscriptions.charges(principal, sub.id)
      assert.deepStrictEqual(history.map((c) => [c.cycleNumber, c.attempt, c.status]), [[5, 1, "payed"], [1, 2, "payed"], [1, 1, "fail"], [0, 1, "payed"]])
      assert.deepStrictEqual(emulator.charges.map((c) => [c.cycleNumber, c.outcome._tag]), [[1, "Failed"], [1, "Paid"], [5, "Paid"]])
    }).pipe(Effect.provide(Kit.layer)))

  describe("a catch-up a refused charge interrupted (an outside probe: a cycle due before the review was never charged)", () => {
    /** Back from an outage on `back` with cycles due (the second refused: review since `back`), resumed on `resumedAt`. */
    const interrupted = (back: number, resumedAt: number) =>
      Effect.gen(function*() {
        const active = yield* activeCeiling
        yield* active.emulator.programCharges(active.subscription.id, ["paid", "failed"])
        yield* TestClock.setTime(back)
        yield* Work.drain()
        const inReview = yield* reload(active.subscription.id)
        assert.deepStrictEqual([Subscription.stateOf(inReview), inReview.reviewSince], ["active/review", back])
        yield* TestClock.setTime(resumedAt)
        yield* Subscriptions.resume(active.subscription.id)
        return active
      })
    const may15 = Date.parse("2026-05-15T07:00:00.000Z")
    const june15 = Date.parse("2026-06-15T07:00:00.000Z")
    // Cycles 4 to 6 (31 May, 30 June, 31 July) fall due in the review; resumed on 4 August.
    const resumedAt = monthlyDates[5]! + 4 * Instant.DAY_MS

    it.effect("the cycle due before the review is charged after the resume, those due in it are not", () =>
      Effect.gen(function*() {
        // Cycles 1 to 3 (28 February, 31 March, 30 April) due on 15 May; cycle 2 refused.
        const { principal, subscription, emulator } = yield* interrupted(may15, resumedAt)
        const upcoming = yield* Subscriptions.upcoming(principal, subscription.id, 3)
        assert.deepStrictEqual(upcoming.map((u) => [u.cycleNumber, u.scheduledAt]), [[2, resumedAt], [3, resumedAt], [7, monthlyDates[6]]])
        assert.strictEqual((yield* Work.drain()).charges, 2)
        assert.strictEqual((yield* Work.drain()).charges, 0)
        const sub = yield* reload(subscription.id)
        assert.deepStrictEqual([Subscription.stateOf(sub), sub.nextChargeAt, sub.reviewSince, sub.successfulCycles], ["active/enabled", monthlyDates[6], null, 4])
        const history = yield* Subscriptions.charges(principal, subscription.id)
        assert.deepStrictEqual(history.map((c) => [c.cycleNumber, c.attempt, c.status]), [[3, 1, "payed"], [2, 2, "payed"], [2, 1, "fail"], [1, 1, "payed"], [0, 1, "payed"]])
        yield* TestClock.setTime(monthlyDates[6]!)
        assert.strictEqual((yield* Work.drain()).charges, 1)
        assert.deepStrictEqual(emulator.charges.map((c) => c.cycleNumber), [1, 2, 2, 3, 7])
      }).pipe(Effect.provide(Kit.layer)))

    it.effect("two cycles due before the review are charged one after the other, then the first after the resume", () =>
      Effect.gen(function*() {
        // Cycles 1 to 4 due on 15 June; cycle 2 refused; cycles 3 and 4 were due before the review.
        const { principal, subscription, emulator } = yield* interrupted(june15, resumedAt)
        const upcoming = yield* Subscriptions.upcoming(principal, subscription.id, 4)
        assert.deepStrictEqual(upcoming.map((u) => [u.cycleNumber, u.scheduledAt]), [[2, resumedAt], [3, resumedAt], [4, resumedAt], [7, monthlyDates[6]]])
        assert.strictEqual((yield* Work.drain()).charges, 3)
        const sub = yield* reload(subscription.id)
        assert.deepStrictEqual([sub.nextChargeAt, sub.reviewSince], [monthlyDates[6], null])
        assert.deepStrictEqual(emulator.charges.map((c) => c.cycleNumber), [1, 2, 2, 3, 4])
      }).pipe(Effect.provide(Kit.layer)))

    it.effect("a process of the earlier version (which keeps no review time) charging the cycle before the review then skips the review's cycles too", () =>
      Effect.gen(function*() {
        const { subscription, emulator } = yield* interrupted(may15, resumedAt)
        assert.isTrue(yield* Subscriptions.chargeOne(subscription.id))
        const after = yield* reload(subscription.id)
        // Cycle 3 scheduled at the resume's time, a charge made later than its cycle's time.
        assert.deepStrictEqual([after.nextCycleIndex, after.nextChargeAt], [3, resumedAt])
        // As the earlier version: no review time to read.
        const subs = yield* SubscriptionRepository
        yield* subs.update({ ...after, reviewSince: null, version: after.version + 1 })
        assert.strictEqual((yield* Work.drain()).charges, 1)
        assert.strictEqual((yield* reload(subscription.id)).nextChargeAt, monthlyDates[6])
        assert.deepStrictEqual(emulator.charges.map((c) => c.cycleNumber), [1, 2, 2, 3])
      }).pipe(Effect.provide(Kit.layer)))

    it.effect("a resume whose retry is refused again: the next resume charges none of the cycles due since the first review began", () =>
      Effect.gen(function*() {
        const { subscription, emulator } = yield* activeCeiling
        yield* emulator.programCharges(subscription.id, ["failed", "failed"])
        yield* TestClock.setTime(monthlyDates[0]!)
        yield* Work.drain()
        // Resumed on 4 May: the retry is refused at once (a second review), resumed again on 4 August.
        yield* TestClock.setTime(monthlyDates[2]! + 4 * Instant.DAY_MS)
        yield* Subscriptions.resume(subscription.id)
        yield* Work.drain()
        assert.deepStrictEqual([Subscription.stateOf(yield* reload(subscription.id)), (yield* reload(subscription.id)).reviewSince], ["active/review", monthlyDates[0]])
        yield* TestClock.setTime(resumedAt)
        yield* Subscriptions.resume(subscription.id)
        yield* Work.drain()
        yield* Work.drain()
        assert.deepStrictEqual(emulator.charges.map((c) => c.cycleNumber), [1, 1, 1])
        assert.deepStrictEqual([(yield* reload(subscription.id)).nextChargeAt, (yield* reload(subscription.id)).reviewSince], [monthlyDates[6], null])
      }).pipe(Effect.provide(Kit.layer)))

    it.effect("a review ended by a resume at the refused cycle's own time leaves no start behind for a later one", () =>
      Effect.gen(function*() {
        const { subscription, emulator } = yield* activeCeiling
        yield* emulator.programCharges(subscription.id, ["failed"])
        yield* TestClock.setTime(monthlyDates[0]!)
        yield* Work.drain()
        // Resumed at once (a test clock not advanced): the retry is on its cycle's time.
        yield* Subscriptions.resume(subscription.id)
        yield* Work.drain()
        assert.deepStrictEqual([(yield* reload(subscription.id)).reviewSince, (yield* reload(subscription.id)).nextChargeAt], [null, monthlyDates[1]])
        // An outage: cycles 2 to 4 due on 15 June, cycle 3 refused; resumed on 4 August.
        yield* emulator.programCharges(subscription.id, ["paid", "failed"])
        yield* TestClock.setTime(june15)
        yield* Work.drain()
        assert.strictEqual((yield* reload(subscription.id)).reviewSince, june15)
        yield* TestClock.setTime(resumedAt)
        yield* Subscriptions.resume(subscription.id)
        yield* Work.drain()
        // Cycle 4 (31 May) fell due before this review began: charged after the resume.
        assert.deepStrictEqual(emulator.charges.map((c) => c.cycleNumber), [1, 1, 2, 3, 3, 4])
        assert.strictEqual((yield* reload(subscription.id)).nextChargeAt, monthlyDates[6])
      }).pipe(Effect.provide(Kit.layer)))

    it.effect("an unconfirmed charge the bank refuses later, resumed months after: only that cycle is charged (its review began at the first answer)", () =>
      Effect.gen(function*() {
        const { principal, subscription, emulator } = yield* activeCeiling
        yield* emulator.programCharges(subscription.id, ["unknown"])
        yield* TestClock.setTime(monthlyDates[0]!)
        yield* Work.drain()
        const record = (yield* Subscriptions.charges(principal, subscription.id))[0]!
        yield* emulator.resolveCharge(record.idempotencyKey, "failed")
        yield* TestClock.setTime(monthlyDates[3]! + 4 * Instant.DAY_MS)
        assert.strictEqual(Subscription.stateOf(yield* Subscriptions.resume(subscription.id)), "active/enabled")
        const before = emulator.charges.length
        yield* Work.drain()
        yield* Work.drain()
        assert.deepStrictEqual(emulator.charges.slice(before).map((c) => c.cycleNumber), [1])
        assert.strictEqual((yield* reload(subscription.id)).nextChargeAt, monthlyDates[4])
      }).pipe(Effect.provide(Kit.layer)))

    it.effect("a charge booked paid while in review (another asker's answer), resumed months later: only the next cycle is charged", () =>
      Effect.gen(function*() {
        const { ids: [id] } = yield* activeMerchant(1)
        const emulator = yield* AcquirerEmulator.AcquirerEmulator
        yield* TestClock.setTime(monthlyDates[0]!)
        const arrived = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const gated = Acquirer.of({
          ...emulator.acquirer,
          charge: (input) => Effect.andThen(emulator.acquirer.charge(input), (answer) =>
            Effect.as(Effect.andThen(Deferred.succeed(arrived, undefined), Deferred.await(release)), answer))
        })
        const timingOut = Acquirer.of({ ...emulator.acquirer, charge: () => Effect.succeed({ _tag: "Unknown" as const, reason: "acquirer timeout" }) })
        const paid = yield* Effect.forkChild(Subscriptions.chargeOne(id!).pipe(Effect.provideService(Acquirer, gated)))
        yield* Deferred.await(arrived)
        assert.isTrue(yield* Subscriptions.chargeOne(id!).pipe(Effect.provideService(Acquirer, timingOut)))
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(paid)
        assert.deepStrictEqual([Subscription.stateOf(yield* reload(id!)), (yield* reload(id!)).nextCycleIndex], ["active/review", 2])
        yield* TestClock.setTime(monthlyDates[3]! + 4 * Instant.DAY_MS)
        yield* Subscriptions.resume(id!)
        const before = emulator.charges.length
        yield* Work.drain()
        yield* Work.drain()
        assert.deepStrictEqual(emulator.charges.slice(before).map((c) => c.cycleNumber), [2])
      }).pipe(Effect.provide(Kit.layer)))
  })

  it.effect("after a resume, cycles due later than the resume are caught up as usual (the service could not charge on time)", () =>
    Effect.gen(function*() {
      const { principal, subscription } = yield* firstChargeAnswered("failed")
      const resumedAt = monthlyDates[2]! + Instant.DAY_MS
      yield* TestClock.setTime(resumedAt)
      yield* Subscriptions.resume(subscription.id)
      // Nothing runs until after the next date (the service was down): the retry, then that cycle.
      yield* TestClock.setTime(monthlyDates[3]! + Instant.DAY_MS)
      assert.strictEqual((yield* Work.drain()).charges, 2)
      const history = yield* Subscriptions.charges(principal, subscription.id)
      assert.deepStrictEqual(history.slice(0, 2).map((c) => [c.cycleNumber, c.attempt, c.status]), [[4, 1, "payed"], [1, 2, "payed"]])
      assert.strictEqual((yield* reload(subscription.id)).nextChargeAt, monthlyDates[4])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a charge the bank settles paid while in review, resumed months later: the schedule goes on from the next date ahead", () =>
    Effect.gen(function*() {
      const { principal, subscription, emulator } = yield* firstChargeAnswered("unknown")
      const record = (yield* Subscriptions.charges(principal, subscription.id))[0]!
      assert.strictEqual(record.actualAt, monthlyDates[0])
      yield* emulator.resolveCharge(record.idempotencyKey, "paid")
      const resumedAt = monthlyDates[2]! + Instant.DAY_MS
      yield* TestClock.setTime(resumedAt)
      const sub = yield* Subscriptions.resume(subscription.id)
      assert.strictEqual(Subscription.stateOf(sub), "active/enabled")
      assert.strictEqual(sub.nextChargeAt, monthlyDates[3])
      assert.strictEqual((yield* Work.drain()).charges, 0)
      assert.strictEqual(emulator.charges.length, 1)
      // The charge's actual time is the bank call's (its first answer), not the resume's; its payment
      // is booked at the resume, when the money is known to have come.
      const booked = (yield* Subscriptions.charges(principal, subscription.id))[0]!
      assert.deepStrictEqual([booked.status, booked.actualAt], ["payed", monthlyDates[0]])
      const payment = yield* Payments.get(principal, booked.paymentId!)
      assert.deepStrictEqual([payment.createdAt, payment.paidAt], [resumedAt, resumedAt])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("max_cycles stops the subscription when reached", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal } = yield* setup({ maxCycles: 3 })
      const { subscription } = yield* Subscriptions.create(principal, {
        idempotencyKey: "k",
        terminalId: merchant.terminal.id, planId: plans.fixed30Days.id, payerId: "p-1"
      })
      yield* consentAndPay(subscription)
      for (let k = 1; k <= 4; k++) {
        yield* TestClock.setTime(anchor + k * 30 * Instant.DAY_MS)
        yield* Work.drain()
      }
      const sub = yield* reload(subscription.id)
      assert.strictEqual(sub.successfulCycles, 3)
      assert.strictEqual(Subscription.stateOf(sub), "stop/stopped")
      assert.strictEqual(sub.nextChargeAt, null)
      assert.strictEqual((yield* AcquirerEmulator.AcquirerEmulator).charges.length, 2)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a stop the acquirer cannot complete moves it to review with the Russian 400", () =>
    Effect.gen(function*() {
      const { principal, subscription, emulator } = yield* activeCeiling
      yield* emulator.programStop(subscription.id, "failed")
      const error = yield* Effect.flip(Subscriptions.stop(principal, subscription.id))
      assert.strictEqual(error._tag, "StopFailed")
      assert.match(error.message, /review/)
      const sub = yield* reload(subscription.id)
      assert.strictEqual(Subscription.stateOf(sub), "active/review")
      yield* TestClock.setTime(monthlyDates[3]!)
      assert.strictEqual((yield* Work.drain()).charges, 0)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a subscription stopped before consent never contacts the acquirer and never charges", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal } = yield* setup()
      const { subscription } = yield* Subscriptions.create(principal, {
        idempotencyKey: "k",
        terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "100"
      })
      const stopped = yield* Subscriptions.stop(principal, subscription.id)
      assert.strictEqual(Subscription.stateOf(stopped), "stop/stopped")
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      assert.strictEqual(emulator.stops.length, 0)
      const { subscription: page } = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
      assert.strictEqual(Subscription.stateOf(page), "stop/stopped")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("H2H terminals get redirect_url and the binding starts at creation", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal } = yield* setup({ h2h: true })
      const { subscription } = yield* Subscriptions.create(principal, {
        idempotencyKey: "k",
        terminalId: merchant.terminal.id, planId: plans.fixedMonthly.id, payerId: "p"
      })
      const view = Views.subscription(subscription, { publicUrl: "https://pay.example", withPayUrl: true })
      assert.strictEqual((view as { redirect_url: string }).redirect_url, `https://acquirer.example/bind/${subscription.id}`)
      assert.isFalse("pay_url" in view)
      // Spec rule 5: the 201 shows consent_pending; the binding and its first payment start at once.
      assert.deepStrictEqual([view.provider_state, view.billing_status], ["new", "consent_pending"])
      assert.isTrue(Subscription.hasConsent(subscription))
      const first = yield* (yield* PaymentRepository).get(subscription.firstPaymentId!)
      assert.isTrue(Option.isSome(first))
      yield* Payments.settle(subscription.firstPaymentId!, "paid")
      assert.strictEqual(Subscription.stateOf(yield* reload(subscription.id)), "active/enabled")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a failed first payment moves the subscription to review", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal } = yield* setup()
      const { subscription } = yield* Subscriptions.create(principal, {
        idempotencyKey: "k",
        terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "100"
      })
      const { firstPayment } = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
      yield* Payments.settle(Option.getOrThrow(firstPayment).id, "failed")
      const sub = yield* reload(subscription.id)
      assert.strictEqual(Subscription.stateOf(sub), "new/review")
      assert.strictEqual(sub.consecutiveFailures, 1)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("two workers running due charges at once charge each cycle once", () =>
    Effect.gen(function*() {
      const ids = yield* activeSubscriptions(20)
      for (const due of monthlyDates.slice(0, 3)) {
        yield* TestClock.setTime(due)
        yield* Effect.all([Work.runDue(), Work.runDue(), Work.runDue()], { concurrency: "unbounded" })
      }
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      assert.strictEqual(emulator.charges.length, 60)
      assert.strictEqual(new Set(emulator.charges.map((c) => c.idempotencyKey)).size, 60)
      for (const id of ids) assert.strictEqual((yield* reload(id)).successfulCycles, 4)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a run charges claimed subscriptions side by side, each once, at most chargeConcurrency at a time", () =>
    Effect.gen(function*() {
      // More due subscriptions than the bound, so that the bound is what holds the calls back.
      const count = Subscriptions.chargeConcurrency + 8
      const ids = yield* activeSubscriptions(count)
      // An acquirer that takes a while per charge: count the calls in flight together.
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      let inFlight = 0
      let most = 0
      const slow = Acquirer.of({
        ...emulator.acquirer,
        charge: (input) =>
          Effect.gen(function*() {
            most = Math.max(most, ++inFlight)
            for (let i = 0; i < 5; i++) yield* Effect.yieldNow
            inFlight--
            return yield* emulator.acquirer.charge(input)
          })
      })
      yield* TestClock.setTime(monthlyDates[0]!)
      const attempted = yield* Subscriptions.runDueCharges().pipe(Effect.provideService(Acquirer, slow))
      assert.strictEqual(attempted, count)
      assert.isAbove(most, 1)
      assert.isAtMost(most, Subscriptions.chargeConcurrency)
      for (const id of ids) assert.strictEqual((yield* reload(id)).successfulCycles, 2)
      assert.strictEqual(emulator.charges.length, count)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("an attempt that waited behind slow calls is touched before its own call, and one another worker booked meanwhile is not sent", () =>
    Effect.gen(function*() {
      // More due subscriptions than the calls in flight: the last 8 wait for calls of the first 32.
      const count = Subscriptions.chargeConcurrency + 8
      const ids = yield* activeSubscriptions(count)
      const config = yield* PaydeskConfig
      const charges = yield* ChargeRepository
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      // How long before each call its attempt was last written, by subscription.
      const ages = new Map<string, number>()
      // Claimed in the order of their due time, then id: the last one is among the 8 that wait.
      const last = [...ids].sort().at(-1)!
      // The first calls are held until half a lease (what the acquirer's contract allows a call)
      // has passed, while the last 8 attempts, written with their batch, wait for a free place.
      const allInFlight = yield* Deferred.make<void>()
      const slowStretch = yield* Deferred.make<void>()
      const services = yield* Effect.context<Effect.Services<ReturnType<typeof Subscriptions.chargeOne>>>()
      let calls = 0
      let waitingBefore: string | undefined
      let otherWorkerCharged = false
      const slow = Acquirer.of({
        ...emulator.acquirer,
        charge: (input) =>
          Effect.gen(function*() {
            const [attempt] = yield* charges.listForCycle(input.subscriptionId, input.cycleNumber)
            ages.set(input.subscriptionId, (yield* Clock.currentTimeMillis) - attempt!.updatedAt)
            const call = ++calls
            if (call === Subscriptions.chargeConcurrency) yield* Deferred.succeed(allInFlight, undefined)
            if (call === 1) {
              // Another worker (an Inngest function, say) charges the last subscription while its
              // attempt waits here: it finds that attempt, sends its key and books it paid.
              const [waiting] = yield* charges.listForCycle(last, attempt!.cycleNumber)
              waitingBefore = waiting?.status
              otherWorkerCharged = yield* Subscriptions.chargeOne(last).pipe(
                Effect.provideService(Acquirer, emulator.acquirer),
                Effect.orDie,
                Effect.provideContext(services)
              )
              // Once the first 32 calls are all in flight, half a lease passes.
              yield* Deferred.await(allInFlight)
              yield* TestClock.adjust(config.leaseMs / 2)
              yield* Deferred.succeed(slowStretch, undefined)
            } else if (call <= Subscriptions.chargeConcurrency) {
              yield* Deferred.await(slowStretch)
            }
            return yield* emulator.acquirer.charge(input)
          })
      })
      yield* TestClock.setTime(monthlyDates[0]!)
      const attempted = yield* Subscriptions.runDueCharges().pipe(Effect.provideService(Acquirer, slow))
      // The other worker found the last subscription's attempt pending, sent it and booked it.
      assert.deepStrictEqual([waitingBefore, otherWorkerCharged], ["pending", true])
      assert.strictEqual(attempted, count - 1)
      // Every call of the pass started within a quarter of a lease of its attempt's last write, the
      // late ones included; the pass did not send the key the other worker had booked (it would
      // have been a replay at the bank, and a second call under the same key at once).
      assert.strictEqual(ages.size, count - 1)
      for (const age of ages.values()) assert.isBelow(age, config.leaseMs / 4)
      assert.isFalse(ages.has(last))
      assert.strictEqual(emulator.chargeCalls, count)
      for (const id of ids) assert.strictEqual((yield* reload(id)).successfulCycles, 2)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a pass charges its due subscriptions in batches of batchSize, at most chargeBatchesPerPass of them, each once", () =>
    Effect.gen(function*() {
      const { ids, emulator, calls } = yield* dueSubscriptions(13)
      const claims: Array<number> = []
      const repository = yield* SubscriptionRepository
      const counting = SubscriptionRepository.of({
        ...repository,
        claimDue: (now, leaseUntil, limit, testClockId) =>
          Effect.tap(repository.claimDue(now, leaseUntil, limit, testClockId), (claimed) => Effect.sync(() => claims.push(claimed.length)))
      })
      yield* TestClock.setTime(monthlyDates[0]!)
      // Batches of 2: one pass takes 5 of them (10 subscriptions), the next the 3 left.
      const pass = Subscriptions.runDueCharges().pipe(Effect.provideService(SubscriptionRepository, counting))
      assert.strictEqual(yield* pass, 2 * Subscriptions.chargeBatchesPerPass)
      assert.deepStrictEqual(claims, [2, 2, 2, 2, 2])
      assert.strictEqual(calls(), 10)
      assert.strictEqual(yield* pass, 3)
      assert.deepStrictEqual(claims.slice(5), [2, 1])
      assert.strictEqual(yield* pass, 0)
      // Each subscription's charge asked once.
      assert.strictEqual(calls(), 13)
      assert.strictEqual(new Set(emulator.charges.map((c) => c.idempotencyKey)).size, 13)
      for (const id of ids) assert.strictEqual((yield* reload(id)).successfulCycles, 2)
    }).pipe(Effect.provideService(PaydeskConfig, { ...Config.defaults, batchSize: 2 }), Effect.provide(Kit.layer)))

  it.effect("a later batch of a charge pass that cannot be claimed ends the pass; the charges of the batches before stand", () =>
    Effect.gen(function*() {
      const { ids, emulator, calls } = yield* dueSubscriptions(6)
      const repository = yield* SubscriptionRepository
      let claims = 0
      const lost = new Error("connection lost")
      const failingSecond = SubscriptionRepository.of({
        ...repository,
        claimDue: (now, leaseUntil, limit, testClockId) =>
          ++claims === 2 ? Effect.die(lost) : repository.claimDue(now, leaseUntil, limit, testClockId)
      })
      yield* TestClock.setTime(monthlyDates[0]!)
      assert.strictEqual(yield* Subscriptions.runDueCharges().pipe(Effect.provideService(SubscriptionRepository, failingSecond)), 2)
      // The pass tried a second batch, which ended it.
      assert.strictEqual(claims, 2)
      assert.strictEqual(calls(), 2)
      // The first claim failing is the pass's failure; the next pass takes the rest.
      claims = 1
      const failed = yield* Effect.exit(Subscriptions.runDueCharges().pipe(Effect.provideService(SubscriptionRepository, failingSecond)))
      assert.isTrue(Exit.isFailure(failed) && Cause.hasDies(failed.cause) && Cause.squash(failed.cause) === lost)
      assert.strictEqual(calls(), 2)
      assert.strictEqual(yield* Subscriptions.runDueCharges(), 4)
      assert.strictEqual(calls(), 6)
      for (const id of ids) assert.strictEqual((yield* reload(id)).successfulCycles, 2)
    }).pipe(Effect.provideService(PaydeskConfig, { ...Config.defaults, batchSize: 2 }), Effect.provide(Kit.layer)))

  it.effect("a subscription the pass claims again after its lease ran out, while its charge is in flight, is charged once by the pass", () =>
    Effect.gen(function*() {
      const { ids, emulator, calls } = yield* dueSubscriptions(2)
      const repository = yield* SubscriptionRepository
      // The acquirer holds its answers until the second claim, which comes after the leases ran out
      // and so takes the same two subscriptions again.
      const second = yield* Deferred.make<void>()
      const claimed: Array<ReadonlyArray<string>> = []
      const expiring = SubscriptionRepository.of({
        ...repository,
        claimDue: (now, leaseUntil, limit, testClockId) =>
          Effect.gen(function*() {
            if (claimed.length !== 1) {
              const plain = yield* repository.claimDue(now, leaseUntil, limit, testClockId)
              claimed.push(plain.map((s) => s.id))
              return plain
            }
            yield* TestClock.adjust("61 seconds")
            const later = now + 61_000
            const again = yield* repository.claimDue(later, later + 60_000, limit, testClockId)
            claimed.push(again.map((s) => s.id))
            yield* Deferred.succeed(second, undefined)
            return again
          })
      })
      const held = Acquirer.of({
        ...emulator.acquirer,
        charge: (input) => Effect.andThen(Deferred.await(second), emulator.acquirer.charge(input))
      })
      yield* TestClock.setTime(monthlyDates[0]!)
      const charged = yield* Subscriptions.runDueCharges().pipe(
        Effect.provideService(SubscriptionRepository, expiring),
        Effect.provideService(Acquirer, held)
      )
      // The second claim took both again (a full batch, so a third followed and found none).
      assert.deepStrictEqual([...claimed[1]!].sort(), [...ids].sort())
      assert.deepStrictEqual(claimed.map((c) => c.length), [2, 2, 0])
      assert.strictEqual(charged, 2)
      assert.strictEqual(calls(), 2)
      for (const id of ids) assert.strictEqual((yield* reload(id)).successfulCycles, 2)
    }).pipe(Effect.provideService(PaydeskConfig, { ...Config.defaults, batchSize: 2 }), Effect.provide(Kit.layer)))

  it.effect("the next batch of a charge pass is claimed and charged while the last charges of the one before are in flight", () =>
    Effect.gen(function*() {
      yield* activeSubscriptions(4)
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      // The acquirer holds the answers to the first batch until the second batch's calls have arrived.
      const release = yield* Deferred.make<void>()
      const arrived: Array<string> = []
      const held = Acquirer.of({
        ...emulator.acquirer,
        charge: (input) =>
          Effect.gen(function*() {
            arrived.push(input.subscriptionId)
            if (arrived.length === 4) yield* Deferred.succeed(release, undefined)
            if (arrived.length <= 2) yield* Deferred.await(release)
            return yield* emulator.acquirer.charge(input)
          })
      })
      yield* TestClock.setTime(monthlyDates[0]!)
      assert.strictEqual(yield* Subscriptions.runDueCharges().pipe(Effect.provideService(Acquirer, held)), 4)
      assert.strictEqual(new Set(arrived).size, 4)
    }).pipe(Effect.provideService(PaydeskConfig, { ...Config.defaults, batchSize: 2 }), Effect.provide(Kit.layer)))
})
