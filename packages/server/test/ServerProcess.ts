/**
 * Test harness for the reference server as a real OS process (`node dist/main.js`, or the sources
 * through tsx when the build is stale: `ServerProgram`; no wrapper process, so a signal reaches the
 * server itself), an HTTP client that retries
 * while the server is down, and direct SQL access to the server's database for assertions.
 */
import { Effect, ManagedRuntime } from "effect"
import { PgStore } from "@paydesk/sql-pg"
import { type ChildProcess, spawn } from "node:child_process"
import { createServer } from "node:http"
import { chmodSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "effect/sql"
import { serverDir, serverProgram } from "./ServerProgram.js"

/** A running server process. */
export interface ServerProcess {
  readonly process: ChildProcess
  /** Everything the process printed so far. */
  output(): string
  /** Sends `signal` and resolves with the exit code (null when killed by a signal). */
  kill(signal?: NodeJS.Signals): Promise<number | null>
}

/** A fresh data directory the embedded database's user could reach. */
export const dataDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "paydesk-proc-"))
  chmodSync(dir, 0o755)
  return dir
}

/** Starts the server with `env` on top of this process's environment (`undefined`: unset); resolves once it listens. */
export const spawnServer = async (env: Record<string, string | undefined>, timeoutMs = 60_000): Promise<ServerProcess> => {
  const child = spawn(process.execPath, serverProgram("main"), {
    cwd: serverDir,
    // Callbacks go to receivers on 127.0.0.1.
    env: { ...process.env, LOG_LEVEL: "warn", PAYDESK_CALLBACK_ALLOW_PRIVATE: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<number | null>((ok) => child.once("exit", (code) => ok(code)))
  const deadline = Date.now() + timeoutMs
  while (!output.includes("paydesk listening on")) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL")
      throw new Error(`the server did not start:\n${output}`)
    }
    await new Promise((ok) => setTimeout(ok, 50))
  }
  return {
    process: child,
    output: () => output,
    kill: async (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      return exited
    }
  }
}

/** An HTTP answer. */
export interface Answer {
  readonly status: number
  readonly json: any
  readonly text: string
  /** The answer's headers, names in lower case. */
  readonly headers: Record<string, string>
}

/** Calls `base + path`; with `retry`, connection failures (a server being restarted) are retried until `retry` ms pass. */
export const request = async (
  base: string,
  method: string,
  path: string,
  init: { readonly body?: unknown; readonly headers?: Record<string, string>; readonly retry?: number } = {}
): Promise<Answer> => {
  const deadline = Date.now() + (init.retry ?? 0)
  for (;;) {
    try {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { ...(init.body === undefined ? {} : { "content-type": "application/json" }), ...init.headers },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
        signal: AbortSignal.timeout(15_000)
      })
      const text = await response.text()
      let json: any = undefined
      try {
        json = JSON.parse(text)
      } catch {}
      return { status: response.status, json, text, headers: Object.fromEntries(response.headers) }
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise((ok) => setTimeout(ok, 100))
    }
  }
}

/** SQL on a database, for assertions (its own small pool). */
export const database = (url: string) => {
  const runtime = ManagedRuntime.make(PgStore.layerClient(url, { maxConnections: 2 }))
  return {
    query: <A extends object>(text: string, params: ReadonlyArray<unknown> = []): Promise<ReadonlyArray<A>> =>
      runtime.runPromise(Effect.orDie(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text, params as Array<unknown>)))),
    close: () => runtime.dispose()
  }
}

/** Runs `work` over `items` with at most `limit` at once. */
export const pool = async <A>(items: ReadonlyArray<A>, limit: number, work: (item: A, index: number) => Promise<void>) => {
  let next = 0
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++
      await work(items[index]!, index)
    }
  }))
}

/** The payer confirms a subscription on its consent page; the answer, and the first payment's page token. */
export const confirmOnPage = async (payUrl: string) => {
  const page = await fetch(payUrl).then((r) => r.text())
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page)![1]!
  const confirmed = await fetch(`${payUrl}/confirm`, {
    method: "POST", headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify({ csrf_token: csrf })
  }).then((r) => r.json())
  return { confirmed, firstPaymentToken: String(confirmed.first_payment_url).split("/").at(-1)! }
}

