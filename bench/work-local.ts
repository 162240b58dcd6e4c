/**
 * Benchmark of the local engine on PostgreSQL: delivered callbacks per second to a loopback
 * receiver in its own process (real HTTP, signed), and due subscription charges per second, each
 * measured as one `Work.drain` over prepared due work, with the engine process's CPU time per item.
 * `bench:inngest` measures the same through the Inngest functions.
 *
 * Each measured drain comes after an unmeasured one of the same kind of work (`WARMUP` callbacks, and
 * `WARMUP_SUBSCRIPTIONS` charges with their callbacks), as a running server is warm: the first
 * drain of a process compiles its code paths (its figure is printed too, as "cold").
 *
 *   ./run pnpm bench:work                 # embedded PostgreSQL (or DATABASE_URL)
 *   CALLBACKS=2000 SUBSCRIPTIONS=300 ./run pnpm bench:work
 *   PROFILE=1 ./run pnpm bench:work       # also writes CPU profiles of the measured drains to bench/profiles/ (callbacks, callbacks without HTTP, charges)
 *   PROFILE=1 PROFILE_INTERVAL_US=100 ./run pnpm bench:work   # the same, sampled every 100 µs (default 1000)
 *   BATCH=400 ./run pnpm bench:work       # PaydeskConfig.batchSize (records per claim; default 100)
 *   WARMUP=0 WARMUP_SUBSCRIPTIONS=0 ./run pnpm bench:work   # no warm-up (default 1000 and 200)
 *   ANSWER_BYTES=4096 ./run pnpm bench:work   # the receiver answers with a body of that size (default none)
 *   HANDOFF=0 ./run pnpm bench:work       # charges' callbacks through the passes only (default: handed off, as the server's local engine does)
 *
 * The due charges' drain runs with the server's `LocalHandoff` (the core's `DeliveryHandoff` port), as
 * the local engine does: each charge's `payment.paid` is sent right after its booking commits, beside
 * the charging, and the drain is measured until the receiver has every one of them. The callbacks'
 * drain measures the passes alone (its payments are made before it, without the port).
 *
 * After it, as many callbacks again are drained through a transport that answers 200 after 0–2 ms
 * without HTTP (`CallbackTransport` replaced for that drain only; a timer, so the answers come back
 * spread over turns of the loop and the attempts' records are batched much as over HTTP): the
 * engine's CPU per callback without the send, so the difference is about what the HTTP send costs
 * the engine (undici, the sockets, their wakeups).
 */
import { Clock, Context, Effect, Layer } from "effect"
import { CallbackTransport, DeliveryHandoff, Payments, Work } from "@paydesk/core"
import { LocalHandoff } from "@paydesk/server"
import * as BenchDatabase from "./BenchDatabase.js"
import * as EngineKit from "./EngineKit.js"
import { measured, profiled } from "./Measure.js"
import * as ProcessCpu from "./ProcessCpu.js"
import * as LoopbackReceiver from "./LoopbackReceiver.js"
import * as BenchSubscriptions from "./Subscriptions.js"
import { ManualClock } from "@paydesk/emulators"
import { Kit } from "@paydesk/testkit"

const callbacks = Number(process.env.CALLBACKS ?? 1000)
const subscriptions = Number(process.env.SUBSCRIPTIONS ?? 200)
const warmup = Number(process.env.WARMUP ?? 1000)
const warmupSubscriptions = Number(process.env.WARMUP_SUBSCRIPTIONS ?? 200)
const handoff = process.env.HANDOFF !== "0"

/** A receiver's 200 after 0–2 ms, without HTTP (as bench/charge-pass.ts's). */
const answeringSoon = CallbackTransport.of({
  post: () => Effect.promise(() => new Promise<{ statusCode: number; latencyMs: number }>((ok) => setTimeout(() => ok({ statusCode: 200, latencyMs: 1 }), Math.random() * 2)))
})

