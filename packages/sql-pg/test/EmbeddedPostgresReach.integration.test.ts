/**
 * Embedded PostgreSQL as root in a checkout the `postgres` user cannot enter (a clone under /root,
 * mode 0700): the cluster moves under a directory it can reach (the data directory becomes a link
 * to it) and keeps its data across restarts; binaries it cannot reach are run from a linked copy,
 * removed at stop. Runs as root only (PostgreSQL runs as `postgres` only then).
 */
import { describe, expect, it } from "vitest"
import { Effect, Redacted } from "effect"
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { existsSync, lstatSync, readdirSync, realpathSync, statSync } from "node:fs"
import { chmod, cp, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import * as EmbeddedPostgres from "../src/EmbeddedPostgres.js"
import * as Reach from "../src/EmbeddedPostgresReach.js"

const asRoot = process.getuid?.() === 0

const sql = <A extends object>(url: string, text: string) =>
  Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (client) => client.unsafe<A>(text)).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))
  ))

/** A directory only root can enter, like /root. */
const closedDir = async (prefix: string) => {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  await chmod(dir, 0o700)
  return dir
}

/** A directory anyone can enter. */
const openDir = async (prefix: string) => {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  await chmod(dir, 0o755)
  return dir
}

describe.runIf(asRoot)("embedded PostgreSQL as root, out of the postgres user's reach", () => {
  it("a data directory under a closed directory: the cluster lives where postgres can reach it, the data directory links to it, data survives a restart", async () => {
    const closed = await closedDir("paydesk-closed-")
    const clusterRoot = join(await openDir("paydesk-clusters-"), "postgres")
    const dataDir = join(closed, "checkout", ".data", "postgres")
    try {
      const user = Reach.postgresUser()
      expect(Reach.canReach(user, dirname(dataDir))).toBe(false)
      const first = await EmbeddedPostgres.start({ dataDir, clusterRoot })
      try {
        await sql(first.url, "CREATE TABLE kept (note text)")
        await sql(first.url, "INSERT INTO kept VALUES ('before the restart')")
      } finally {
        await first.stop()
      }
      expect(lstatSync(dataDir).isSymbolicLink()).toBe(true)
      const cluster = realpathSync(dataDir)
      expect(dirname(cluster)).toBe(clusterRoot)
      expect(statSync(cluster).uid).toBe(user.uid)
      expect(statSync(cluster).mode & 0o777).toBe(0o700)
      // The password file is in the cluster, root's own, 0600.
      expect(statSync(join(dataDir, EmbeddedPostgres.passwordFileName)).mode & 0o777).toBe(0o600)

      const second = await EmbeddedPostgres.start({ dataDir, clusterRoot })
      try {
        expect(await sql<{ note: string }>(second.url, "SELECT note FROM kept")).toEqual([{ note: "before the restart" }])
      } finally {
        await second.stop()
      }
    } finally {
      await rm(closed, { recursive: true, force: true })
      await rm(dirname(clusterRoot), { recursive: true, force: true })
    }
  }, 120_000)

  it("a data directory with data postgres cannot reach is refused with a message naming it, not moved", async () => {
    const closed = await closedDir("paydesk-closed-")
    const clusterRoot = join(await openDir("paydesk-clusters-"), "postgres")
    const dataDir = join(closed, "data")
    try {
      await cp(join(import.meta.dirname, "..", "package.json"), join(dataDir, "PG_VERSION"))
      await expect(Reach.clusterDirectory(Reach.postgresUser(), dataDir, clusterRoot)).rejects.toThrow(`data directory ${dataDir} holds data the postgres user cannot reach`)
      expect(existsSync(clusterRoot)).toBe(false)
    } finally {
      await rm(closed, { recursive: true, force: true })
      await rm(dirname(clusterRoot), { recursive: true, force: true })
    }
  }, 60_000)

  it("binaries under a closed directory run from a linked copy that is removed at stop", async () => {
    const closed = await closedDir("paydesk-closed-")
    const dataDir = join(await openDir("paydesk-staged-"), "data")
    try {
      const native = join(closed, "native")
      await cp(dirname(dirname((await Reach.binaries()).initdb)), native, { recursive: true, verbatimSymlinks: true })
      const user = Reach.postgresUser()
      expect(Reach.canReach(user, join(native, "bin", "postgres"))).toBe(false)
      // A file of this copy's own marks its stage among those other test files' clusters make at the same time.
      const marker = `marker-${randomBytes(8).toString("hex")}`
      await writeFile(join(native, marker), "")
      const port = await EmbeddedPostgres.freePort()
      const password = randomBytes(16).toString("hex")
      const cluster = await Reach.staged({
        user, dataDir, port, password, native, persistent: false, log: () => undefined,
        postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="]
      })
      const stages = readdirSync(tmpdir()).filter((name) => name.startsWith("paydesk-postgres-") && existsSync(join(tmpdir(), name, "native", marker)))
      expect(stages).toHaveLength(1)
      try {
        await cluster.initialise()
        await cluster.start()
        const rows = await sql<{ user: string }>(`postgres://postgres:${password}@127.0.0.1:${port}/postgres`, "SELECT current_user AS user")
        expect(rows).toEqual([{ user: "postgres" }])
      } finally {
        await cluster.stop()
      }
      expect(existsSync(join(tmpdir(), stages[0]!))).toBe(false)
      expect(existsSync(dataDir)).toBe(false)
    } finally {
      await rm(closed, { recursive: true, force: true })
      await rm(dirname(dataDir), { recursive: true, force: true })
    }
  }, 120_000)
})
