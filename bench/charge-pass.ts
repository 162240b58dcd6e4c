/**
 * Benchmark of the charge job alone on PostgreSQL: `Subscriptions.runDueCharges` passes over
 * `SUBSCRIPTIONS` due monthly subscriptions until none is left, with the process's CPU time per
 * charge (user and kernel) and the rate. Their `payment.paid` callbacks are delivered afterwards
 * through a transport that answers 200 after 0–2 ms without HTTP, and reported apart, so the
 * charge job's own cost is not mixed with a receiver's or with sockets (`bench:work` measures a
 * whole drain, callbacks over real HTTP included). A warm-up pass over `WARMUP_SUBSCRIPTIONS` due
 * subscriptions comes first, unmeasured.
 *
 *   ./run pnpm exec tsx --conditions=@paydesk/source bench/charge-pass.ts          # embedded PostgreSQL (or DATABASE_URL)
 *   SUBSCRIPTIONS=2000 ./run pnpm exec tsx --conditions=@paydesk/source bench/charge-pass.ts
 *   PROFILE=1 ./run pnpm exec tsx --conditions=@paydesk/source bench/charge-pass.ts   # a CPU profile of the measured passes in bench/profiles/
 */
import { Clock, Effect, Layer } from "effect"
import { CallbackTransport, Subscriptions, Work } from "@paydesk/core"
import { ManualClock } from "@paydesk/emulators"
import { Kit } from "@paydesk/testkit"
import * as BenchDatabase from "./BenchDatabase.js"
import * as EngineKit from "./EngineKit.js"
import { measured, profiled } from "./Measure.js"
import * as ProcessCpu from "./ProcessCpu.js"
import * as BenchSubscriptions from "./Subscriptions.js"

const subscriptions = Number(process.env.SUBSCRIPTIONS ?? 1000)
const warmup = Number(process.env.WARMUP_SUBSCRIPTIONS ?? 300)

/** A receiver that answers 200 after 0–2 ms, without HTTP. */
const answering = Layer.succeed(CallbackTransport)(CallbackTransport.of({
  post: () => Effect.promise(() => new Promise<{ statusCode: number; latencyMs: number }>((ok) => setTimeout(() => ok({ statusCode: 200, latencyMs: 1 }), Math.random() * 2)))
}))

/** Charge passes until one finds nothing due; how many charges they made. */
const chargeAll = Effect.gen(function*() {
  let total = 0
  for (;;) {
    const charged = yield* Subscriptions.runDueCharges()
    if (charged === 0) return total
    total += charged
  }
})

const main = async () => {
  const { url, stop } = await BenchDatabase.open()
  // The warm-up's subscriptions start two weeks before the measured ones, so their charges fall due first.
  const manual = await Effect.runPromise(ManualClock.make(Date.parse("2026-01-15T07:00:00.000Z")))
  const layer = EngineKit.layer(url, { transport: answering })
  const program = Effect.gen(function*() {
    const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/callbacks" })
    const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
    yield* BenchSubscriptions.paidUp(merchant, principal, warmup, "warm")
    yield* manual.set(Date.parse("2026-01-31T07:00:00.000Z"))
    yield* BenchSubscriptions.paidUp(merchant, principal, subscriptions)
    yield* Work.drain(1000)
    // The warm-up's charges (due on the 15th), their callbacks and the expiries, not measured.
    yield* manual.set(Date.parse("2026-02-16T07:00:00.000Z"))
    yield* Work.drain(1000)
    yield* manual.set(Date.parse("2026-02-28T07:00:00.000Z"))
    const cpu = ProcessCpu.start(process.pid)
    const charges = yield* profiled("charge-pass", measured(chargeAll))
    const spent = cpu.stop()
    const callbacks = yield* measured(Work.drain(1000))
    return { charges, callbacks, spent }
  }).pipe(Effect.provideService(Clock.Clock, manual.clock), Effect.provide(layer))

  const { charges, callbacks, spent } = await Effect.runPromise(program)
  const n = charges.result
  const delivered = callbacks.result.callbacks
  console.log(`charge job alone: ${(n / charges.seconds).toFixed(1)} charges/s (${n} charges at ${Subscriptions.chargeConcurrency} in flight), ${((charges.cpu.user + charges.cpu.system) / n).toFixed(0)} µs of CPU each (${(charges.cpu.system / n).toFixed(0)} in the kernel)`)
  console.log(`beside it: ${ProcessCpu.besideEngine(spent, n, "charge")}`)
  console.log(`their callbacks, without HTTP: ${(delivered / callbacks.seconds).toFixed(1)} delivered/s (${delivered}), ${((callbacks.cpu.user + callbacks.cpu.system) / delivered).toFixed(0)} µs of CPU each`)
  await stop()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
