/**
 * The database of a benchmark run: a fresh database on `DATABASE_URL`'s server (dropped by `stop`),
 * or on an embedded PostgreSQL started for the run (stopped and removed by `stop`).
 */
import { Effect } from "effect"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EmbeddedPostgres, PgStore } from "@paydesk/sql-pg"

/** Creates the database; returns its URL and how to clean up. */
export const open = async (): Promise<{ readonly url: string; stop(): Promise<void> }> => {
  let serverUrl = process.env.DATABASE_URL
  let stop = async () => {}
  if (serverUrl === undefined) {
    const dir = mkdtempSync(join(tmpdir(), "paydesk-bench-"))
    chmodSync(dir, 0o755)
    const running = await EmbeddedPostgres.start({ dataDir: join(dir, "data"), persistent: false })
    serverUrl = running.url
    stop = async () => {
      await running.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
  const name = `paydesk_bench_${Date.now().toString(36)}`
  const url = await Effect.runPromise(PgStore.createDatabase(serverUrl, name))
  const server = serverUrl
  return {
    url,
    stop: async () => {
      // On a server of one's own the run's database goes with it (an embedded server goes whole).
      if (process.env.DATABASE_URL !== undefined) await Effect.runPromise(PgStore.dropDatabases(server, name))
      await stop()
    }
  }
}
