/**
 * Micro-benchmarks behind the fifth round of docs/performance.md, each a ratio of two ways run in
 * this process (a warm-up, then a timed loop of each):
 * - HMAC-SHA256 of a callback body with a raw key (a `Buffer`, then a string) against a prepared
 *   `KeyObject` (`NodeSecurity.hmacKeys`);
 * - a traced call (`Effect.fn("name")`) against an untraced one (`Effect.fnUntraced`), and with span
 *   recording off (as the server runs without an exporter) `Effect.fn` against `Traced.fn`;
 * - a 24-byte token from `randomBytes` against `NodeSecurity.pooledTokens`;
 * - an instant as ISO 8601 text through Effect's `DateTime.formatIso` against `Instant.formatIso`
 *   (each call a new instant), and 32 rows of a charge pass with four `Date` columns each as JSON
 *   through `JSON.stringify` against `PgSupport.jsonRows` (the fifteenth round);
 * - an amount read back from `numeric` text: the power of ten and product per call that
 *   `PgSupport.fromNumeric` made before the eighteenth round (copied here) against `fromNumeric`;
 * - a callback POST through `node:http` with a keep-alive agent against undici's pool, and against
 *   the transport's `send` (undici with the URL, destination and timeout checks), 32 at once, to a
 *   loopback receiver in another process (CPU time of this process per request);
 * - with `DATABASE_URL`: one sequential statement through `@effect/sql-pg` (CPU of this process).
 *
 *   ./run pnpm exec tsx --conditions=@paydesk/source bench/micro.ts
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres ./run pnpm exec tsx --conditions=@paydesk/source bench/micro.ts
 */
import { DateTime, Effect, References } from "effect"
import { Instant, Traced } from "@paydesk/core"
import { createHmac, randomBytes } from "node:crypto"
import * as http from "node:http"
import { HttpCallbackTransport } from "@paydesk/server"
import { Agent } from "undici"
import { NodeSecurity, PgStore, PgSupport } from "@paydesk/sql-pg"
import { SqlClient } from "effect/sql"
import * as LoopbackReceiver from "./LoopbackReceiver.js"

/** µs per call of `f` over `n` calls, after `n / 5` to warm up. */
const perCall = (f: () => unknown, n: number): number => {
  for (let i = 0; i < n / 5; i++) f()
  const started = performance.now()
  for (let i = 0; i < n; i++) f()
  return (performance.now() - started) * 1000 / n
}

const report = (what: string, baseline: [string, number], other: [string, number], unit = "µs") =>
  console.log(`${what}: ${baseline[0]} ${baseline[1].toFixed(2)} ${unit}, ${other[0]} ${other[1].toFixed(2)} ${unit}, ratio ${(baseline[1] / other[1]).toFixed(1)}`)

