/**
 * Round trips of one callback pass, counted by PostgreSQL itself: a fresh database on
 * `DATABASE_URL`'s server with `log_statement = all`, `CALLBACKS` sandbox payments (their
 * `payment.created` deliveries due), then one `Callbacks.runDue` pass (the kit's recording transport:
 * no HTTP) between two marker statements. Prints the pass's statements by kind, read from the log
 * (`LOG` = PostgreSQL's log file of that server, readable by this process).
 *
 * With `KIND=charges`: `CHARGES` live monthly subscriptions whose second charge is due, and one
 * `Subscriptions.runDueCharges` pass (the kit's acquirer emulator) instead.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres LOG=/var/log/postgresql/postgresql-15-main.log \
 *     ./run pnpm exec tsx --conditions=@paydesk/source bench/callback-statements.ts
 *   KIND=charges DATABASE_URL=... ./run pnpm exec tsx --conditions=@paydesk/source bench/callback-statements.ts
 */
import { Clock, Effect, Layer } from "effect"
import { Callbacks, Payments, Subscriptions, Work } from "@paydesk/core"
import { PgStore } from "@paydesk/sql-pg"
import { Kit, ManualClock } from "@paydesk/testkit"
import { SqlClient } from "effect/sql"
import { readFileSync } from "node:fs"
import * as BenchSubscriptions from "./Subscriptions.js"

const serverUrl = process.env.DATABASE_URL
const log = process.env.LOG ?? "/var/log/postgresql/postgresql-15-main.log"
const callbacks = Number(process.env.CALLBACKS ?? 100)
const kind = process.env.KIND === "charges" ? "charges" : "callbacks"
const charges = Number(process.env.CHARGES ?? 100)
if (serverUrl === undefined) throw new Error("DATABASE_URL is required (a server whose log this process can read)")

const main = async () => {
  const name = `paydesk_statements_${Date.now().toString(36)}`
  const url = await Effect.runPromise(PgStore.createDatabase(serverUrl, name))
  const manual = await Effect.runPromise(ManualClock.make(Date.parse("2026-01-31T07:00:00.000Z")))
  const mark = `paydesk-mark-${Date.now().toString(36)}`
  // Before the pool connects: every connection of the run logs its statements.
  await Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`ALTER DATABASE ${name} SET log_statement = 'all'`)).pipe(
    Effect.provide(PgStore.layerClient(serverUrl, { maxConnections: 1 }))
  ))
  const program = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/callbacks" })
    const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
    if (kind === "charges") {
      yield* BenchSubscriptions.paidUp(merchant, principal, charges)
      yield* Work.drain(1000)
      yield* manual.set(Date.parse("2026-02-28T07:00:00.000Z"))
    } else {
      yield* Effect.forEach(Array.from({ length: callbacks }, (_, i) => i), (i) =>
        Payments.create(principal, { amount: "10", orderId: `st-${i}`, test: true }), { concurrency: 10 })
    }
    // The markers bracket the pass in the log.
    yield* sql.unsafe(`SELECT '${mark}-start'`)
    const done = kind === "charges" ? yield* Subscriptions.runDueCharges() : yield* Callbacks.runDue()
    yield* sql.unsafe(`SELECT '${mark}-end'`)
    return done
  }).pipe(Effect.provideService(Clock.Clock, manual.clock), Effect.provide(Kit.layerAround(PgStore.layer(url, { maxConnections: 10 }))))
  const sent = await Effect.runPromise(program)
  await new Promise((resolve) => setTimeout(resolve, 500))
  const lines = readFileSync(log, "utf8").split("\n")
  const start = lines.findIndex((l) => l.includes(`${mark}-start`))
  const end = lines.findIndex((l) => l.includes(`${mark}-end`))
  const statements = lines.slice(start + 1, end)
    .filter((l) => l.includes(`@${name} LOG:  statement:`) || l.includes(`@${name} LOG:  execute`))
    .map((l) => l.replace(/^.*LOG: {2}(statement|execute [^:]*): /, "").trim())
  const kinds = new Map<string, number>()
  for (const s of statements) {
    const kind = s.replace(/\s+/g, " ").slice(0, 60)
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
  }
  const unit = kind === "charges" ? "charge" : "delivery"
  console.log(`one pass, ${sent} ${kind === "charges" ? "charges" : "deliveries"}: ${statements.length} statements (${(statements.length / Math.max(1, sent)).toFixed(2)} per ${unit})`)
  for (const [kind, n] of [...kinds.entries()].sort((a, b) => b[1] - a[1])) console.log(`${String(n).padStart(5)}  ${kind}`)
  await Effect.runPromise(PgStore.dropDatabases(serverUrl, name))
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
