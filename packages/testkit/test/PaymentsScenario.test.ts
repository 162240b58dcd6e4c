import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import {
  Amount,
  LedgerRepository,
  OutboxRepository,
  PaymentRepository,
  Payments,
  Signature,
  Terminals,
  Views,
  Work
} from "@paydesk/core"
import { AcquirerEmulator, Kit, MemoryRateSource, RecordingCallbackTransport } from "@paydesk/testkit"

const start = Date.parse("2026-03-10T09:00:00.000Z")

const setup = Effect.gen(function*() {
  yield* TestClock.setTime(start)
  const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/cb" })
  const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
  return { merchant, principal }
})

const callbacks = Effect.map(RecordingCallbackTransport.RecordingCallbackTransport, (t) => t.requests)

describe("Payments scenarios", () => {
  it.effect("a sandbox payment simulated paid sends payment.created then payment.paid, signed", () =>
    Effect.gen(function*() {
      const { merchant, principal } = yield* setup
      const { payment, created } = yield* Payments.create(principal, {
        amount: "1000,5",
        orderId: "ord-1001",
        description: "Coffee beans",
        metadata: { cart: 42 },
        test: true
      })
      assert.isTrue(created)
      assert.strictEqual(payment.environment, "sandbox")
      assert.strictEqual(payment.paymentMethod, "sbp_test")
      const view = Views.payment(payment, "http://127.0.0.1:8080")
      assert.strictEqual(view.amount, "1000.50")
      assert.strictEqual(view.test, true)
      assert.match(view.pay_url, /^http:\/\/127\.0\.0\.1:8080\/public\/payments\/[A-Za-z0-9_-]{32}$/)

      yield* Payments.simulate(payment.payToken, { outcome: "paid", csrfToken: payment.csrfToken })
      const report = yield* Work.drain()
      assert.strictEqual(report.callbacks, 2)

      const sent = yield* callbacks
      assert.deepStrictEqual(sent.map((r) => JSON.parse(r.body).event_type), ["payment.created", "payment.paid"])
      for (const request of sent) {
        assert.strictEqual(request.url, "https://shop.example/cb")
        assert.strictEqual(request.headers["x-test-mode"], "true")
        assert.strictEqual(request.headers["x-timestamp"], String(start / 1000))
        const check = yield* Signature.verify({
          secret: merchant.signingSecret,
          timestamp: request.headers["x-timestamp"],
          body: request.body,
          signature: request.headers["x-signature"],
          nowSeconds: start / 1000
        })
        assert.deepStrictEqual(check, { ok: true })
      }
      assert.strictEqual(
        sent[1]!.body,
        JSON.stringify({
          event_type: "payment.paid",
          payment_id: `pay_${payment.id}`,
          order_id: "ord-1001",
          status: "paid",
          amount: "1000.50",
          currency: "RUB",
          test: true,
          metadata: { cart: 42 }
        })
      )
      // Sandbox never touches the balance.
      const balance = yield* (yield* LedgerRepository).balance(merchant.terminal.id)
      assert.deepStrictEqual(balance, { rubPending: 0n, usdtAvailable: 0n, usdtHold: 0n })
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a sandbox payment simulated failed is canceled with payment.canceled; final afterwards", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "o-2", test: true })
      const canceled = yield* Payments.simulate(payment.payToken, { outcome: "failed", csrfToken: payment.csrfToken })
      assert.strictEqual(canceled.status, "canceled")
      const again = yield* Effect.flip(Payments.simulate(payment.payToken, { outcome: "paid", csrfToken: payment.csrfToken }))
      assert.strictEqual(again._tag, "InvalidTransition")
      yield* Work.drain()
      const events = (yield* callbacks).map((r) => JSON.parse(r.body))
      assert.deepStrictEqual(events.map((e) => [e.event_type, e.status]), [["payment.created", "created"], ["payment.canceled", "canceled"]])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("simulate processing makes processing observable; paid completes it; callbacks carry no metadata when none was set", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "o-proc", test: true })
      const processing = yield* Payments.simulate(payment.payToken, { outcome: "processing", csrfToken: payment.csrfToken })
      assert.strictEqual(processing.status, "processing")
      assert.strictEqual((yield* Payments.get(principal, payment.id)).status, "processing")
      // Again is a no-op; then the outcome.
      assert.strictEqual((yield* Payments.simulate(payment.payToken, { outcome: "processing", csrfToken: payment.csrfToken })).status, "processing")
      assert.strictEqual((yield* Payments.simulate(payment.payToken, { outcome: "paid", csrfToken: payment.csrfToken })).status, "paid")
      const late = yield* Effect.flip(Payments.simulate(payment.payToken, { outcome: "processing", csrfToken: payment.csrfToken }))
      assert.strictEqual(late._tag, "InvalidTransition")
      yield* Work.drain()
      const events = (yield* callbacks).map((r) => JSON.parse(r.body))
      assert.deepStrictEqual(events.map((e) => e.event_type), ["payment.created", "payment.paid"])
      for (const event of events) assert.isFalse("metadata" in event, "metadata absent when not set at creation")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a live payment shows processing when the acquirer reports the payer started paying", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "live-proc" })
      assert.strictEqual((yield* Payments.settle(payment.id, "processing")).status, "processing")
      assert.strictEqual((yield* Payments.get(principal, payment.id)).status, "processing")
      assert.strictEqual((yield* Payments.settle(payment.id, "paid")).status, "paid")
      assert.strictEqual((yield* Effect.flip(Payments.settle(payment.id, "processing")))._tag, "InvalidTransition")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("simulation refuses live payments, wrong csrf tokens and unknown outcomes", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const { payment: live } = yield* Payments.create(principal, { amount: "10", orderId: "live-1" })
      const onLive = yield* Effect.flip(Payments.simulate(live.payToken, { outcome: "paid", csrfToken: live.csrfToken }))
      assert.strictEqual(onLive._tag, "OperationNotAllowed")
      const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "sb-1", test: true })
      const csrf = yield* Effect.flip(Payments.simulate(payment.payToken, { outcome: "paid", csrfToken: "nope" }))
      assert.strictEqual(csrf._tag, "CsrfRejected")
      const outcome = yield* Effect.flip(Payments.simulate(payment.payToken, { outcome: "maybe", csrfToken: payment.csrfToken }))
      assert.strictEqual(outcome._tag, "InvalidRequest")
      const unknown = yield* Effect.flip(Payments.simulate("no-such-token", { outcome: "paid", csrfToken: "x" }))
      assert.strictEqual(unknown._tag, "NotFound")
      assert.strictEqual((yield* Payments.get(principal, payment.id)).status, "created")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a live payment paid by the acquirer credits USDT at the rate, instant mode", () =>
    Effect.gen(function*() {
      const { merchant, principal } = yield* setup
      const { payment } = yield* Payments.create(principal, { amount: "950.00", orderId: "live-2" })
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      assert.isTrue(emulator.payments.has(payment.id))
      const paid = yield* Payments.settle(`pay_${payment.id}`, "paid")
      assert.strictEqual(paid.status, "paid")
      assert.deepStrictEqual(paid.settlement, { merchantAmount: 95_000n, usdt: 10_000_000n, rate: 95_000_000n, convertedAt: start })
      const balance = yield* (yield* LedgerRepository).balance(merchant.terminal.id)
      assert.strictEqual(balance.usdtAvailable, 10_000_000n)
      // A repeated confirmation changes nothing.
      yield* Payments.settle(payment.id, "paid")
      assert.strictEqual((yield* (yield* LedgerRepository).balance(merchant.terminal.id)).usdtAvailable, 10_000_000n)
      const events = yield* (yield* OutboxRepository).listEvents({ paymentId: payment.id })
      assert.deepStrictEqual(events.map((e) => e.eventType), ["payment.created", "payment.paid"])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("an unpaid payment expires with payment.expired; a late payment sends a second payment.paid", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const { payment } = yield* Payments.create(principal, { amount: "100", orderId: "late-1" })
      yield* TestClock.adjust("29 minutes")
      assert.strictEqual((yield* Work.drain()).expiredPayments, 0)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual((yield* Work.drain()).expiredPayments, 1)
      assert.strictEqual((yield* Payments.get(principal, payment.id)).status, "expired")
      yield* Payments.settle(payment.id, "paid")
      yield* Work.drain()
      const events = (yield* callbacks).map((r) => JSON.parse(r.body).event_type)
      assert.deepStrictEqual(events, ["payment.created", "payment.expired", "payment.paid"])
      assert.strictEqual((yield* Payments.get(principal, payment.id)).status, "paid")
      // Expiry is idempotent: running it again expires nothing.
      assert.strictEqual(yield* Payments.expireDue(), 0)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a sandbox payment past its lifetime, before the sweep expired it, is not paid from its page either", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const { payment } = yield* Payments.create(principal, { amount: "100", orderId: "past-lifetime", test: true })
      const started = (yield* Payments.create(principal, { amount: "100", orderId: "past-lifetime-2", test: true })).payment
      assert.strictEqual((yield* Payments.simulate(started.payToken, { outcome: "processing", csrfToken: started.csrfToken })).status, "processing")
      yield* TestClock.adjust("30 minutes")
      // One the payer started paying in time is not paid from its page past its lifetime either.
      assert.strictEqual((yield* Effect.flip(Payments.simulate(started.payToken, { outcome: "paid", csrfToken: started.csrfToken })))._tag, "InvalidTransition")
      // No sweep yet: still created, its lifetime over.
      assert.strictEqual((yield* Payments.get(principal, payment.id)).status, "created")
      const refused = yield* Effect.flip(Payments.simulate(payment.payToken, { outcome: "paid", csrfToken: payment.csrfToken }))
      assert.deepStrictEqual([refused._tag, refused.message], ["InvalidTransition", "the payment expired before it was paid: the payer page can no longer change it"])
      // Nor through processing (the page's other button), nor failed: nothing changes, the sweep expires it.
      for (const outcome of ["processing", "failed"]) {
        const other = yield* Effect.flip(Payments.simulate(payment.payToken, { outcome, csrfToken: payment.csrfToken }))
        assert.deepStrictEqual([other._tag, other.message], ["InvalidTransition", "the payment expired before it was paid: the payer page can no longer change it"])
      }
      assert.strictEqual((yield* Payments.get(principal, payment.id)).status, "created")
      assert.strictEqual((yield* Work.drain()).expiredPayments, 2)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("an expired sandbox payment's page no longer takes paid; the merchant's simulation is the late money", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const { payment } = yield* Payments.create(principal, { amount: "100", orderId: "late-page", test: true })
      yield* TestClock.adjust("30 minutes")
      assert.strictEqual((yield* Work.drain()).expiredPayments, 1)
      // A tab left open on the page: its buttons are stale, the payment expired before it was paid.
      const refused = yield* Effect.flip(Payments.simulate(payment.payToken, { outcome: "paid", csrfToken: payment.csrfToken }))
      assert.deepStrictEqual([refused._tag, refused.message],
        ["InvalidTransition", "the payment expired before it was paid: the payer page can no longer change it"])
      assert.strictEqual((yield* Payments.get(principal, payment.id)).status, "expired")
      // The merchant simulates the acquirer's late money (the spec's expired -> paid).
      assert.strictEqual((yield* Payments.simulateAsMerchant(principal, payment.id, "paid")).status, "paid")
      // Paid already: the page's paid is the usual no-op.
      assert.strictEqual((yield* Payments.simulate(payment.payToken, { outcome: "paid", csrfToken: payment.csrfToken })).status, "paid")
      yield* Work.drain()
      const events = (yield* callbacks).map((r) => JSON.parse(r.body).event_type)
      assert.deepStrictEqual(events, ["payment.created", "payment.expired", "payment.paid"])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a repeated order_id returns the first payment; other parameters conflict", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const first = yield* Payments.create(principal, { amount: "100.5", orderId: "dup" })
      const replay = yield* Payments.create(principal, { amount: "100,50", orderId: "dup" })
      assert.isFalse(replay.created)
      assert.strictEqual(replay.payment.id, first.payment.id)
      const conflict = yield* Effect.flip(Payments.create(principal, { amount: "101", orderId: "dup" }))
      assert.strictEqual(conflict._tag, "OrderIdConflict")
      // The same order id in sandbox is another payment.
      const sandbox = yield* Payments.create(principal, { amount: "100.5", orderId: "dup", test: true })
      assert.notStrictEqual(sandbox.payment.id, first.payment.id)
      const listed = yield* Payments.list(principal, { environment: "all" })
      assert.strictEqual(listed.total, 2)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("bad creation input is a clear 400 and writes nothing", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const cases: Array<[Payments.CreateInput, string]> = [
        [{ amount: "1000.505", orderId: "a" }, "AmountMalformed"],
        [{ amount: "-1", orderId: "a" }, "AmountMalformed"],
        [{ amount: "0", orderId: "a" }, "AmountNotPositive"],
        [{ amount: "1000000.01", orderId: "a" }, "InvalidRequest"],
        [{ amount: "10", orderId: "" }, "InvalidRequest"],
        [{ amount: "10", orderId: "x".repeat(129) }, "InvalidRequest"],
        [{ amount: "10", orderId: "a", currency: "USD" }, "InvalidRequest"],
        [{ amount: "10", orderId: "a", paymentMethod: "card" }, "InvalidRequest"],
        [{ amount: "10", orderId: "a", terminalId: crypto.randomUUID() }, "AccessDenied"]
      ]
      for (const [input, tag] of cases) {
        const error = yield* Effect.flip(Payments.create(principal, input))
        assert.strictEqual(error._tag, tag, JSON.stringify(input))
      }
      // Control characters (C0, DEL and C1, whose CSI begins a terminal's escape) and line separators.
      for (const orderId of ["a\u0001b", "a\nb", "a\u007fb", "a\u0085b", "a\u009b31mb", "a\u2028b", "a\u2029b"]) {
        const error = yield* Effect.flip(Payments.create(principal, { amount: "10", orderId, test: true }))
        assert.deepStrictEqual([error._tag, error.message], ["InvalidRequest", "order_id must be at most 128 characters without control characters"], JSON.stringify(orderId))
      }
      const listed = yield* Payments.list(principal, { environment: "all" })
      assert.strictEqual(listed.total, 0)
      assert.strictEqual((yield* (yield* OutboxRepository).listEvents({})).length, 0)
      // Any other text stays an order id: other scripts, symbols, a no-break space, a joiner.
      const kept = yield* Payments.create(principal, { amount: "10", orderId: "заказ №1 ✓ ½\u00a0\u200d", test: true })
      assert.strictEqual(kept.payment.orderId, "заказ №1 ✓ ½\u00a0\u200d")
      // Limits in characters count characters, not UTF-16 units: 128 emoji are 128 (a fuzz saw 65 refused).
      const emoji = yield* Payments.create(principal, { amount: "10", orderId: "😀".repeat(128), description: "😀".repeat(512), test: true })
      assert.strictEqual(emoji.payment.orderId, "😀".repeat(128))
      for (const input of [{ orderId: "😀".repeat(129) }, { orderId: "long-description", description: "😀".repeat(513) }]) {
        const error = yield* Effect.flip(Payments.create(principal, { amount: "10", test: true, ...input }))
        assert.strictEqual(error._tag, "InvalidRequest", JSON.stringify(input).slice(0, 40))
      }
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("operator refund emits refund_request.completed then payment.refunded and reverses the credit", () =>
    Effect.gen(function*() {
      const { merchant, principal } = yield* setup
      const { payment } = yield* Payments.create(principal, { amount: "190", orderId: "r-1" })
      yield* Payments.settle(payment.id, "paid")
      const refunded = yield* Payments.refund(payment.id)
      assert.strictEqual(refunded.status, "refunded")
      const balance = yield* (yield* LedgerRepository).balance(merchant.terminal.id)
      assert.strictEqual(balance.usdtAvailable, 0n)
      yield* Work.drain()
      const events = (yield* callbacks).map((r) => JSON.parse(r.body))
      assert.deepStrictEqual(
        events.map((e) => [e.event_type, e.status]),
        [["payment.created", "created"], ["payment.paid", "paid"], ["refund_request.completed", "refunded"], ["payment.refunded", "refunded"]]
      )
      const again = yield* Effect.flip(Payments.refund(payment.id))
      assert.strictEqual(again._tag, "InvalidTransition")
      const { payment: other } = yield* Payments.create(principal, { amount: "95", orderId: "cb-1" })
      yield* Payments.settle(other.id, "paid")
      assert.strictEqual((yield* Payments.chargeback(other.id)).status, "chargeback")
      assert.strictEqual((yield* (yield* LedgerRepository).balance(merchant.terminal.id)).usdtAvailable, 0n)
      const { payment: sandbox } = yield* Payments.create(principal, { amount: "95", orderId: "sb", test: true })
      yield* Payments.simulate(sandbox.payToken, { outcome: "paid", csrfToken: sandbox.csrfToken })
      assert.strictEqual((yield* Effect.flip(Payments.refund(sandbox.id)))._tag, "OperationNotAllowed")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("scheduled conversion credits USDT at the rate of the conversion time", () =>
    Effect.gen(function*() {
      const { merchant, principal } = yield* setup
      yield* Terminals.updateSettings(principal, merchant.terminal.id, { conversionMode: "scheduled", conversionTime: "18:00" })
      const { payment } = yield* Payments.create(principal, { amount: "1000", orderId: "conv-1" })
      yield* Payments.settle(payment.id, "paid")
      let balance = yield* (yield* LedgerRepository).balance(merchant.terminal.id)
      assert.deepStrictEqual(balance, { rubPending: 100_000n, usdtAvailable: 0n, usdtHold: 0n })
      const rates = yield* MemoryRateSource.MemoryRateSource
      // 18:00 Moscow is 15:00 UTC; the rate changes before that.
      yield* TestClock.setTime(Date.parse("2026-03-10T14:00:00.000Z"))
      yield* rates.set(80_000_000n, Date.parse("2026-03-10T14:00:00.000Z"))
      assert.strictEqual((yield* Work.drain()).conversions, 0)
      yield* TestClock.setTime(Date.parse("2026-03-10T15:00:00.000Z"))
      assert.strictEqual((yield* Work.drain()).conversions, 1)
      balance = yield* (yield* LedgerRepository).balance(merchant.terminal.id)
      assert.deepStrictEqual(balance, { rubPending: 0n, usdtAvailable: Amount.rubToUsdt(100_000n, 80_000_000n), usdtHold: 0n })
      assert.strictEqual(balance.usdtAvailable, 12_500_000n)
      const stored = yield* (yield* PaymentRepository).get(payment.id)
      assert.strictEqual(Option.getOrThrow(stored).settlement?.rate, 80_000_000n)
      // The next conversion is the next day at 18:00 Moscow time.
      assert.strictEqual((yield* Work.drain()).conversions, 0)
    }).pipe(Effect.provide(Kit.layer)))
})
