/**
 * Benchmark: `POST /api/v1/payments` over HTTP against the built reference server, next to `pgbench`
 * running the server's own SQL transaction on the same database in the same run, as a ratio.
 *
 * The server is the built JavaScript (`node packages/server/dist/main.js`, as `./run start` runs it:
 * its node flags, allocator settings and log level, `info` with a line per request, unless `LOG_LEVEL`
 * is set) on a fresh database (`DATABASE_URL`'s server, else an embedded PostgreSQL started for the run).
 * autocannon drives it with `CONNECTIONS` connections for `SECONDS` seconds, each request a sandbox
 * payment with a fresh `X-Nonce` and `order_id`, after 2 s of the same load unmeasured (each phase's
 * server is a fresh process, whose code runs unoptimized at first). Three phases:
 *
 *   1. `PAYDESK_ENGINE=off`: the HTTP path alone;
 *   2. `PAYDESK_ENGINE=local` with the terminal's callbacks going to a loopback receiver: every
 *      `payment.created` is delivered while the requests come in (the count delivered is reported,
 *      with the receiver's CPU per callback: it stands in for the merchant's server, but shares
 *      this machine's cores).
 *
 *   3. two server processes on the one database (`PAYDESK_ENGINE=off`), each driven with half the
 *      connections at the same time: the throughput of both together (on these 2-core machines the
 *      two processes, PostgreSQL and autocannon share the same cores).
 *
 * pgbench runs the statements one creation makes (the API key with its nonce, the terminal, the
 * payment, its outbox event and delivery, in the server's transactions) with `CONNECTIONS` clients,
 * for `SECONDS`, twice: before phase 1 (once the merchant is set up, the server idle) and after the
 * last phase. Both are printed, and the ratios are to their mean: this machine's pgbench drifts by
 * tens of percent within minutes, and the two runs show how much it did during the phases. (The
 * phases therefore run on tables holding the first run's payments too.) pgbench's latency (p50, p99,
 * mean: bench/Pgbench.ts) is printed beside its rate, with the mean latency clients / throughput of
 * both. After phase 1 a bare route (bench/bare-route.ts: the server's Fastify answering the same
 * requests with a canned 201, no database) is driven at phase 1's rate: the floor under the server's
 * own CPU per request.
 * The server's resident memory is sampled during each phase, and the CPU time that the server,
 * PostgreSQL's processes and autocannon spent in it is reported per request (from /proc; steadier
 * than the rates). The server's own view of each phase is printed beside autocannon's: the share of
 * requests it took more than 25 ms to answer (its latency histogram on `/metrics`), its event-loop
 * delay p99, and how much of the phase its main thread ran and waited for a CPU (/proc's schedstat:
 * on these 2-core machines the tail is mostly that wait). After phase 1, four CSV exports of the
 * phase's payments (10,000 rows each, the most one export gives) are asked at once from the same
 * server (which builds them one at a time; a terminal has 2 waiting at most, the others are asked
 * again after their 429's `Retry-After`), and its RSS during them is reported.
 *
 *   ./run pnpm bench:http                        # builds first, then measures
 *   SECONDS=20 CONNECTIONS=32 ./run pnpm bench:http
 *   PROFILE=1 ./run pnpm bench:http               # also writes a CPU profile of the server (phase 1) to bench/profiles/
 *   PROFILE=2 PHASES=2 ./run pnpm bench:http      # the same of the server with the engine (phase 2, its start and backlog drain included; with ENGINE_APART=1 also of phase 2b's engine process)
 *   STATEMENTS=1 DATABASE_URL=... ./run pnpm bench:http   # also PostgreSQL's own times of the server's statements in phases 1 and 2, per request (from its log: LOG=, see StatementLog.ts)
 *   ENGINE_APART=1 ./run pnpm bench:http          # also phase 2b: phase 2's load on a server without the engine, the engine in a second process
 *   PHASES=1 ./run pnpm bench:http                # phase 1 only (PHASES=2: phases 1 and 2)
 *   ALLOCATIONS=1 ./run pnpm bench:http           # also samples the server's allocations in phase 1 (inspector; KB per request, top sites; the profile to bench/profiles/)
 *   ALLOCATIONS=survivors ./run pnpm bench:http   # the same for what lived through a scavenge (the old generation's garbage)
 *   ALLOCATIONS=1 ALLOCATIONS_PHASE=2 PHASES=2 ./run pnpm bench:http   # the same in phase 2 (KB per request, callbacks included)
 *   CPU_WINDOW=2 PHASES=2 ./run pnpm bench:http   # a CPU profile of the server over phase 2's measured seconds only (inspector, sampled every
 *                                                 # PROFILE_INTERVAL_US, default 1000; to bench/profiles/): PROFILE=2's includes the backlog drained before them
 *   SERVER_MAIN=/elsewhere/packages/server/dist/main.js ./run pnpm bench:http   # another build (e.g. a worktree of an older commit)
 *   NODE_FLAGS="--max-semi-space-size=4" ./run pnpm bench:http   # the server's node flags (default: ./run start's, --max-semi-space-size=4 --max-old-space-size=192 --heap-growing-percent=100)
 *   SERVER_CPUS=0 ./run pnpm bench:http          # the servers (and the bare route) on CPU 0 only (taskset -c), e.g. with PostgreSQL moved to the other one
 *   CLIENT_NICE=-10 ./run pnpm bench:http        # autocannon's thread at that nice value while it drives (below 0 as root): its latencies without its own wait for a CPU
 *   SERVER_OUTPUT=/tmp/server.log NODE_FLAGS="--max-semi-space-size=4 --max-old-space-size=192 --heap-growing-percent=100 --trace-gc" ./run pnpm bench:http   # keeps each server's output (the last one's) in a file
 */