/** Throws unless the answer is a success; returns its JSON. */
export const expectOk = (answer: Answer, what: string): any => {
  if (answer.status >= 300) throw new Error(`${what}: ${answer.status} ${answer.text}`)
  return answer.json
}

/** Operator and merchant calls against the server at `base` (retrying while it is down for `retryMs`). */
export const client = (base: string, adminToken: string, retryMs = 0) => {
  const call = (method: string, path: string, init: { body?: unknown; headers?: Record<string, string> } = {}) =>
    request(base, method, path, { ...init, retry: retryMs })
  const admin = (method: string, path: string, body?: unknown) =>
    call(method, `/admin/v1${path}`, { headers: { authorization: `Bearer ${adminToken}` }, ...(body === undefined ? {} : { body }) })
  return {
    call,
    admin,
    /** Sets the server's manual clock. */
    setClock: async (ms: number) => void expectOk(await admin("POST", "/clock", { now: new Date(ms).toISOString() }), "clock"),
    /** An account and terminal whose callbacks go to `callbackUrl`, and a monthly plan (fixed 30 days, 990 RUB). */
    merchant: async (callbackUrl: string) => {
      const tag = Math.random().toString(36).slice(2, 8)
      const account = expectOk(await admin("POST", "/accounts", { name: "Shop Co", owner_email: `owner-${tag}@shop.example`, owner_password: "correct horse" }), "account")
      const terminal = expectOk(await admin("POST", "/terminals", { account_id: account.account_id, name: "Shop", callback_url: callbackUrl, h2h: false }), "terminal")
      const plan = expectOk(await admin("POST", "/plans", {
        terminal_ids: [terminal.terminal_id], code: `monthly-${tag}`, name: "Monthly", interval: "month", schedule: "fixed_days",
        payer_amount_rub: "990", merchant_amount_rub: "950", consent_text: "Согласен", policy_version: "1"
      }), "plan")
      const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
        call(method, `/api/v1${path}`, { headers: { "x-api-key": terminal.api_key, "x-nonce": crypto.randomUUID(), ...headers }, ...(body === undefined ? {} : { body }) })
      return { terminalId: terminal.terminal_id as string, signingSecret: terminal.signing_secret as string, planId: plan.id as string, api }
    },
    /** A subscription the payer confirmed and whose first payment the acquirer paid (active, enabled). */
    subscribe: async (
      merchant: { readonly terminalId: string; readonly planId: string; api(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer> },
      payerId: string,
      db: ReturnType<typeof database>
    ): Promise<string> => {
      const created = expectOk(await merchant.api("POST", "/subscriptions", { terminal_id: merchant.terminalId, plan_id: merchant.planId, payer_id: payerId }, { "idempotency-key": `sub-${payerId}` }), "subscription")
      const { firstPaymentToken: token } = await confirmOnPage(created.pay_url)
      const first = await db.query<{ id: string }>("SELECT id FROM payments WHERE pay_token = $1", [token])
      expectOk(await admin("POST", `/acquirer/payments/${first[0]!.id}/outcome`, { outcome: "paid" }), "first payment")
      return created.id
    }
  }
}

/** A callback receiver on loopback that answers 200 after up to `thinkMs` and records every request. */
export const receiver = async (thinkMs = 0) => {
  const receipts: Array<{ readonly at: number; readonly body: string; readonly timestamp: string; readonly signature: string }> = []
  let hold: (() => void) | null = null
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      receipts.push({
        at: Date.now(),
        body: Buffer.concat(chunks).toString("utf8"),
        timestamp: String(req.headers["x-timestamp"]),
        signature: String(req.headers["x-signature"])
      })
      if (hold !== null) {
        // Never answered: the sender is stuck with this request in flight.
        const held = hold
        hold = null
        held()
        return
      }
      setTimeout(() => res.writeHead(200).end("ok"), Math.floor(Math.random() * thinkMs))
    })
  })
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok))
  const address = server.address()
  return {
    url: `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/callbacks`,
    receipts,
    /** Leaves the next request unanswered; resolves once it has arrived. */
    holdNext: () => new Promise<void>((ok) => void (hold = ok)),
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((ok) => server.close(() => ok()))
    }
  }
}
