/**
 * Test-run setup of the Postgres suites: the targets they run against.
 *
 * - `DATABASE_URL` when set, else an embedded PostgreSQL 18 started once for the run;
 * - the machine's PostgreSQL service (`PAYDESK_TEST_SERVICE_URL`, default
 *   postgres://postgres@127.0.0.1:5432/test) when it answers.
 * Each suite then creates its own database on each target, named with the run's prefix; the
 * run's databases on servers that outlive it are dropped at its end.
 */
import { chmod, mkdtemp, rm } from "node:fs/promises"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import * as EmbeddedPostgres from "../src/EmbeddedPostgres.js"
import * as PgStore from "../src/PgStore.js"

declare module "vitest" {
  export interface ProvidedContext {
    pgTargets: ReadonlyArray<{ readonly name: string; readonly url: string }>
    /** The prefix of every database this run creates (`paydesk_<run>_`); dropped at the end of the run. */
    pgPrefix: string
  }
}

const reachable = (url: string): Promise<boolean> =>
  new Promise((ok) => {
    const { hostname, port } = new URL(url)
    const socket = connect({ host: hostname, port: Number(port || 5432) })
    socket.setTimeout(1000)
    socket.on("connect", () => (socket.destroy(), ok(true)))
    socket.on("timeout", () => (socket.destroy(), ok(false)))
    socket.on("error", () => ok(false))
  })

export default async function setup(project: TestProject) {
  const targets: Array<{ name: string; url: string }> = []
  let stop = async () => {}
  if (process.env.DATABASE_URL) {
    targets.push({ name: "DATABASE_URL", url: process.env.DATABASE_URL })
  } else {
    const dir = await mkdtemp(join(tmpdir(), "paydesk-pg-"))
    await chmod(dir, 0o755)
    const running = await EmbeddedPostgres.start({ dataDir: join(dir, "data"), persistent: false })
    targets.push({ name: "embedded PostgreSQL 18", url: running.url })
    stop = async () => {
      await running.stop()
      await rm(dir, { recursive: true, force: true })
    }
  }
  const service = process.env.PAYDESK_TEST_SERVICE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
  if (service !== process.env.DATABASE_URL && (await reachable(service))) {
    targets.push({ name: "PostgreSQL service", url: service })
  } else if (process.env.CI) {
    console.warn(`[paydesk] PostgreSQL service at ${service} not reachable: Postgres suites run on one target only`)
  }
  const prefix = `paydesk_${Date.now().toString(36)}${randomBytes(2).toString("hex")}_`
  project.provide("pgTargets", targets)
  project.provide("pgPrefix", prefix)
  return async () => {
    // Servers that outlive the run (DATABASE_URL, the machine's service) keep nothing of it.
    for (const target of targets.slice(process.env.DATABASE_URL ? 0 : 1)) {
      await Effect.runPromise(PgStore.dropDatabases(target.url, prefix)).catch((error) =>
        console.warn(`[paydesk] could not drop this run's databases on ${target.name}: ${String(error)}`))
    }
    await stop()
  }
}
