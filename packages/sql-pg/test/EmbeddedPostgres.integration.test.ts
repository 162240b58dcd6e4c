import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "effect/sql"
import { existsSync, readFileSync } from "node:fs"
import { chmod, mkdtemp, rm } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as EmbeddedPostgres from "../src/EmbeddedPostgres.js"
import * as PgMigrations from "../src/PgMigrations.js"
import * as PgStore from "../src/PgStore.js"

const query = <A>(url: string, effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
  effect.pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })), Effect.orDie)

/** A fresh directory the embedded database's user can reach, and the data directory in it. */
const freshDataDir = Effect.promise(async () => {
  const dir = await mkdtemp(join(tmpdir(), "paydesk-embedded-"))
  await chmod(dir, 0o755)
  return { dir, dataDir: join(dir, "data") }
})

describe("EmbeddedPostgres", () => {
  it.live("keeps its data in the data directory across restarts, and migrations are safe to run twice", () =>
    Effect.gen(function*() {
      const { dir, dataDir } = yield* freshDataDir
      const first = yield* Effect.promise(() => EmbeddedPostgres.start({ dataDir }))
      const applied = yield* query(first.url, PgStore.migrate)
      assert.deepStrictEqual(applied.map(([id]) => id), Object.keys(PgMigrations.migrations).map((name) => Number(name.slice(0, 4))))
      yield* query(first.url, Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`INSERT INTO accounts (id, name, created_at) VALUES (${crypto.randomUUID()}, ${"kept"}, now())`))
      yield* Effect.promise(() => first.stop())

      const second = yield* Effect.promise(() => EmbeddedPostgres.start({ dataDir }))
      const again = yield* query(second.url, PgStore.migrate)
      assert.deepStrictEqual(again, [])
      const rows = yield* query(second.url, Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ name: string }>`SELECT name FROM accounts`))
      assert.deepStrictEqual(rows.map((r) => r.name), ["kept"])
      const recorded = yield* query(second.url, Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ count: bigint | string }>`SELECT count(*) AS count FROM paydesk_migrations`))
      assert.strictEqual(String(recorded[0]!.count), String(Object.keys(PgMigrations.migrations).length))
      yield* Effect.promise(() => second.stop())
      yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
    }), 120_000)

  it.live("a start whose postgres fails names PostgreSQL's reason, leaves no owner, and the next start works", () =>
    Effect.gen(function*() {
      const { dir, dataDir } = yield* freshDataDir
      const first = yield* Effect.promise(() => EmbeddedPostgres.start({ dataDir }))
      yield* Effect.promise(() => first.stop())
      // The port is taken: postgres cannot listen and exits.
      const blocker = createServer()
      yield* Effect.promise(() => new Promise<void>((ok) => blocker.listen(0, "127.0.0.1", ok)))
      const taken = (blocker.address() as { port: number }).port
      const failed = yield* Effect.promise(() => EmbeddedPostgres.start({ dataDir, port: taken }).then(() => "started", (error: Error) => error.message))
      yield* Effect.promise(() => new Promise<void>((ok) => blocker.close(() => ok())))
      assert.match(failed, /PostgreSQL stopped during its start in .*: [\s\S]*(could not bind|could not create listen socket)/)
      assert.isFalse(existsSync(join(dataDir, EmbeddedPostgres.ownerFileName)), "a failed start owns nothing")
      const again = yield* Effect.promise(() => EmbeddedPostgres.start({ dataDir }))
      assert.strictEqual(readFileSync(join(dataDir, EmbeddedPostgres.ownerFileName), "utf8").trim(), String(process.pid))
      yield* Effect.promise(() => again.stop())
      yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
    }), 120_000)
})
