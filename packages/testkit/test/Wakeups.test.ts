import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import {
  Atomic,
  Callbacks,
  IdempotencyStore,
  OutboxRepository,
  PaymentRepository,
  Payments,
  PayoutRepository,
  Payouts,
  Subscription,
  SubscriptionRepository,
  Subscriptions,
  type Wakeup,
  Wakeups,
  Work,
  WriteConflict
} from "@paydesk/core"
import { Kit, MemoryDatabase, RecordingCallbackTransport } from "@paydesk/testkit"

/** One `notify` call: the wakeups, and what the store showed at that moment. */
interface Batch {
  readonly items: ReadonlyArray<Wakeup>
  /** Whether `notify` ran inside a transaction of the memory database. */
  readonly inTransaction: boolean
  /** Per wakeup: whether the committed store already holds the record with that due moment. */
  readonly visible: ReadonlyArray<boolean>
}

/** The batches a recording `Wakeups` adapter received. */
class Recorded extends Context.Service<Recorded, { readonly batches: Array<Batch> }>()("test/RecordedWakeups") {}

/** A `Wakeups` adapter that records every call and checks, from the store, that the writes are committed. */
const recording = Layer.effectContext(Effect.gen(function*() {
  const db = yield* MemoryDatabase.MemoryDatabase
  const payments = yield* PaymentRepository
  const outbox = yield* OutboxRepository
  const subscriptions = yield* SubscriptionRepository
  const payouts = yield* PayoutRepository
  const batches: Array<Batch> = []
  const visible = (w: Wakeup): Effect.Effect<boolean> => {
    switch (w.kind) {
      case "expiry":
        return Effect.map(payments.get(w.paymentId), (p) => Option.isSome(p) && p.value.expiresAt === w.at)
      case "delivery":
        return Effect.map(outbox.getDelivery(w.deliveryId), (d) => Option.isSome(d) && d.value.nextAttemptAt === w.at)
      case "charge":
        return Effect.map(subscriptions.get(w.subscriptionId), (s) => Option.isSome(s) && s.value.nextChargeAt === w.at)
      case "payout":
        return Effect.map(payouts.get(w.payoutId), (p) => Option.isSome(p) && (p.value.status === "created" || p.value.status === "processing"))
    }
  }
  const port = Wakeups.of({
    notify: (items) =>
      Effect.gen(function*() {
        const inTransaction = yield* db.inTransaction
        batches.push({ items: [...items], inTransaction, visible: yield* Effect.forEach(items, visible) })
      })
  })
  return Context.make(Wakeups, port).pipe(Context.add(Recorded, { batches }))
}))

/** The kit with the recording adapter. */
const kit = recording.pipe(Layer.provideMerge(Kit.layer))

const start = Date.parse("2026-06-01T12:00:00.000Z")
const callbackUrl = "https://shop.example/cb"

/** A merchant and its principal at `start`; the batches recorded so far are dropped. */
const setup = Effect.gen(function*() {
  yield* TestClock.setTime(start)
  const merchant = yield* Kit.provisionMerchant({ callbackUrl })
  const plans = yield* Kit.provisionPlans(merchant.terminal.id)
  const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
  const { batches } = yield* Recorded
  batches.length = 0
  return { merchant, plans, principal, batches }
})

/** Every recorded batch ran after its commit: outside the transaction, with the writes visible. */
const assertAfterCommit = (batches: ReadonlyArray<Batch>) => {
  for (const batch of batches) {
    assert.isFalse(batch.inTransaction)
    assert.deepStrictEqual(batch.visible, batch.items.map(() => true), JSON.stringify(batch.items))
  }
}

const deliveryIdsOf = (paymentId: string) =>
  Effect.gen(function*() {
    const outbox = yield* OutboxRepository
    const deliveries = yield* outbox.listDeliveries({ paymentId, limit: 10 })
    return deliveries.map((d) => d.id).reverse()
  })

