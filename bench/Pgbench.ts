/**
 * pgbench on a script of the benches' own (the baseline of bench:http and bench:payments): its
 * transactions per second, and the latency of its transactions (from its per-transaction log,
 * `-l`: the time of each transaction in µs), as the database's own figures at the same clients.
 * At a fixed number of clients the mean latency is clients / throughput (Little's law), so a
 * latency target is a throughput target too: the log shows what the database itself gives.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export interface Run {
  readonly tps: number
  /** Its transactions' latency in ms: the median, the 99th percentile and the mean. */
  readonly p50Ms: number
  readonly p99Ms: number
  readonly meanMs: number
}

/** The `q` quantile of sorted values (nearest rank). */
const quantile = (sorted: ReadonlyArray<number>, q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!

/** Runs `script` with `clients` clients for `seconds` on `databaseUrl`. */
export const run = (databaseUrl: string, script: string, options: { readonly clients: number; readonly seconds: number }): Run => {
  const dir = mkdtempSync(join(tmpdir(), "paydesk-pgbench-"))
  try {
    const file = join(dir, "script.sql")
    writeFileSync(file, script)
    const output = execFileSync("pgbench", [
      "-n", "-M", "prepared", "-c", String(options.clients), "-j", "2", "-T", String(options.seconds),
      "-l", "--log-prefix", join(dir, "log"), "-f", file, databaseUrl
    ], { encoding: "utf8", cwd: dir })
    const match = /tps = ([\d.]+) \(without initial connection time\)/.exec(output)
    if (match === null) throw new Error(`pgbench said:\n${output}`)
    // One file per thread; a line per transaction: client, transaction, its time in µs, script, epoch, µs.
    const latencies = readdirSync(dir).filter((name) => name.startsWith("log.")).flatMap((name) =>
      readFileSync(join(dir, name), "utf8").split("\n").filter((line) => line !== "").map((line) => Number(line.split(" ")[2]) / 1000))
    if (latencies.length === 0 || latencies.some((ms) => !Number.isFinite(ms))) throw new Error("pgbench wrote no transaction log")
    latencies.sort((a, b) => a - b)
    return {
      tps: Number(match[1]),
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
      meanMs: latencies.reduce((sum, ms) => sum + ms, 0) / latencies.length
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** "1,234 transactions/s (p50 12 ms, p99 30 ms)". */
export const describe = (run: Run): string =>
  `${run.tps.toFixed(0)} transactions/s (p50 ${run.p50Ms.toFixed(0)} ms, p99 ${run.p99Ms.toFixed(0)} ms)`
