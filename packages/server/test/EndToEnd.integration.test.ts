/**
 * End to end, as a user runs it: `./run start` (the built server on embedded PostgreSQL, traces
 * exported over OTLP to a local collector), checked through `/health/ready` and `/metrics`;
 * provisioning through the CLI (`./run paydesk`, its help, `--password-stdin`, a list as a table);
 * a sandbox payment simulated paid through the page's form, both signed callbacks verified on a
 * local receiver; the payment's trace at the collector; a clean stop on SIGTERM.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Signature } from "@paydesk/core"

const root = resolve(import.meta.dirname, "../../..")
const adminToken = "e2e-admin-token"

interface Received {
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: string
}

/** A span as OTLP/HTTP JSON carries it. */
interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly attributes?: ReadonlyArray<{ readonly key: string; readonly value: { readonly stringValue?: string; readonly intValue?: string | number } }>
}

let server: ChildProcess
let baseUrl = ""
let dataDir = ""
let receiver: Server
let receiverUrl = ""
let collector: Server
const received: Array<Received> = []
const spans: Array<OtlpSpan> = []
let output = ""

/** Runs `./run paydesk ...`; resolves with its exit code and output. */
const paydesk = (args: ReadonlyArray<string>, stdin?: string) =>
  new Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }>((ok) => {
    const child = execFile(join(root, "run"), ["paydesk", ...args], {
      cwd: root,
      env: { ...process.env, PAYDESK_URL: baseUrl, PAYDESK_ADMIN_TOKEN: adminToken }
    }, (error, stdout, stderr) => ok({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }))
    child.stdin!.end(stdin ?? "")
  })

const json = async (args: ReadonlyArray<string>, stdin?: string) => {
  const run = await paydesk(args, stdin)
  if (run.code !== 0) throw new Error(`paydesk ${args.join(" ")}: exit ${run.code}\n${run.stderr}`)
  return JSON.parse(run.stdout)
}

