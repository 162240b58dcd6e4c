/**
 * The operator's moves on payments and payouts under an `Idempotency-Key`: a repeat of the key for
 * the same move (a retry after a lost answer) answers the object as it is now and moves nothing
 * (no second event, no second ledger entry); the key used for another move, object or reason is
 * `IdempotencyConflict`; a malformed key is refused before anything moves; a move that failed stored
 * no key; without a key a repeat is `InvalidTransition`, as before.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { type Callback, IdempotencyStore, LedgerRepository, OutboxRepository, PaymentRepository, Payments, Payouts, Work } from "@paydesk/core"
import { Kit, PayoutNetworkEmulator } from "@paydesk/testkit"

const setup = Effect.gen(function*() {
  yield* TestClock.setTime(Date.parse("2026-04-01T09:00:00.000Z"))
  const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/cb" })
  const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
  /** A paid live payment of `amount` roubles (95.00 RUB/USDT). */
  const paid = (orderId: string, amount = "9500") =>
    Effect.gen(function*() {
      const { payment } = yield* Payments.create(principal, { amount, orderId })
      return yield* Payments.settle(payment.id, "paid")
    })
  return { merchant, principal, paid }
})

const eventsOf = (eventType: Callback.EventType) =>
  Effect.map(Effect.flatMap(OutboxRepository, (outbox) => outbox.listEvents({})), (events) => events.filter((e) => e.eventType === eventType).length)

const statusOf = (paymentId: string) =>
  Effect.map(Effect.flatMap(PaymentRepository, (payments) => payments.get(paymentId)), (found) => found._tag === "Some" ? found.value.status : null)

