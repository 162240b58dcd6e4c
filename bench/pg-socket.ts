/**
 * A round trip to PostgreSQL over TCP against the same through its Unix socket: `STATEMENTS`
 * statements with a parameter of `BYTES` bytes (`SELECT length($1)`), 10 at once on a pool of 10, per
 * round, in rounds alternating between the two (`ROUNDS` each, after one unmeasured statement batch
 * per round); prints each round's statements per second and this process's CPU per statement (and
 * its kernel part). The URLs default to the machine's service: `TCP_URL`
 * (postgres://postgres@127.0.0.1:5432/postgres) and `SOCKET_URL`
 * (postgres://postgres@localhost/postgres?host=/var/run/postgresql).
 *
 *   ./run pnpm exec tsx --conditions=@paydesk/source bench/pg-socket.ts
 *   STATEMENTS=50000 ROUNDS=6 ./run pnpm exec tsx --conditions=@paydesk/source bench/pg-socket.ts
 */
import { Effect, Redacted } from "effect"
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "effect/sql"

const urls = {
  tcp: process.env.TCP_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
  socket: process.env.SOCKET_URL ?? "postgres://postgres@localhost/postgres?host=/var/run/postgresql"
}
const statements = Number(process.env.STATEMENTS ?? 20000)
const rounds = Number(process.env.ROUNDS ?? 4)
const payload = "x".repeat(Number(process.env.BYTES ?? 600))

const round = (url: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const run = (count: number) => Effect.forEach(Array.from({ length: count }), () => sql`SELECT length(${payload})`, { concurrency: 10, discard: true })
    // The pool's connections opened and the statement prepared before the measurement.
    yield* run(2000)
    const cpu = process.cpuUsage()
    const started = performance.now()
    yield* run(statements)
    const used = process.cpuUsage(cpu)
    return { perSecond: statements / ((performance.now() - started) / 1000), micros: (used.user + used.system) / statements, kernel: used.system / statements }
  }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 10 })))

for (let i = 0; i < rounds; i++) {
  for (const [name, url] of Object.entries(urls)) {
    const { perSecond, micros, kernel } = await Effect.runPromise(round(url))
    console.log(`${name.padEnd(7)} ${perSecond.toFixed(0).padStart(6)} statements/s  ${micros.toFixed(1).padStart(6)} µs of CPU each (${kernel.toFixed(1)} in the kernel)`)
  }
}