const waitFor = async <A>(what: string, check: () => A | undefined, timeoutMs = 30_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; server output:\n${output}`)
    await new Promise((ok) => setTimeout(ok, 100))
  }
}

const listen = async (handler: Parameters<typeof createServer>[1]) => {
  const http = createServer(handler)
  await new Promise<void>((ok) => http.listen(0, "127.0.0.1", ok))
  const address = http.address()
  return { http, url: `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}` }
}

const bodyOf = (request: import("node:http").IncomingMessage) =>
  new Promise<string>((ok) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => ok(Buffer.concat(chunks).toString("utf8")))
  })

beforeAll(async () => {
  const callbacks = await listen(async (request, response) => {
    received.push({ headers: request.headers, body: await bodyOf(request) })
    response.writeHead(200).end("ok")
  })
  receiver = callbacks.http
  receiverUrl = `${callbacks.url}/callbacks`
  // A stand-in for an OpenTelemetry collector: OTLP/HTTP JSON at /v1/traces.
  const otlp = await listen(async (request, response) => {
    const text = await bodyOf(request)
    if (request.url === "/v1/traces") {
      const document = JSON.parse(text) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<OtlpSpan> }> }> }
      for (const resource of document.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans)
    }
    response.writeHead(200, { "content-type": "application/json" }).end("{}")
  })
  collector = otlp.http

  dataDir = mkdtempSync(join(tmpdir(), "paydesk-e2e-"))
  chmodSync(dataDir, 0o755)
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: "0",
    HOST: "127.0.0.1",
    PAYDESK_DATA_DIR: dataDir,
    PAYDESK_ADMIN_TOKEN: adminToken,
    PAYDESK_WORK_INTERVAL_MS: "200",
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    // The receiver is on 127.0.0.1.
    PAYDESK_CALLBACK_ALLOW_PRIVATE: "1"
  }
  delete env.DATABASE_URL
  // `./run start`'s own allocator settings, not the caller's.
  delete env.MALLOC_ARENA_MAX
  delete env.GLIBC_TUNABLES
  // `./run start` builds when needed, then execs node on the built server: this pid is the server's.
  server = spawn(join(root, "run"), ["start"], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
  server.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  server.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  baseUrl = await waitFor("the server to listen", () => /paydesk listening on (http:\/\/\S+)/.exec(output)?.[1], 600_000)
}, 660_000)

afterAll(async () => {
  if (server?.exitCode === null) server.kill("SIGKILL")
  receiver?.close()
  collector?.close()
  if (dataDir !== "") rmSync(dataDir, { recursive: true, force: true })
})

describe("reference server end to end (./run start)", () => {
  it("runs the built JavaScript and is ready: database, migrations, worker", async () => {
    const ready = await fetch(`${baseUrl}/health/ready`)
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({
      status: "ready",
      checks: {
        database: { ok: true, detail: "reachable" },
        migrations: { ok: true, detail: "all applied" },
        worker: { ok: true, detail: expect.stringMatching(/^running/) }
      }
    })
    // The process `./run start` left running is node on packages/server/dist/main.js.
    const { stdout } = await new Promise<{ stdout: string }>((ok, fail) =>
      execFile("ps", ["-o", "args=", "-p", String(server.pid)], (error, out) => (error === null ? ok({ stdout: out }) : fail(error))))
    expect(stdout.trim()).toMatch(/node .*packages\/server\/dist\/main\.js$/)
    // With glibc's allocator settings (two arenas, 128 KiB mapping and trim thresholds). glibc
    // parses GLIBC_TUNABLES in place, so its separator may read as a NUL in the process's environ.
    const environment = readFileSync(`/proc/${server.pid}/environ`, "utf8")
    expect(environment.split("\0")).toContain("MALLOC_ARENA_MAX=2")
    expect(environment.replaceAll("\0", ":")).toContain("GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072")
    // Not the embedded PostgreSQL's: the server removed them before starting it.
    const postmaster = readdirSync(dataDir, { recursive: true, encoding: "utf8" }).find((file) => file.endsWith("postmaster.pid"))
    expect(postmaster).toBeDefined()
    const postgresPid = readFileSync(join(dataDir, postmaster!), "utf8").split("\n")[0]!.trim()
    const postgresEnvironment = readFileSync(`/proc/${postgresPid}/environ`, "utf8")
    expect(postgresEnvironment).toContain("PAYDESK_DATA_DIR=")
    expect(postgresEnvironment).not.toMatch(/MALLOC_ARENA_MAX|GLIBC_TUNABLES|PAYDESK_ALLOCATOR_ENV/)
  })

  it("drives the CLI: help at every level, provisioning with --password-stdin, a list as a table", async () => {
    const help = await paydesk(["--help"])
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/Usage: paydesk[\s\S]*accounts[\s\S]*deliveries/)
    expect(help.stderr).toBe("")
    // A reader that goes away (`paydesk --help | head -n 1`): the CLI stops quietly, no EPIPE stack trace.
    const cut = await new Promise<{ readonly code: number | null; readonly stderr: string }>((ok) => {
      const child = spawn(join(root, "run"), ["paydesk", "--help"], { cwd: root, stdio: ["ignore", "pipe", "pipe"] })
      child.stdout.destroy()
      let stderr = ""
      child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString()))
      child.on("close", (code) => ok({ code, stderr }))
    })
    expect(cut).toEqual({ code: 0, stderr: "" })
    const groupHelp = await paydesk(["terminals", "--help"])
    expect([groupHelp.code, groupHelp.stdout]).toEqual([0, expect.stringContaining("update [options] <terminal_id>")])
    const usage = await paydesk(["accounts", "create", "--name", "x"])
    expect(usage.code).toBe(2)

    const account = await json(["accounts", "create", "--name", "Coffee Roasters", "--email", "owner@coffee.example", "--password-stdin"], "correct horse battery\n")
    expect(account.account_id).toMatch(/^[0-9a-f-]{36}$/)
    const table = await paydesk(["accounts", "list", "--table"])
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/^ID +NAME +CREATED_AT\n.*Coffee Roasters/)
    const missing = await paydesk(["accounts", "get", crypto.randomUUID()])
    expect([missing.code, missing.stderr]).toEqual([1, "paydesk: 404 not_found: account not found\n"])
  }, 120_000)

  it("takes a sandbox payment paid through the page form, delivers both signed callbacks, and traces it", async () => {
    const account = (await json(["accounts", "list"])).items[0]
    const terminal = await json(["terminals", "create", "--account", account.id, "--name", "Main shop", "--callback-url", receiverUrl])
    expect(terminal.api_key).toMatch(/^pd_/)

    const created = await fetch(`${baseUrl}/api/v1/payments`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": terminal.api_key, "x-nonce": crypto.randomUUID() },
      body: JSON.stringify({ amount: "1000,50", order_id: "ord-1001", test: true })
    })
    expect(created.status).toBe(201)
    const payment = await created.json()
    expect(payment.pay_url.startsWith(baseUrl)).toBe(true)

    const page = await (await fetch(payment.pay_url)).text()
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page)?.[1]
    expect(csrf).toBeDefined()
    const simulated = await fetch(`${payment.pay_url}/simulate`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ outcome: "paid", csrf_token: csrf! }).toString(),
      redirect: "manual"
    })
    expect([200, 303]).toContain(simulated.status)

    const both = await waitFor("two callbacks", () => (received.length >= 2 ? received.slice(0, 2) : undefined))
    expect(both.map((r) => JSON.parse(r.body).event_type)).toEqual(["payment.created", "payment.paid"])
    for (const request of both) {
      expect(request.headers["x-test-mode"]).toBe("true")
      const verdict = await Effect.runPromise(Signature.verify({
        secret: terminal.signing_secret,
        timestamp: String(request.headers["x-timestamp"]),
        body: request.body,
        signature: String(request.headers["x-signature"])
      }))
      expect(verdict).toEqual({ ok: true })
    }
    expect(JSON.parse(both[1]!.body)).toMatchObject({ payment_id: payment.id, order_id: "ord-1001", status: "paid", amount: "1000.50", currency: "RUB", test: true })
    const listed = await json(["payments", "list", "--terminal", terminal.terminal_id, "--environment", "all"])
    expect(listed.items.map((p: { id: string; status: string }) => [p.id, p.status])).toEqual([[payment.id, "paid"]])
    // The worker logged what its passes did.
    await waitFor("a worker summary line", () => (/"msg":"work: [^"]*callbacks/.test(output) ? true : undefined))

    // The creation's trace reached the collector: the HTTP span, the use case and its SQL.
    const trace = await waitFor("the payment's trace at the collector", () => {
      const http = spans.find((s) => s.name === "POST /api/v1/payments")
      if (http === undefined) return undefined
      const same = spans.filter((s) => s.traceId === http.traceId)
      return same.some((s) => s.name === "Payments.create") && same.some((s) => (s.attributes ?? []).some((a) => a.key === "db.query.text")) ? same : undefined
    }, 30_000)
    // One statement writes the payment with its event and delivery (a data-modifying CTE).
    const sql = trace.filter((s) => (s.attributes ?? []).some((a) => a.key === "db.query.text" && a.value.stringValue?.includes("INSERT INTO payments")))
    expect(sql).toHaveLength(1)
  }, 120_000)

  it("serves Prometheus metrics behind the operator token", async () => {
    expect((await fetch(`${baseUrl}/metrics`)).status).toBe(401)
    const metrics = await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } })
    expect(metrics.status).toBe(200)
    const text = await metrics.text()
    expect(text).toMatch(/^paydesk_http_request_duration_seconds_count\{method="POST",route="\/api\/v1\/payments",status="201"\} 1$/m)
    expect(text).toMatch(/^paydesk_payments\{status="paid",environment="sandbox"\} 1$/m)
    expect(text).toMatch(/^paydesk_callback_attempts_total\{result="delivered"\} [1-9]/m)
    expect(text).toMatch(/^paydesk_due_work_lag_seconds\{kind="deliveries"\} 0$/m)
    expect(text).toMatch(/^paydesk_db_pool_max_connections 10$/m)
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m)
  })

  it("stops cleanly on SIGTERM and says so", async () => {
    const exited = new Promise<number | null>((ok) => server.once("exit", (code) => ok(code)))
    server.kill("SIGTERM")
    expect(await exited).toBe(0)
    expect(output).toMatch(/HTTP server closed: in-flight requests finished/)
    // What the stop waits for, and when the worker is done.
    expect(output).toMatch(/"msg":"worker stopping: ending its round[^"]*"[\s\S]*"msg":"worker stopped \(\d+ ms\)"[\s\S]*embedded PostgreSQL stopped/)
    expect(output).toMatch(/embedded PostgreSQL stopped[\s\S]*"msg":"paydesk stopped"/)
  }, 60_000)
})