describe("operator moves with an Idempotency-Key", () => {
  it.effect("a refund repeated with its key answers the refunded payment and refunds once; another move or payment with the key is a conflict", () =>
    Effect.gen(function*() {
      const { merchant, paid } = yield* setup
      const payment = yield* paid("r-1")
      const first = yield* Payments.refund(`pay_${payment.id}`, { idempotencyKey: "refund-r-1" })
      assert.strictEqual(first.status, "refunded")
      const ledger = yield* LedgerRepository
      const balance = yield* ledger.balance(merchant.terminal.id)
      const again = yield* Payments.refund(payment.id, { idempotencyKey: "refund-r-1" })
      assert.deepStrictEqual(again, first)
      assert.deepStrictEqual(yield* ledger.balance(merchant.terminal.id), balance)
      assert.strictEqual(yield* eventsOf("payment.refunded"), 1)
      assert.strictEqual(yield* eventsOf("refund_request.completed"), 1)
      // Without the key a repeat is the state conflict it always was.
      assert.strictEqual((yield* Effect.flip(Payments.refund(payment.id)))._tag, "InvalidTransition")
      // The key for a chargeback of the same payment, or for a refund of another: 409, nothing moved.
      const other = yield* paid("r-2")
      assert.strictEqual((yield* Effect.flip(Payments.chargeback(payment.id, { idempotencyKey: "refund-r-1" })))._tag, "IdempotencyConflict")
      assert.strictEqual((yield* Effect.flip(Payments.refund(other.id, { idempotencyKey: "refund-r-1" })))._tag, "IdempotencyConflict")
      assert.strictEqual(yield* statusOf(other.id), "paid")
      // A key of the payment's own chargeback works as the refund's did.
      const charged = yield* Payments.chargeback(other.id, { idempotencyKey: "cb-r-2" })
      assert.strictEqual(charged.status, "chargeback")
      assert.deepStrictEqual(yield* Payments.chargeback(other.id, { idempotencyKey: "cb-r-2" }), charged)
      assert.strictEqual(yield* eventsOf("payment.chargeback"), 1)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a move that failed stores no key: the same key works once the move can be made", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const { payment } = yield* Payments.create(principal, { amount: "190", orderId: "unpaid" })
      assert.strictEqual((yield* Effect.flip(Payments.refund(payment.id, { idempotencyKey: "early" })))._tag, "InvalidTransition")
      yield* Payments.settle(payment.id, "paid")
      assert.strictEqual((yield* Payments.refund(payment.id, { idempotencyKey: "early" })).status, "refunded")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a malformed key is refused before anything moves", () =>
    Effect.gen(function*() {
      const { paid } = yield* setup
      const payment = yield* paid("bad-key")
      for (const key of ["", "x".repeat(129), "with space", "ключ"]) {
        const error = yield* Effect.flip(Payments.refund(payment.id, { idempotencyKey: key }))
        assert.strictEqual(error._tag, "InvalidRequest", key)
        assert.strictEqual(error._tag === "InvalidRequest" ? error.field : null, "Idempotency-Key")
      }
      assert.strictEqual((yield* Effect.flip(Payouts.approve(crypto.randomUUID(), { idempotencyKey: "with space" })))._tag, "InvalidRequest")
      assert.strictEqual(yield* statusOf(payment.id), "paid")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("an approval repeated with its key answers the payout as it is now and sends it once; a rejection's key is bound to its reason", () =>
    Effect.gen(function*() {
      const { merchant, principal, paid } = yield* setup
      yield* paid("fund")
      const request = { walletAddress: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" } as const
      const { payout } = yield* Payouts.create(principal, { ...request, amountUsdt: "40" })
      const approved = yield* Payouts.approve(`po_${payout.id}`, { idempotencyKey: "approve-1" })
      assert.strictEqual(approved.status, "processing")
      yield* Work.drain()
      // The retry after a lost answer: the payout as it is now (sent since), no second approval.
      const again = yield* Payouts.approve(payout.id, { idempotencyKey: "approve-1" })
      assert.strictEqual(again.status, "completed")
      yield* Work.drain()
      assert.strictEqual((yield* PayoutNetworkEmulator.PayoutNetworkEmulator).sends.length, 1)
      assert.strictEqual((yield* Effect.flip(Payouts.approve(payout.id)))._tag, "InvalidTransition")

      const { payout: second } = yield* Payouts.create(principal, { ...request, amountUsdt: "10" })
      assert.strictEqual((yield* Effect.flip(Payouts.reject(second.id, "sanctions", { idempotencyKey: "approve-1" })))._tag, "IdempotencyConflict")
      const rejected = yield* Payouts.reject(second.id, "sanctions", { idempotencyKey: "reject-2" })
      assert.strictEqual(rejected.status, "rejected")
      const ledger = yield* LedgerRepository
      const balance = yield* ledger.balance(merchant.terminal.id)
      assert.deepStrictEqual(yield* Payouts.reject(second.id, "sanctions", { idempotencyKey: "reject-2" }), rejected)
      // The hold went back once.
      assert.deepStrictEqual(yield* ledger.balance(merchant.terminal.id), balance)
      assert.strictEqual((yield* Effect.flip(Payouts.reject(second.id, "another reason", { idempotencyKey: "reject-2" })))._tag, "IdempotencyConflict")
      assert.strictEqual((yield* Effect.flip(Payouts.reject(second.id, null, { idempotencyKey: "reject-2" })))._tag, "IdempotencyConflict")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a key is kept 24 hours: after that the repeat is a new move (409 once the object has moved)", () =>
    Effect.gen(function*() {
      const { merchant, paid } = yield* setup
      const payment = yield* paid("kept")
      yield* Payments.refund(payment.id, { idempotencyKey: "day-old" })
      const store = yield* IdempotencyStore
      const stored = yield* store.find(merchant.terminal.id, "operator", "day-old")
      assert.strictEqual(stored._tag, "Some")
      yield* TestClock.adjust("24 hours")
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* Effect.flip(Payments.refund(payment.id, { idempotencyKey: "day-old" })))._tag, "InvalidTransition")
    }).pipe(Effect.provide(Kit.layer)))
})
