import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Exit, Fiber, Option } from "effect"
import { TestClock as EffectTestClock } from "effect/testing"
import {
  Callback,
  CallbackTransport,
  Events,
  Instant,
  OutboxRepository,
  PaydeskConfig,
  PaymentRepository,
  Payments,
  Subscription,
  SubscriptionRepository,
  Subscriptions,
  TestClock,
  TestClockRepository,
  TestClocks,
  Work
} from "@paydesk/core"
import { AcquirerEmulator, Fixtures, Kit, MemoryDatabase, RecordingCallbackTransport } from "@paydesk/testkit"
import { monthlyDates, reload } from "./SubscriptionSupport.js"

/** The wall clock of these tests: months after the clocks' January. */
const wall = Date.parse("2026-11-23T12:00:00.000Z")
const january = "2026-01-31T10:00:00+03:00"
const anchor = Date.parse(january)

const setup = Effect.gen(function*() {
  yield* EffectTestClock.setTime(wall)
  const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/cb" })
  const plans = yield* Kit.provisionPlans(merchant.terminal.id)
  const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
  const clock = yield* TestClocks.create(principal, { frozenTime: january, name: "January" })
  return { merchant, plans, principal, clock }
})

type Setup = Effect.Success<typeof setup>

/** A sandbox ceiling subscription on `clockId`, consented and its first payment paid by simulation. */
const activeOnClock = (s: Setup, clockId: string, key: string) =>
  Effect.gen(function*() {
    const { subscription } = yield* Subscriptions.create(s.principal, {
      idempotencyKey: key, terminalId: s.merchant.terminal.id, planId: s.plans.ceilingMonthly.id, amount: "700", test: true, testClock: clockId
    })
    const first = Option.getOrThrow((yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)).firstPayment)
    yield* Payments.simulate(first.payToken, { outcome: "paid", csrfToken: first.csrfToken })
    return { subscription: yield* reload(subscription.id), first: yield* Payments.get(s.principal, first.id) }
  })

const callbacks = Effect.map(RecordingCallbackTransport.RecordingCallbackTransport, (t) => t.requests)

/** A transport that records each callback's event id, says when the first arrived (`entered`) and answers 200 once `gate` opens. */
const gatedTransport = Effect.gen(function*() {
  const sent: Array<string> = []
  const entered = yield* Deferred.make<void>()
  const gate = yield* Deferred.make<void>()
  const held = CallbackTransport.of({
    post: (request) =>
      Effect.andThen(
        Effect.sync(() => sent.push(request.headers["x-event-id"]!)),
        Effect.andThen(Deferred.succeed(entered, undefined), Effect.as(Deferred.await(gate), { statusCode: 200, latencyMs: 1 }))
      )
  })
  return { sent, entered, gate, held }
})