const main = async () => {
  const { url, stop } = await BenchDatabase.open()

  const receiver = await LoopbackReceiver.start({ answerBytes: Number(process.env.ANSWER_BYTES ?? 0) })
  const callbackUrl = receiver.url

  // The warm-up's subscriptions start two weeks before the measured ones, so their charges fall due first.
  const manual = await Effect.runPromise(ManualClock.make(Date.parse("2026-01-15T07:00:00.000Z")))
  // The kit's emulators, but callbacks over real HTTP (the later layer wins for CallbackTransport).
  const kit = EngineKit.layer(url, { config: { batchSize: Number(process.env.BATCH ?? 100) } })

  const program = Effect.gen(function*() {
    const merchant = yield* Kit.provisionMerchant({ callbackUrl })
    const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
    const payments = (prefix: string, count: number) =>
      Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
        Payments.create(principal, { amount: "10", orderId: `${prefix}-${i}`, test: true }), { concurrency: 10, discard: true })
    // The warm-up, not measured: callbacks (the process's first drain, reported as cold), and
    // subscriptions whose charges fall due before the measured ones.
    yield* payments("warm", warmup)
    const coldDrain = yield* measured(Work.drain(1000))
    const cold = yield* Effect.promise(() => receiver.received())
    yield* BenchSubscriptions.paidUp(merchant, principal, warmupSubscriptions, "warm")
    // The warm-up's payments expire (and their callbacks go) before the measured ones are made.
    yield* manual.set(Date.parse("2026-01-31T07:00:00.000Z"))
    yield* Work.drain(1000)
    yield* Effect.promise(() => receiver.reset())

    yield* payments("cb", callbacks)
    // Measured inside the profile: its start, stop and file are not counted.
    const callbacksDrain = yield* profiled("work-callbacks", measured(Work.drain(1000)))
    const delivered = yield* Effect.promise(() => receiver.received())
    // Connections the receiver accepted during the drain (the pool's from the warm-up are kept).
    const opened = yield* Effect.promise(() => receiver.connections())
    // The same drain again, the send replaced by an answer without HTTP (profiled as the first, when
    // PROFILE=1, so that the difference holds no profiler).
    yield* payments("cb-no-http", callbacks)
    const noHttp = yield* profiled("work-callbacks-no-http", measured(Effect.provideService(Work.drain(1000), CallbackTransport, answeringSoon)))

    yield* BenchSubscriptions.paidUp(merchant, principal, subscriptions)
    // The first payments' callbacks, the expiry of the callback phases' payments (with their callbacks) and the warm-up's
    // charges (due on the 15th), outside the measurement.
    yield* manual.set(Date.parse("2026-02-27T07:00:00.000Z"))
    yield* Work.drain(1000)
    yield* manual.set(Date.parse("2026-02-28T07:00:00.000Z"))
    // The drain, then (handed-off callbacks may still be on their way when the passes find nothing
    // more) until the receiver has one callback per charge, at most a minute.
    const port = handoff ? Context.get(yield* Layer.build(LocalHandoff.layer()), DeliveryHandoff) : null
    const chargesAndCallbacks = Effect.gen(function*() {
      const before = yield* Effect.promise(() => receiver.received())
      const report = yield* Work.drain(1000)
      const deadline = Date.now() + 60_000
      while ((yield* Effect.promise(() => receiver.received())) - before < report.charges && Date.now() < deadline) {
        yield* Effect.promise(() => new Promise((ok) => setTimeout(ok, 1)))
      }
      return report
    })
    const cpu = ProcessCpu.start(process.pid)
    const chargesDrain = yield* profiled("work-charges", measured(port === null ? chargesAndCallbacks : Effect.provideService(chargesAndCallbacks, DeliveryHandoff, port)))
    const spent = cpu.stop()
    return { cold, coldDrain, delivered, opened, callbacksDrain, noHttp, charges: chargesDrain.result.charges, chargesDrain, spent }
  }).pipe(Effect.scoped, Effect.provideService(Clock.Clock, manual.clock), Effect.provide(kit))

  const { cold, coldDrain, delivered, opened, callbacksDrain, noHttp, charges, chargesDrain, spent } = await Effect.runPromise(program)
  if (cold > 0) console.log(`local engine, callbacks of the first drain (cold, the warm-up): ${(cold / coldDrain.seconds).toFixed(1)} delivered/s (${cold}), ${(coldDrain.cpuMicros / cold).toFixed(0)} µs of engine CPU each`)
  console.log(`local engine, callbacks: ${(delivered / callbacksDrain.seconds).toFixed(1)} delivered/s (${delivered} signed POSTs to a loopback receiver, ${opened} new connections), ${(callbacksDrain.cpuMicros / delivered).toFixed(0)} µs of engine CPU each`)
  const bare = noHttp.result.callbacks
  const attempted = callbacksDrain.result.callbacks
  if (bare > 0 && attempted > 0) {
    const perCallback = (drain: { readonly cpu: { readonly user: number; readonly system: number } }, n: number) =>
      ({ all: (drain.cpu.user + drain.cpu.system) / n, kernel: drain.cpu.system / n })
    const withHttp = perCallback(callbacksDrain, attempted)
    const without = perCallback(noHttp, bare)
    console.log(`  the same without HTTP (a transport answering 200 after 0–2 ms): ${(bare / noHttp.seconds).toFixed(1)} callbacks/s (${bare}), ${without.all.toFixed(0)} µs of engine CPU each (${without.kernel.toFixed(0)} in the kernel); the send's share ${(withHttp.all - without.all).toFixed(0)} µs (${(withHttp.kernel - without.kernel).toFixed(0)} in the kernel)`)
  }
  console.log(`local engine, due charges: ${(charges / chargesDrain.seconds).toFixed(1)} charges/s (${charges} charges, each with its payment, ledger entries and callback${handoff ? ", handed off" : ", through the passes"}), ${(chargesDrain.cpuMicros / charges).toFixed(0)} µs of engine CPU each`)
  console.log(`  beside them: ${ProcessCpu.besideEngine(spent, charges, "charge")}`)
  await receiver.close()
  await stop()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
