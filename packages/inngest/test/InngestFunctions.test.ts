import { assert, describe, it } from "@effect/vitest"
import { InngestTestEngine } from "@inngest/test"
import { createHash, randomBytes } from "node:crypto"
import { inject } from "vitest"
import { PgStore } from "@paydesk/sql-pg"
import { Clock, Effect, Layer, ManagedRuntime, Option } from "effect"
import {
  Acquirer,
  ChargeRepository,
  Instant,
  OutboxRepository,
  PaymentRepository,
  Payments,
  PayoutRepository,
  Payouts,
  Subscription,
  SubscriptionRepository,
  Subscriptions
} from "@paydesk/core"
import { AcquirerEmulator, Kit, RecordingCallbackTransport } from "@paydesk/testkit"
import * as InngestClient from "../src/InngestClient.js"
import * as InngestFunctions from "../src/InngestFunctions.js"

/** Inngest keys step state by the SHA-1 of the step id. */
const hashId = (id: string) => createHash("sha1").update(id).digest("hex")

/** The ids of the steps a run reported, in order, given the ids it may use. */
const stepSequence = (state: Record<string, unknown>, ids: ReadonlyArray<string>) => {
  const byHash = new Map(ids.map((id) => [hashId(id), id]))
  return Object.keys(state).map((hash) => byHash.get(hash) ?? hash)
}

/** A sleep mocked as a step that returns at once: an unmocked sleep never ends in the test engine. */
const wokenUp = (id: string) => [{ id, handler: () => undefined }]

const callbackUrl = "https://shop.example/cb"

/** The stores the functions are tested on: memory, and a fresh database on each Postgres target. */
const stores: ReadonlyArray<{ readonly name: string; layer(): Layer.Layer<Kit.Services> }> = [
  { name: "memory", layer: () => Kit.layer },
  ...inject("pgTargets").map((target) => ({
    name: `postgres (${target.name})`,
    layer: () =>
      Layer.unwrap(Effect.map(
        PgStore.createDatabase(target.url, `${inject("pgPrefix")}inngest_${randomBytes(4).toString("hex")}`),
        (url) => Kit.layerAround(PgStore.layer(url, { maxConnections: 4 }))
      )) as unknown as Layer.Layer<Kit.Services>
  }))
]