import autocannon from "autocannon"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { PgStore } from "@paydesk/sql-pg"
import { spawn, type ChildProcess } from "node:child_process"
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { getPriority, setPriority, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import * as BenchDatabase from "./BenchDatabase.js"
import { creationScript } from "./CreationScript.js"
import * as AllocationSampler from "./AllocationSampler.js"
import * as LoopbackReceiver from "./LoopbackReceiver.js"
import * as Pgbench from "./Pgbench.js"
import * as ProcessCpu from "./ProcessCpu.js"
import * as StatementLog from "./StatementLog.js"

const root = resolve(import.meta.dirname, "..")
const seconds = Number(process.env.SECONDS ?? 10)
const connections = Number(process.env.CONNECTIONS ?? 32)
const phases = Number(process.env.PHASES ?? 3)
const profile = process.env.PROFILE === "1"
const profileEngine = process.env.PROFILE === "2"
const engineApart = process.env.ENGINE_APART === "1"
const statements = process.env.STATEMENTS === "1"
if (statements && process.env.DATABASE_URL === undefined) throw new Error("STATEMENTS=1 needs DATABASE_URL (a server whose log this process can read)")
const allocations = process.env.ALLOCATIONS === "1" || process.env.ALLOCATIONS === "survivors"
const survivors = process.env.ALLOCATIONS === "survivors"
/** The phase whose allocations are sampled: 1 (the HTTP path alone) or 2 (with the engine delivering). */
const allocationPhase = process.env.ALLOCATIONS_PHASE === "2" ? 2 : 1
/** The phase whose measured seconds are CPU-profiled through the inspector (`CPU_WINDOW`: 1 or 2), if any. */
const cpuWindow = process.env.CPU_WINDOW === "1" ? 1 : process.env.CPU_WINDOW === "2" ? 2 : null
/** `CPU_WINDOW`'s sampling interval, µs (`PROFILE_INTERVAL_US`, as bench:work's; `PROFILE=1|2` use Node's default). */
const cpuIntervalUs = Number(process.env.PROFILE_INTERVAL_US ?? 1000)
if (!Number.isInteger(cpuIntervalUs) || cpuIntervalUs < 1) throw new Error("PROFILE_INTERVAL_US must be a whole number of microseconds, 1 or more")
if (cpuWindow === 2 && phases < 2) throw new Error("CPU_WINDOW=2 needs phase 2 (PHASES=2 or more)")
/** Whether phase `n`'s server is started with its inspector open (allocations or a CPU window sampled). */
const inspected = (n: 1 | 2) => (allocations && allocationPhase === n) || cpuWindow === n
const clientNice = process.env.CLIENT_NICE === undefined ? undefined : Number(process.env.CLIENT_NICE)
const adminToken = "bench-admin-token-0123456789abcdef"

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms))

const freePort = () => new Promise<number>((ok, fail) => {
  const probe = createServer()
  probe.once("error", fail)
  probe.listen(0, "127.0.0.1", () => {
    const address = probe.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    probe.close(() => ok(port))
  })
})

/** Resident set size of `pid` in MB (from /proc, so no tool is needed). */
const rssMb = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))
  return line === undefined ? 0 : Number(line.replace(/\D+/g, "")) * 1024 / 1e6
}

interface Running {
  readonly url: string
  readonly process: ChildProcess
  /** The inspector's address when started with `inspect`. */
  readonly inspector: string | null
  /** Whether it is the reference server (with `/metrics`), not the bare route. */
  readonly reference: boolean
  stop(): Promise<void>
}

/**
 * The server's allocator settings, as `./run start` sets them (`SERVER_ENV="MALLOC_ARENA_MAX=8 …"`,
 * space-separated, replaces them; `SERVER_ENV=` runs without).
 */
