/**
 * What a `worker_threads` worker running the engine would add to the server's resident memory, at
 * least: this process loads the built packages the engine needs (`effect`, `@paydesk/core`,
 * `@paydesk/sql-pg`), then starts a worker that loads them too, opens a pool of `POOL` connections
 * and runs `QUERIES` statements on it. The RSS before and after is printed (the worker's own heap,
 * code and pool; an engine's passes would add their working set on top).
 *
 * Run it with plain Node and the server's settings (`./run start`'s allocator and heap flags; the
 * worker gets a young generation of the server's size), not through tsx, whose loader this process
 * and its heap would carry:
 *
 *   MALLOC_ARENA_MAX=2 GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072 \
 *     DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
 *     ./run node --max-semi-space-size=4 --max-old-space-size=192 --heap-growing-percent=100 bench/worker-rss.ts
 *
 * Needs the packages built (`./run pnpm build`): the worker loads their `dist` (Node 24 strips this
 * file's types itself).
 */
import { Worker } from "node:worker_threads"

const url = process.env.DATABASE_URL
if (url === undefined) throw new Error("worker-rss: set DATABASE_URL (a PostgreSQL server to query)")
const queries = Number(process.env.QUERIES ?? 2000)
const pool = Number(process.env.POOL ?? 4)

const rssMb = () => Math.round(process.memoryUsage().rss / 1048576)
const settle = () => new Promise((resolve) => setTimeout(resolve, 500))

await import("effect")
await import("@paydesk/core")
await import("@paydesk/sql-pg")
await settle()
const before = rssMb()

// Plain JavaScript, without this process's flags, as a worker of the built server would run; it loads
// the packages' builds. Its young generation is the server's (`--max-semi-space-size=4`).
const worker = new Worker(`
  const { parentPort, workerData } = require("node:worker_threads")
  ;(async () => {
    const { Effect } = await import("effect")
    const { SqlClient } = await import("effect/sql")
    await import("@paydesk/core")
    const { PgStore } = await import("@paydesk/sql-pg")
    const program = Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (let i = 0; i < workerData.queries; i++) yield* sql\`SELECT \${i}::int AS n\`
    })
    await Effect.runPromise(Effect.scoped(Effect.provide(program, PgStore.layerClient(workerData.url, { maxConnections: workerData.pool }))))
    parentPort.postMessage("done")
  })().catch((error) => { console.error(error); process.exit(1) })
`, { eval: true, execArgv: [], resourceLimits: { maxYoungGenerationSizeMb: 12 }, workerData: { url, queries, pool } })
await new Promise((resolve, reject) => {
  worker.once("message", resolve)
  worker.once("error", reject)
  worker.once("exit", (code) => reject(new Error(`worker-rss: the worker exited with code ${code} (its error is above)`)))
})
await settle()
const after = rssMb()
console.log(`RSS with the packages loaded: ${before} MB; with a worker that loaded them and ran ${queries} statements on a pool of ${pool}: ${after} MB (+${after - before} MB)`)
await worker.terminate()
