/**
 * Spans per unit of work: how many traced calls (`Effect.fn` with a name, `Effect.withSpan`, the SQL
 * client's statement spans) one payment creation, one callback delivery and one due charge make,
 * counted by a tracer that only counts (PostgreSQL, the kit's emulators; deliveries go to the kit's
 * recording transport). Each traced call costs a span and a captured call stack (about 4 µs on this
 * machine), so hot paths keep their spans for the use cases and the I/O and none for pure helpers.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres ./run pnpm exec tsx --conditions=@paydesk/source bench/spans.ts
 *   SPANS=1 ...   # also lists the spans by name
 */
import { Clock, Effect, Tracer } from "effect"
import { Callbacks, Payments, Subscriptions, Work } from "@paydesk/core"
import { PgStore } from "@paydesk/sql-pg"
import { Kit, ManualClock } from "@paydesk/testkit"
import * as BenchDatabase from "./BenchDatabase.js"
import * as BenchSubscriptions from "./Subscriptions.js"

const units = 100

const main = async () => {
  const { url, stop } = await BenchDatabase.open()
  const counts = new Map<string, number>()
  const counting = Tracer.make({
    span: (options) => {
      counts.set(options.name, (counts.get(options.name) ?? 0) + 1)
      return new Tracer.NativeSpan(options)
    }
  })
  /** Runs `effect` under the counting tracer; prints its spans per unit. */
  const counted = <A, E, R>(label: string, effect: Effect.Effect<A, E, R>) =>
    Effect.gen(function*() {
      counts.clear()
      const result = yield* Effect.withTracer(effect, counting)
      const total = [...counts.values()].reduce((a, b) => a + b, 0)
      console.log(`${label}: ${(total / units).toFixed(1)} spans each (${units} measured)`)
      if (process.env.SPANS === "1") {
        for (const [name, n] of [...counts].sort((a, b) => b[1] - a[1])) console.log(`  ${(n / units).toFixed(2).padStart(6)}  ${name}`)
      }
      return result
    })
  const manual = await Effect.runPromise(ManualClock.make(Date.parse("2026-01-31T07:00:00.000Z")))
  await Effect.runPromise(Effect.gen(function*() {
    const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/callbacks" })
    const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
    yield* BenchSubscriptions.paidUp(merchant, principal, units)
    yield* Work.drain(1000)
    yield* counted("payment creation (Payments.create)", Effect.forEach(Array.from({ length: units }, (_, i) => i), (i) =>
      Payments.create(principal, { amount: "10", orderId: `spans-${i}`, test: true }), { concurrency: 10 }))
    yield* counted("callback delivery (Callbacks.runDue)", Callbacks.runDue())
    yield* manual.set(Date.parse("2026-02-28T07:00:00.000Z"))
    yield* counted("due charge (Subscriptions.runDueCharges, without its callback)", Subscriptions.runDueCharges())
  }).pipe(Effect.provideService(Clock.Clock, manual.clock), Effect.provide(Kit.layerAround(PgStore.layer(url, { maxConnections: 10 })))))
  await stop()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
