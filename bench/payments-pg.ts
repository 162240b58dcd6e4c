/**
 * Benchmark: payments created per second through the core's use case on PostgreSQL, next to
 * `pgbench` running the statements the use case makes (bench/CreationScript.ts: the payment, its
 * outbox event with its delivery, in one transaction) on the same database in the same run, as a ratio.
 *
 *   ./run pnpm bench:payments            # embedded PostgreSQL (or DATABASE_URL when set)
 *   PAYMENTS=5000 CONCURRENCY=16 SECONDS=10 ./run pnpm bench:payments
 */
import { Effect, Layer, References } from "effect"
import { Payments } from "@paydesk/core"
import { PgStore } from "@paydesk/sql-pg"
import * as BenchDatabase from "./BenchDatabase.js"
import { creationScript } from "./CreationScript.js"
import * as Pgbench from "./Pgbench.js"
import { Kit } from "@paydesk/testkit"

const payments = Number(process.env.PAYMENTS ?? 3000)
const concurrency = Number(process.env.CONCURRENCY ?? 10)
const seconds = Number(process.env.SECONDS ?? 10)

const main = async () => {
  const { url, stop } = await BenchDatabase.open()
  const layer = Layer.merge(
    Kit.layerAround(PgStore.layer(url, { maxConnections: concurrency })),
    // No spans recorded, as in the reference server without an OTLP endpoint (server/Telemetry.ts).
    Layer.succeed(References.TracerEnabled)(false)
  )

  const { terminalId, rate, cpuPerPayment } = await Effect.runPromise(
    Effect.gen(function*() {
      const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://merchant.example/cb" })
      const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
      // Warm-up: connections, prepared statements.
      yield* Effect.forEach(Array.from({ length: 50 }, (_, i) => i), (i) =>
        Payments.create(principal, { amount: "100.00", orderId: `warm-${i}`, test: true }), { concurrency })
      const started = performance.now()
      const cpu = process.cpuUsage()
      yield* Effect.forEach(Array.from({ length: payments }, (_, i) => i), (i) =>
        Payments.create(principal, { amount: "1000.50", orderId: `bench-${i}`, description: "bench", test: true }), { concurrency })
      const elapsed = (performance.now() - started) / 1000
      const used = process.cpuUsage(cpu)
      return { terminalId: merchant.terminal.id, rate: payments / elapsed, cpuPerPayment: (used.user + used.system) / payments }
    }).pipe(Effect.provide(layer))
  )

  // The use case's own statements (the principal is authenticated once, outside the measurement).
  const baseline = Pgbench.run(url, creationScript({ terminalId, description: "bench" }), { clients: concurrency, seconds })
  const tps = baseline.tps
  console.log(`core use case (Payments.create): ${rate.toFixed(1)} payments/s (${payments} payments, concurrency ${concurrency}), ${cpuPerPayment.toFixed(0)} µs of this process's CPU each`)
  console.log(`pgbench, same SQL transaction:    ${tps.toFixed(1)} transactions/s (${seconds} s, ${concurrency} clients; p50 ${baseline.p50Ms.toFixed(1)} ms, p99 ${baseline.p99Ms.toFixed(1)} ms)`)
  console.log(`ratio use case / pgbench:          ${(rate / tps).toFixed(3)}`)
  await stop()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
