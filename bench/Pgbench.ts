/**
 * pgbench on a script of the benches' own (the baseline of bench:http and bench:payments): its
 * transactions per second, and the latency of its transactions (from its per-transaction log,
 * `-l`: the time of each transaction in µs), as the database's own figures at the same clients.
 * At a fixed number of clients the mean latency is clients / throughput (Little's law), so a
 * latency target is a throughput target too: the log shows what the database itself gives.
 * (Writing the log costs pgbench little; the baselines before round fourteen ran without it.)
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
  /** Transactions the log marks `failed` (not in the latencies). */
  readonly failed: number
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
    // One file per thread; a line per transaction: client, transaction, its time in µs (or `failed`,
    // `skipped`), script, epoch, µs.
    const times = readdirSync(dir).filter((name) => name.startsWith("log.")).flatMap((name) =>
      readFileSync(join(dir, name), "utf8").split("\n").filter((line) => line !== "").map((line) => line.split(" ")[2]!))
    const latencies = times.filter((time) => /^\d+$/.test(time)).map((us) => Number(us) / 1000)
    if (latencies.length === 0) throw new Error(`pgbench logged no transaction it completed:\n${output}`)
    latencies.sort((a, b) => a - b)
    return {
      tps: Number(match[1]),
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
      meanMs: latencies.reduce((sum, ms) => sum + ms, 0) / latencies.length,
      failed: times.length - latencies.length
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** "1234 transactions/s (p50 12.1 ms, p99 30.4 ms)", and the failed ones if any. */
export const describe = (run: Run): string =>
  `${run.tps.toFixed(0)} transactions/s (p50 ${run.p50Ms.toFixed(1)} ms, p99 ${run.p99Ms.toFixed(1)} ms${run.failed === 0 ? "" : `, ${run.failed} failed`})`