for (const store of stores) {
  /** A fresh Paydesk on the store with the functions on its runtime. */
  const setup = () => {
    const runtime = ManagedRuntime.make(store.layer())
    const client = InngestClient.makeClient({ isDev: true })
    const functions = InngestFunctions.makeFunctions(client, runtime)
    const run = <A, E>(effect: Effect.Effect<A, E, Kit.Services>) => runtime.runPromise(effect)
    return { runtime, functions, run }
  }

  /** A merchant with an active, consented and paid subscription whose next charge was due a minute ago. */
  const dueSubscription = Effect.gen(function*() {
    const merchant = yield* Kit.provisionMerchant({ callbackUrl })
    const plans = yield* Kit.provisionPlans(merchant.terminal.id)
    const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
    const { subscription } = yield* Subscriptions.create(principal, {
      idempotencyKey: "key-1",
      terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "1500,00"
    })
    const confirmed = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
    yield* Payments.settle(Option.getOrThrow(confirmed.firstPayment).id, "paid")
    // The kit runs on the live clock: move the next charge into the past instead of moving time.
    const repo = yield* SubscriptionRepository
    const active = Option.getOrThrow(yield* repo.get(subscription.id))
    const due = (yield* Clock.currentTimeMillis) - 60_000
    yield* repo.update({ ...active, nextChargeAt: due, version: active.version + 1 })
    return { merchant, principal, subscription: active, due }
  })

  const reloadSubscription = (id: string) =>
    Effect.flatMap(SubscriptionRepository, (r) => r.get(id)).pipe(Effect.map(Option.getOrThrow))

  describe(`InngestFunctions on ${store.name}`, () => {
    it("charge-when-due sleeps until next_charge_at, then charges the subscription once", async () => {
      const { runtime, functions, run } = setup()
      try {
        const { principal, subscription, due } = await run(dueSubscription)
        assert.strictEqual(subscription.successfulCycles, 1)
        const nextChargeAt = Instant.formatIso(due)
        const engine = new InngestTestEngine({
          function: functions.chargeWhenDue,
          events: [InngestFunctions.Events.chargeScheduled.create({ subscription_id: subscription.id, next_charge_at: nextChargeAt })]
        })

        // First the run asks Inngest to sleep until the charge is due, and charges nothing yet.
        const sleep = await engine.executeStep("wait-for-charge")
        assert.strictEqual(sleep.step.op, "Sleep")
        assert.strictEqual(sleep.step.id, hashId("wait-for-charge"))
        assert.strictEqual(sleep.step.name, nextChargeAt)
        assert.strictEqual((await run(AcquirerEmulator.AcquirerEmulator)).charges.length, 0)

        // Woken up, it charges.
        const woken = await engine.execute({ steps: wokenUp("wait-for-charge") })
        assert.isUndefined(woken.error)
        assert.strictEqual(woken.result, true)
        assert.deepStrictEqual(stepSequence(woken.state, ["wait-for-charge", "charge"]), ["wait-for-charge", "charge"])
        assert.deepStrictEqual(woken.ctx.step.sleepUntil.mock.calls, [["wait-for-charge", nextChargeAt]])

        const emulator = await run(AcquirerEmulator.AcquirerEmulator)
        assert.strictEqual(emulator.charges.length, 1)
        assert.strictEqual(emulator.charges[0]!.subscriptionId, subscription.id)
        assert.strictEqual(emulator.charges[0]!.amount, 150_000n)
        const after = await run(reloadSubscription(subscription.id))
        assert.strictEqual(Subscription.stateOf(after), "active/enabled")
        assert.strictEqual(after.successfulCycles, 2)
        assert.isTrue(after.nextChargeAt !== null && after.nextChargeAt > Date.now())
        const charges = await run(Subscriptions.charges(principal, subscription.id))
        assert.strictEqual(charges.length, 2)
        assert.strictEqual(charges[0]!.status, "payed")
        assert.strictEqual(charges[0]!.scheduledAt, due)
        assert.isNotNull(charges[0]!.paymentId)

        // The same event again (a redelivery) charges nothing: the use case is idempotent.
        const replay = await new InngestTestEngine({
          function: functions.chargeWhenDue,
          events: [InngestFunctions.Events.chargeScheduled.create({ subscription_id: subscription.id, next_charge_at: nextChargeAt })]
        }).execute({ steps: wokenUp("wait-for-charge") })
        assert.strictEqual(replay.result, false)
        assert.strictEqual((await run(AcquirerEmulator.AcquirerEmulator)).charges.length, 1)
        assert.strictEqual((await run(reloadSubscription(subscription.id))).successfulCycles, 2)
      } finally {
        await runtime.dispose()
      }
    })

    it("deliver-when-due sleeps until next_attempt_at, then delivers the due callbacks", async () => {
      const { runtime, functions, run } = setup()
      try {
        const { merchant, subscription } = await run(dueSubscription)
        await run(Subscriptions.chargeOne(subscription.id))
        const pending = await run(Effect.flatMap(OutboxRepository, (o) =>
          o.listDeliveries({ terminalId: merchant.terminal.id, status: "pending", limit: 100 })))
        assert.isAbove(pending.length, 1)
        const delivery = pending[0]!
        const nextAttemptAt = Instant.formatIso(delivery.nextAttemptAt!)
        const engine = new InngestTestEngine({
          function: functions.deliverWhenDue,
          events: [InngestFunctions.Events.callbackScheduled.create({ delivery_id: delivery.id, next_attempt_at: nextAttemptAt })]
        })

        const sleep = await engine.executeStep("wait-for-attempt")
        assert.strictEqual(sleep.step.op, "Sleep")
        assert.strictEqual(sleep.step.name, nextAttemptAt)
        assert.strictEqual((await run(RecordingCallbackTransport.RecordingCallbackTransport)).requests.length, 0)

        const woken = await engine.execute({ steps: wokenUp("wait-for-attempt") })
        assert.isUndefined(woken.error)
        assert.strictEqual(woken.result, pending.length)
        assert.deepStrictEqual(stepSequence(woken.state, ["wait-for-attempt", "deliver"]), ["wait-for-attempt", "deliver"])
        assert.deepStrictEqual(woken.ctx.step.sleepUntil.mock.calls, [["wait-for-attempt", nextAttemptAt]])

        const requests = (await run(RecordingCallbackTransport.RecordingCallbackTransport)).requests
        assert.strictEqual(requests.length, pending.length)
        assert.isTrue(requests.every((r) => r.url === callbackUrl && r.headers["x-signature"] !== undefined))
        const paid = requests.map((r) => JSON.parse(r.body)).filter((b) => b.event_type === "payment.paid")
        assert.strictEqual(paid.length, 2, "the first payment and the recurring charge")
        const detail = await run(Effect.flatMap(OutboxRepository, (o) => o.getDelivery(delivery.id)).pipe(Effect.map(Option.getOrThrow)))
        assert.strictEqual(detail.status, "delivered")
        assert.strictEqual(detail.attempts, 1)
        assert.strictEqual(detail.lastStatusCode, 200)
        const left = await run(Effect.flatMap(OutboxRepository, (o) =>
          o.listDeliveries({ terminalId: merchant.terminal.id, status: "pending", limit: 100 })))
        assert.strictEqual(left.length, 0)
      } finally {
        await runtime.dispose()
      }
    })

    it("payout-when-due sends an approved payout at once, and it completes", async () => {
      const { runtime, functions, run } = setup()
      try {
        const payout = await run(Effect.gen(function*() {
          const merchant = yield* Kit.provisionMerchant({ callbackUrl })
          const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
          const { payment } = yield* Payments.create(principal, { amount: "9500", orderId: "fund" })
          yield* Payments.settle(payment.id, "paid")
          const { payout } = yield* Payouts.create(principal, { amountUsdt: "40", walletAddress: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" })
          return yield* Payouts.approve(payout.id)
        }))
        assert.strictEqual(payout.status, "processing")
        const out = await new InngestTestEngine({
          function: functions.payoutWhenDue,
          events: [InngestFunctions.Events.payoutDue.create({ payout_id: payout.id })]
        }).execute()
        assert.isUndefined(out.error)
        assert.deepStrictEqual(stepSequence(out.state, ["run-due-payouts"]), ["run-due-payouts"])
        assert.strictEqual(out.result, 1)
        const after = await run(Effect.flatMap(PayoutRepository, (r) => r.get(payout.id)).pipe(Effect.map(Option.getOrThrow)))
        assert.strictEqual(after.status, "completed")
      } finally {
        await runtime.dispose()
      }
    })

    it("expire-when-due sleeps until expires_at, then expires the unpaid payment", async () => {
      const { runtime, functions, run } = setup()
      try {
        const payment = await run(Effect.gen(function*() {
          const merchant = yield* Kit.provisionMerchant({ callbackUrl })
          const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
          const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "order-1" })
          assert.strictEqual(payment.status, "created")
          const repo = yield* PaymentRepository
          const expiresAt = (yield* Clock.currentTimeMillis) - 1_000
          const past = { ...payment, expiresAt, version: payment.version + 1 }
          yield* repo.update(past)
          return past
        }))
        const expiresAt = Instant.formatIso(payment.expiresAt!)
        const engine = new InngestTestEngine({
          function: functions.expireWhenDue,
          events: [InngestFunctions.Events.paymentCreated.create({ payment_id: payment.id, expires_at: expiresAt })]
        })

        const sleep = await engine.executeStep("wait-for-expiry")
        assert.strictEqual(sleep.step.op, "Sleep")
        assert.strictEqual(sleep.step.name, expiresAt)
        const before = await run(Effect.flatMap(PaymentRepository, (r) => r.get(payment.id)).pipe(Effect.map(Option.getOrThrow)))
        assert.strictEqual(before.status, "created")

        const woken = await engine.execute({ steps: wokenUp("wait-for-expiry") })
        assert.isUndefined(woken.error)
        assert.strictEqual(woken.result, 1)
        assert.deepStrictEqual(stepSequence(woken.state, ["wait-for-expiry", "expire"]), ["wait-for-expiry", "expire"])
        const after = await run(Effect.flatMap(PaymentRepository, (r) => r.get(payment.id)).pipe(Effect.map(Option.getOrThrow)))
        assert.strictEqual(after.status, "expired")
      } finally {
        await runtime.dispose()
      }
    })

    it("each sweep runs on the minute cron and calls one use case in one step", async () => {
      const { runtime, functions, run } = setup()
      try {
        const { subscription } = await run(dueSubscription)
        const sweeps = [
          [functions.expirePayments, "sweep-expire-payments", "expire-payments", 0],
          [functions.dueCharges, "sweep-due-charges", "run-due-charges", 1],
          [functions.pendingStops, "sweep-pending-stops", "finish-pending-stops", 0],
          [functions.stoppedCharges, "sweep-stopped-charges", "settle-stopped-charges", 0],
          [functions.conversions, "sweep-conversions", "run-due-conversions", 0],
          [functions.payouts, "sweep-payouts", "run-due-payouts", 0],
          // The first payment's and the recurring charge's callbacks, plus subscription events.
          [functions.callbacks, "sweep-callbacks", "run-due-callbacks", undefined],
          [functions.housekeeping, "sweep-housekeeping", "housekeeping", undefined],
          [functions.testClocks, "sweep-test-clocks", "run-test-clocks", 0]
        ] as const
        for (const [fn, id, stepId, expected] of sweeps) {
          assert.strictEqual(fn.opts.id, id)
          assert.deepStrictEqual(fn.opts.triggers, [{ cron: InngestFunctions.sweepCron }])
          // One run at a time: a minute whose sweep finds the one before still running is skipped.
          assert.deepStrictEqual(fn.opts.singleton, { mode: "skip" }, id)
          const out = await new InngestTestEngine({
            function: fn,
            events: [{ name: "inngest/scheduled.timer", data: { cron: InngestFunctions.sweepCron } }]
          }).execute()
          assert.isUndefined(out.error, id)
          assert.deepStrictEqual(stepSequence(out.state, [stepId]), [stepId], id)
          assert.deepStrictEqual(out.ctx.step.run.mock.calls.map((c) => c[0]), [stepId], id)
          if (expected !== undefined) assert.strictEqual(out.result, expected, id)
        }
        assert.strictEqual((await run(reloadSubscription(subscription.id))).successfulCycles, 2)
        const requests = (await run(RecordingCallbackTransport.RecordingCallbackTransport)).requests
        assert.strictEqual(requests.map((r) => JSON.parse(r.body)).filter((b) => b.event_type === "payment.paid").length, 2)
        assert.deepStrictEqual(
          functions.all.map((f) => f.opts.id),
          [...sweeps.map(([, id]) => id), "charge-when-due", "deliver-when-due", "expire-when-due", "payout-when-due"]
        )
      } finally {
        await runtime.dispose()
      }
    })

    it("a use case's non-retryable error fails the step with NonRetriableError", async () => {
      const { runtime, functions, run } = setup()
      try {
        const out = await new InngestTestEngine({
          function: functions.chargeWhenDue,
          events: [InngestFunctions.Events.chargeScheduled.create({
            subscription_id: crypto.randomUUID(),
            next_charge_at: new Date().toISOString()
          })]
        }).execute({ steps: wokenUp("wait-for-charge") })
        assert.deepInclude(out.error, { name: "NonRetriableError", message: "NotFound: subscription not found" })
        assert.deepStrictEqual(out.ctx.step.run.mock.calls.map((c) => c[0]), ["charge"])
        assert.strictEqual((await run(AcquirerEmulator.AcquirerEmulator)).chargeCalls, 0)
      } finally {
        await runtime.dispose()
      }
    })

    it("a defect asks Inngest to retry, and the retried step charges once with the same idempotency key", async () => {
      let acquirerDown = true
      // The kit's acquirer, except that `charge` dies while `acquirerDown` (a connection reset).
      const flakyAcquirer = Layer.effect(Acquirer, Effect.map(Acquirer, (real) =>
        Acquirer.of({
          ...real,
          charge: (input) => Effect.suspend(() => acquirerDown ? Effect.die(new Error("connection reset by the acquirer")) : real.charge(input))
        })))
      const runtime = ManagedRuntime.make(flakyAcquirer.pipe(Layer.provideMerge(store.layer())))
      const run = <A, E>(effect: Effect.Effect<A, E, Kit.Services>) => runtime.runPromise(effect)
      const functions = InngestFunctions.makeFunctions(InngestClient.makeClient({ isDev: true }), runtime)
      try {
        const { principal, subscription, due } = await run(dueSubscription)
        const event = InngestFunctions.Events.chargeScheduled.create({
          subscription_id: subscription.id,
          next_charge_at: Instant.formatIso(due)
        })
        const failed = await new InngestTestEngine({ function: functions.chargeWhenDue, events: [event] })
          .execute({ steps: wokenUp("wait-for-charge") })
        assert.deepInclude(failed.error, { name: "RetryAfterError", message: "defect: connection reset by the acquirer" })
        // The attempt is recorded as pending (the merchant view hides it) and nothing was charged.
        const pending = await run(Effect.flatMap(ChargeRepository, (r) => r.listBySubscription(subscription.id, 10)))
        assert.deepStrictEqual(pending.map((c) => c.status), ["pending", "payed"])
        assert.strictEqual((await run(AcquirerEmulator.AcquirerEmulator)).charges.length, 0)

        // Inngest runs the step again once the acquirer is back.
        acquirerDown = false
        const retried = await new InngestTestEngine({ function: functions.chargeWhenDue, events: [event] })
          .execute({ steps: wokenUp("wait-for-charge") })
        assert.isUndefined(retried.error)
        assert.strictEqual(retried.result, true)
        const emulator = await run(AcquirerEmulator.AcquirerEmulator)
        assert.strictEqual(emulator.charges.length, 1)
        assert.strictEqual(emulator.charges[0]!.idempotencyKey, pending[0]!.idempotencyKey)
        const charges = await run(Subscriptions.charges(principal, subscription.id))
        assert.deepStrictEqual(charges.map((c) => c.status), ["payed", "payed"])
        assert.strictEqual((await run(reloadSubscription(subscription.id))).successfulCycles, 2)
      } finally {
        await runtime.dispose()
      }
    })
  })
}
