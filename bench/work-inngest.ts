/**
 * Benchmark of the Inngest engine's functions on PostgreSQL: delivered callbacks per second to a
 * local receiver and due subscription charges per second, both through the cron sweeps and
 * through the event-driven flows (one run per event, 10 runs at once). A charge counts with its
 * payment, ledger entries and delivered callback, as in `bench:work`.
 *
 * No Inngest server can run on these machines, so the functions are executed in process by
 * `@inngest/test`'s engine: the numbers include the SDK's step machinery and our use cases, but
 * not Inngest's scheduling, queueing and HTTP round trips to `/api/inngest` (each step of a real
 * deployment is one more HTTP request). Compare with `bench:work` (the local engine).
 *
 *   ./run pnpm bench:inngest                 # embedded PostgreSQL (or DATABASE_URL)
 *   CALLBACKS=2000 SUBSCRIPTIONS=300 ./run pnpm bench:inngest
 */
import { InngestTestEngine } from "@inngest/test"
import { Clock, Effect, Layer, ManagedRuntime, Option, References } from "effect"
import { Config, PaydeskConfig, Payments, type Services, Subscriptions } from "@paydesk/core"
import { InngestClient, InngestFunctions } from "@paydesk/inngest"
import { HttpCallbackTransport } from "@paydesk/server"
import { NodeSecurity, PgStore } from "@paydesk/sql-pg"
import { ManualClock } from "@paydesk/emulators"
import { Kit } from "@paydesk/testkit"
import * as BenchDatabase from "./BenchDatabase.js"
import * as LoopbackReceiver from "./LoopbackReceiver.js"

const callbacks = Number(process.env.CALLBACKS ?? 1000)
const subscriptions = Number(process.env.SUBSCRIPTIONS ?? 200)
const parallelRuns = 10

const cronEvent = { name: "inngest/scheduled.timer", data: { cron: InngestFunctions.sweepCron } }
/** A sleep mocked as a step that returns at once (the test engine never ends a real sleep). */
const wokenUp = (id: string) => [{ id, handler: () => undefined }]

