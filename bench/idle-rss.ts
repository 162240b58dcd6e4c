/**
 * Idle resident memory of the built reference server, started the way a user starts it
 * (`./run start`: it builds first when the sources changed, then runs `node packages/server/dist/main.js`).
 * The server gets a fresh data directory with embedded PostgreSQL (or `DATABASE_URL`), runs its local
 * worker on the default 1 s interval, and is measured after `IDLE_SECONDS` (default 30) of no
 * requests: `SAMPLES` readings of its RSS, one a second (the embedded PostgreSQL is a separate
 * process and not counted). Target: below 120 MB. Stops it with SIGTERM.
 *
 *   ./run pnpm bench:rss
 *   IDLE_SECONDS=60 SAMPLES=20 ./run pnpm bench:rss
 */
import { execFileSync, spawn } from "node:child_process"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

const root = resolve(import.meta.dirname, "..")
const idleSeconds = Number(process.env.IDLE_SECONDS ?? 30)
const samples = Number(process.env.SAMPLES ?? 10)
const targetMb = 120

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms))

/** Resident set size of `pid` in MB (`ps`, in KiB). */
const rssMb = (pid: number): number => Number(execFileSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" }).trim()) * 1024 / 1e6

const main = async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "paydesk-rss-"))
  chmodSync(dataDir, 0o755)
  const env = { ...process.env, PORT: "0", HOST: "127.0.0.1", PAYDESK_DATA_DIR: dataDir, PAYDESK_ADMIN_TOKEN: "bench-admin-token", LOG_LEVEL: "warn" }
  // `./run start` ends with `exec node ...`: the child's pid is the server's.
  const server = spawn(join(root, "run"), ["start"], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  server.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
  server.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<number | null>((ok) => server.once("exit", (code) => ok(code)))
  try {
    const deadline = Date.now() + 600_000
    while (!output.includes("paydesk listening on")) {
      if (server.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start:\n${output}`)
      await sleep(100)
    }
    console.log(`server ${server.pid} listening; idle for ${idleSeconds} s, then ${samples} readings`)
    await sleep(idleSeconds * 1000)
    const readings: Array<number> = []
    for (let i = 0; i < samples; i++) {
      readings.push(rssMb(server.pid!))
      await sleep(1000)
    }
    const sorted = [...readings].sort((a, b) => a - b)
    const median = sorted[Math.floor(sorted.length / 2)]!
    const max = sorted.at(-1)!
    console.log(`readings (MB): ${readings.map((r) => r.toFixed(1)).join(" ")}`)
    console.log(`idle RSS of the built server (./run start): median ${median.toFixed(1)} MB, max ${max.toFixed(1)} MB (target < ${targetMb} MB: ${max < targetMb ? "met" : "NOT met"})`)
  } finally {
    if (server.exitCode === null) server.kill("SIGTERM")
    console.log(`server stopped with exit code ${await exited}`)
    rmSync(dataDir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
