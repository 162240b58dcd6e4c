import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Fiber, Option, Ref } from "effect"
import { TestClock } from "effect/testing"
import {
  type Access,
  Acquirer,
  ChargeRepository,
  LedgerRepository,
  OutboxRepository,
  PaydeskConfig,
  PaymentRepository,
  Payments,
  Schedule,
  Subscription,
  SubscriptionRepository,
  Subscriptions,
  Work
} from "@paydesk/core"
import type { Charge } from "@paydesk/core"
import { AcquirerEmulator, Fixtures, Kit, RecordingCallbackTransport } from "@paydesk/testkit"
import { activeMerchant, monthlyDates, reload, setup } from "./SubscriptionSupport.js"

/**
 * An acquirer whose recurring charge is fixed at the bank when the call arrives (the emulator's
 * book) but answered only when the test releases it: a bank call in flight.
 */
const gatedAcquirer = Effect.gen(function*() {
  const emulator = yield* AcquirerEmulator.AcquirerEmulator
  const arrived = yield* Deferred.make<void>()
  const release = yield* Deferred.make<void>()
  const acquirer = Acquirer.of({
    ...emulator.acquirer,
    charge: (input) =>
      Effect.gen(function*() {
        const answer = yield* emulator.acquirer.charge(input)
        yield* Deferred.succeed(arrived, undefined)
        yield* Deferred.await(release)
        return answer
      })
  })
  return { acquirer, arrived, release, emulator }
})

/** The due charge of `id` runs in a fiber with the gated acquirer; resolves once its bank call is in flight. */
const chargeInFlight = (id: string) =>
  Effect.gen(function*() {
    const gate = yield* gatedAcquirer
    yield* TestClock.setTime(monthlyDates[0]!)
    const fiber = yield* Effect.forkChild(Subscriptions.chargeOne(id).pipe(Effect.provideService(Acquirer, gate.acquirer)))
    yield* Deferred.await(gate.arrived)
    const answer = Effect.gen(function*() {
      yield* Deferred.succeed(gate.release, undefined)
      return yield* Fiber.join(fiber)
    })
    return { answer, emulator: gate.emulator }
  })

const history = (id: string) => Effect.flatMap(ChargeRepository, (r) => r.listBySubscription(id, 100))
const latest = (id: string) => Effect.map(history(id), (all) => all[0]!)

const paidCallbacks = Effect.gen(function*() {
  yield* Work.drain()
  return (yield* RecordingCallbackTransport.RecordingCallbackTransport).requests
    .map((r) => JSON.parse(r.body) as { event_type: string; payment_id: string })
    .filter((b) => b.event_type === "payment.paid")
})

/** Asserts the latest charge of `id` was booked paid with its payment, `payment.paid` and ledger credit. */
const assertBookedPaid = (id: string) =>
  Effect.gen(function*() {
    const charge = yield* latest(id)
    assert.deepStrictEqual([charge.cycleNumber, charge.status], [1, "payed"])
    const payment = Option.getOrThrow(yield* (yield* PaymentRepository).get(charge.paymentId!))
    assert.deepStrictEqual([payment.status, payment.subscriptionId, payment.amount], ["paid", id, 10_000n])
    assert.isNotNull(payment.settlement)
    const callbacks = yield* paidCallbacks
    assert.strictEqual(callbacks.filter((c) => c.payment_id === `pay_${payment.id}`).length, 1)
    return payment
  })