const main = async () => {
  const { url, stop } = await BenchDatabase.open()

  const receiver = await LoopbackReceiver.start()
  const callbackUrl = receiver.url

  const manual = await Effect.runPromise(ManualClock.make(Date.parse("2026-01-31T07:00:00.000Z")))
  const layer = Layer.mergeAll(
    Kit.layerAround(PgStore.layer(url, { maxConnections: 10 })),
    HttpCallbackTransport.layer,
    // The server's SHA-256 and HMAC (callback signatures) and entropy, not the kit's Web Crypto ones.
    NodeSecurity.layerSyncDigest,
    NodeSecurity.layerCryptoEntropy,
    Layer.succeed(Clock.Clock)(manual.clock),
    // No spans recorded, as in the reference server without an OTLP endpoint (server/Telemetry.ts).
    Layer.succeed(References.TracerEnabled)(false),
    // The receiver is on 127.0.0.1 (PAYDESK_CALLBACK_ALLOW_PRIVATE=1 in the reference server).
    Layer.succeed(PaydeskConfig)({ ...Config.defaults, allowPrivateCallbacks: true })
  )
  const runtime = ManagedRuntime.make(layer)
  const functions = InngestFunctions.makeFunctions(InngestClient.makeClient({ isDev: true }), runtime as unknown as ManagedRuntime.ManagedRuntime<Services, never>)
  const run = <A, E>(effect: Effect.Effect<A, E, Services>) => runtime.runPromise(effect as Effect.Effect<A, E, never>)

  const merchant = await run(Kit.provisionMerchant({ callbackUrl }))
  const principal = await run(Kit.apiKeyPrincipal(merchant, crypto.randomUUID()))

  /** Sandbox payments whose `payment.created` callbacks are due now. */
  const prepareCallbacks = (prefix: string) =>
    run(Effect.forEach(Array.from({ length: callbacks }, (_, i) => i), (i) =>
      Payments.create(principal, { amount: "10", orderId: `${prefix}-${i}`, test: true }), { concurrency: 10, discard: true }))

  /** Active subscriptions whose next charge falls due at `dueAt`. */
  const prepareCharges = async (prefix: string) => {
    const plans = await run(Kit.provisionPlans(merchant.terminal.id))
    const ids = await run(Effect.forEach(Array.from({ length: subscriptions }, (_, i) => i), (i) =>
      Effect.gen(function*() {
        const { subscription } = yield* Subscriptions.create(principal, {
          idempotencyKey: `${prefix}-${i}`,
          terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "100"
        })
        const { firstPayment } = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
        yield* Payments.settle(Option.getOrThrow(firstPayment).id, "paid")
        return subscription.id
      }), { concurrency: 10 }))
    return ids
  }

  /** Runs a sweep until it finds nothing due; how many runs, and the sum of what they did. */
  const sweepUntilIdle = async (fn: typeof functions.callbacks) => {
    let runs = 0
    let done = 0
    for (;;) {
      const out = await new InngestTestEngine({ function: fn, events: [cronEvent] as any }).execute()
      runs++
      if (out.error !== undefined) throw out.error
      if (out.result === 0) return { runs, done }
      done += out.result as number
    }
  }

  // Callbacks through the cron sweep.
  await prepareCallbacks("sweep")
  await receiver.reset()
  let t0 = performance.now()
  const { runs: callbackRuns } = await sweepUntilIdle(functions.callbacks)
  const sweptCallbacks = await receiver.received()
  const sweepCallbackRate = sweptCallbacks / ((performance.now() - t0) / 1000)
  console.log(`inngest engine, callbacks via sweep: ${sweepCallbackRate.toFixed(1)} delivered/s (${sweptCallbacks} signed POSTs, ${callbackRuns} function runs)`)

  // Charges through the cron sweep.
  await prepareCharges("sweep")
  await manual.set(Date.parse("2026-02-28T07:00:00.000Z")).pipe(Effect.runPromise)
  await sweepUntilIdle(functions.callbacks) // the first payments' callbacks, outside the measurement
  t0 = performance.now()
  const { done: swept } = await sweepUntilIdle(functions.dueCharges)
  await sweepUntilIdle(functions.callbacks) // each charge's payment.paid callback, as in bench:work
  const sweepChargeRate = swept / ((performance.now() - t0) / 1000)
  console.log(`inngest engine, due charges via sweep: ${sweepChargeRate.toFixed(1)} charges/s (${swept} charges, each with its payment, ledger entries and callback)`)

  // Charges through the event-driven flow: one run per subscription, 10 at once.
  const ids = await prepareCharges("flow")
  await sweepUntilIdle(functions.callbacks)
  await manual.set(Date.parse("2026-03-31T07:00:00.000Z")).pipe(Effect.runPromise)
  t0 = performance.now()
  let next = 0
  let charged = 0
  await Promise.all(Array.from({ length: parallelRuns }, async () => {
    while (next < ids.length) {
      const id = ids[next++]!
      const out = await new InngestTestEngine({
        function: functions.chargeWhenDue,
        events: [{ name: InngestFunctions.Events.chargeScheduled.name, data: { subscription_id: id, next_charge_at: "2026-03-31T07:00:00.000Z" } }] as any
      }).execute({ steps: wokenUp("wait-for-charge") })
      if (out.error !== undefined) throw out.error
      if (out.result === true) charged++
    }
  }))
  await sweepUntilIdle(functions.callbacks)
  const flowChargeRate = charged / ((performance.now() - t0) / 1000)
  console.log(`inngest engine, due charges via charge-when-due runs: ${flowChargeRate.toFixed(1)} charges/s (${charged} runs, ${parallelRuns} at once)`)

  await receiver.close()
  await runtime.dispose()
  await stop()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
