/**
 * Prometheus metrics of the server (prom-client, its own registry), served at `/metrics` behind the
 * operator token:
 *
 * - `paydesk_http_request_duration_seconds{method,route,status}`: request latency by route pattern
 *   (a request its client left before the answer was sent: status 499, the time until it left);
 * - `paydesk_http_requests_in_flight`: the requests being handled now (arrived, not yet answered or left);
 * - `paydesk_payments{status,environment}`: payments by status (read from the database at scrape);
 * - `paydesk_callback_attempts_total{result}` and `paydesk_callback_attempt_duration_seconds{result}`:
 *   callback attempts delivered (2xx) or failed, and their latency; `paydesk_callback_deliveries{status}`
 *   the deliveries by status (database);
 * - `paydesk_due_work_lag_seconds{kind}`: how long the oldest overdue live work of each kind (charges,
 *   deliveries, expiries, conversions) has waited, 0 when none is overdue (database, server clock; a
 *   test clock's objects are due on the clock's time, when it is advanced, and are left out);
 * - `paydesk_work_passes_total{result}` and `paydesk_work_items_total{kind}`: the local worker's passes
 *   (and, as `callbacks` items, the callbacks handed off to the engine that it sent without a pass;
 *   as `testClocks` items, the clocks of its test-clock loop, whose failed runs are `result="test_clocks_failed"`);
 * - `paydesk_db_pool_connections{state}` (`in_use`, `idle`) and `paydesk_db_pool_max_connections`: the
 *   server's pool as PostgreSQL sees it (`pg_stat_activity` of the pool's application name);
 * - `paydesk_database_up`: 1 when the scrape's database reads (the gauges marked "database" above)
 *   answered within `databaseReadLimitMs`, 0 when they failed or took longer;
 * - Node's defaults (`nodejs_eventloop_lag_seconds` and percentiles, heap, GC, `process_*`).
 *
 * The database gauges are read once per scrape, together (all of them or none). When the database
 * does not answer, the scrape still answers, with everything else and `paydesk_database_up 0`: the
 * database gauges are left out of it rather than kept at their last value, which would look current
 * (a lag frozen at its last value while work piles up), so their series go stale for the outage.
 */
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { Runner, type Work } from "@paydesk/core"
import { SqlClient } from "effect/sql"
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client"

/** Recording side of the metrics, for the server's parts. */
export class Metrics extends Context.Service<Metrics, {
  readonly registry: Registry
  /** A finished HTTP request. */
  observeRequest(sample: { readonly method: string; readonly route: string; readonly status: number; readonly seconds: number }): void
  /** Where `paydesk_http_requests_in_flight` is read from at each scrape (the HTTP app, once it is built). */
  countInFlight(read: () => number): void
  /** A callback attempt: delivered (2xx) or failed, and how long it took. */
  observeAttempt(delivered: boolean, seconds: number): void
  /**
   * A pass of the local worker: what it did (null when it failed as a whole), and whether it failed
   * (as a whole, or one of its jobs: the others' work still counts).
   */
  observePass(report: Work.Report | null, failed: boolean): void
  /** A run of the local engine's test-clock loop: the clocks it worked on, or `null` when it failed. */
  observeTestClocks(worked: number | null): void
  /** A callback the local engine sent from a hand-off (without a pass). */
  observeHandedOff(): void
}>()("@paydesk/server/Metrics") {}

/** Options of `layer`. */
export interface Options {
  /** `application_name` of the server's pool connections. */
  readonly poolName: string
  readonly poolMax: number
}

const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** How long a scrape waits for its database reads (as the readiness check) before it answers without them. */
export const databaseReadLimitMs = 3_000

/** What a scrape reads from the database. */
interface DatabaseReads {
  readonly payments: ReadonlyArray<{ readonly status: string; readonly environment: string; readonly count: number }>
  readonly deliveries: ReadonlyArray<{ readonly status: string; readonly count: number }>
  readonly lag: ReadonlyArray<{ readonly kind: string; readonly lag: number | null }>
  readonly pool: ReadonlyArray<{ readonly in_use: number; readonly idle: number }>
}

