import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import {
  Callbacks,
  Config,
  DeliveryHandoff,
  type Handed,
  IdempotencyStore,
  OutboxRepository,
  PaydeskConfig,
  PaymentRepository,
  Payments,
  Subscriptions,
  TestClocks,
  Work
} from "@paydesk/core"
import { Kit, MemoryDatabase, RecordingCallbackTransport } from "@paydesk/testkit"

/** One `take` call: the deliveries, and whether it ran inside a transaction and saw them stored as handed. */
interface Taken {
  readonly items: ReadonlyArray<Handed>
  readonly inTransaction: boolean
  readonly stored: ReadonlyArray<boolean>
}

/** What the recording port saw, and its switches. */
class Recorded extends Context.Service<Recorded, {
  readonly taken: Array<Taken>
  accepting: boolean
  /** `settled` of these objects waits for the deferred. */
  readonly holding: Map<string, Deferred.Deferred<void>>
  /** The deliveries `sending` answers. */
  readonly held: Set<string>
}>()("test/RecordedHandoff") {}

/** A `DeliveryHandoff` adapter that records every `take` (and sends nothing itself). */
const recording = Layer.effectContext(Effect.gen(function*() {
  const db = yield* MemoryDatabase.MemoryDatabase
  const outbox = yield* OutboxRepository
  const state: Recorded["Service"] = { taken: [], accepting: true, holding: new Map(), held: new Set() }
  const storedAsHanded = (handed: Handed) =>
    Effect.map(outbox.getDelivery(handed.delivery.id), (d) =>
      Option.isSome(d) && d.value.status === "pending" && d.value.nextAttemptAt === handed.delivery.nextAttemptAt &&
      d.value.sendingAt === handed.delivery.sendingAt)
  const port = DeliveryHandoff.of({
    accepting: Effect.sync(() => state.accepting),
    take: (items) =>
      Effect.gen(function*() {
        state.taken.push({ items: [...items], inTransaction: yield* db.inTransaction, stored: yield* Effect.forEach(items, storedAsHanded) })
      }),
    settled: (objectId) => Effect.suspend(() => state.holding.get(objectId) === undefined ? Effect.void : Deferred.await(state.holding.get(objectId)!)),
    sending: () => new Set(state.held)
  })
  return Context.make(DeliveryHandoff, port).pipe(Context.add(Recorded, state))
}))

const kit = recording.pipe(Layer.provideMerge(Kit.layer))

const start = Date.parse("2026-06-01T12:00:00.000Z")
const lease = Config.defaults.leaseMs

const setup = Effect.gen(function*() {
  yield* TestClock.setTime(start)
  const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/cb" })
  const plans = yield* Kit.provisionPlans(merchant.terminal.id)
  const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
  const transport = yield* RecordingCallbackTransport.RecordingCallbackTransport
  const recorded = yield* Recorded
  return { merchant, plans, principal, transport, recorded }
})

const deliveriesOf = (paymentId: string) =>
  Effect.map(Effect.flatMap(OutboxRepository, (outbox) => outbox.listDeliveries({ paymentId, limit: 10 })), (ds) => [...ds].reverse())

const eventTypes = (transport: RecordingCallbackTransport.RecordingCallbackTransport["Service"]) =>
  transport.requests.map((r) => JSON.parse(r.body).event_type as string)

/** The payment's `payment.created` was the one request, and its delivery is delivered. */
const createdDeliveredOnce = (transport: RecordingCallbackTransport.RecordingCallbackTransport["Service"], paymentId: string) =>
  Effect.gen(function*() {
    assert.deepStrictEqual(eventTypes(transport), ["payment.created"])
    const [delivery] = yield* deliveriesOf(paymentId)
    assert.strictEqual(delivery!.status, "delivered")
  })

