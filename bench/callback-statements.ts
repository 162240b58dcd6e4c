/**
 * Round trips of one callback pass, counted by PostgreSQL itself: a fresh database on
 * `DATABASE_URL`'s server with `log_statement = all`, `CALLBACKS` sandbox payments (their
 * `payment.created` deliveries due), then one `Callbacks.runDue` pass (the kit's recording transport:
 * no HTTP) between two marker statements. Prints the pass's statements by kind with the server's time
 * spent on them (`log_min_duration_statement = 0`), read from the log
 * (`LOG` = PostgreSQL's log file of that server, readable by this process), and the write-ahead log
 * it wrote per item (the server's: run it with nothing else writing to that server).
 *
 * With `KIND=charges`: `CHARGES` live monthly subscriptions whose second charge is due, and one
 * `Subscriptions.runDueCharges` pass (the kit's acquirer emulator) instead.
 *
 * With `HTTP=1`: the callbacks go over real HTTP (the server's transport, keep-alive) to a loopback
 * receiver in its own process, so the answers arrive one by one, as in a running server; the
 * attempts' records are then batched only as far as the answers come together.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres LOG=/var/log/postgresql/postgresql-15-main.log \
 *     ./run pnpm exec tsx --conditions=@paydesk/source bench/callback-statements.ts
 *   KIND=charges DATABASE_URL=... ./run pnpm exec tsx --conditions=@paydesk/source bench/callback-statements.ts
 *   HTTP=1 CALLBACKS=500 DATABASE_URL=... ./run pnpm exec tsx --conditions=@paydesk/source bench/callback-statements.ts
 */
import { Clock, Effect } from "effect"
import { Callbacks, Payments, Subscriptions, Work } from "@paydesk/core"
import { PgStore } from "@paydesk/sql-pg"
import { Kit, ManualClock } from "@paydesk/testkit"
import { SqlClient } from "effect/sql"
import * as BenchSubscriptions from "./Subscriptions.js"
import * as EngineKit from "./EngineKit.js"
import * as LoopbackReceiver from "./LoopbackReceiver.js"
import * as StatementLog from "./StatementLog.js"

const serverUrl = process.env.DATABASE_URL
const callbacks = Number(process.env.CALLBACKS ?? 100)
const kind = process.env.KIND === "charges" ? "charges" : "callbacks"
const charges = Number(process.env.CHARGES ?? 100)
const http = process.env.HTTP === "1"
if (serverUrl === undefined) throw new Error("DATABASE_URL is required (a server whose log this process can read)")

const main = async () => {
  const name = `paydesk_statements_${Date.now().toString(36)}`
  const url = await Effect.runPromise(PgStore.createDatabase(serverUrl, name))
  const manual = await Effect.runPromise(ManualClock.make(Date.parse("2026-01-31T07:00:00.000Z")))
  const mark = `paydesk-mark-${Date.now().toString(36)}`
  // Before the pool connects: every connection of the run logs its statements.
  await StatementLog.enable(serverUrl, name)
  const logFrom = StatementLog.position()
  const receiver = http ? await LoopbackReceiver.start() : undefined
  // Over HTTP: the server's transport and hashing, no spans, loopback allowed (as bench:work).
  const layer = receiver === undefined ? Kit.layerAround(PgStore.layer(url, { maxConnections: 10 })) : EngineKit.layer(url)
  const program = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const merchant = yield* Kit.provisionMerchant({ callbackUrl: receiver?.url ?? "https://shop.example/callbacks" })
    const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
    if (kind === "charges") {
      yield* BenchSubscriptions.paidUp(merchant, principal, charges)
      yield* Work.drain(1000)
      yield* manual.set(Date.parse("2026-02-28T07:00:00.000Z"))
    } else {
      yield* Effect.forEach(Array.from({ length: callbacks }, (_, i) => i), (i) =>
        Payments.create(principal, { amount: "10", orderId: `st-${i}`, test: true }), { concurrency: 10 })
    }
    // The markers bracket the pass in the log; the write-ahead log's position, what it wrote (the
    // server's, so only with nothing else writing to it).
    const wal = sql<{ readonly lsn: string }>`SELECT pg_current_wal_insert_lsn()::text AS lsn`
    const [before] = yield* wal
    yield* sql.unsafe(`SELECT '${mark}-start'`)
    const done = kind === "charges" ? yield* Subscriptions.runDueCharges() : yield* Callbacks.runDue()
    yield* sql.unsafe(`SELECT '${mark}-end'`)
    const [after] = yield* wal
    const [written] = yield* sql<{ readonly bytes: number }>`SELECT pg_wal_lsn_diff(${after!.lsn}::pg_lsn, ${before!.lsn}::pg_lsn)::float8 AS bytes`
    return { done, walBytes: written!.bytes }
  }).pipe(Effect.provideService(Clock.Clock, manual.clock), Effect.provide(layer))
  const { done: sent, walBytes } = await Effect.runPromise(program)
  const received = receiver === undefined ? undefined : await receiver.received()
  await receiver?.close()
  await new Promise((resolve) => setTimeout(resolve, 500))
  const lines = StatementLog.since(logFrom)
  const start = lines.findIndex((l) => l.includes(`${mark}-start`))
  const end = lines.findIndex((l) => l.includes(`${mark}-end`))
  // Extended protocol: three steps per statement, counted once, their times added.
  const timed = StatementLog.steps(lines.slice(start + 1, end), name)
  const kinds = StatementLog.byKind(timed)
  const statements = timed.filter((t) => t.step === "statement" || t.step === "execute").length
  const serverMs = timed.reduce((sum, t) => sum + t.ms, 0)
  const unit = kind === "charges" ? "charge" : "delivery"
  if (received !== undefined) console.log(`over HTTP: the receiver got ${received} callbacks`)
  console.log(`one pass, ${sent} ${kind === "charges" ? "charges" : "deliveries"}: ${statements} statements (${(statements / Math.max(1, sent)).toFixed(2)} per ${unit}), ${serverMs.toFixed(1)} ms in the server, ${Math.round(walBytes / Math.max(1, sent))} bytes of write-ahead log per ${unit}`)
  for (const { kind: text, count, ms } of kinds.sort((a, b) => b.count - a.count)) console.log(`${String(count).padStart(5)} ${ms.toFixed(1).padStart(8)} ms  ${text}`)
  await Effect.runPromise(PgStore.dropDatabases(serverUrl, name))
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