const serverEnv: Record<string, string> = process.env.SERVER_ENV !== undefined
  ? Object.fromEntries(process.env.SERVER_ENV.split(" ").filter((pair) => pair.includes("=")).map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]))
  // As `./run start`: the caller's own values win.
  : Object.fromEntries(Object.entries({
    MALLOC_ARENA_MAX: "2",
    GLIBC_TUNABLES: "glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072"
  }).filter(([name]) => process.env[name] === undefined))

/** Starts the built server on `databaseUrl`; resolves once it listens. */
const startServer = async (databaseUrl: string, env: Record<string, string>, cpuProfileDir?: string, inspect = false, bare = false): Promise<Running> => {
  const port = await freePort()
  const flags = [
    ...(process.env.NODE_FLAGS ?? "--max-semi-space-size=4 --max-old-space-size=192 --heap-growing-percent=100").split(" ").filter(Boolean),
    ...(cpuProfileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${cpuProfileDir}`]),
    ...(inspect ? ["--inspect=127.0.0.1:0"] : [])
  ]
  const main = bare ? join(root, "bench", "bare-route.ts") : process.env.SERVER_MAIN ?? join(root, "packages/server/dist/main.js")
  // SERVER_CPUS: the servers on those CPUs only (taskset's list), to see the server with cores of its own.
  const cpus = process.env.SERVER_CPUS
  const logDir = mkdtempSync(join(tmpdir(), "paydesk-bench-server-"))
  const logFile = join(logDir, "stdout.log")
  const logFd = openSync(logFile, "w")
  const removeLog = () => rmSync(logDir, { recursive: true, force: true })
  const child = spawn(cpus === undefined ? process.execPath : "taskset", [...(cpus === undefined ? [] : ["-c", cpus, process.execPath]), ...flags, main], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: "127.0.0.1",
      PAYDESK_ADMIN_TOKEN: adminToken,
      ...serverEnv,
      ...env
    },
    // stdout (the server's log: at `./run start`'s level, info unless LOG_LEVEL says otherwise, a line
    // per request, tens of MB a phase) to a file, so that no reader in this process (autocannon's)
    // spends its CPU on it; stderr (the inspector's address, warnings) to this process.
    stdio: ["ignore", logFd, "pipe"]
  })
  closeSync(logFd)
  let errors = ""
  child.stderr!.on("data", (chunk: Buffer) => (errors += chunk.toString()))
  /** stderr, and the log's first 64 KiB and last 256 KiB (all of it when `whole`). */
  const output = (whole = false) => {
    const log = readFileSync(logFile)
    const text = whole || log.length <= 320 * 1024
      ? log.toString()
      : `${log.subarray(0, 64 * 1024).toString()}\n[… ${log.length - 320 * 1024} bytes of the log left out …]\n${log.subarray(-256 * 1024).toString()}`
    return errors + text
  }
  let failed: Error | undefined
  // E.g. SERVER_CPUS without taskset on the machine.
  child.once("error", (error) => (failed = error))
  const exited = new Promise<void>((ok) => child.once("exit", () => ok()))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    if (failed !== undefined) {
      removeLog()
      throw new Error(`the server could not be started: ${failed.message}`)
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      if (child.exitCode === null) child.kill("SIGKILL")
      const text = output()
      removeLog()
      throw new Error(`the server did not start:\n${text}`)
    }
    const ready = await fetch(`${url}/health/ready`).then((r) => r.ok, () => false)
    if (ready) break
    await sleep(100)
  }
  return {
    url,
    process: child,
    inspector: AllocationSampler.inspectorUrl(errors),
    reference: !bare,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM")
      await exited
      if (process.env.SERVER_OUTPUT) writeFileSync(process.env.SERVER_OUTPUT, output(true))
      removeLog()
    }
  }
}

const admin = async (url: string, path: string, body: unknown) => {
  const response = await fetch(`${url}/admin/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const json = await response.json() as Record<string, unknown>
  if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`)
  return json
}

/** A merchant account with one terminal whose callbacks go to `callbackUrl`. */
const provision = async (url: string, callbackUrl: string) => {
  const account = await admin(url, "/accounts", { name: "Bench", owner_email: `bench-${crypto.randomUUID()}@bench.example`, owner_password: "correct horse battery staple" })
  const terminal = await admin(url, "/terminals", { account_id: account.account_id, name: "Bench shop", callback_url: callbackUrl })
  return { terminalId: terminal.terminal_id as string, apiKey: terminal.api_key as string }
}

interface Measured {
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
  readonly non2xx: number
  readonly total: number
  readonly rssMaxMb: number
  /** The server's own view of the phase (none for the bare route, nor for two processes together: each has its own). */
  readonly view?: {
    /** The share of the requests the server itself took more than 25 ms to answer (see `serverView`). */
    readonly over25Ms: number
    /** The server's event-loop delay p99 during the phase, in ms. */
    readonly loopDelayP99Ms: number
  }
  /** CPU spent during the phase (the server's, PostgreSQL's, autocannon's). */
  readonly cpu: ProcessCpu.Spent
}

/**
 * The server's own view (`/metrics`): how many `POST /api/v1/payments` it answered with 201 (not
 * the ones autocannon leaves unanswered at its end, observed as 499) and how many of those within
 * 25 ms (its latency histogram: from the request's arrival in Fastify to the answer), and the event
 * loop's delay p99 since the last scrape (prom-client resets it on each one).
 */
const serverView = async (server: Running) => {
  const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } })).text()
  // A metric's lines with every one of `labels` (in any order), summed.
  const sum = (metric: string, ...labels: Array<string>) =>
    text.split("\n")
      .filter((line) => line.startsWith(`${metric}{`) || line.startsWith(`${metric} `))
      .filter((line) => labels.every((label) => line.slice(0, line.lastIndexOf(" ")).includes(label)))
      .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(" ") + 1)), 0)
  const creations = ['method="POST"', 'route="/api/v1/payments"', 'status="201"']
  return {
    answered: sum("paydesk_http_request_duration_seconds_count", ...creations),
    within25ms: sum("paydesk_http_request_duration_seconds_bucket", ...creations, 'le="0.025"'),
    loopDelayP99Ms: 1000 * sum("nodejs_eventloop_lag_p99_seconds")
  }
}

/**
 * With `CLIENT_NICE`: `drive` runs autocannon with this thread at that nice value (root may go below
 * 0; Linux sets a thread's own), and puts back the one before when the last of the drives running at
 * once ends (phase 3 runs two).
 */
let nicedDrives = 0
let niceBefore = 0
const niced = async <A>(body: () => Promise<A>): Promise<A> => {
  if (clientNice === undefined) return body()
  if (nicedDrives++ === 0) {
    niceBefore = getPriority()
    setPriority(clientNice)
  }
  try {
    return await body()
  } finally {
    if (--nicedDrives === 0) {
      try {
        setPriority(niceBefore)
      } catch (error) {
        // Lowering the value back needs root: say so, and go on at the value set.
        console.log(`(CLIENT_NICE: the nice value ${niceBefore} could not be put back: ${String(error)})`)
      }
    }
  }
}

/** Drives `POST /api/v1/payments` for `duration` seconds; every request a new nonce and order_id. */
const drive = async (server: Running, apiKey: string, tag: string, duration: number, clients = connections, rate?: number): Promise<Measured> => {
  let n = 0
  const viewBefore = server.reference ? await serverView(server) : null
  const rss: Array<number> = []
  const sampler = setInterval(() => rss.push(rssMb(server.process.pid!)), 500)
  const cpu = ProcessCpu.start(server.process.pid!)
  const result = await niced(() => autocannon({
    url: `${server.url}/api/v1/payments`,
    connections: clients,
    duration,
    // At most this many requests per second in all (the bare route at the reference's rate).
    ...(rate === undefined ? {} : { overallRate: Math.max(1, Math.round(rate)) }),
    requests: [{
      method: "POST",
      setupRequest: (request) => ({
        ...request,
        headers: {
          "content-type": "application/json",
          "x-api-key": apiKey,
          "x-nonce": crypto.randomUUID()
        },
        body: `{"amount":"1000.50","order_id":"${tag}-${n++}","description":"bench","test":true}`
      })
    }]
  }))
  clearInterval(sampler)
  const spent = cpu.stop()
  const viewAfter = viewBefore === null ? null : await serverView(server)
  const answered = viewBefore === null || viewAfter === null ? 0 : viewAfter.answered - viewBefore.answered
  return {
    ...(viewBefore === null || viewAfter === null ? {} : {
      view: {
        over25Ms: answered === 0 ? 0 : 1 - (viewAfter.within25ms - viewBefore.within25ms) / answered,
        loopDelayP99Ms: viewAfter.loopDelayP99Ms
      }
    }),
    requestsPerSecond: result.requests.total / duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    total: result.requests.total,
    rssMaxMb: Math.max(0, ...rss),
    cpu: spent
  }
}

/** The body of one creation's answer (201), as the bare route gives it back. */
const created = async (server: Running, apiKey: string): Promise<string> => {
  const response = await fetch(`${server.url}/api/v1/payments`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": apiKey, "x-nonce": crypto.randomUUID() },
    body: JSON.stringify({ amount: "1000.50", order_id: `answer-${crypto.randomUUID()}`, description: "bench", test: true })
  })
  const body = await response.text()
  if (response.status !== 201) throw new Error(`a creation answered ${response.status}: ${body}`)
  return body
}

/**
 * Four CSV exports asked at once (each up to 10,000 payments); all must succeed. One terminal has at
 * most 2 waiting or being built (`exportsPerScope`): the others are answered 429 and asked again after
 * their `Retry-After`, as a client would.
 */
const exports = async (server: Running, apiKey: string) => {
  const rss: Array<number> = []
  const sampler = setInterval(() => rss.push(rssMb(server.process.pid!)), 100)
  const started = performance.now()
  let retried = 0
  const exportOnce = async (): Promise<{ readonly status: number; readonly rows: number }> => {
    const response = await fetch(`${server.url}/api/v1/payments?format=csv&environment=sandbox`, { headers: { "x-api-key": apiKey, "x-nonce": crypto.randomUUID() } })
    const text = await response.text()
    if (response.status === 429 && retried < 20) {
      retried++
      await sleep(1000 * Number(response.headers.get("retry-after") ?? 1))
      return exportOnce()
    }
    return { status: response.status, rows: text.split("\r\n").length - 2 }
  }
  const answers = await Promise.all(Array.from({ length: 4 }, exportOnce))
  clearInterval(sampler)
  const failed = answers.filter((a) => a.status !== 200)
  console.log(`CSV exports, 4 asked at once (${retried} asked again after a 429): ${answers.map((a) => `${a.status} (${a.rows} rows)`).join(", ")} in ${((performance.now() - started) / 1000).toFixed(1)} s, server RSS max ${Math.max(0, ...rss).toFixed(0)} MB`)
  if (failed.length > 0) throw new Error("a CSV export failed")
}

const sha256Hex = async (text: string) =>
  Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))).toString("hex")

const perRequest = (us: number, m: Measured) => (us / Math.max(1, m.total)).toFixed(0)
/** The server's CPU per request in µs. */
const serverCpuPerRequest = (m: Measured) => m.cpu.server / Math.max(1, m.total)

/**
 * With `STATEMENTS=1`: PostgreSQL's time for the statements the server's database logged since `from`
 * (a phase: nothing else runs on it then), per request, by kind (the five longest), and how many rows
 * each statement of a batch held (the batched authentications' and attempt records' JSON rows carry an `ord`).
 */
const statementReport = (from: number, databaseUrl: string, m: Measured) => {
  const kinds = StatementLog.byKind(StatementLog.steps(StatementLog.since(from), StatementLog.databaseOf(databaseUrl)))
  const total = kinds.reduce((sum, k) => sum + k.ms, 0)
  console.log(`  PostgreSQL's statement time per request: ${perRequest(total * 1000, m)} µs, ${(100 * kinds.reduce((sum, k) => sum + k.bindMs, 0) / Math.max(1, total)).toFixed(0)} % of it in bind (planning); the longest kinds:`)
  for (const k of kinds.slice(0, 5)) {
    const rows = k.parameters.reduce((sum, p) => sum + p.split("\"ord\":").length - 1, 0)
    const held = rows === 0 ? "" : `, ${(rows / Math.max(1, k.count)).toFixed(1)} rows each`
    console.log(`    ${(k.count / Math.max(1, m.total)).toFixed(3)} per request, ${perRequest(k.ms * 1000, m)} µs (bind ${perRequest(k.bindMs * 1000, m)})${held}: ${k.kind}`)
  }
}

/** `alongside`: another process ran at the same time, so PostgreSQL's and autocannon's CPU is not this one's alone. */
const report = (name: string, m: Measured, alongside = false) => {
  console.log(`${name}: ${m.requestsPerSecond.toFixed(0)} requests/s, p50 ${m.p50} ms, p99 ${m.p99} ms, ${m.errors} errors, ${m.non2xx} non-2xx of ${m.total}, server RSS max ${m.rssMaxMb.toFixed(0)} MB`)
  if (m.view !== undefined) {
    const share = (us: number) => `${(100 * us / Math.max(1, m.cpu.wall)).toFixed(0)} %`
    console.log(`  in the server: ${(100 * m.view.over25Ms).toFixed(1)} % of the requests over 25 ms from arrival to answer, event-loop delay p99 ${m.view.loopDelayP99Ms.toFixed(1)} ms; its main thread ran ${share(m.cpu.mainThread.running)} of the phase and waited for a CPU ${share(m.cpu.mainThread.waiting)}`)
  }
  const server = `server ${perRequest(m.cpu.server, m)} µs (${perRequest(m.cpu.serverSystem, m)} in the kernel)`
  console.log(alongside
    ? `  CPU per request: ${server}`
    : `  CPU per request: ${server}, PostgreSQL ${perRequest(m.cpu.postgres, m)} µs, autocannon ${perRequest(m.cpu.self, m)} µs; machine ${(100 * m.cpu.busy).toFixed(0)} % busy`)
}

/**
 * Drives `http` as `drive` does once earlier phases' callbacks are delivered, and reports it with the
 * callbacks the receiver got meanwhile; `engine`, when the engine runs in another process, has its
 * CPU per callback reported too.
 */
const driveDelivering = async (receiver: Awaited<ReturnType<typeof LoopbackReceiver.start>>, http: Running, apiKey: string, tag: string, title: string, databaseUrl: string, engine?: Running, n?: 2) => {
  await drained(receiver, databaseUrl)
  const delivered = await receiver.received()
  const logFrom = statements ? StatementLog.position() : 0
  const engineCpu = engine === undefined ? undefined : ProcessCpu.start(engine.process.pid!)
  const receiverCpu = ProcessCpu.startOne(receiver.pid)
  const measured = await sampled(http, n, () => drive(http, apiKey, tag, seconds))
  const engineSpent = engineCpu?.stop()
  const receiverSpent = receiverCpu.stop()
  report(title, measured)
  const during = await receiver.received() - delivered
  const engineShare = engineSpent === undefined ? "" : `, the engine process's CPU ${(engineSpent.server / Math.max(1, during)).toFixed(0)} µs per callback`
  console.log(`callbacks delivered during the phase: ${during} (${(during / seconds).toFixed(0)}/s)${engineShare}; the receiver's CPU ${(receiverSpent / Math.max(1, during)).toFixed(0)} µs per callback`)
  if (statements) statementReport(logFrom, databaseUrl, measured)
  return measured
}

/**
 * Runs `phase` (phase `n` of the bench) with the server's allocations sampled when `ALLOCATIONS` names
 * it, and its CPU profiled when `CPU_WINDOW` does, and prints what the sampling saw per request (the
 * profiles to bench/profiles/).
 */
const sampled = async (server: Running, n: 1 | 2 | undefined, phase: () => Promise<Measured>): Promise<Measured> => {
  const inspector = n === undefined ? null : server.inspector
  const sampling = inspector !== null && allocations && allocationPhase === n ? await AllocationSampler.start(inspector, { survivors }) : null
  const profiling = inspector !== null && cpuWindow === n ? await AllocationSampler.startCpu(inspector, cpuIntervalUs) : null
  const measured = await phase()
  // Both stopped at once, before anything is written: the engine goes on delivering meanwhile.
  const [profile, seen] = await Promise.all([profiling?.stop(), sampling?.stop()])
  if (profile === undefined && seen === undefined) return measured
  mkdirSync(join(root, "bench", "profiles"), { recursive: true })
  if (profile !== undefined) {
    const file = join(root, "bench", "profiles", `http-phase${n}-${Date.now()}.cpuprofile`)
    writeFileSync(file, JSON.stringify(profile))
    console.log(`the server's CPU profile over the phase's measured seconds: ${file}`)
  }
  if (seen === undefined) return measured
  const what = survivors
    ? "allocated in the server during the phase and lived through a scavenge (sampled)"
    : "allocated in the server during the phase (sampled, collected objects included)"
  console.log(`${what}: ${(seen.bytes / 1e6).toFixed(0)} MB, ${(seen.bytes / 1024 / measured.total).toFixed(0)} KB per request; the sites with the most:`)
  for (const { site, bytes } of seen.top) console.log(`  ${(100 * bytes / seen.bytes).toFixed(1).padStart(5)} %  ${site}`)
  const file = join(root, "bench", "profiles", `http-phase${n}-${Date.now()}.heapprofile`)
  writeFileSync(file, JSON.stringify(seen.profile))
  console.log(`  the whole sampled profile: ${file}`)
  return measured
}

/** Deliveries still pending in the bench's database. */
const pendingDeliveries = (databaseUrl: string): Promise<number> =>
  Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM deliveries WHERE status = 'pending'`).pipe(
    Effect.map((rows) => rows[0]!.n),
    Effect.provide(PgStore.layerClient(databaseUrl, { maxConnections: 1 }))
  ))

/**
 * Waits until the earlier phases' and pgbench's deliveries are all delivered (none pending in the
 * database) and the receiver got nothing for a second, at most 2 minutes: the phase then measures the
 * engine keeping up with new payments, not draining a backlog. (A freshly started engine's first pass
 * comes after its interval, so the receiver alone can look quiet before the backlog has started.)
 */
const drained = async (receiver: Awaited<ReturnType<typeof LoopbackReceiver.start>>, databaseUrl: string) => {
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline) {
    const before = await receiver.received()
    await sleep(1000)
    if (await receiver.received() === before && await pendingDeliveries(databaseUrl) === 0) return
  }
  console.log(`(${await pendingDeliveries(databaseUrl)} earlier deliveries still pending after 2 minutes: the phase counts some of them)`)
}

/** pgbench on the statements of `merchant`'s creations: its transactions per second and their latency. */
const creationTps = async (databaseUrl: string, merchant: { readonly terminalId: string; readonly apiKey: string }) =>
  Pgbench.run(databaseUrl, creationScript({ terminalId: merchant.terminalId, apiKeyHash: await sha256Hex(merchant.apiKey), description: "bench" }), { clients: connections, seconds })

const main = async () => {
  const { url: databaseUrl, stop } = await BenchDatabase.open()
  /** pgbench before the phases and after them. */
  const baseline: Array<Pgbench.Run> = []
  const receiver = await LoopbackReceiver.start()
  const profileDir = profile ? join(root, "bench", "profiles") : undefined
  const engineProfileDir = profileEngine ? join(root, "bench", "profiles") : undefined
  for (const dir of [profileDir, engineProfileDir]) if (dir !== undefined) mkdirSync(dir, { recursive: true })
  try {
    // Before the servers connect: every connection to the database logs its statements.
    if (statements) await StatementLog.enable(process.env.DATABASE_URL!, StatementLog.databaseOf(databaseUrl))
    console.log(`bench:http: ${connections} connections, ${seconds} s per phase, database ${databaseUrl.replace(/\/\/[^@]*@/, "//")}`)
    // Phase 1: the HTTP path alone.
    const plain = await startServer(databaseUrl, { PAYDESK_ENGINE: "off", PAYDESK_CALLBACK_ALLOW_PRIVATE: "1" }, profileDir, inspected(1))
    let merchant: Awaited<ReturnType<typeof provision>>
    let alone: Measured
    let answer: string
    try {
      merchant = await provision(plain.url, receiver.url)
      answer = await created(plain, merchant.apiKey)
      // Its payments stay (deleted, and the tables analysed, the planner took them for near empty: phase 1
      // ran at half speed), and phase 2's engine delivers their callbacks before it is measured.
      baseline.push(await creationTps(databaseUrl, merchant))
      await drive(plain, merchant.apiKey, "warm", 2)
      const logFrom = statements ? StatementLog.position() : 0
      alone = await sampled(plain, 1, () => drive(plain, merchant.apiKey, "alone", seconds))
      report("HTTP, engine off", alone)
      if (statements) statementReport(logFrom, databaseUrl, alone)
      await exports(plain, merchant.apiKey)
    } finally {
      await plain.stop()
    }

    // The bare route: Node and Fastify answering the same requests with a real creation's answer, no
    // work behind it, at phase 1's rate (a CPU figure per request falls as the rate rises).
    const bareServer = await startServer(databaseUrl, { BARE_ANSWER: answer }, undefined, false, true)
    let bare: Measured
    try {
      await drive(bareServer, merchant.apiKey, "bare-warm", 2, connections, alone.requestsPerSecond)
      bare = await drive(bareServer, merchant.apiKey, "bare", seconds, connections, alone.requestsPerSecond)
      report("bare route at phase 1's rate (Fastify taking the same requests, a canned 201, no database)", bare)
    } finally {
      await bareServer.stop()
    }

    let withEngine: Measured | null = null
    if (phases >= 2) {
      // Phase 2: the local engine delivers every payment.created to the loopback receiver meanwhile.
      const engine = await startServer(databaseUrl, { PAYDESK_ENGINE: "local", PAYDESK_CALLBACK_ALLOW_PRIVATE: "1" }, engineProfileDir, inspected(2))
      try {
        // Warmed as phases 1 and 3 are: a fresh process's request path runs unoptimized at first (the
        // engine's is warmed by the backlog it drains, these payments' callbacks included, before the phase).
        await drive(engine, merchant.apiKey, "engine-warm", 2)
        withEngine = await driveDelivering(receiver, engine, merchant.apiKey, "engine", "HTTP, local engine delivering", databaseUrl, undefined, 2)
      } finally {
        await engine.stop()
      }
    }

    let apart: Measured | null = null
    if (engineApart && phases >= 2) {
      // Phase 2b: the same load on an HTTP process without the engine, and the engine in a second
      // process on the database (woken by its interval only: wakeups do not cross processes).
      const http = await startServer(databaseUrl, { PAYDESK_ENGINE: "off", PAYDESK_CALLBACK_ALLOW_PRIVATE: "1" })
      let worker: Running | undefined
      try {
        worker = await startServer(databaseUrl, { PAYDESK_ENGINE: "local", PAYDESK_CALLBACK_ALLOW_PRIVATE: "1", PAYDESK_WORK_INTERVAL_MS: "50" }, engineProfileDir)
        await drive(http, merchant.apiKey, "apart-warm", 2)
        apart = await driveDelivering(receiver, http, merchant.apiKey, "apart", "HTTP, engine in a second process (interval 50 ms)", databaseUrl, worker)
      } finally {
        await Promise.all([http.stop(), worker?.stop()])
      }
    }

    let together: Measured | null = null
    if (phases >= 3) {
      // Phase 3: two processes on the one database, half the connections each, at the same time.
      const pair = [
        await startServer(databaseUrl, { PAYDESK_ENGINE: "off", PAYDESK_CALLBACK_ALLOW_PRIVATE: "1" }),
        await startServer(databaseUrl, { PAYDESK_ENGINE: "off", PAYDESK_CALLBACK_ALLOW_PRIVATE: "1" })
      ]
      const half = Math.max(1, Math.floor(connections / 2))
      try {
        await Promise.all(pair.map((server, i) => drive(server, merchant.apiKey, `warm-${i}`, 2, half)))
        const each = await Promise.all(pair.map((server, i) => drive(server, merchant.apiKey, `pair-${i}`, seconds, half)))
        each.forEach((m, i) => report(`HTTP, process ${i + 1} of 2 (${half} connections)`, m, true))
        together = {
          requestsPerSecond: each.reduce((sum, m) => sum + m.requestsPerSecond, 0),
          p50: Math.max(...each.map((m) => m.p50)),
          p99: Math.max(...each.map((m) => m.p99)),
          errors: each.reduce((sum, m) => sum + m.errors, 0),
          non2xx: each.reduce((sum, m) => sum + m.non2xx, 0),
          total: each.reduce((sum, m) => sum + m.total, 0),
          rssMaxMb: Math.max(...each.map((m) => m.rssMaxMb)),
          // The two windows are the same seconds: PostgreSQL's, autocannon's and the machine's are counted once.
          cpu: {
            ...each[0]!.cpu,
            server: each.reduce((sum, m) => sum + m.cpu.server, 0),
            serverSystem: each.reduce((sum, m) => sum + m.cpu.serverSystem, 0)
          }
        }
        report("HTTP, two processes together (p50/p99/RSS: the higher of the two)", together)
      } finally {
        await Promise.all(pair.map((server) => server.stop()))
      }
    }

    baseline.push(await creationTps(databaseUrl, merchant))
    const tps = (baseline[0]!.tps + baseline[1]!.tps) / 2
    console.log(`pgbench, the server's statements (${connections} clients): ${Pgbench.describe(baseline[0]!)} before the phases, ${Pgbench.describe(baseline[1]!)} after; the ratios are to their mean, ${tps.toFixed(0)}`)
    // Little's law: at a fixed number of clients the mean latency is clients / throughput.
    console.log(`mean latency at ${connections} connections (clients / throughput, Little's law): HTTP engine off ${(1000 * connections / alone.requestsPerSecond).toFixed(1)} ms mean, pgbench ${(1000 * connections / tps).toFixed(1)} ms (its own mean ${baseline[0]!.meanMs.toFixed(1)} and ${baseline[1]!.meanMs.toFixed(1)} ms)`)
    // (Not with phase 1's server profiled or sampled: its CPU per request is inflated then.)
    if (profileDir === undefined && !inspected(1)) {
      console.log(`the server's own CPU per request beyond the bare route's at the same rate, engine off: ${(serverCpuPerRequest(alone) - serverCpuPerRequest(bare)).toFixed(0)} µs`)
    }
    console.log(`ratio HTTP / pgbench: ${(alone.requestsPerSecond / tps).toFixed(2)} (target >= 1.0, p99 < 25 ms, 0 errors; p99 ${alone.p99} ms against pgbench's ${baseline[0]!.p99Ms.toFixed(0)} and ${baseline[1]!.p99Ms.toFixed(0)} ms)`)
    if (withEngine !== null) console.log(`ratio HTTP with the engine delivering / pgbench: ${(withEngine.requestsPerSecond / tps).toFixed(2)} (target >= 0.7)`)
    if (apart !== null) console.log(`ratio HTTP with the engine in a second process / pgbench: ${(apart.requestsPerSecond / tps).toFixed(2)}`)
    if (together !== null) console.log(`ratio two processes together / pgbench: ${(together.requestsPerSecond / tps).toFixed(2)}`)
    if (profileDir !== undefined) console.log(`CPU profile of the server in ${profileDir}`)
    if (engineProfileDir !== undefined && withEngine !== null) console.log(`CPU profiles of the server with the engine${apart === null ? "" : " and of phase 2b's engine process"} in ${engineProfileDir}`)
  } finally {
    await receiver.close()
    await stop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