describe("Test clocks", () => {
  it.effect("a subscription on a clock lives on the clock's time: created, activated and charged on 28 Feb, 31 Mar, 30 Apr at 10:00 Moscow", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const { subscription, first } = yield* activeOnClock(s, s.clock.id, "on-clock")
      assert.deepStrictEqual(
        [subscription.testClockId, subscription.createdAt, subscription.activatedAt, subscription.nextChargeAt, first.createdAt, first.paidAt, first.testClockId],
        [s.clock.id, anchor, anchor, monthlyDates[0], anchor, anchor, s.clock.id]
      )
      // The global pass, at a wall time far past 28 February, leaves the clock's objects alone...
      yield* Work.drain()
      assert.strictEqual((yield* reload(subscription.id)).successfulCycles, 1)
      // ...but sends the callbacks due at the clock's time, stamped with it in X-Test-Clock-Time; X-Timestamp
      // is the wall time of sending, which receivers compare with their own clock (Standard Webhooks
      // libraries, the SDK's verify).
      const wall = String(Instant.toUnixSeconds(yield* Clock.currentTimeMillis))
      const early = yield* callbacks
      const atAnchor = String(Instant.toUnixSeconds(anchor))
      assert.deepStrictEqual(early.map((r) => [JSON.parse(r.body).event_type, r.headers["x-test-clock-time"], r.headers["x-timestamp"], r.headers["x-test-clock"], r.headers["x-test-mode"]]), [
        ["payment.created", atAnchor, wall, s.clock.id, "true"],
        ["payment.paid", atAnchor, wall, s.clock.id, "true"]
      ])
      const preview = yield* Subscriptions.upcoming(s.principal, subscription.id, 3)

      const advanced = yield* TestClocks.advance(s.principal, s.clock.id, "2026-05-01T00:00:00+03:00")
      assert.deepStrictEqual([advanced.status, advanced.frozenTime, advanced.targetTime], ["ready", Date.parse("2026-05-01T00:00:00+03:00"), null])
      const history = (yield* Subscriptions.charges(s.principal, subscription.id)).filter((c) => c.kind === "recurring").reverse()
      assert.deepStrictEqual(history.map((c): Array<unknown> => [c.cycleNumber, c.status, c.scheduledAt, c.actualAt]), [
        [1, "payed", monthlyDates[0], monthlyDates[0]],
        [2, "payed", monthlyDates[1], monthlyDates[1]],
        [3, "payed", monthlyDates[2], monthlyDates[2]]
      ])
      assert.deepStrictEqual(preview.map((p) => p.scheduledAt), history.map((c) => c.scheduledAt))
      const charged = yield* Effect.forEach(history, (c) => Payments.get(s.principal, c.paymentId!))
      assert.deepStrictEqual(charged.map((p) => [p.createdAt, p.environment, p.testClockId, p.settlement]), monthlyDates.slice(0, 3).map((d) => [d, "sandbox", s.clock.id, null]))
      // Each charge's payment.paid went out at its own moment on the clock, with the clock's id.
      const paid = (yield* callbacks).slice(2)
      assert.deepStrictEqual(paid.map((r) => [JSON.parse(r.body).payment_id, r.headers["x-test-clock-time"], r.headers["x-timestamp"], r.headers["x-test-clock"]]),
        charged.map((p, i) => [`pay_${p.id}`, String(Instant.toUnixSeconds(monthlyDates[i]!)), wall, s.clock.id]))
      assert.strictEqual((yield* reload(subscription.id)).nextChargeAt, monthlyDates[3])
      // The sandbox acquirer charged; the live bank heard nothing.
      assert.strictEqual((yield* AcquirerEmulator.AcquirerEmulator).charges.length, 0)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("an advance touches neither live objects nor another clock's, and a global pass touches no clock's", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const mine = yield* activeOnClock(s, s.clock.id, "mine")
      const otherClock = yield* TestClocks.create(s.principal, { frozenTime: january })
      const theirs = yield* activeOnClock(s, otherClock.id, "theirs")
      // A live subscription, active at the wall time, due on 23 December.
      const { subscription: live } = yield* Subscriptions.create(s.principal, {
        idempotencyKey: "live", terminalId: s.merchant.terminal.id, planId: s.plans.ceilingMonthly.id, amount: "500"
      })
      const liveFirst = Option.getOrThrow((yield* Subscriptions.confirm(live.payToken, live.csrfToken)).firstPayment)
      yield* Payments.settle(liveFirst.id, "paid")
      // An unpaid sandbox payment on the clock (expires at 10:30 on 31 January) and one on no clock.
      const onClock = yield* Payments.create(s.principal, { amount: "10", orderId: "on-clock", test: true, testClock: s.clock.id })
      const offClock = yield* Payments.create(s.principal, { amount: "10", orderId: "off-clock", test: true })
      assert.deepStrictEqual([onClock.payment.createdAt, onClock.payment.expiresAt], [anchor, anchor + 30 * 60_000])

      // A later clock, after the live subscription's next charge: advancing it charges nothing live.
      const later = yield* TestClocks.create(s.principal, { frozenTime: "2026-12-01T00:00:00Z" })
      yield* TestClocks.advance(s.principal, later.id, "2027-02-01T00:00:00Z")
      const liveAfter = yield* reload(live.id)
      assert.deepStrictEqual([Subscription.stateOf(liveAfter), liveAfter.successfulCycles], ["active/enabled", 1])

      // Advancing one clock leaves the other alone.
      yield* TestClocks.advance(s.principal, s.clock.id, "2026-03-01T00:00:00+03:00")
      assert.deepStrictEqual([(yield* reload(mine.subscription.id)).successfulCycles, (yield* reload(theirs.subscription.id)).successfulCycles], [2, 1])
      assert.strictEqual((yield* Payments.get(s.principal, onClock.payment.id)).status, "expired")
      assert.strictEqual((yield* Payments.get(s.principal, offClock.payment.id)).status, "created")
      assert.strictEqual((yield* TestClocks.get(s.principal, otherClock.id)).frozenTime, anchor)

      // Global passes at any wall time never charge a clock's subscription nor expire its payment.
      const stillOpen = yield* Payments.create(s.principal, { amount: "10", orderId: "on-other-clock", test: true, testClock: otherClock.id })
      yield* EffectTestClock.setTime(Date.parse("2027-06-01T00:00:00Z"))
      yield* Work.drain()
      assert.strictEqual((yield* reload(theirs.subscription.id)).successfulCycles, 1)
      assert.strictEqual((yield* Payments.get(s.principal, stillOpen.payment.id)).status, "created")
      // The live subscription is charged by the global pass, on wall time, as before.
      assert.isAtLeast((yield* reload(live.id)).successfulCycles, 2)
      // A flow that charges one subscription by id (the Inngest engine's) does nothing to a clock's.
      assert.isFalse(yield* Subscriptions.chargeOne(theirs.subscription.id))
      assert.strictEqual((yield* reload(theirs.subscription.id)).successfulCycles, 1)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a programmed failure moves the clock's subscription to review at its moment; a stop happens at the clock's time", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const { subscription } = yield* activeOnClock(s, s.clock.id, "review")
      yield* Subscriptions.programSandboxCharges(s.principal, subscription.id, ["paid", "failed"])
      yield* TestClocks.advance(s.principal, s.clock.id, "2026-04-15T00:00:00+03:00")
      const inReview = yield* reload(subscription.id)
      assert.deepStrictEqual([Subscription.stateOf(inReview), inReview.successfulCycles, inReview.updatedAt], ["active/review", 2, monthlyDates[1]])
      const failed = (yield* Subscriptions.charges(s.principal, subscription.id))[0]!
      assert.deepStrictEqual([failed.cycleNumber, failed.status, failed.actualAt], [2, "fail", monthlyDates[1]])
      const stopped = yield* Subscriptions.stop(s.principal, subscription.id)
      assert.deepStrictEqual([Subscription.stateOf(stopped), stopped.stoppedAt], ["stop/stopped", Date.parse("2026-04-15T00:00:00+03:00")])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a key without subscription write access moves a clock only while none of its subscriptions has a charge or stop to come, and deletes it only while none is ongoing", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const restricted = { ...s.principal, subscriptionWrite: false } as const
      // A clock with payments only: the restricted key advances and deletes it.
      const payments = yield* TestClocks.create(restricted, { frozenTime: january, name: "Payments" })
      assert.strictEqual((yield* TestClocks.advance(restricted, payments.id, "2026-02-02T10:00:00+03:00")).status, "ready")
      assert.isNotNull((yield* TestClocks.remove(restricted, payments.id)).deletedAt)
      // A clock with an active subscription: advancing would charge it, deleting would end it.
      const { subscription } = yield* activeOnClock(s, s.clock.id, "restricted")
      for (const refused of [
        yield* Effect.flip(TestClocks.advance(restricted, s.clock.id, "2026-04-15T00:00:00+03:00")),
        yield* Effect.flip(TestClocks.remove(restricted, s.clock.id))
      ]) {
        assert.deepStrictEqual([refused._tag, refused.message], ["AccessDenied", "subscription write access required"])
      }
      const untouched = yield* reload(subscription.id)
      assert.deepStrictEqual([untouched.successfulCycles, (yield* TestClocks.get(s.principal, s.clock.id)).frozenTime], [1, anchor])
      // Once it is stopped, nothing of it is to come: the restricted key may move the clock again.
      yield* Subscriptions.stop(s.principal, subscription.id)
      assert.strictEqual((yield* TestClocks.advance(restricted, s.clock.id, "2026-04-15T00:00:00+03:00")).status, "ready")
      assert.strictEqual((yield* reload(subscription.id)).successfulCycles, 1)
      // A subscription awaiting the payer's consent has nothing due, but deleting its clock would end it
      // (a security probe's restricted key did): the key may advance that clock, not delete it.
      const pending = yield* TestClocks.create(s.principal, { frozenTime: january, name: "Consent" })
      const { subscription: awaiting } = yield* Subscriptions.create(s.principal, {
        idempotencyKey: "awaiting", terminalId: s.merchant.terminal.id, planId: s.plans.ceilingMonthly.id, amount: "700", test: true, testClock: pending.id
      })
      assert.strictEqual(awaiting.billingStatus, "consent_pending")
      assert.strictEqual((yield* TestClocks.advance(restricted, pending.id, "2026-02-02T10:00:00+03:00")).status, "ready")
      const refused = yield* Effect.flip(TestClocks.remove(restricted, pending.id))
      assert.deepStrictEqual([refused._tag, refused.message], ["AccessDenied", "subscription write access required"])
      assert.strictEqual((yield* reload(awaiting.id)).billingStatus, "consent_pending")
      // Once it is stopped, the clock holds nothing ongoing: the restricted key deletes it (and the first clock).
      yield* Subscriptions.stop(s.principal, awaiting.id)
      assert.isNotNull((yield* TestClocks.remove(restricted, pending.id)).deletedAt)
      assert.isNotNull((yield* TestClocks.remove(restricted, s.clock.id)).deletedAt)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a stopped subscription whose charge the bank never confirms is asked about ever less often: a year's advance ends in one call", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const { subscription } = yield* activeOnClock(s, s.clock.id, "unknown")
      yield* Subscriptions.programSandboxCharges(s.principal, subscription.id, ["unknown"])
      yield* TestClocks.advance(s.principal, s.clock.id, "2026-03-01T00:00:00+03:00")
      yield* Subscriptions.stop(s.principal, subscription.id)
      const open = (yield* Subscriptions.charges(s.principal, subscription.id))[0]!
      assert.strictEqual(open.status, "unconfirmed")
      // Asked every minute, a year is 525 600 steps, past one call's 1 000: the clock stayed advancing.
      // Resting as long as the attempt has been open (at most a day), it is about 380.
      const year = yield* TestClocks.advance(s.principal, s.clock.id, "2027-03-01T00:00:00+03:00")
      assert.deepStrictEqual([year.status, year.frozenTime], ["ready", Date.parse("2027-03-01T00:00:00+03:00")])
      const still = (yield* Subscriptions.charges(s.principal, subscription.id))[0]!
      assert.deepStrictEqual([still.id, still.status], [open.id, "unconfirmed"])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("advances are checked, and two at once: one wins, the other is 409", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const refused = (frozenTime: string) => Effect.map(Effect.flip(TestClocks.advance(s.principal, s.clock.id, frozenTime)), (e) => [e._tag, e.message])
      assert.deepStrictEqual(yield* refused(january), ["InvalidRequest", "frozen_time must be later than the clock's frozen_time (2026-01-31T07:00:00.000Z)"])
      assert.deepStrictEqual((yield* refused("2028-02-02T10:00:00+03:00"))[1], "a clock advances at most 731 days at once")
      assert.deepStrictEqual((yield* refused("31.01.2026"))[0], "InvalidRequest")
      // Held by another advance: refused with 409, and so are changes to its objects.
      const repo = yield* TestClockRepository
      const clock = Option.getOrThrow(yield* repo.get(s.clock.id))
      yield* repo.update({ ...clock, status: "advancing", targetTime: anchor + 1, leaseUntil: wall + 60_000, version: 2 })
      assert.deepStrictEqual(yield* refused("2026-02-01T10:00:00+03:00"), ["TestClockAdvancing", "test clock is advancing"])
      const created = yield* Effect.flip(Payments.create(s.principal, { amount: "1", orderId: "busy", test: true, testClock: s.clock.id }))
      assert.strictEqual(created._tag, "TestClockAdvancing")
      yield* repo.update({ ...clock, version: 3 })
      // Two advances at once: the first is held in a callback of the clock's payment while the second comes.
      yield* Payments.create(s.principal, { amount: "1", orderId: "held", test: true, testClock: s.clock.id })
      const entered = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      const held = CallbackTransport.of({
        post: () => Effect.andThen(Deferred.succeed(entered, undefined), Effect.as(Deferred.await(gate), { statusCode: 200, latencyMs: 1 }))
      })
      const first = yield* Effect.forkChild(TestClocks.advance(s.principal, s.clock.id, "2026-02-02T00:00:00Z").pipe(Effect.provideService(CallbackTransport, held)))
      yield* Deferred.await(entered)
      assert.deepStrictEqual(yield* refused("2026-02-03T00:00:00Z"), ["TestClockAdvancing", "test clock is advancing"])
      yield* Deferred.succeed(gate, undefined)
      const won = yield* Fiber.join(first)
      assert.deepStrictEqual([won.status, won.frozenTime], ["ready", Date.parse("2026-02-02T00:00:00Z")])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("an advance waits for the background's run of the work due at the clock's time: a callback in flight is not sent again", () =>
    Effect.gen(function*() {
      const s = yield* setup
      // A clock's payment: its payment.created is due at the clock's time, for the background worker.
      yield* Payments.create(s.principal, { amount: "1", orderId: "in-flight", test: true, testClock: s.clock.id })
      const { sent, entered, gate, held } = yield* gatedTransport
      const background = yield* Effect.forkChild(TestClocks.runPending().pipe(Effect.provideService(CallbackTransport, held)))
      yield* Deferred.await(entered)
      // The merchant advances while that callback is in flight (an outside probe, 28 ms after a simulate,
      // got one payment.paid twice): stepping past its lease, the advance would claim and send it again.
      const advance = yield* Effect.forkChild(TestClocks.advance(s.principal, s.clock.id, "2026-02-02T00:00:00Z").pipe(Effect.provideService(CallbackTransport, held)))
      yield* EffectTestClock.adjust("1 second")
      assert.strictEqual(sent.length, 1)
      assert.strictEqual(Option.getOrThrow(yield* (yield* TestClockRepository).get(s.clock.id)).status, "ready")
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(background)
      yield* EffectTestClock.adjust("1 second")
      const done = yield* Fiber.join(advance)
      assert.deepStrictEqual([done.status, done.frozenTime], ["ready", Date.parse("2026-02-02T00:00:00Z")])
      // payment.created once, then the payment's expiry at its moment of the advance.
      const types = (yield* Events.list(s.principal, { environment: "sandbox" })).items.map((i) => [Callback.eventId(i.event.id), i.event.eventType])
      assert.deepStrictEqual(sent, types.toReversed().map(([id]) => id))
      assert.deepStrictEqual(types.map(([, type]) => type), ["payment.expired", "payment.created"])
    }).pipe(Effect.provide(Kit.layer)))

  // On the memory store the advance's claim also waits behind the resend for other reasons, so this
  // test passes without the hold; PgConcurrency's test of the same on PostgreSQL fails without it.
  it.effect("a resend of a clock's event holds the clock: an advance meanwhile waits and does not send it again", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* Payments.create(s.principal, { amount: "1", orderId: "resent", test: true, testClock: s.clock.id })
      yield* Work.drain()
      const [created] = (yield* Events.list(s.principal, { environment: "sandbox" })).items
      const { sent, entered, gate, held } = yield* gatedTransport
      const resend = yield* Effect.forkChild(Events.resend(s.principal, Callback.eventId(created!.event.id)).pipe(Effect.provideService(CallbackTransport, held)))
      yield* Deferred.await(entered)
      const advance = yield* Effect.forkChild(TestClocks.advance(s.principal, s.clock.id, "2026-02-02T00:00:00Z").pipe(Effect.provideService(CallbackTransport, held)))
      yield* EffectTestClock.adjust("1 second")
      assert.deepStrictEqual(sent, [Callback.eventId(created!.event.id)])
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual((yield* Fiber.join(resend)).attempt?.statusCode, 200)
      yield* EffectTestClock.adjust("1 second")
      assert.strictEqual((yield* Fiber.join(advance)).status, "ready")
      // The resend once; then only the payment's expiry, at its moment of the advance.
      const expired = (yield* Events.list(s.principal, { environment: "sandbox", type: "payment.expired" })).items.map((i) => Callback.eventId(i.event.id))
      assert.deepStrictEqual(sent, [Callback.eventId(created!.event.id), ...expired])
      // And the clock is let go: the background takes it again.
      assert.strictEqual(Option.getOrThrow(yield* (yield* TestClockRepository).get(s.clock.id)).leaseUntil, null)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("the background's run of a clock's due work renews its hold after each pass that worked, and lets go at the end", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* Payments.create(s.principal, { amount: "1", orderId: "renewed", test: true, testClock: s.clock.id })
      const repo = yield* TestClockRepository
      const before = Option.getOrThrow(yield* repo.get(s.clock.id))
      // A renewal that fails (another took the clock) stops the run after that pass.
      let renewals = 0
      const worked = yield* TestClocks.runAt(s.clock.id, before.frozenTime, Effect.sync(() => (renewals++, false)))
      assert.deepStrictEqual([worked, renewals, (yield* callbacks).length], [1, 1, 1])
      // The worker: claimed (version + 1), renewed after the pass that sent (+ 1), let go (+ 1).
      yield* Payments.create(s.principal, { amount: "1", orderId: "renewed-2", test: true, testClock: s.clock.id })
      const claimed = Option.getOrThrow(yield* repo.get(s.clock.id))
      assert.strictEqual(yield* TestClocks.runPending(), 1)
      const after = Option.getOrThrow(yield* repo.get(s.clock.id))
      assert.deepStrictEqual([after.leaseUntil, after.version - claimed.version, (yield* callbacks).length], [null, 3, 2])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a holder that never lets go is waited for 10 s, then the advance is 409", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const repo = yield* TestClockRepository
      const clock = Option.getOrThrow(yield* repo.get(s.clock.id))
      // A worker that died running the clock's due work: its lease (a minute) is still running.
      yield* repo.update({ ...clock, leaseUntil: wall + 60_000, version: clock.version + 1 })
      const advance = yield* Effect.forkChild(Effect.flip(TestClocks.advance(s.principal, s.clock.id, "2026-02-02T00:00:00Z")))
      yield* EffectTestClock.adjust("11 seconds")
      assert.deepStrictEqual(yield* Effect.map(Fiber.join(advance), (e) => [e._tag, e.message]), ["TestClockAdvancing", "test clock is advancing"])
      assert.strictEqual(Option.getOrThrow(yield* repo.get(s.clock.id)).frozenTime, anchor)
      // A resend waiting for the holder is interrupted at once (a shutdown does not wait for it), and holds nothing.
      yield* Payments.create(s.principal, { amount: "1", orderId: "waiting", test: true, testClock: s.clock.id })
      const [event] = (yield* Events.list(s.principal, { environment: "sandbox" })).items
      const waiting = yield* Effect.forkChild(Events.resend(s.principal, Callback.eventId(event!.event.id)))
      yield* EffectTestClock.adjust("1 second")
      yield* Fiber.interrupt(waiting)
      assert.strictEqual(Option.getOrThrow(yield* repo.get(s.clock.id)).leaseUntil, wall + 60_000)
      // Once the lease runs out, it advances.
      yield* EffectTestClock.adjust("50 seconds")
      assert.strictEqual((yield* TestClocks.advance(s.principal, s.clock.id, "2026-02-02T00:00:00Z")).status, "ready")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a callback a dead worker was sending at a ready clock's time is sent again once its hold runs out, without an advance", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* Payments.create(s.principal, { amount: "1", orderId: "orphaned", test: true, testClock: s.clock.id })
      // What a worker killed while sending the payment.created left (an outside probe, kill -9): the
      // clock claimed (its hold on the wall clock), the delivery claimed with its lease on the clock's
      // frozen time, no attempt recorded.
      const repo = yield* TestClockRepository
      const outbox = yield* OutboxRepository
      assert.deepStrictEqual((yield* repo.claimPending(wall, wall + 60_000, 10)).map((c) => c.id), [s.clock.id])
      const [claimed] = yield* outbox.claimDue(anchor, anchor + 60_000, 10, s.clock.id, { keepFrom: anchor })
      assert.strictEqual(claimed!.delivery.nextAttemptAt, anchor + 60_000)
      // While its hold runs, nobody sends it.
      yield* Work.drain()
      assert.strictEqual((yield* callbacks).length, 0)
      // Then the worker takes the clock again (its holder is gone) and sends it, though the clock never moved.
      yield* EffectTestClock.adjust("61 seconds")
      yield* Work.drain()
      const sent = yield* callbacks
      assert.deepStrictEqual(sent.map((r) => [JSON.parse(r.body).event_type, r.headers["x-event-id"]]), [["payment.created", Callback.eventId(claimed!.event.id)]])
      assert.strictEqual(Option.getOrThrow(yield* outbox.getDelivery(claimed!.delivery.id)).status, "delivered")
      const after = Option.getOrThrow(yield* repo.get(s.clock.id))
      assert.deepStrictEqual([after.frozenTime, after.leaseUntil], [anchor, null])
      // Once: a later pass sends nothing more.
      yield* EffectTestClock.adjust("61 seconds")
      yield* Work.drain()
      assert.strictEqual((yield* callbacks).length, 1)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a worker still sending a clock's callbacks keeps its hold past a lease: an advance meanwhile waits and does not send them again", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* Payments.create(s.principal, { amount: "1", orderId: "long-pass", test: true, testClock: s.clock.id })
      const { sent, entered, gate, held } = yield* gatedTransport
      const background = yield* Effect.forkChild(TestClocks.runPending().pipe(Effect.provideService(CallbackTransport, held)))
      yield* Deferred.await(entered)
      // The pass outlasts a lease (one payment's events in order, 10 s each, can): its hold is renewed.
      yield* EffectTestClock.adjust("61 seconds")
      assert.isAbove(Option.getOrThrow(yield* (yield* TestClockRepository).get(s.clock.id)).leaseUntil!, wall + 61_000)
      // Taken for a dead worker's, the clock's delivery in flight would be released and sent again (a review).
      const advance = yield* Effect.forkChild(TestClocks.advance(s.principal, s.clock.id, "2026-01-31T10:00:30+03:00").pipe(Effect.provideService(CallbackTransport, held)))
      yield* EffectTestClock.adjust("1 second")
      assert.strictEqual(sent.length, 1)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(background)
      yield* EffectTestClock.adjust("1 second")
      assert.strictEqual((yield* Fiber.join(advance)).status, "ready")
      assert.deepStrictEqual(sent, [sent[0]])
      assert.strictEqual(Option.getOrThrow(yield* (yield* TestClockRepository).get(s.clock.id)).leaseUntil, null)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a renewal of the hold that fails once (the store unreachable for a moment) is tried again: the hold outlasts a lease all the same", () =>
    Effect.gen(function*() {
      const s = yield* setup
      yield* Payments.create(s.principal, { amount: "1", orderId: "flaky-renewal", test: true, testClock: s.clock.id })
      const { sent, entered, gate, held } = yield* gatedTransport
      const repo = yield* TestClockRepository
      let failNext = false
      let failures = 0
      const flaky: typeof repo = {
        ...repo,
        update: (clock) => {
          if (!failNext) return repo.update(clock)
          failNext = false
          failures++
          return Effect.die("connection reset")
        }
      }
      const background = yield* Effect.forkChild(TestClocks.runPending().pipe(
        Effect.provideService(CallbackTransport, held),
        Effect.provideService(TestClockRepository, flaky)
      ))
      yield* Deferred.await(entered)
      failNext = true
      yield* EffectTestClock.adjust("61 seconds")
      assert.strictEqual(failures, 1)
      // Renewed at the next tick (it had stopped at the failure, and the lease ran out under the pass).
      assert.isAbove(Option.getOrThrow(yield* repo.get(s.clock.id)).leaseUntil!, wall + 61_000)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(background)
      assert.strictEqual(sent.length, 1)
      assert.strictEqual(Option.getOrThrow(yield* repo.get(s.clock.id)).leaseUntil, null)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a holder whose run fails lets the clock go a few seconds later, not a lease later nor at once", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const repo = yield* TestClockRepository
      const clock = Option.getOrThrow(yield* repo.get(s.clock.id))
      const held = { ...clock, status: "advancing" as const, targetTime: anchor + Instant.DAY_MS, leaseUntil: wall + 60_000, version: clock.version + 1 }
      yield* repo.update(held)
      const payments = yield* PaymentRepository
      const failed = yield* Effect.exit(TestClocks.steps(held, 1_000).pipe(
        Effect.provideService(PaymentRepository, { ...payments, earliestExpiry: () => Effect.die("the database went away") })
      ))
      assert.isTrue(Exit.isFailure(failed))
      // Held for a few seconds (a run failing every time is not taken again at every pass), then the
      // background continues the advance; a merchant's advance waits less than that for a holder.
      const after = Option.getOrThrow(yield* repo.get(s.clock.id))
      assert.deepStrictEqual([after.status, after.leaseUntil], ["advancing", wall + TestClocks.failedHoldMs])
      assert.isBelow(TestClocks.failedHoldMs, TestClock.heldWaitMs)
      yield* Work.drain()
      assert.strictEqual(Option.getOrThrow(yield* repo.get(s.clock.id)).status, "advancing")
      yield* EffectTestClock.adjust(TestClocks.failedHoldMs + 1)
      yield* Work.drain()
      assert.strictEqual(Option.getOrThrow(yield* repo.get(s.clock.id)).status, "ready")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("an advance cut short (budget spent, or its process died) is finished by the background worker", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const { subscription } = yield* activeOnClock(s, s.clock.id, "cut")
      const repo = yield* TestClockRepository
      const clock = Option.getOrThrow(yield* repo.get(s.clock.id))
      const target = Date.parse("2026-04-01T00:00:00+03:00")
      // A budget of nothing: one step, then the clock waits, still advancing, for the background.
      const held = { ...clock, status: "advancing" as const, targetTime: target, leaseUntil: wall + 60_000, version: clock.version + 1 }
      yield* repo.update(held)
      const cut = yield* TestClocks.steps(held, 0)
      assert.deepStrictEqual([cut.status, cut.leaseUntil, cut.targetTime], ["advancing", null, target])
      assert.isBelow(cut.frozenTime, target)
      yield* Work.drain()
      yield* Work.drain()
      yield* Work.drain()
      const done = Option.getOrThrow(yield* repo.get(s.clock.id))
      assert.deepStrictEqual([done.status, done.frozenTime], ["ready", target])
      assert.strictEqual((yield* reload(subscription.id)).successfulCycles, 3)
      // A process that died while advancing: its lease runs out on the wall clock, then the worker takes over.
      const dead = { ...done, status: "advancing" as const, targetTime: Date.parse("2026-05-01T00:00:00+03:00"), leaseUntil: wall + 60_000, version: done.version + 1 }
      yield* repo.update(dead)
      yield* Work.drain()
      assert.strictEqual(Option.getOrThrow(yield* repo.get(s.clock.id)).status, "advancing")
      yield* EffectTestClock.adjust("61 seconds")
      yield* Work.drain()
      assert.strictEqual(Option.getOrThrow(yield* repo.get(s.clock.id)).status, "ready")
      assert.strictEqual((yield* reload(subscription.id)).successfulCycles, 4)
    }).pipe(Effect.provide(Kit.layer)))

  /** Six advances left to the background (as after a spent request budget), and their clocks' statuses. */
  const sixAdvancing = (s: Setup) =>
    Effect.gen(function*() {
      const repo = yield* TestClockRepository
      const clocks = [s.clock, ...yield* Effect.forEach([1, 2, 3, 4, 5], (n) => TestClocks.create(s.principal, { frozenTime: january, name: `c${n}` }))]
      for (const created of clocks) {
        const clock = Option.getOrThrow(yield* repo.get(created.id))
        yield* repo.update({ ...clock, status: "advancing", targetTime: anchor + Instant.DAY_MS, leaseUntil: null, version: clock.version + 1 })
      }
      return { clocks, statuses: Effect.forEach(clocks, (c) => Effect.map(repo.get(c.id), (found) => Option.getOrThrow(found).status)) }
    })

  it.effect("a run of their own (the Inngest sweep) takes clocks a few at a time until none waits or its budget is spent", () =>
    Effect.gen(function*() {
      const { clocks, statuses } = yield* sixAdvancing(yield* setup)
      assert.strictEqual(yield* TestClocks.runPendingFor(20_000), clocks.length)
      assert.deepStrictEqual(yield* statuses, clocks.map(() => "ready"))
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("the background worker takes a few clocks per pass, side by side, and the others at later passes", () =>
    Effect.gen(function*() {
      const { clocks, statuses } = yield* sixAdvancing(yield* setup)
      assert.strictEqual(yield* TestClocks.runPending(), TestClocks.clocksPerPass)
      assert.deepStrictEqual((yield* statuses).filter((status) => status === "ready").length, TestClocks.clocksPerPass)
      assert.strictEqual(yield* TestClocks.runPending(), clocks.length - TestClocks.clocksPerPass)
      assert.deepStrictEqual(yield* statuses, clocks.map(() => "ready"))
      assert.strictEqual(yield* TestClocks.runPending(), 0)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("objects are attached to a clock of their own terminal, in sandbox only", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const live = yield* Effect.flip(Payments.create(s.principal, { amount: "1", orderId: "live", testClock: s.clock.id }))
      assert.deepStrictEqual([live._tag, (live as { field?: string }).field], ["InvalidRequest", "test_clock"])
      const liveSub = yield* Effect.flip(Subscriptions.create(s.principal, {
        idempotencyKey: "k", terminalId: s.merchant.terminal.id, planId: s.plans.ceilingMonthly.id, amount: "1", testClock: s.clock.id
      }))
      assert.strictEqual(liveSub.message, Payments.testClockSandboxOnly)
      const foreign = yield* Kit.provisionMerchant({})
      const foreignPrincipal = yield* Kit.apiKeyPrincipal(foreign, crypto.randomUUID())
      const elsewhere = yield* Effect.flip(Payments.create(foreignPrincipal, { amount: "1", orderId: "x", test: true, testClock: s.clock.id }))
      assert.strictEqual(elsewhere.message, "test_clock: no test clock with this id on the terminal")
      assert.strictEqual((yield* Effect.flip(TestClocks.get(foreignPrincipal, s.clock.id)))._tag, "NotFound")
      assert.strictEqual((yield* TestClocks.list(foreignPrincipal, {})).total, 0)
      assert.deepStrictEqual((yield* TestClocks.list(s.principal, {})).items.map((c) => c.id), [s.clock.id])
      // Nothing was created by the refused requests.
      assert.strictEqual((yield* Payments.list(s.principal, { environment: "all" })).total, 0)
      assert.strictEqual((yield* (yield* SubscriptionRepository).list({ terminalIds: [s.merchant.terminal.id], providerState: null }, { limit: 10, offset: 0 })).total, 0)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a sandbox payer who lets the first payment expire can consent again (the next first payment)", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const { subscription } = yield* Subscriptions.create(s.principal, {
        idempotencyKey: "again", terminalId: s.merchant.terminal.id, planId: s.plans.ceilingMonthly.id, amount: "700", test: true, testClock: s.clock.id
      })
      const first = Option.getOrThrow((yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)).firstPayment)
      yield* TestClocks.advance(s.principal, s.clock.id, "2026-01-31T11:00:00+03:00")
      assert.strictEqual((yield* Payments.get(s.principal, first.id)).status, "expired")
      assert.isFalse(Subscription.hasConsent(yield* reload(subscription.id)))
      const second = Option.getOrThrow((yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)).firstPayment)
      assert.deepStrictEqual([second.orderId, second.createdAt], [`sub-${subscription.id}-first-2`, Date.parse("2026-01-31T11:00:00+03:00")])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a deleted clock is gone at once, its objects take no action, and a lease later they are purged with their events; nothing else is", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const mine = yield* activeOnClock(s, s.clock.id, "deleted")
      const other = yield* TestClocks.create(s.principal, { frozenTime: january })
      const theirs = yield* activeOnClock(s, other.id, "kept")
      const offClock = yield* Payments.create(s.principal, { amount: "10", orderId: "off-clock", test: true })
      yield* TestClocks.advance(s.principal, s.clock.id, "2026-03-01T00:00:00+03:00")
      const open = yield* Payments.create(s.principal, { amount: "10", orderId: "open-on-clock", test: true, testClock: s.clock.id })
      const { tables } = yield* MemoryDatabase.MemoryDatabase
      const eventsOf = (clockId: string) => [...tables.outboxEvents.values()].filter((e) => e.testClockId === clockId)
      const sent = eventsOf(s.clock.id)
      assert.isAtLeast(sent.length, 4)
      const flip = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.map(Effect.flip(effect), (e) => [(e as { _tag: string })._tag, (e as { message: string }).message])

      // Not while it advances.
      const repo = yield* TestClockRepository
      const clock = Option.getOrThrow(yield* repo.get(s.clock.id))
      yield* repo.update({ ...clock, status: "advancing", targetTime: clock.frozenTime + 1, leaseUntil: wall + 60_000, version: clock.version + 1 })
      assert.deepStrictEqual(yield* flip(TestClocks.remove(s.principal, s.clock.id)), ["TestClockAdvancing", "test clock is advancing"])
      yield* repo.update({ ...clock, version: clock.version + 2 })
      // Not another terminal's.
      const foreign = yield* Kit.apiKeyPrincipal(yield* Kit.provisionMerchant({}), crypto.randomUUID())
      assert.deepStrictEqual(yield* flip(TestClocks.remove(foreign, s.clock.id)), ["NotFound", "test clock not found"])

      const deleted = yield* TestClocks.remove(s.principal, s.clock.id)
      assert.deepStrictEqual([deleted.id, deleted.deletedAt], [s.clock.id, wall])
      // Gone at once: the clock, and every action on its objects or naming it.
      assert.deepStrictEqual(yield* flip(TestClocks.get(s.principal, s.clock.id)), ["NotFound", "test clock not found"])
      assert.deepStrictEqual(yield* flip(TestClocks.remove(s.principal, s.clock.id)), ["NotFound", "test clock not found"])
      assert.deepStrictEqual(yield* flip(TestClocks.advance(s.principal, s.clock.id, "2026-04-01T00:00:00Z")), ["NotFound", "test clock not found"])
      assert.deepStrictEqual((yield* TestClocks.list(s.principal, {})).items.map((c) => c.id), [other.id])
      assert.deepStrictEqual(yield* flip(Payments.create(s.principal, { amount: "1", orderId: "after", test: true, testClock: s.clock.id })),
        ["InvalidRequest", "test_clock: no test clock with this id on the terminal"])
      assert.deepStrictEqual(yield* flip(Payments.simulate(open.payment.payToken, { outcome: "paid", csrfToken: open.payment.csrfToken })),
        ["NotFound", "test clock not found"])
      assert.deepStrictEqual(yield* flip(Subscriptions.stop(s.principal, mine.subscription.id)), ["NotFound", "test clock not found"])
      assert.deepStrictEqual(yield* flip(Subscriptions.programSandboxCharges(s.principal, mine.subscription.id, ["failed"])), ["NotFound", "test clock not found"])
      assert.strictEqual((yield* Payments.get(s.principal, open.payment.id)).status, "created")

      // The housekeeping leaves the objects for a lease (an action begun before the deletion ends first)...
      yield* Work.housekeeping()
      assert.strictEqual((yield* Payments.get(s.principal, mine.first.id)).id, mine.first.id)
      // ...then deletes them, a table's batch a call, and the clock: all in one pass here.
      yield* EffectTestClock.adjust((yield* PaydeskConfig).leaseMs)
      assert.isAtLeast((yield* Work.housekeeping()).testClocks, sent.length * 2 + 4)
      assert.strictEqual((yield* Work.housekeeping()).testClocks, 0)
      for (const id of [mine.first.id, open.payment.id]) assert.strictEqual((yield* Effect.flip(Payments.get(s.principal, id)))._tag, "NotFound")
      assert.isTrue(Option.isNone(yield* (yield* SubscriptionRepository).get(mine.subscription.id)))
      assert.deepStrictEqual(eventsOf(s.clock.id), [])
      assert.isFalse(tables.testClocks.has(s.clock.id))
      assert.isFalse([...tables.charges.values()].some((c) => c.subscriptionId === mine.subscription.id))
      assert.isFalse([...tables.deliveries.values()].some((d) => sent.some((e) => e.id === d.eventId)))
      // The other clock's objects and the payment on no clock stay.
      assert.strictEqual((yield* reload(theirs.subscription.id)).testClockId, other.id)
      assert.strictEqual((yield* Payments.get(s.principal, offClock.payment.id)).status, "created")
      assert.isAtLeast(eventsOf(other.id).length, 2)
      assert.strictEqual((yield* TestClocks.get(s.principal, other.id)).id, other.id)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a clock is deleted by the retention at deletesAfter (its creation plus the event retention) once ready", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const { eventRetentionMs } = yield* PaydeskConfig
      assert.strictEqual(s.clock.deletesAfter, wall + eventRetentionMs)
      const payment = yield* Payments.create(s.principal, { amount: "10", orderId: "kept-30-days", test: true, testClock: s.clock.id })
      yield* EffectTestClock.adjust(eventRetentionMs - 1)
      yield* Work.housekeeping()
      assert.strictEqual((yield* TestClocks.get(s.principal, s.clock.id)).id, s.clock.id)
      yield* EffectTestClock.adjust(1)
      yield* Work.housekeeping()
      assert.strictEqual((yield* Effect.flip(TestClocks.get(s.principal, s.clock.id)))._tag, "NotFound")
      yield* EffectTestClock.adjust((yield* PaydeskConfig).leaseMs)
      yield* Work.housekeeping()
      assert.strictEqual((yield* Effect.flip(Payments.get(s.principal, payment.payment.id)))._tag, "NotFound")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a clock's events, on its time ten months behind the wall clock, are listed and read like recent ones; an old live one is not", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const onClock = yield* Payments.create(s.principal, { amount: "10", orderId: "january", test: true, testClock: s.clock.id })
      yield* TestClocks.advance(s.principal, s.clock.id, "2026-01-31T10:01:00+03:00")
      const listed = (yield* Events.list(s.principal, { environment: "sandbox" })).items
      assert.deepStrictEqual(listed.map((e) => [e.event.paymentId, e.event.createdAt]), [[onClock.payment.id, anchor]])
      const read = yield* Events.get(s.principal, Callback.eventId(listed[0]!.event.id))
      assert.strictEqual(read.event.id, listed[0]!.event.id)
      // A sandbox payment on no clock, 31 days old: past the retention's window, listed no more.
      const old = yield* Payments.create(s.principal, { amount: "10", orderId: "old", test: true })
      yield* Work.drain()
      yield* EffectTestClock.adjust(31 * 86_400_000)
      const later = (yield* Events.list(s.principal, { environment: "sandbox" })).items
      assert.deepStrictEqual(later.map((e) => e.event.paymentId), [onClock.payment.id])
      assert.notInclude(later.map((e) => e.event.paymentId), old.payment.id)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("recover leaves a deleted clock's failed events alone (its work stopped; the purge takes them)", () =>
    Effect.gen(function*() {
      const s = yield* setup
      const other = yield* TestClocks.create(s.principal, { frozenTime: january })
      const outbox = yield* OutboxRepository
      const failed = (testClockId: string | null) =>
        Effect.gen(function*() {
          const event = Fixtures.outboxEvent(s.merchant.terminal.id, { test: true, testClockId, createdAt: wall })
          yield* outbox.insertEvent(event, Fixtures.delivery(event, { status: "failed", attempts: 8, nextAttemptAt: null }))
          return event
        })
      yield* failed(s.clock.id)
      const kept = [yield* failed(other.id), yield* failed(null)]
      yield* TestClocks.remove(s.principal, s.clock.id)
      assert.strictEqual((yield* Events.recover(s.principal, { since: wall - 1, environment: "sandbox" })).requeued, kept.length)
      for (const event of kept) assert.strictEqual((yield* outbox.deliveriesOf(event.id)).length, 2)
    }).pipe(Effect.provide(Kit.layer)))
})