describe("Charges racing stops", () => {
  it.effect("a charge the bank pays while a stop completes during its call is booked; the subscription stays stopped", () =>
    Effect.gen(function*() {
      const { ids: [id], merchant } = yield* activeMerchant(1)
      const { answer, emulator } = yield* chargeInFlight(id!)
      const stopped = yield* Subscriptions.stop(yield* principalOf(merchant), id!)
      assert.strictEqual(Subscription.stateOf(stopped), "stop/stopped")
      assert.isTrue(yield* answer)
      yield* assertBookedPaid(id!)
      const sub = yield* reload(id!)
      assert.strictEqual(Subscription.stateOf(sub), "stop/stopped")
      assert.deepStrictEqual([sub.successfulCycles, sub.nextChargeAt], [2, null])
      // The ledger holds the first payment and the charge: nothing lost, nothing twice.
      const balance = yield* (yield* LedgerRepository).balance(sub.terminalId)
      assert.strictEqual(balance.usdtAvailable, 2n * (10_000n * 10_000_000_000n / 95_000_000n))
      assert.strictEqual(emulator.charges.length, 1)
      // Later months charge nothing.
      yield* TestClock.setTime(monthlyDates[2]!)
      assert.strictEqual((yield* Work.drain()).charges, 0)
      assert.strictEqual(emulator.charges.length, 1)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a stop still pending (acquirer unreachable) when the paid answer arrives: booked, then the stop finishes", () =>
    Effect.gen(function*() {
      const { ids: [id], merchant } = yield* activeMerchant(1)
      const { answer, emulator } = yield* chargeInFlight(id!)
      yield* emulator.setUnavailable(true)
      const error = yield* Effect.flip(Subscriptions.stop(yield* principalOf(merchant), id!))
      assert.strictEqual(error._tag, "ProviderUnavailable")
      assert.strictEqual(Subscription.stateOf(yield* reload(id!)), "active/stop_pending")
      assert.isTrue(yield* answer)
      yield* assertBookedPaid(id!)
      assert.strictEqual(Subscription.stateOf(yield* reload(id!)), "active/stop_pending")
      yield* emulator.setUnavailable(false)
      yield* TestClock.adjust("2 minutes")
      yield* Work.drain()
      const sub = yield* reload(id!)
      assert.deepStrictEqual([Subscription.stateOf(sub), sub.successfulCycles], ["stop/stopped", 2])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a stop that fails into review during the call: the paid charge is booked, review stays; resume is refused, a stop again ends it", () =>
    Effect.gen(function*() {
      const { ids: [id], merchant } = yield* activeMerchant(1)
      const { answer, emulator } = yield* chargeInFlight(id!)
      yield* emulator.programStop(id!, "failed")
      assert.strictEqual((yield* Effect.flip(Subscriptions.stop(yield* principalOf(merchant), id!)))._tag, "StopFailed")
      assert.isTrue(yield* answer)
      yield* assertBookedPaid(id!)
      let sub = yield* reload(id!)
      assert.deepStrictEqual([Subscription.stateOf(sub), sub.successfulCycles, sub.nextChargeAt], ["active/review", 2, null])
      // The merchant asked to stop it: the operator's resume would charge the payer on (a review found it did).
      assert.strictEqual((yield* Effect.flip(Subscriptions.resume(id!))).message, "subscription in active/review cannot be resumed: its stop failed; stop it again")
      yield* emulator.programStop(id!, "stopped")
      sub = yield* Subscriptions.stop(yield* principalOf(merchant), id!)
      assert.strictEqual(Subscription.stateOf(sub), "stop/stopped")
      yield* TestClock.setTime(monthlyDates[1]!)
      yield* Work.drain()
      assert.deepStrictEqual(emulator.charges.map((c) => c.cycleNumber), [1])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a charge the bank refuses after the stop is booked `stop`: no money, no review, no failure counted", () =>
    Effect.gen(function*() {
      const { ids: [id], merchant } = yield* activeMerchant(1)
      yield* (yield* AcquirerEmulator.AcquirerEmulator).programCharges(id!, ["failed"])
      const { answer } = yield* chargeInFlight(id!)
      yield* Subscriptions.stop(yield* principalOf(merchant), id!)
      yield* answer
      const charge = yield* latest(id!)
      assert.deepStrictEqual([charge.status, charge.paymentId, charge.message], ["stop", null, "declined by the issuer"])
      const sub = yield* reload(id!)
      assert.deepStrictEqual([Subscription.stateOf(sub), sub.consecutiveFailures], ["stop/stopped", 0])
      const view = (yield* Subscriptions.charges(yield* principalOf(merchant), id!))[0]!
      assert.strictEqual(view.status, "stop")
    }).pipe(Effect.provide(Kit.layer)))
})

describe("Open attempts of stopped subscriptions", () => {
  /** An acquirer whose first charge dies (the worker crashes) before or after the bank performed it. */
  const crashing = (when: "before the bank" | "after the bank") =>
    Effect.gen(function*() {
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      let crashed = false
      return Acquirer.of({
        ...emulator.acquirer,
        charge: (input) =>
          Effect.gen(function*() {
            if (crashed) return yield* emulator.acquirer.charge(input)
            crashed = true
            if (when === "after the bank") yield* emulator.acquirer.charge(input)
            return yield* Effect.die("worker killed during the bank call")
          })
      })
    })

  const leftPending = (when: "before the bank" | "after the bank") =>
    Effect.gen(function*() {
      const { ids: [id], merchant } = yield* activeMerchant(1)
      yield* TestClock.setTime(monthlyDates[0]!)
      const acquirer = yield* crashing(when)
      assert.strictEqual(yield* Subscriptions.runDueCharges().pipe(Effect.provideService(Acquirer, acquirer)), 0)
      assert.strictEqual((yield* latest(id!)).status, "pending")
      yield* Subscriptions.stop(yield* principalOf(merchant), id!)
      // The charge runner no longer takes a stopped subscription; only the settling pass can finish the attempt.
      assert.strictEqual((yield* Work.drain()).charges, 0)
      assert.strictEqual((yield* latest(id!)).status, "pending", "not settled before its lease")
      const config = yield* PaydeskConfig
      yield* TestClock.adjust(config.leaseMs)
      return id!
    })

  it.effect("an attempt never sent is voided at the bank and booked `stop`; the key can never charge later", () =>
    Effect.gen(function*() {
      const id = yield* leftPending("before the bank")
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      const report = yield* Work.drain()
      assert.strictEqual(report.settledCharges, 1)
      const charge = yield* latest(id)
      assert.deepStrictEqual([charge.status, charge.paymentId], ["stop", null])
      assert.deepStrictEqual(emulator.voids, [charge.idempotencyKey])
      assert.strictEqual(emulator.charges.length, 0)
      const late = yield* emulator.acquirer.charge({ subscriptionId: id, cycleNumber: 1, idempotencyKey: charge.idempotencyKey, amount: 1n })
      assert.strictEqual(late._tag, "Failed")
      assert.strictEqual((yield* paidCallbacks).length, 1, "only the first payment")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("an attempt the bank performed before the crash is booked paid on the stopped subscription", () =>
    Effect.gen(function*() {
      const id = yield* leftPending("after the bank")
      assert.strictEqual((yield* Work.drain()).settledCharges, 1)
      yield* assertBookedPaid(id)
      const sub = yield* reload(id)
      assert.deepStrictEqual([Subscription.stateOf(sub), sub.successfulCycles], ["stop/stopped", 2])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("an unconfirmed charge on a stopped subscription is asked again after its rest (Charge.nextVoidAt) until the bank knows", () =>
    Effect.gen(function*() {
      const { ids: [id], merchant } = yield* activeMerchant(1)
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      yield* emulator.programCharges(id!, ["unknown"])
      const { answer } = yield* chargeInFlight(id!)
      yield* Subscriptions.stop(yield* principalOf(merchant), id!)
      yield* answer
      const open = yield* latest(id!)
      assert.strictEqual(open.status, "unconfirmed")
      assert.strictEqual(Subscription.stateOf(yield* reload(id!)), "stop/stopped")
      const config = yield* PaydeskConfig
      yield* TestClock.adjust(config.leaseMs)
      assert.strictEqual((yield* Work.drain()).settledCharges, 0)
      assert.strictEqual((yield* latest(id!)).status, "unconfirmed")
      yield* emulator.resolveCharge(open.idempotencyKey, "paid")
      assert.strictEqual((yield* Work.drain()).settledCharges, 0, "not again before a lease")
      yield* TestClock.adjust(config.leaseMs)
      assert.strictEqual((yield* Work.drain()).settledCharges, 1)
      yield* assertBookedPaid(id!)
    }).pipe(Effect.provide(Kit.layer)))
})

describe("Charge history", () => {
  it.effect("returns the 100 newest booked records even when newer attempts are in flight", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal } = yield* setup()
      const { subscription } = yield* Subscriptions.create(principal, {
        idempotencyKey: "k",
        terminalId: merchant.terminal.id,
        planId: plans.ceilingMonthly.id,
        amount: "100"
      })
      const repo = yield* ChargeRepository
      const base = Date.parse("2026-01-01T00:00:00.000Z")
      const insert = (cycle: number, status: Charge.Status) =>
        repo.insert(Fixtures.charge(subscription, { cycleNumber: cycle, status, createdAt: base + cycle * 1000, updatedAt: base + cycle * 1000 }))
      for (let cycle = 1; cycle <= 120; cycle++) yield* insert(cycle, cycle % 3 === 0 ? "fail" : "payed")
      for (let cycle = 121; cycle <= 125; cycle++) yield* insert(cycle, "pending")
      const shown = yield* Subscriptions.charges(principal, subscription.id)
      assert.strictEqual(shown.length, 100)
      assert.deepStrictEqual(shown.map((c) => c.cycleNumber), Array.from({ length: 100 }, (_, i) => 120 - i))
    }).pipe(Effect.provide(Kit.layer)))
})

/** The subscription in review as an unconfirmed charge leaves it (the resumable kind; a refused stop's is not). */
const intoReview = (id: string) =>
  Effect.gen(function*() {
    const repo = yield* SubscriptionRepository
    const sub = Option.getOrThrow(yield* repo.get(id))
    yield* repo.update({ ...sub, billingStatus: "review", reviewReason: "charge unconfirmed", nextChargeAt: null, version: sub.version + 1 })
  })

/** An API-key principal of the merchant (a fresh nonce each time). */
const principalOf = (merchant: Kit.Merchant) => Kit.apiKeyPrincipal(merchant, crypto.randomUUID())

describe("First payments and the consent", () => {
  const consented = Effect.gen(function*() {
    const { merchant, plans, principal } = yield* setup()
    const { subscription } = yield* Subscriptions.create(principal, {
      idempotencyKey: "first", terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "100"
    })
    const { firstPayment } = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
    return { merchant, principal, subscription, first: Option.getOrThrow(firstPayment) }
  })

  it.effect("a stop expires the first payment still unpaid (the payer is not offered it); one being paid goes on, and money that comes is booked", () =>
    Effect.gen(function*() {
      const { principal, subscription, first } = yield* consented
      yield* Subscriptions.stop(principal, subscription.id)
      const sub = yield* reload(subscription.id)
      assert.deepStrictEqual([Subscription.stateOf(sub), yield* statusOf(first.id)], ["stop/stopped", "expired"])
      const events = yield* (yield* OutboxRepository).listEvents({ terminalId: subscription.terminalId, limit: 100 })
      assert.deepStrictEqual(events.filter((e) => e.paymentId === first.id).map((e) => e.eventType), ["payment.created", "payment.expired"])
      // The page answers that it expired, and confirming again makes no payment.
      const page = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
      assert.deepStrictEqual(Option.map(page.firstPayment, (p) => [p.id, p.status]), Option.some([first.id, "expired"]))
      // Money the payer sent before the page told them (late at the bank) is booked, as a late first payment of a stopped subscription.
      yield* Payments.settle(first.id, "paid")
      assert.deepStrictEqual(yield* history(principal, subscription.id), [[1, "payed", first.id, "accepted", null]])
      assert.strictEqual(Subscription.stateOf(yield* reload(subscription.id)), "stop/stopped")

      // A first payment the payer is paying (processing) is not cancelled by the stop.
      const paying = yield* consented
      yield* Payments.settle(paying.first.id, "processing")
      yield* Subscriptions.stop(paying.principal, paying.subscription.id)
      assert.strictEqual(yield* statusOf(paying.first.id), "processing")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a first payment that expires unpaid takes the consent back; confirming again creates the next first payment", () =>
    Effect.gen(function*() {
      const { subscription, first } = yield* consented
      yield* TestClock.adjust("31 minutes")
      yield* Work.drain()
      let sub = yield* reload(subscription.id)
      assert.deepStrictEqual([Subscription.stateOf(sub), sub.firstPaymentId, sub.consecutiveFailures], ["new/consent_pending", null, 0])
      const again = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
      const second = Option.getOrThrow(again.firstPayment)
      assert.notStrictEqual(second.id, first.id)
      assert.deepStrictEqual([first.orderId, second.orderId], [`sub-${subscription.id}-first`, `sub-${subscription.id}-first-2`])
      yield* Payments.settle(second.id, "paid")
      sub = yield* reload(subscription.id)
      assert.deepStrictEqual([Subscription.stateOf(sub), sub.successfulCycles], ["active/enabled", 1])
    }).pipe(Effect.provide(Kit.layer)))

  /** The consented subscription's first payment expired unpaid (the consent taken back). */
  const expiredFirst = Effect.gen(function*() {
    const consent = yield* consented
    yield* TestClock.adjust("31 minutes")
    yield* Work.drain()
    assert.strictEqual((yield* (yield* PaymentRepository).get(consent.first.id)).pipe(Option.map((p) => p.status), Option.getOrThrow), "expired")
    return consent
  })
  const statusOf = (id: string) => Effect.map(Effect.flatMap(PaymentRepository, (r) => r.get(id)), (p) => Option.getOrThrow(p).status)
  const history = (principal: Access.Principal, id: string) =>
    Effect.map(Subscriptions.charges(principal, id), (charges) => charges.map((c) => [c.attempt, c.status, c.paymentId, c.validationStatus, c.validationReason]))

  it.effect("an expired first payment paid late while the subscription still waits for one activates it: the payer is not asked to pay again", () =>
    Effect.gen(function*() {
      const { principal, subscription, first } = yield* expiredFirst
      yield* Payments.settle(first.id, "paid")
      const sub = yield* reload(subscription.id)
      assert.deepStrictEqual([Subscription.stateOf(sub), sub.firstPaymentId, sub.successfulCycles], ["active/enabled", first.id, 1])
      assert.deepStrictEqual(yield* history(principal, subscription.id), [[1, "payed", first.id, "accepted", null]])
      // A confirmation now (the page's button, pressed again) shows that payment and makes no other.
      const again = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
      assert.deepStrictEqual(Option.map(again.firstPayment, (p) => [p.id, p.status]), Option.some([first.id, "paid"]))
      const next = yield* (yield* PaymentRepository).findByOrderId(subscription.terminalId, subscription.environment, `sub-${subscription.id}-first-2`)
      assert.isTrue(Option.isNone(next))
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("an expired first payment paid late ends the next one still unpaid (it expires); that one's late money is booked for review, not as a cycle", () =>
    Effect.gen(function*() {
      const { principal, subscription, first } = yield* expiredFirst
      const second = Option.getOrThrow((yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)).firstPayment)
      yield* Payments.settle(first.id, "paid")
      assert.deepStrictEqual([yield* statusOf(first.id), yield* statusOf(second.id)], ["paid", "expired"])
      const events = yield* (yield* OutboxRepository).listEvents({ terminalId: subscription.terminalId, limit: 100 })
      assert.deepStrictEqual(events.filter((e) => e.paymentId === second.id).map((e) => e.eventType), ["payment.created", "payment.expired"])
      // Its money arrives all the same: booked for the merchant to refund; the subscription keeps its one cycle.
      yield* Payments.settle(second.id, "paid")
      const sub = yield* reload(subscription.id)
      assert.deepStrictEqual([Subscription.stateOf(sub), sub.firstPaymentId, sub.successfulCycles], ["active/enabled", first.id, 1])
      assert.deepStrictEqual(yield* history(principal, subscription.id), [
        [2, "payed", second.id, "review", "superseded_first_payment"],
        [1, "payed", first.id, "accepted", null]
      ])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("an expired first payment paid late after the next one was refused (review) is the one paid: booked as a late current one, not as paid twice", () =>
    Effect.gen(function*() {
      const { principal, subscription, first } = yield* expiredFirst
      const second = Option.getOrThrow((yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)).firstPayment)
      yield* Payments.settle(second.id, "failed")
      assert.strictEqual(Subscription.stateOf(yield* reload(subscription.id)), "new/review")
      yield* Payments.settle(first.id, "paid")
      const sub = yield* reload(subscription.id)
      assert.deepStrictEqual([Subscription.stateOf(sub), sub.successfulCycles], ["new/review", 1])
      assert.deepStrictEqual(yield* history(principal, subscription.id), [
        [2, "payed", first.id, "accepted", null],
        [1, "fail", second.id, "accepted", null]
      ])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("an expired first payment paid late while the payer pays the next one: that one stays, and its refusal then moves nothing", () =>
    Effect.gen(function*() {
      const { principal, subscription, first } = yield* expiredFirst
      const second = Option.getOrThrow((yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)).firstPayment)
      yield* Payments.settle(second.id, "processing")
      assert.strictEqual(Subscription.stateOf(yield* reload(subscription.id)), "new/pending")
      yield* Payments.settle(first.id, "paid")
      assert.deepStrictEqual([Subscription.stateOf(yield* reload(subscription.id)), yield* statusOf(second.id)], ["active/enabled", "processing"])
      // Refused after all: nothing moves.
      yield* Payments.settle(second.id, "failed")
      const sub = yield* reload(subscription.id)
      assert.deepStrictEqual([Subscription.stateOf(sub), sub.successfulCycles, sub.consecutiveFailures], ["active/enabled", 1, 0])
      assert.deepStrictEqual(yield* history(principal, subscription.id), [[1, "payed", first.id, "accepted", null]])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a refused first payment goes to review through pending; one that expires while processing too", () =>
    Effect.gen(function*() {
      const { principal, subscription, first } = yield* consented
      yield* Payments.settle(first.id, "failed")
      assert.strictEqual(Subscription.stateOf(yield* reload(subscription.id)), "new/review")
      // The refusal is in the history (a conformance probe found review with one failure and no record).
      const refused = yield* Subscriptions.charges(principal, subscription.id)
      assert.deepStrictEqual(refused.map((c) => [c.kind, c.attempt, c.status, c.paymentId, c.message]), [["first", 1, "fail", first.id, "first payment canceled"]])
      const other = yield* consented
      yield* Payments.settle(other.first.id, "processing")
      yield* TestClock.adjust("31 minutes")
      yield* Work.drain()
      const sub = yield* reload(other.subscription.id)
      assert.deepStrictEqual([Subscription.stateOf(sub), sub.reviewReason], ["new/review", "first payment expired"])
      // Paid late after all: booked as the cycle's second record; the refusal stays.
      yield* Payments.settle(other.first.id, "paid")
      const history = yield* Subscriptions.charges(other.principal, other.subscription.id)
      assert.deepStrictEqual(history.map((c) => [c.attempt, c.status, c.paymentId]), [[2, "payed", other.first.id], [1, "fail", other.first.id]])
      // No answer came for it: the record says so, as an unconfirmed charge's does.
      assert.deepStrictEqual([history[1]!.validationStatus, history[1]!.validationReason, history[1]!.message], ["review", "outcome_unconfirmed", "first payment expired"])
      assert.deepStrictEqual([refused[0]!.validationStatus, refused[0]!.validationReason], ["accepted", null])
      assert.strictEqual((yield* reload(other.subscription.id)).successfulCycles, 1)
      // The operator's resume: the refused one has no paid first payment (only a stop ends it); the
      // one paid late is activated at the resume, its next charge one period later.
      assert.strictEqual((yield* Effect.flip(Subscriptions.resume(subscription.id))).message,
        "subscription in new/review cannot be resumed: none of its first payments is paid; stop it")
      assert.strictEqual(Subscription.stateOf(yield* reload(subscription.id)), "new/review")
      yield* TestClock.adjust("2 days")
      const resumedAt = yield* Clock.currentTimeMillis
      const resumed = yield* Subscriptions.resume(other.subscription.id)
      assert.deepStrictEqual(
        [Subscription.stateOf(resumed), resumed.activatedAt, resumed.nextCycleIndex, resumed.successfulCycles, resumed.reviewReason, resumed.consecutiveFailures],
        ["active/enabled", resumedAt, 1, 1, null, 0]
      )
      assert.strictEqual(resumed.nextChargeAt, Schedule.chargeAt(resumed.terms, resumedAt, 1))
      assert.isTrue(resumed.nextChargeAt! > resumedAt + 27 * 86_400_000)
      // Charged when that comes, once.
      yield* TestClock.setTime(resumed.nextChargeAt!)
      yield* Work.drain()
      const charged = yield* Subscriptions.charges(other.principal, other.subscription.id)
      assert.deepStrictEqual(charged.map((c) => [c.kind, c.status]).slice(0, 1), [["recurring", "payed"]])
      assert.strictEqual((yield* reload(other.subscription.id)).successfulCycles, 2)
      // A second resume: it is no longer in review.
      const again = yield* Effect.flip(Subscriptions.resume(other.subscription.id))
      assert.deepStrictEqual([again._tag, again.message], ["InvalidTransition", "subscription in active/enabled cannot be resumed"])
    }).pipe(Effect.provide(Kit.layer)))

  /** A subscription in new/review whose first payment expired while the payer paid, then paid late (booked). */
  const latePaidInReview = Effect.gen(function*() {
    const consent = yield* consented
    yield* Payments.settle(consent.first.id, "processing")
    yield* TestClock.adjust("31 minutes")
    yield* Work.drain()
    yield* Payments.settle(consent.first.id, "paid")
    assert.deepStrictEqual([Subscription.stateOf(yield* reload(consent.subscription.id)), (yield* reload(consent.subscription.id)).successfulCycles], ["new/review", 1])
    return consent
  })

  /** First payment A expired unpaid (consent taken back); B, confirmed next, expired while the payer paid (new/review). */
  const secondExpiredWhilePaying = Effect.gen(function*() {
    const { principal, subscription, first: a } = yield* expiredFirst
    const b = Option.getOrThrow((yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)).firstPayment)
    yield* Payments.settle(b.id, "processing")
    yield* TestClock.adjust("31 minutes")
    yield* Work.drain()
    assert.strictEqual(Subscription.stateOf(yield* reload(subscription.id)), "new/review")
    return { principal, subscription, a, b }
  })

  it.effect("resume does not start a subscription whose late first payment was refunded or charged back since", () =>
    Effect.gen(function*() {
      for (const move of [Payments.refund, Payments.chargeback]) {
        const { subscription, first } = yield* latePaidInReview
        yield* move(first.id)
        assert.strictEqual((yield* Effect.flip(Subscriptions.resume(subscription.id))).message,
          "subscription in new/review cannot be resumed: none of its first payments is paid; stop it")
        assert.strictEqual(Subscription.stateOf(yield* reload(subscription.id)), "new/review")
      }
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("after a resume on one first payment paid late, another first payment paid late is booked as paid twice, not as a cycle", () =>
    Effect.gen(function*() {
      const { principal, subscription, a, b } = yield* secondExpiredWhilePaying
      // A is paid late (booked as the cycle's payment), the operator resumes, then B is paid late too.
      yield* Payments.settle(a.id, "paid")
      const resumed = yield* Subscriptions.resume(subscription.id)
      assert.deepStrictEqual([Subscription.stateOf(resumed), resumed.firstPaymentId], ["active/enabled", a.id])
      yield* Payments.settle(b.id, "paid")
      const sub = yield* reload(subscription.id)
      assert.deepStrictEqual([Subscription.stateOf(sub), sub.successfulCycles], ["active/enabled", 1])
      const booked = (yield* history(principal, subscription.id)).filter(([, status]) => status === "payed")
      assert.sameDeepMembers(booked.map(([, , paymentId, validation, reason]) => [paymentId, validation, reason]), [
        [a.id, "accepted", null],
        [b.id, "review", "superseded_first_payment"]
      ])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a first payment paid late after the one booked was refunded is the cycle's payment: booked so (counted once), and resume activates on it", () =>
    Effect.gen(function*() {
      for (const order of ["refund A, then B paid", "both paid, then A refunded"] as const) {
        const { principal, subscription, a, b } = yield* secondExpiredWhilePaying
        yield* Payments.settle(a.id, "paid")
        if (order === "refund A, then B paid") {
          yield* Payments.refund(a.id)
          yield* Payments.settle(b.id, "paid")
          const booked = (yield* history(principal, subscription.id)).filter(([, status]) => status === "payed")
          assert.sameDeepMembers(booked.map(([, , paymentId, validation]) => [paymentId, validation]), [[a.id, "accepted"], [b.id, "accepted"]], order)
        } else {
          yield* Payments.settle(b.id, "paid")
          yield* Payments.refund(a.id)
        }
        assert.strictEqual((yield* reload(subscription.id)).successfulCycles, 1, order)
        const resumed = yield* Subscriptions.resume(subscription.id)
        assert.deepStrictEqual([Subscription.stateOf(resumed), resumed.firstPaymentId], ["active/enabled", b.id], order)
        // B's record is the first payment's, whichever way it was booked (it kept "paid twice" before).
        const booked = (yield* history(principal, subscription.id)).filter(([, status]) => status === "payed")
        assert.sameDeepMembers(booked.map(([, , paymentId, validation, reason]) => [paymentId, validation, reason]),
          [[a.id, "accepted", null], [b.id, "accepted", order === "refund A, then B paid" ? null : "activated_on_resume"]], order)
      }
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("in new/review, a second first payment paid late is booked as paid twice, not as a second cycle", () =>
    Effect.gen(function*() {
      const { principal, subscription, a, b } = yield* secondExpiredWhilePaying
      yield* Payments.settle(a.id, "paid")
      yield* Payments.settle(b.id, "paid")
      const sub = yield* reload(subscription.id)
      assert.deepStrictEqual([Subscription.stateOf(sub), sub.successfulCycles], ["new/review", 1])
      const booked = (yield* history(principal, subscription.id)).filter(([, status]) => status === "payed")
      assert.sameDeepMembers(booked.map(([, , paymentId, validation]) => [paymentId, validation]), [[a.id, "accepted"], [b.id, "review"]])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("resume does not start again a subscription whose stop the acquirer refused", () =>
    Effect.gen(function*() {
      const { principal, subscription, first } = yield* consented
      yield* Payments.settle(first.id, "processing")
      yield* (yield* AcquirerEmulator.AcquirerEmulator).programStop(subscription.id, "failed")
      assert.strictEqual((yield* Effect.flip(Subscriptions.stop(principal, subscription.id)))._tag, "StopFailed")
      yield* Payments.settle(first.id, "paid")
      const sub = yield* reload(subscription.id)
      assert.strictEqual(Subscription.stateOf(sub), "new/review")
      assert.match(sub.reviewReason ?? "", /^stop failed/)
      assert.strictEqual((yield* Effect.flip(Subscriptions.resume(subscription.id))).message,
        "subscription in new/review cannot be resumed: its stop failed; stop it again")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a first payment paid after the stop is booked in the history; the subscription stays stopped", () =>
    Effect.gen(function*() {
      const { principal, subscription, first } = yield* consented
      yield* Subscriptions.stop(principal, subscription.id)
      yield* Payments.settle(first.id, "paid")
      const sub = yield* reload(subscription.id)
      assert.deepStrictEqual([Subscription.stateOf(sub), sub.successfulCycles, sub.nextChargeAt], ["stop/stopped", 1, null])
      const history = yield* Subscriptions.charges(principal, subscription.id)
      assert.deepStrictEqual(history.map((c) => [c.kind, c.status, c.paymentId]), [["first", "payed", first.id]])
    }).pipe(Effect.provide(Kit.layer)))
})

describe("Charges and review", () => {
  it.effect("an attempt whose subscription went to review before the call stays open and resume sends it with its key", () =>
    Effect.gen(function*() {
      const { ids: [id], merchant } = yield* activeMerchant(1)
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      yield* TestClock.setTime(monthlyDates[0]!)
      // The charge runner reads the subscription just before the call: it is in review by then.
      const reviewOnRead = Effect.gen(function*() {
        const subs = yield* SubscriptionRepository
        return SubscriptionRepository.of({
          ...subs,
          get: (subscriptionId) =>
            Effect.map(subs.get(subscriptionId), (found) =>
              Option.map(found, (s) => ({ ...s, billingStatus: "review" as const })))
        })
      })
      const repo = yield* reviewOnRead
      assert.isTrue(yield* Subscriptions.chargeOne(id!).pipe(Effect.provideService(SubscriptionRepository, repo)))
      const open = yield* latest(id!)
      assert.strictEqual(open.status, "pending")
      assert.strictEqual(emulator.chargeCalls, 0)
      assert.deepStrictEqual(emulator.voids, [])
      // A real review (not of a refused stop, which is not resumed); then the operator resumes, which sends the same key.
      yield* intoReview(id!)
      const resumed = yield* Subscriptions.resume(id!)
      assert.strictEqual(Subscription.stateOf(resumed), "active/enabled")
      assert.deepStrictEqual(emulator.charges.map((c) => c.idempotencyKey), [open.idempotencyKey])
      assert.strictEqual((yield* latest(id!)).status, "payed")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("resume touches an attempt left open for a lease before its call: a stop during the call does not let the settling void it", () =>
    Effect.gen(function*() {
      const { ids: [id], merchant } = yield* activeMerchant(1)
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      const config = yield* PaydeskConfig
      yield* TestClock.setTime(monthlyDates[0]!)
      // An attempt left open by a call that never happened: the subscription went to review first.
      const reviewOnRead = Effect.map(SubscriptionRepository, (subs) =>
        SubscriptionRepository.of({
          ...subs,
          get: (subscriptionId) => Effect.map(subs.get(subscriptionId), (found) => Option.map(found, (s) => ({ ...s, billingStatus: "review" as const })))
        }))
      assert.isTrue(yield* Subscriptions.chargeOne(id!).pipe(Effect.provideService(SubscriptionRepository, yield* reviewOnRead)))
      const open = yield* latest(id!)
      yield* intoReview(id!)
      // The operator resumes more than a lease later; during the bank call the merchant stops the
      // subscription and a settling pass runs.
      yield* TestClock.adjust(config.leaseMs + 1_000)
      yield* emulator.programStop(id!, "stopped")
      let settled = -1
      const stopAndSettle = Effect.gen(function*() {
        yield* Subscriptions.stop(yield* principalOf(merchant), id!)
        settled = yield* Subscriptions.settleStoppedCharges()
      })
      const services = yield* Effect.context<Effect.Services<typeof stopAndSettle>>()
      const stopDuringCall = Acquirer.of({
        ...emulator.acquirer,
        charge: (input) =>
          Effect.gen(function*() {
            const answer = yield* emulator.acquirer.charge(input)
            yield* stopAndSettle.pipe(Effect.orDie, Effect.provideContext(services))
            return answer
          })
      })
      yield* Subscriptions.resume(id!).pipe(Effect.provideService(Acquirer, stopDuringCall))
      // The settling found the attempt touched by resume and left it to the call's own booking.
      assert.strictEqual(settled, 0)
      assert.deepStrictEqual(emulator.charges.map((c) => c.idempotencyKey), [open.idempotencyKey])
      assert.strictEqual((yield* latest(id!)).status, "payed")
      assert.strictEqual(Subscription.stateOf(yield* reload(id!)), "stop/stopped")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("two resumes at once: one resumes, the other is refused with InvalidTransition (409)", () =>
    Effect.gen(function*() {
      const { ids: [id] } = yield* activeMerchant(1)
      yield* (yield* AcquirerEmulator.AcquirerEmulator).programCharges(id!, ["failed"])
      yield* TestClock.setTime(monthlyDates[0]!)
      yield* Work.drain()
      // Both load the subscription (in review) before either commits: the loser finds it moved on under
      // its lock, and is refused as one that came later (the memory store would otherwise run them in turn).
      const real = yield* SubscriptionRepository
      const loads = yield* Ref.make(0)
      const both = yield* Deferred.make<void>()
      const held = SubscriptionRepository.of({
        ...real,
        get: (key) => Effect.tap(real.get(key), () =>
          Effect.flatMap(Ref.updateAndGet(loads, (n) => n + 1), (n) => n >= 2 ? Deferred.succeed(both, undefined) : Deferred.await(both)))
      })
      const results = yield* Effect.all([Effect.result(Subscriptions.resume(id!)), Effect.result(Subscriptions.resume(id!))], { concurrency: 2 }).pipe(
        Effect.provideService(SubscriptionRepository, held))
      assert.deepStrictEqual(results.map((r) => r._tag).sort(), ["Failure", "Success"])
      const refused = results.find((r) => r._tag === "Failure")!
      assert.deepStrictEqual([(refused as { failure: { _tag: string; message: string } }).failure._tag, (refused as { failure: { message: string } }).failure.message],
        ["InvalidTransition", "subscription in active/enabled cannot be resumed"])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("an acquirer that pays a key it had voided is believed: the money is booked for review", () =>
    Effect.gen(function*() {
      const { ids: [id], merchant } = yield* activeMerchant(1)
      const gate = yield* gatedAcquirer
      // A broken acquirer: voiding says the key was never charged, though the held call is paid.
      const broken = Acquirer.of({ ...gate.acquirer, voidCharge: () => Effect.succeed({ _tag: "Voided" as const }) })
      yield* TestClock.setTime(monthlyDates[0]!)
      const fiber = yield* Effect.forkChild(Subscriptions.chargeOne(id!).pipe(Effect.provideService(Acquirer, broken)))
      yield* Deferred.await(gate.arrived)
      yield* Subscriptions.stop(yield* principalOf(merchant), id!)
      yield* TestClock.adjust("61 seconds")
      assert.strictEqual((yield* Work.drain().pipe(Effect.provideService(Acquirer, broken))).settledCharges, 1)
      const voided = yield* latest(id!)
      assert.strictEqual(voided.status, "stop")
      // The held call answers paid a minute after the void: that answer's time is the charge's actual
      // time, not the void's (which took no money).
      yield* TestClock.adjust("1 minute")
      const answeredAt = yield* Clock.currentTimeMillis
      yield* Deferred.succeed(gate.release, undefined)
      yield* Fiber.join(fiber)
      const charge = yield* latest(id!)
      assert.deepStrictEqual([charge.status, charge.validationStatus, charge.validationReason], ["payed", "review", "acquirer_paid_after_refusal"])
      assert.deepStrictEqual([charge.actualAt, voided.actualAt! < answeredAt], [answeredAt, true])
      yield* assertBookedPaid(id!)
    }).pipe(Effect.provide(Kit.layer)))
})

describe("Charge payments' order ids", () => {
  it.effect("a charge whose order id a merchant's payments took is booked under the next free one: money, callback, schedule as usual", () =>
    Effect.gen(function*() {
      const { ids: [id], merchant } = yield* activeMerchant(1)
      const principal = yield* principalOf(merchant)
      // The merchant's own payments (one of them live, expired or not) under the charge's order ids.
      for (const orderId of [`sub-${id!}-c1`, `sub-${id!}-c1-2`]) yield* Payments.create(principal, { amount: "1", orderId })
      yield* Payments.create(principal, { amount: "1", orderId: `sub-${id!}-c1-3`, test: true })
      yield* TestClock.setTime(monthlyDates[0]!)
      assert.strictEqual((yield* Work.drain()).charges, 1)
      const payment = yield* assertBookedPaid(id!)
      // The sandbox's payment does not take the live charge's order id.
      assert.strictEqual(payment.orderId, `sub-${id!}-c1-3`)
      const sub = yield* reload(id!)
      assert.deepStrictEqual([Subscription.stateOf(sub), sub.successfulCycles, sub.nextChargeAt], ["active/enabled", 2, monthlyDates[1]!])
      // The merchant's payments are as they were.
      const byOrder = yield* (yield* PaymentRepository).findByOrderId(merchant.terminal.id, "prod", `sub-${id!}-c1`)
      assert.deepStrictEqual(Option.map(byOrder, (p) => [p.subscriptionId, p.amount]), Option.some([null, 100n]))
      // The next cycle takes its own order id.
      yield* TestClock.setTime(monthlyDates[1]!)
      assert.strictEqual((yield* Work.drain()).charges, 1)
      const next = yield* latest(id!)
      assert.strictEqual(Option.getOrThrow(yield* (yield* PaymentRepository).get(next.paymentId!)).orderId, `sub-${id!}-c2`)
    }).pipe(Effect.provide(Kit.layer)))
})

describe("Background passes", () => {
  it.effect("one job failing does not keep the others from running: callbacks still go out", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup()
      yield* Payments.create(principal, { amount: "10", orderId: "isolated", test: true })
      const charges = yield* ChargeRepository
      const failing = ChargeRepository.of({ ...charges, claimOpenOfStopped: () => Effect.die("the charges table is unreachable") })
      const report = yield* Work.runDue().pipe(Effect.provideService(ChargeRepository, failing))
      assert.deepStrictEqual([report.settledCharges, report.callbacks], [0, 1])
    }).pipe(Effect.provide(Kit.layer)))
})