describe("DeliveryHandoff", () => {
  it.effect("a new payment's delivery is written leased and stamped, handed off after the commit, and sent once", () =>
    Effect.gen(function*() {
      const { principal, transport, recorded } = yield* setup
      const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "o-1", test: true })
      const [delivery] = yield* deliveriesOf(payment.id)
      assert.strictEqual(delivery!.nextAttemptAt, start + lease)
      assert.strictEqual(delivery!.sendingAt, start)
      assert.strictEqual(recorded.taken.length, 1)
      const [taken] = recorded.taken
      assert.isFalse(taken!.inTransaction)
      assert.deepStrictEqual(taken!.stored, [true])
      const handed = taken!.items[0]!
      assert.strictEqual(handed.delivery.id, delivery!.id)
      assert.strictEqual(handed.event.eventType, "payment.created")
      assert.strictEqual(handed.terminal.id, payment.terminalId)

      // Leased: a pass does not take it.
      assert.strictEqual(yield* Callbacks.runDue(), 0)
      assert.strictEqual(transport.requests.length, 0)

      yield* TestClock.setTime(start + 2_000)
      assert.isTrue(yield* Callbacks.sendHanded(handed))
      assert.strictEqual(transport.requests.length, 1)
      // Signed with the stamp written with it, as a pass's claim stamps.
      assert.strictEqual(transport.requests[0]!.headers["x-timestamp"], String(start / 1000))
      const [after] = yield* deliveriesOf(payment.id)
      assert.strictEqual(after!.status, "delivered")
      assert.strictEqual(after!.attempts, 1)
      assert.isNull(after!.sendingAt)

      // Nothing is left for a pass, even after the lease.
      yield* TestClock.setTime(start + lease + 1_000)
      yield* Work.drain()
      assert.deepStrictEqual(eventTypes(transport), ["payment.created"])
    }).pipe(Effect.provide(kit)))

  it.effect("a hand-off lost before sending (a crash) is sent by a pass once the lease has run out, with the same stamp", () =>
    Effect.gen(function*() {
      const { principal, transport, recorded } = yield* setup
      const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "o-1", test: true })
      assert.strictEqual(recorded.taken.length, 1)
      yield* TestClock.setTime(start + lease - 1)
      assert.strictEqual(yield* Callbacks.runDue(), 0)
      yield* TestClock.setTime(start + lease)
      assert.strictEqual(yield* Callbacks.runDue(), 1)
      yield* createdDeliveredOnce(transport, payment.id)
      assert.strictEqual(transport.requests[0]!.headers["x-timestamp"], String(start / 1000))
    }).pipe(Effect.provide(kit)))

  it.effect("a hand-off whose lease is nearly over renews it before sending; one a pass claimed meanwhile is left to the pass", () =>
    Effect.gen(function*() {
      const { principal, transport, recorded } = yield* setup
      const { payment: first } = yield* Payments.create(principal, { amount: "10", orderId: "o-1", test: true })
      const late = start + lease - Callbacks.handoffMarginMs + 1
      yield* TestClock.setTime(late)
      assert.isTrue(yield* Callbacks.sendHanded(recorded.taken[0]!.items[0]!))
      assert.strictEqual(transport.requests.length, 1)
      const [sent] = yield* deliveriesOf(first.id)
      assert.strictEqual(sent!.status, "delivered")

      // Its lease ran out and a pass claimed it before the engine came to it: the pass sends it, the engine not.
      yield* TestClock.setTime(start)
      const { payment: second } = yield* Payments.create(principal, { amount: "10", orderId: "o-2", test: true })
      const handed = recorded.taken[1]!.items[0]!
      yield* TestClock.setTime(start + lease)
      const [claimed] = yield* (yield* OutboxRepository).claimDue(start + lease, start + 2 * lease, 10)
      assert.strictEqual(claimed!.delivery.id, handed.delivery.id)
      assert.isFalse(yield* Callbacks.sendHanded(handed))
      assert.strictEqual(transport.requests.length, 1)
      const [left] = yield* deliveriesOf(second.id)
      assert.strictEqual(left!.nextAttemptAt, start + 2 * lease)
      assert.strictEqual(left!.attempts, 0)
    }).pipe(Effect.provide(kit)))

  it.effect("a pass leaves a delivery the engine is sending when its lease has run out", () =>
    Effect.gen(function*() {
      const { principal, transport, recorded } = yield* setup
      const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "o-1", test: true })
      const handed = recorded.taken[0]!.items[0]!
      recorded.held.add(handed.delivery.id)
      yield* TestClock.setTime(start + lease)
      assert.strictEqual(yield* Callbacks.runDue(), 0)
      assert.strictEqual(transport.requests.length, 0)
      // Once the engine lets it go unsent, the next pass after the new lease sends it.
      recorded.held.clear()
      yield* TestClock.setTime(start + 2 * lease)
      assert.strictEqual(yield* Callbacks.runDue(), 1)
      yield* createdDeliveredOnce(transport, payment.id)
    }).pipe(Effect.provide(kit)))

  it.effect("one left waiting in the engine past its lease is sent by the pass that claims it, in order with the payment's later events, and not by the engine", () =>
    Effect.gen(function*() {
      const { principal, transport, recorded } = yield* setup
      const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "o-1" })
      const handed = recorded.taken[0]!.items[0]!
      yield* Payments.settle(payment.id, "paid")
      yield* TestClock.setTime(start + lease)
      assert.strictEqual(yield* Callbacks.runDue(), 2)
      assert.deepStrictEqual(eventTypes(transport), ["payment.created", "payment.paid"])
      assert.isFalse(yield* Callbacks.sendHanded(handed))
      assert.deepStrictEqual(eventTypes(transport), ["payment.created", "payment.paid"])
    }).pipe(Effect.provide(kit)))

  it.effect("while the engine does not accept, the delivery is due at once and a pass sends it", () =>
    Effect.gen(function*() {
      const { principal, transport, recorded } = yield* setup
      recorded.accepting = false
      const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "o-1", test: true })
      const [delivery] = yield* deliveriesOf(payment.id)
      assert.strictEqual(delivery!.nextAttemptAt, start)
      assert.isNull(delivery!.sendingAt)
      assert.deepStrictEqual(recorded.taken, [])
      assert.strictEqual(yield* Callbacks.runDue(), 1)
      assert.deepStrictEqual(eventTypes(transport), ["payment.created"])
    }).pipe(Effect.provide(kit)))

  it.effect("a creation that rolls back or replays hands nothing off; one inside a transaction hands off after its commit", () =>
    Effect.gen(function*() {
      const { merchant, principal, recorded } = yield* setup
      const failingKeys = IdempotencyStore.of({ ...(yield* IdempotencyStore), insert: () => Effect.die(new Error("disk full")) })
      const exit = yield* Effect.exit(
        Payments.create(principal, { amount: "10", orderId: "half", test: true, idempotencyKey: "half-key" }).pipe(
          Effect.provideService(IdempotencyStore, failingKeys)
        )
      )
      assert.strictEqual(exit._tag, "Failure")
      assert.isTrue(Option.isNone(yield* (yield* PaymentRepository).findByOrderId(merchant.terminal.id, "sandbox", "half")))
      assert.deepStrictEqual(recorded.taken, [])

      // With an idempotency key the creation runs in a transaction: handed off after its commit.
      const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "keyed", test: true, idempotencyKey: "k-1" })
      assert.strictEqual(recorded.taken.length, 1)
      assert.isFalse(recorded.taken[0]!.inTransaction)
      assert.deepStrictEqual(recorded.taken[0]!.stored, [true])
      assert.strictEqual(recorded.taken[0]!.items[0]!.event.paymentId, payment.id)

      const replay = yield* Payments.create(principal, { amount: "10", orderId: "keyed", test: true, idempotencyKey: "k-1" })
      assert.isFalse(replay.created)
      const again = yield* Payments.create(principal, { amount: "10", orderId: "keyed", test: true })
      assert.isFalse(again.created)
      assert.strictEqual(recorded.taken.length, 1)
    }).pipe(Effect.provide(kit)))

  it.effect("a payment's later events are not handed off, and a pass sends them after its handed-off first one", () =>
    Effect.gen(function*() {
      const { principal, transport, recorded } = yield* setup
      const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "o-1" })
      const handed = recorded.taken[0]!.items[0]!
      const held = yield* Deferred.make<void>()
      recorded.holding.set(payment.id, held)
      yield* Payments.settle(payment.id, "paid")
      assert.strictEqual(recorded.taken.length, 1)
      const [, paid] = yield* deliveriesOf(payment.id)
      assert.strictEqual(paid!.nextAttemptAt, start)

      // The pass claims payment.paid but waits until the engine has sent payment.created.
      const pass = yield* Effect.forkChild(Callbacks.runDue())
      yield* Effect.yieldNow
      yield* Effect.yieldNow
      assert.strictEqual(transport.requests.length, 0)
      assert.isTrue(yield* Callbacks.sendHanded(handed))
      yield* Deferred.succeed(held, undefined)
      assert.strictEqual(yield* Fiber.join(pass), 1)
      assert.deepStrictEqual(eventTypes(transport), ["payment.created", "payment.paid"])
    }).pipe(Effect.provide(kit)))

  it.effect("a charge's new payment hands its payment.paid off after the booking commits", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal, transport, recorded } = yield* setup
      recorded.accepting = false
      const { subscription } = yield* Subscriptions.create(principal, {
        idempotencyKey: "key-1",
        terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "1500,00"
      })
      const confirmed = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
      yield* Payments.settle(Option.getOrThrow(confirmed.firstPayment).id, "paid")
      yield* Work.drain()
      recorded.accepting = true
      yield* transport.clearRequests()
      assert.deepStrictEqual(recorded.taken, [])
      yield* TestClock.setTime(Date.parse("2026-07-01T12:00:00.000Z"))
      assert.strictEqual(yield* Subscriptions.runDueCharges(), 1)
      assert.strictEqual(recorded.taken.length, 1)
      assert.isFalse(recorded.taken[0]!.inTransaction)
      assert.deepStrictEqual(recorded.taken[0]!.stored, [true])
      assert.strictEqual(recorded.taken[0]!.items[0]!.event.eventType, "payment.paid")
      assert.isTrue(yield* Callbacks.sendHanded(recorded.taken[0]!.items[0]!))
      assert.deepStrictEqual(eventTypes(transport), ["payment.paid"])
    }).pipe(Effect.provide(kit)))

  it.effect("a payment on a test clock is never handed off", () =>
    Effect.gen(function*() {
      const { principal, recorded } = yield* setup
      const clock = yield* TestClocks.create(principal, { frozenTime: "2026-01-01T00:00:00Z" })
      const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "on-clock", test: true, testClock: clock.id })
      assert.deepStrictEqual(recorded.taken, [])
      const [delivery] = yield* deliveriesOf(payment.id)
      assert.isNull(delivery!.sendingAt)
    }).pipe(Effect.provide(kit)))

  it.effect("without the port, nothing changes: due at once, sent by a pass", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(start)
      const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/cb" })
      const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
      const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "o-1", test: true })
      const [delivery] = yield* deliveriesOf(payment.id)
      assert.strictEqual(delivery!.nextAttemptAt, start)
      assert.strictEqual(yield* Callbacks.runDue(), 1)
    }).pipe(Effect.provideService(PaydeskConfig, Config.defaults), Effect.provide(Kit.layer)))
})