/** The metrics, their database gauges reading through the `SqlClient` in context. */
export const layer = (options: Options): Layer.Layer<Metrics, never, SqlClient.SqlClient> =>
  Layer.effect(
    Metrics,
    Effect.gen(function*() {
      const run = Runner.fromContext(yield* Effect.context<SqlClient.SqlClient>())
      /** The database gauges' reads, all at once; null when one failed or they took longer than the limit. */
      const readDatabase = async (): Promise<DatabaseReads | null> => {
        const exit = await run.runPromiseExit(Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const now = new Date(yield* Clock.currentTimeMillis)
          return yield* Effect.all({
            payments: sql<DatabaseReads["payments"][number]>`SELECT status, environment, count(*)::int AS count FROM payments GROUP BY status, environment`,
            deliveries: sql<DatabaseReads["deliveries"][number]>`SELECT status, count(*)::int AS count FROM deliveries GROUP BY status`,
            lag: sql<DatabaseReads["lag"][number]>`SELECT 'charges' AS kind, extract(epoch FROM ${now}::timestamptz - min(next_charge_at))::float8 AS lag FROM subscriptions
                WHERE provider_state = 'active' AND billing_status = 'enabled' AND test_clock_id IS NULL AND next_charge_at <= ${now}
              UNION ALL SELECT 'deliveries', extract(epoch FROM ${now}::timestamptz - min(next_attempt_at))::float8 FROM deliveries
                WHERE status = 'pending' AND test_clock_id IS NULL AND next_attempt_at <= ${now}
              UNION ALL SELECT 'expiries', extract(epoch FROM ${now}::timestamptz - min(expires_at))::float8 FROM payments
                WHERE status IN ('created', 'processing') AND test_clock_id IS NULL AND expires_at <= ${now}
              UNION ALL SELECT 'conversions', extract(epoch FROM ${now}::timestamptz - min(next_conversion_at))::float8 FROM terminals
                WHERE next_conversion_at <= ${now}`,
            pool: sql<DatabaseReads["pool"][number]>`SELECT count(*) FILTER (WHERE state <> 'idle')::int AS in_use, count(*) FILTER (WHERE state = 'idle')::int AS idle
                FROM pg_stat_activity WHERE application_name = ${options.poolName} AND pid <> pg_backend_pid()`
          }, { concurrency: "unbounded" }).pipe(Effect.timeout(Duration.millis(databaseReadLimitMs)))
        }))
        return exit._tag === "Success" ? exit.value : null
      }
      // One read per scrape, shared by the gauges that need it: prom-client asks every metric's
      // `collect` in the same turn, so they all find the read the first one started.
      let reading: Promise<DatabaseReads | null> | undefined
      const database = (): Promise<DatabaseReads | null> => {
        if (reading === undefined) {
          const started = readDatabase()
          reading = started
          void started.finally(() => {
            if (reading === started) reading = undefined
          })
        }
        return reading
      }
      const registry = new Registry()
      collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 })

      const http = new Histogram({
        name: "paydesk_http_request_duration_seconds",
        help: "HTTP request latency by method, route pattern and status",
        labelNames: ["method", "route", "status"],
        buckets: latencyBuckets,
        registers: [registry]
      })
      const attempts = new Counter({
        name: "paydesk_callback_attempts_total",
        help: "Callback attempts by result (delivered: a 2xx answer in time; failed: anything else)",
        labelNames: ["result"],
        registers: [registry]
      })
      const attemptLatency = new Histogram({
        name: "paydesk_callback_attempt_duration_seconds",
        help: "Callback attempt latency by result",
        labelNames: ["result"],
        buckets: latencyBuckets,
        registers: [registry]
      })
      let requestsInFlight = (): number => 0
      new Gauge({
        name: "paydesk_http_requests_in_flight",
        help: "HTTP requests being handled now (arrived, not yet answered or left by their client)",
        registers: [registry],
        collect() {
          this.set(requestsInFlight())
        }
      })
      const passes = new Counter({ name: "paydesk_work_passes_total", help: "Passes of the local worker by result", labelNames: ["result"], registers: [registry] })
      const items = new Counter({ name: "paydesk_work_items_total", help: "Records the local worker handled, by kind", labelNames: ["kind"], registers: [registry] })
      for (const result of ["delivered", "failed"]) attempts.inc({ result }, 0)
      for (const result of ["ok", "failed"]) passes.inc({ result }, 0)

      new Gauge({
        name: "paydesk_payments",
        help: "Payments by status and environment",
        labelNames: ["status", "environment"],
        registers: [registry],
        async collect() {
          const read = await database()
          this.reset()
          for (const row of read?.payments ?? []) this.set({ status: row.status, environment: row.environment }, row.count)
        }
      })
      new Gauge({
        name: "paydesk_callback_deliveries",
        help: "Callback deliveries by status",
        labelNames: ["status"],
        registers: [registry],
        async collect() {
          const read = await database()
          this.reset()
          if (read === null) return
          for (const status of ["pending", "delivered", "failed"]) this.set({ status }, read.deliveries.find((r) => r.status === status)?.count ?? 0)
        }
      })
      new Gauge({
        name: "paydesk_due_work_lag_seconds",
        help: "How long the oldest overdue live work of each kind has waited (0: nothing overdue; test clocks' objects left out)",
        labelNames: ["kind"],
        registers: [registry],
        async collect() {
          const read = await database()
          this.reset()
          for (const row of read?.lag ?? []) this.set({ kind: row.kind }, Math.max(0, row.lag ?? 0))
        }
      })
      new Gauge({
        name: "paydesk_db_pool_connections",
        help: "Connections of the server's pool by state (in_use: running a statement or inside a transaction)",
        labelNames: ["state"],
        registers: [registry],
        async collect() {
          const read = await database()
          this.reset()
          if (read === null) return
          this.set({ state: "in_use" }, read.pool[0]?.in_use ?? 0)
          this.set({ state: "idle" }, read.pool[0]?.idle ?? 0)
        }
      })
      new Gauge({
        name: "paydesk_database_up",
        help: `Whether the scrape's database reads answered within ${databaseReadLimitMs / 1000} s (1) or not (0: the database gauges are left out of the scrape)`,
        registers: [registry],
        async collect() {
          this.set((await database()) === null ? 0 : 1)
        }
      })
      new Gauge({ name: "paydesk_db_pool_max_connections", help: "Size of the server's pool (PAYDESK_DB_POOL)", registers: [registry] }).set(options.poolMax)

      return Metrics.of({
        registry,
        observeRequest: (sample) => http.observe({ method: sample.method, route: sample.route, status: String(sample.status) }, sample.seconds),
        countInFlight: (read) => {
          requestsInFlight = read
        },
        observeAttempt: (delivered, seconds) => {
          const result = delivered ? "delivered" : "failed"
          attempts.inc({ result })
          attemptLatency.observe({ result }, seconds)
        },
        observePass: (report, failed) => {
          passes.inc({ result: failed ? "failed" : "ok" })
          if (report !== null) for (const [kind, count] of Object.entries(report)) if (count > 0) items.inc({ kind }, count)
        },
        observeTestClocks: (worked) => {
          // Apart from the passes' `failed`: readiness does not depend on test clocks, nor should an alert.
          if (worked === null) passes.inc({ result: "test_clocks_failed" })
          else if (worked > 0) items.inc({ kind: "testClocks" }, worked)
        },
        observeHandedOff: () => items.inc({ kind: "callbacks" })
      })
    })
  )