describe("Wakeups", () => {
  it.effect("creating a payment notifies its expiry and its callback delivery once, after the commit", () =>
    Effect.gen(function*() {
      const { principal, batches } = yield* setup
      const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "o-1", test: true })
      assert.strictEqual(payment.expiresAt, start + 30 * 60_000)
      const [deliveryId] = yield* deliveryIdsOf(payment.id)
      assert.deepStrictEqual(batches.map((b) => b.items), [[
        { kind: "expiry", paymentId: payment.id, at: start + 30 * 60_000 },
        { kind: "delivery", deliveryId: deliveryId!, at: start }
      ]])
      assertAfterCommit(batches)

      // A replay of the same order_id writes nothing and notifies nothing.
      const replay = yield* Payments.create(principal, { amount: "10", orderId: "o-1", test: true })
      assert.isFalse(replay.created)
      assert.strictEqual(batches.length, 1)
    }).pipe(Effect.provide(kit)))

  it.effect("a failed callback attempt notifies the rescheduled delivery at its next attempt", () =>
    Effect.gen(function*() {
      const { principal, batches } = yield* setup
      const transport = yield* RecordingCallbackTransport.RecordingCallbackTransport
      yield* transport.failNext(1, { status: 500 })
      const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "o-1", test: true })
      const [deliveryId] = yield* deliveryIdsOf(payment.id)
      batches.length = 0

      yield* TestClock.setTime(start + 1_000)
      assert.strictEqual(yield* Callbacks.runDue(), 1)
      // The claim itself notifies nothing; the recorded failure reschedules 30 s after the attempt.
      assert.deepStrictEqual(batches.map((b) => b.items), [[{ kind: "delivery", deliveryId: deliveryId!, at: start + 1_000 + 30_000 }]])
      assertAfterCommit(batches)

      // A successful attempt ends the delivery: no wakeup.
      yield* TestClock.setTime(start + 31_000)
      assert.strictEqual(yield* Callbacks.runDue(), 1)
      assert.strictEqual(batches.length, 1)
      assert.strictEqual(transport.requests.length, 2)
    }).pipe(Effect.provide(kit)))

  it.effect("activation and every charge notify the subscription's next_charge_at", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal, batches } = yield* setup
      const { subscription } = yield* Subscriptions.create(principal, {
        idempotencyKey: "key-1",
        terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "1500,00"
      })
      // Created, waiting for consent: nothing is due yet.
      assert.deepStrictEqual(batches, [])

      const confirmed = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
      const first = Option.getOrThrow(confirmed.firstPayment)
      // Consent creates the first payment: it expires unless paid.
      assert.deepStrictEqual(
        batches.flatMap((b) => b.items).filter((w) => w.kind === "expiry"),
        [{ kind: "expiry", paymentId: first.id, at: start + 30 * 60_000 }]
      )
      batches.length = 0

      yield* Payments.settle(first.id, "paid")
      const active = yield* Effect.flatMap(SubscriptionRepository, (r) => r.get(subscription.id)).pipe(Effect.map(Option.getOrThrow))
      assert.strictEqual(Subscription.stateOf(active), "active/enabled")
      const firstCharge = Date.parse("2026-07-01T12:00:00.000Z")
      assert.strictEqual(active.nextChargeAt, firstCharge)
      assert.strictEqual(batches.length, 1, "one transaction, one notify")
      assert.deepStrictEqual(
        batches[0]!.items.filter((w) => w.kind === "charge"),
        [{ kind: "charge", subscriptionId: subscription.id, at: firstCharge }]
      )
      // The payment.paid callback is due at once, in the same batch.
      assert.deepStrictEqual(batches[0]!.items.filter((w) => w.kind !== "charge").map((w) => [w.kind, w.at]), [["delivery", start]])
      assertAfterCommit(batches)
      batches.length = 0

      // The scheduled charge moves next_charge_at one month on.
      yield* TestClock.setTime(firstCharge)
      assert.strictEqual(yield* Subscriptions.runDueCharges(), 1)
      const charged = yield* Effect.flatMap(SubscriptionRepository, (r) => r.get(subscription.id)).pipe(Effect.map(Option.getOrThrow))
      const secondCharge = Date.parse("2026-08-01T12:00:00.000Z")
      assert.strictEqual(charged.successfulCycles, 2)
      assert.strictEqual(charged.nextChargeAt, secondCharge)
      assert.deepStrictEqual(
        batches.flatMap((b) => b.items).filter((w) => w.kind === "charge"),
        [{ kind: "charge", subscriptionId: subscription.id, at: secondCharge }]
      )
      // The charge's payment is born paid: it never expires, so no expiry wakeup.
      assert.deepStrictEqual(batches.flatMap((b) => b.items).filter((w) => w.kind === "expiry"), [])
      assertAfterCommit(batches)
    }).pipe(Effect.provide(kit)))

  it.effect("a new payout and an approved one notify the worker at once", () =>
    Effect.gen(function*() {
      const { principal, batches } = yield* setup
      // 9500.00 RUB at the kit's rate funds 100 USDT.
      const { payment } = yield* Payments.create(principal, { amount: "9500", orderId: "fund" })
      yield* Payments.settle(payment.id, "paid")
      batches.length = 0
      const { payout } = yield* Payouts.create(principal, { amountUsdt: "40", walletAddress: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" })
      assert.deepStrictEqual(batches.map((b) => b.items), [[{ kind: "payout", payoutId: payout.id, at: start }]])
      assertAfterCommit(batches)
      batches.length = 0
      yield* Work.runDue() // submitted for approval: nothing for the worker until the operator decides
      assert.deepStrictEqual(batches.flatMap((b) => b.items).filter((w) => w.kind === "payout"), [])
      yield* Payouts.approve(payout.id)
      assert.deepStrictEqual(batches.map((b) => b.items), [[{ kind: "payout", payoutId: payout.id, at: start }]])
      assertAfterCommit(batches)
    }).pipe(Effect.provide(kit)))

  it.effect("a use case that rolls back notifies nothing", () =>
    Effect.gen(function*() {
      const { merchant, principal, batches } = yield* setup
      // The idempotency record fails after the payment with its event and delivery (and their
      // wakeups) were written in the same transaction.
      const failingKeys = IdempotencyStore.of({
        ...(yield* IdempotencyStore),
        insert: () => Effect.die(new Error("disk full"))
      })
      const exit = yield* Effect.exit(
        Payments.create(principal, { amount: "10", orderId: "half", test: true, idempotencyKey: "half-key" }).pipe(
          Effect.provideService(IdempotencyStore, failingKeys)
        )
      )
      assert.strictEqual(exit._tag, "Failure")
      assert.isTrue(Option.isNone(yield* (yield* PaymentRepository).findByOrderId(merchant.terminal.id, "sandbox", "half")))
      assert.deepStrictEqual(batches, [])

      // A typed failure after a wakeup was collected: rolled back, nothing notified.
      const failed = yield* Effect.exit(Atomic.atomic(Effect.gen(function*() {
        yield* Atomic.wakeup({ kind: "expiry", paymentId: "p", at: start })
        return yield* Effect.fail("refused" as const)
      })))
      assert.strictEqual(failed._tag, "Failure")
      assert.deepStrictEqual(batches, [])
    }).pipe(Effect.provide(kit)))

  it.effect("a retried attempt's wakeups are dropped; only the committed attempt's are notified", () =>
    Effect.gen(function*() {
      const { batches } = yield* setup
      let attempt = 0
      const result = yield* Atomic.atomic(Effect.gen(function*() {
        attempt++
        yield* Atomic.wakeup({ kind: "charge", subscriptionId: `attempt-${attempt}`, at: start + attempt })
        if (attempt < 3) return yield* new WriteConflict({ constraint: "test", message: "lost a race" })
        return attempt
      }))
      assert.strictEqual(result, 3)
      assert.deepStrictEqual(batches.map((b) => b.items), [[{ kind: "charge", subscriptionId: "attempt-3", at: start + 3 }]])
      assert.isFalse(batches[0]!.inTransaction)
    }).pipe(Effect.provide(kit)))

  it.effect("a nested atomic joins the outer transaction: one notify, after the outer commit", () =>
    Effect.gen(function*() {
      const { batches } = yield* setup
      const a: Wakeup = { kind: "expiry", paymentId: "a", at: start + 1 }
      const b: Wakeup = { kind: "delivery", deliveryId: "b", at: start + 2 }
      const c: Wakeup = { kind: "charge", subscriptionId: "c", at: start + 3 }
      const lost: Wakeup = { kind: "delivery", deliveryId: "lost", at: start + 4 }
      yield* Atomic.atomic(Effect.gen(function*() {
        yield* Atomic.wakeup(a)
        yield* Atomic.atomic(Atomic.wakeup(b))
        // The inner commit is only a savepoint: nothing is notified yet.
        assert.deepStrictEqual(batches, [])
        // A nested attempt that fails (and is recovered from) takes its wakeups back with its writes.
        const inner = yield* Effect.exit(Atomic.atomic(Effect.andThen(Atomic.wakeup(lost), Effect.fail("inner refused" as const))))
        assert.strictEqual(inner._tag, "Failure")
        yield* Atomic.wakeup(c)
        assert.deepStrictEqual(batches, [])
      }))
      assert.deepStrictEqual(batches.map((batch) => batch.items), [[a, b, c]])
      assert.isFalse(batches[0]!.inTransaction)
    }).pipe(Effect.provide(kit)))

  it.effect("outside a transaction a wakeup is notified at once", () =>
    Effect.gen(function*() {
      const { batches } = yield* setup
      const w: Wakeup = { kind: "charge", subscriptionId: "s", at: start }
      yield* Atomic.wakeup(w)
      assert.deepStrictEqual(batches.map((b) => b.items), [[w]])
    }).pipe(Effect.provide(kit)))

  it.effect("the port is optional: without it, use cases and wakeups run the same", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(start)
      const merchant = yield* Kit.provisionMerchant({ callbackUrl })
      const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
      assert.isTrue(Option.isNone(yield* Effect.serviceOption(Wakeups)))
      const { payment, created } = yield* Payments.create(principal, { amount: "10", orderId: "o-1", test: true })
      assert.isTrue(created)
      assert.strictEqual(payment.expiresAt, start + 30 * 60_000)
      yield* Atomic.wakeup({ kind: "charge", subscriptionId: "s", at: start })
      assert.strictEqual(yield* Callbacks.runDue(), 1)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a failing Wakeups adapter never fails the use case", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const broken = Wakeups.of({ notify: () => Effect.die(new Error("queue down")) })
      const { payment, created } = yield* Payments.create(principal, { amount: "10", orderId: "o-1", test: true }).pipe(
        Effect.provideService(Wakeups, broken)
      )
      assert.isTrue(created)
      assert.strictEqual(payment.status, "created")
      assert.isTrue(Option.isSome(yield* (yield* PaymentRepository).get(payment.id)))
    }).pipe(Effect.provide(kit)))
})
