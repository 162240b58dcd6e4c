/**
 * CPU time of processes from /proc (Linux), so a bench can say where a request's CPU went: the
 * server, PostgreSQL's processes, the load generator. Such figures are steadier than rates on a
 * shared 2-core machine, whose speed drifts.
 */
import { readdirSync, readFileSync } from "node:fs"

/** Clock ticks per second of /proc's utime and stime (USER_HZ: 100 on Linux's usual builds, `getconf CLK_TCK`). */
const ticksPerSecond = 100

/** utime and stime of `pid` in µs (0 when it is gone). */
const timesOf = (pid: number): { readonly user: number; readonly system: number } => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // The fields after the command name (which may hold spaces) start at the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return { user: Number(fields[11]) * 1e6 / ticksPerSecond, system: Number(fields[12]) * 1e6 / ticksPerSecond }
  } catch {
    return { user: 0, system: 0 }
  }
}

/** utime + stime of `pid` in µs. */
const cpuOf = (pid: number): number => {
  const times = timesOf(pid)
  return times.user + times.system
}

/** The pids of the processes named `postgres` (backends, checkpointer, WAL writer…; of every cluster on the machine). */
const postgresPids = (): Array<number> =>
  readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "postgres"
    } catch {
      return false
    }
  })

/**
 * A process's main thread (its event loop) from /proc/<pid>/task/<pid>/schedstat: ns on a CPU and ns
 * runnable but waiting for one (zeros when it is gone or the kernel keeps no schedstats).
 */
const mainThreadOf = (pid: number): { readonly running: number; readonly waiting: number } => {
  try {
    const [running, waiting] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").trim().split(" ").map(Number)
    return { running: running!, waiting: waiting! }
  } catch {
    return { running: 0, waiting: 0 }
  }
}

/** Whole-machine busy and total time in ticks, from /proc/stat's first line. */
const machine = (): { readonly busy: number; readonly total: number } => {
  const values = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
  const total = values.reduce((sum, v) => sum + v, 0)
  // idle and iowait are the 4th and 5th.
  return { busy: total - values[3]! - values[4]!, total }
}

export interface Spent {
  /** µs of CPU of the given process. */
  readonly server: number
  /** The part of `server` spent in the kernel (socket reads and writes, mostly). */
  readonly serverSystem: number
  /** µs of CPU of PostgreSQL's processes (one started meanwhile counts whole; one that exited meanwhile is missed). */
  readonly postgres: number
  /** µs of CPU of this process (the bench: the load generator, with its samplers). */
  readonly self: number
  /** Share of the machine's CPU time that was busy, 0–1. */
  readonly busy: number
  /** µs the server's main thread (its event loop) ran, and µs it was ready to run but waited for a CPU. */
  readonly mainThread: { readonly running: number; readonly waiting: number }
  /** µs of wall time from `start` to `stop`. */
  readonly wall: number
}

/** Starts counting the CPU of one process; `stop` answers its µs spent meanwhile. */
export const startOne = (pid: number): { stop(): number } => {
  const before = cpuOf(pid)
  return { stop: () => cpuOf(pid) - before }
}

/** Starts counting; `stop` answers the CPU each side spent meanwhile. */
export const start = (serverPid: number): { stop(): Spent } => {
  const server = timesOf(serverPid)
  const thread = mainThreadOf(serverPid)
  const started = performance.now()
  const pids = postgresPids()
  const postgres = new Map(pids.map((pid) => [pid, cpuOf(pid)]))
  const self = process.cpuUsage()
  const before = machine()
  return {
    stop: () => {
      const used = process.cpuUsage(self)
      const after = machine()
      let spentByPostgres = 0
      for (const pid of postgresPids()) {
        spentByPostgres += cpuOf(pid) - (postgres.get(pid) ?? 0)
      }
      const serverNow = timesOf(serverPid)
      const threadNow = mainThreadOf(serverPid)
      return {
        server: serverNow.user + serverNow.system - server.user - server.system,
        serverSystem: serverNow.system - server.system,
        postgres: spentByPostgres,
        self: used.user + used.system,
        busy: (after.busy - before.busy) / Math.max(1, after.total - before.total),
        mainThread: { running: (threadNow.running - thread.running) / 1000, waiting: (threadNow.waiting - thread.waiting) / 1000 },
        wall: (performance.now() - started) * 1000
      }
    }
  }
}

/**
 * What `spent` says beside an engine bench's own figures, per `unit` of `count`: PostgreSQL's CPU
 * (every `postgres` process on the machine), how busy the machine was, and how long this process's
 * main thread waited for a CPU.
 */
export const besideEngine = (spent: Spent, count: number, unit: string): string =>
  `PostgreSQL ${(spent.postgres / count).toFixed(0)} µs of CPU per ${unit} (every postgres process on the machine), ` +
  `the machine ${(100 * spent.busy).toFixed(0)} % busy, the main thread waiting for a CPU ${(100 * spent.mainThread.waiting / spent.wall).toFixed(0)} % of the time`
