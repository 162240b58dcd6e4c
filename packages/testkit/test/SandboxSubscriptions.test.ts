import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { Instant, LedgerRepository, Payments, Subscription, Subscriptions, Work } from "@paydesk/core"
import { AcquirerEmulator, Kit, RecordingCallbackTransport } from "@paydesk/testkit"
import { anchor, monthlyDates, reload, setup } from "./SubscriptionSupport.js"

const createSandbox = Effect.gen(function*() {
  const { merchant, plans, principal } = yield* setup()
  const { subscription } = yield* Subscriptions.create(principal, {
    idempotencyKey: "sandbox-1",
    terminalId: merchant.terminal.id,
    planId: plans.ceilingMonthly.id,
    amount: "700",
    test: true
  })
  return { merchant, plans, principal, subscription }
})

describe("Sandbox subscriptions", () => {
  it.effect("run on the sandbox acquirer the merchant programs: sandbox payments, X-Test-Mode callbacks, no balance, the live bank untouched", () =>
    Effect.gen(function*() {
      const { merchant, principal, subscription } = yield* createSandbox
      assert.deepStrictEqual([subscription.environment, Subscription.stateOf(subscription)], ["sandbox", "new/consent_pending"])
      const confirmed = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
      const first = Option.getOrThrow(confirmed.firstPayment)
      assert.deepStrictEqual([first.environment, first.paymentMethod, first.qrPayload], ["sandbox", "sbp_test", `sandbox-qr:${first.id}`])
      // The payer page's simulate buttons pay it (processing first, then paid).
      yield* Payments.simulate(first.payToken, { outcome: "processing", csrfToken: first.csrfToken })
      assert.strictEqual(Subscription.stateOf(yield* reload(subscription.id)), "new/pending")
      yield* Payments.simulate(first.payToken, { outcome: "paid", csrfToken: first.csrfToken })
      assert.strictEqual(Subscription.stateOf(yield* reload(subscription.id)), "active/enabled")
      yield* Subscriptions.programSandboxCharges(principal, subscription.id, ["paid", "failed"])
      for (const due of monthlyDates.slice(0, 2)) {
        yield* TestClock.setTime(due)
        yield* Work.drain()
      }
      const sub = yield* reload(subscription.id)
      assert.deepStrictEqual([Subscription.stateOf(sub), sub.successfulCycles], ["active/review", 2])
      const history = yield* Subscriptions.charges(principal, subscription.id)
      assert.deepStrictEqual(history.map((c) => [c.cycleNumber, c.status]), [[2, "fail"], [1, "payed"], [0, "payed"]])
      const charged = (yield* Payments.get(principal, history[1]!.paymentId!))
      assert.deepStrictEqual([charged.environment, charged.status, charged.settlement], ["sandbox", "paid", null])
      // Every callback is a test one; the balance never moved; the live bank saw nothing.
      const callbacks = (yield* RecordingCallbackTransport.RecordingCallbackTransport).requests
      assert.isTrue(callbacks.length >= 3)
      assert.isTrue(callbacks.every((r) => r.headers["x-test-mode"] === "true" && JSON.parse(r.body).test === true))
      assert.deepStrictEqual(yield* (yield* LedgerRepository).balance(merchant.terminal.id), { rubPending: 0n, usdtAvailable: 0n, usdtHold: 0n })
      const live = yield* AcquirerEmulator.AcquirerEmulator
      assert.deepStrictEqual([live.charges.length, live.payments.size, live.stops.length], [0, 0, 0])
      // Stop goes to the sandbox acquirer as well.
      assert.strictEqual(Subscription.stateOf(yield* Subscriptions.stop(principal, subscription.id)), "stop/stopped")
      assert.strictEqual(live.stops.length, 0)
      // A stopped subscription is never charged again: programming its outcomes is a 409, not a silent 200.
      const late = yield* Effect.flip(Subscriptions.programSandboxCharges(principal, subscription.id, ["paid"]))
      assert.deepStrictEqual([late._tag, late.message],
        ["InvalidTransition", "charge outcomes cannot be programmed: the subscription is stop/stopped and will not be charged again"])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a stopped subscription's first payment, still open in the payer's tab, cannot be paid there", () =>
    Effect.gen(function*() {
      const { principal, subscription } = yield* createSandbox
      const confirmed = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
      const first = Option.getOrThrow(confirmed.firstPayment)
      assert.strictEqual(Subscription.stateOf(yield* Subscriptions.stop(principal, subscription.id)), "stop/stopped")
      assert.strictEqual((yield* Payments.get(principal, first.id)).status, "expired")
      const refused = yield* Effect.flip(Payments.simulate(first.payToken, { outcome: "paid", csrfToken: first.csrfToken }))
      assert.strictEqual(refused._tag, "InvalidTransition")
      const sub = yield* reload(subscription.id)
      assert.deepStrictEqual([Subscription.stateOf(sub), sub.successfulCycles], ["stop/stopped", 0])
      assert.deepStrictEqual(yield* Subscriptions.charges(principal, subscription.id), [])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("are listed apart from live ones; outcomes can be programmed for sandbox subscriptions only", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal, subscription } = yield* createSandbox
      const { subscription: live } = yield* Subscriptions.create(principal, {
        idempotencyKey: "live-1", terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "700"
      })
      assert.deepStrictEqual((yield* Subscriptions.list(principal, {})).items.map((s) => s.id), [live.id])
      assert.deepStrictEqual((yield* Subscriptions.list(principal, { environment: "sandbox" })).items.map((s) => s.id), [subscription.id])
      assert.strictEqual((yield* Subscriptions.list(principal, { environment: "all" })).total, 2)
      const refused = yield* Effect.flip(Subscriptions.programSandboxCharges(principal, live.id, ["failed"]))
      assert.strictEqual(refused.message, "charge outcomes can be programmed for sandbox subscriptions only")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a deployment without a sandbox acquirer refuses them with a clear 400, creating nothing", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal } = yield* setup()
      const error = yield* Effect.flip(Subscriptions.create(principal, {
        idempotencyKey: "k", terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "10", test: true
      }))
      assert.deepStrictEqual([error._tag, error.message], ["InvalidRequest", "sandbox subscriptions are not available in this deployment"])
      assert.strictEqual((yield* Subscriptions.list(principal, { environment: "all" })).total, 0)
    }).pipe(Effect.provide(Kit.layerWithoutSandbox)))
})

describe("Upcoming charges", () => {
  it.effect("previews the dates the schedule then charges: 28 Feb, 31 Mar, 30 Apr at 10:00 Moscow time after 31 January", () =>
    Effect.gen(function*() {
      const { principal, subscription } = yield* createSandbox
      assert.deepStrictEqual(yield* Subscriptions.upcoming(principal, subscription.id), [])
      const { firstPayment } = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
      const first = Option.getOrThrow(firstPayment)
      yield* Payments.simulate(first.payToken, { outcome: "paid", csrfToken: first.csrfToken })
      const preview = yield* Subscriptions.upcoming(principal, subscription.id, 3)
      assert.deepStrictEqual(preview.map((p) => [p.cycleNumber, p.scheduledAt, p.amount]), [
        [1, monthlyDates[0], 70_000n], [2, monthlyDates[1], 70_000n], [3, monthlyDates[2], 70_000n]
      ])
      assert.deepStrictEqual(preview.map((p) => Instant.formatIso(p.scheduledAt)), ["2026-02-28T07:00:00.000Z", "2026-03-31T07:00:00.000Z", "2026-04-30T07:00:00.000Z"])
      for (const [i, due] of monthlyDates.slice(0, 3).entries()) {
        yield* TestClock.setTime(due)
        yield* Work.drain()
        const charges = yield* Subscriptions.charges(principal, subscription.id)
        assert.strictEqual(charges[0]!.scheduledAt, preview[i]!.scheduledAt)
      }
      assert.strictEqual((yield* Effect.flip(Subscriptions.upcoming(principal, subscription.id, 0)))._tag, "InvalidRequest")
      assert.strictEqual(anchor, Date.parse("2026-01-31T07:00:00.000Z"))
    }).pipe(Effect.provide(Kit.layer)))
})