const main = async () => {
  const secret = `whsec_${"k".repeat(40)}`
  const body = JSON.stringify({ event_type: "payment.paid", data: { id: crypto.randomUUID(), amount: "1000.50", status: "paid" } })
  const keyOf = NodeSecurity.hmacKeys()
  report(
    "HMAC-SHA256 of a callback body",
    ["raw key as a Buffer", perCall(() => createHmac("sha256", Buffer.from(secret, "utf8")).update(body, "utf8").digest(), 100_000)],
    ["KeyObject", perCall(() => createHmac("sha256", keyOf(secret)).update(body, "utf8").digest(), 100_000)]
  )
  // A string key is not the slow path a Buffer is (measured after both are warm).
  report(
    "the same, a string key",
    ["string", perCall(() => createHmac("sha256", secret).update(body, "utf8").digest(), 100_000)],
    ["KeyObject", perCall(() => createHmac("sha256", keyOf(secret)).update(body, "utf8").digest(), 100_000)]
  )

  const traced = Effect.fn("micro.traced")(function*(n: number) {
    return n + 1
  })
  const untraced = Effect.fnUntraced(function*(n: number) {
    return n + 1
  })
  const calls = (f: (n: number) => Effect.Effect<number>) =>
    Effect.gen(function*() {
      let n = 0
      for (let i = 0; i < 1000; i++) n = yield* f(n)
      return n
    })
  report(
    "a call inside an Effect",
    ["Effect.fn(name)", perCall(() => Effect.runSync(calls(traced)), 100) / 1000],
    ["Effect.fnUntraced", perCall(() => Effect.runSync(calls(untraced)), 100) / 1000]
  )
  const either = Traced.fn("micro.either")(function*(n: number) {
    return n + 1
  })
  const unrecorded = <A>(effect: Effect.Effect<A>) => Effect.provideService(effect, References.TracerEnabled, false)
  report(
    "a call inside an Effect, span recording off",
    ["Effect.fn(name)", perCall(() => Effect.runSync(unrecorded(calls(traced))), 100) / 1000],
    ["Traced.fn(name)", perCall(() => Effect.runSync(unrecorded(calls(either))), 100) / 1000]
  )

  let instant = 1_772_262_000_000
  report(
    "an instant as ISO 8601 text",
    ["DateTime.formatIso", perCall(() => DateTime.formatIso(DateTime.makeUnsafe(instant++)), 200_000)],
    ["Instant.formatIso", perCall(() => Instant.formatIso(instant++), 200_000)]
  )
  const rows = Array.from({ length: 32 }, (_, i) => ({
    id: crypto.randomUUID(),
    terminal_id: crypto.randomUUID(),
    order_id: `sub-${crypto.randomUUID()}-${i}`,
    amount: "990.00",
    status: "paid",
    test_clock_id: null,
    created_at: new Date(instant + i),
    updated_at: new Date(instant + i),
    paid_at: new Date(instant + i + 1),
    settlement_converted_at: new Date(instant + i + 2),
    version: 2
  }))
  report(
    "32 rows with four Date columns as one JSON parameter",
    ["JSON.stringify", perCall(() => JSON.stringify(rows), 5_000)],
    ["PgSupport.jsonRows", perCall(() => PgSupport.jsonRows(rows), 5_000)]
  )

  /** `PgSupport.fromNumeric` before the eighteenth round. */
  const powerOfTen = (value: string, scale: number): bigint => {
    const negative = value.startsWith("-")
    const [whole = "0", fraction = ""] = (negative ? value.slice(1) : value).split(".")
    const padded = (fraction + "0".repeat(scale)).slice(0, scale)
    const minor = BigInt(whole) * 10n ** BigInt(scale) + (scale === 0 ? 0n : BigInt(padded))
    return negative ? -minor : minor
  }
  // The amounts of a charge's rows (scale 2) and of rates and USDT (scale 6), in turn.
  const amounts: ReadonlyArray<readonly [string, number]> = [["990.00", 2], ["1000.50", 2], ["0.01", 2], ["12345678.123456", 6], ["-5.500000", 6], ["7.000000", 6]]
  let next = 0
  report(
    "an amount read back from numeric text (scales 2 and 6)",
    ["power of ten", perCall(() => powerOfTen(...amounts[next++ % amounts.length]!), 1_000_000)],
    ["PgSupport.fromNumeric", perCall(() => PgSupport.fromNumeric(...amounts[next++ % amounts.length]!), 1_000_000)]
  )

  const pooled = NodeSecurity.pooledTokens()
  report(
    "a 24-byte token",
    ["randomBytes", perCall(() => randomBytes(24).toString("base64url"), 200_000)],
    ["pooledTokens", perCall(() => pooled(24), 200_000)]
  )

  const receiver = await LoopbackReceiver.start()
  const headers = { "content-type": "application/json", "x-signature": "a".repeat(64), "x-timestamp": "1780000000" }
  const agent = new http.Agent({ keepAlive: true })
  const viaNodeHttp = () =>
    new Promise<void>((ok, fail) => {
      const request = http.request(receiver.url, { method: "POST", agent, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } }, (response) => {
        response.resume()
        response.on("end", () => ok())
      })
      request.on("error", fail)
      request.end(body)
    })
  const pool = new Agent({ allowH2: false })
  const viaUndici = async () => {
    const answer = await pool.request({ origin: new URL(receiver.url).origin, path: "/cb", method: "POST", headers, body })
    await answer.body.dump()
  }
  const viaTransport = async () => {
    await HttpCallbackTransport.send({ url: receiver.url, headers, body, timeoutMs: 10_000 }, true)
  }
  /** CPU µs of this process per request, 32 in flight. */
  const cpuPerRequest = async (send: () => Promise<void>, n: number) => {
    const run = async (count: number) => {
      let left = count
      await Promise.all(Array.from({ length: 32 }, async () => {
        while (left-- > 0) await send()
      }))
    }
    await run(n / 5)
    const cpu = process.cpuUsage()
    await run(n)
    const used = process.cpuUsage(cpu)
    return (used.user + used.system) / n
  }
  const nodeHttp = await cpuPerRequest(viaNodeHttp, 20_000)
  const undici = await cpuPerRequest(viaUndici, 20_000)
  const transport = await cpuPerRequest(viaTransport, 20_000)
  report("a callback POST, 32 at once (CPU of this process)", ["node:http", nodeHttp], ["undici", undici])
  report("the same through HttpCallbackTransport.send (undici with the URL, destination and timeout checks)", ["node:http", nodeHttp], ["send", transport])
  await receiver.close()
  await pool.close()
  agent.destroy()

  const url = process.env.DATABASE_URL
  if (url !== undefined) {
    const statements = 5000
    const perStatement = await Effect.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (let i = 0; i < 200; i++) yield* sql`SELECT ${i}::int AS n`
      const cpu = process.cpuUsage()
      for (let i = 0; i < statements; i++) yield* sql`SELECT ${i}::int AS n`
      const used = process.cpuUsage(cpu)
      return { user: used.user / statements, system: used.system / statements }
    }).pipe(Effect.provide(PgStore.layerClient(url, { maxConnections: 1 }))))
    console.log(`a sequential statement through @effect/sql-pg: ${(perStatement.user + perStatement.system).toFixed(0)} µs of CPU (${perStatement.user.toFixed(0)} user, ${perStatement.system.toFixed(0)} system)`)
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
