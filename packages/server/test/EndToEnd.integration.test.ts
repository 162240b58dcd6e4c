/**
 * End to end: the real server process on embedded PostgreSQL and a callback receiver;
 * provisioning through the CLI; a sandbox payment simulated paid through the page's form;
 * both signed callbacks verified; clean shutdown on SIGTERM.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { Signature } from "@paydesk/core"

const root = resolve(import.meta.dirname, "../../..")
const tsx = join(root, "node_modules/.bin/tsx")
const adminToken = "e2e-admin-token"

interface Received {
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: string
}

let server: ChildProcess
let baseUrl = ""
let dataDir = ""
let receiver: Server
let receiverUrl = ""
const received: Array<Received> = []
let output = ""

const cli = async (...args: Array<string>) => {
  const { stdout } = await promisify(execFile)(tsx, ["--conditions=@paydesk/source", join(root, "packages/server/src/cli.ts"), ...args], {
    env: { ...process.env, PAYDESK_URL: baseUrl, PAYDESK_ADMIN_TOKEN: adminToken }
  })
  return JSON.parse(stdout)
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

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8") })
      response.writeHead(200).end("ok")
    })
  })
  await new Promise<void>((ok) => receiver.listen(0, "127.0.0.1", ok))
  const address = receiver.address()
  receiverUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/callbacks`

  dataDir = mkdtempSync(join(tmpdir(), "paydesk-e2e-"))
  chmodSync(dataDir, 0o755)
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: "0", HOST: "127.0.0.1", PAYDESK_DATA_DIR: dataDir, PAYDESK_ADMIN_TOKEN: adminToken, PAYDESK_WORK_INTERVAL_MS: "200" }
  delete env.DATABASE_URL
  server = spawn(tsx, ["--conditions=@paydesk/source", join(root, "packages/server/src/main.ts")], { env, stdio: ["ignore", "pipe", "pipe"] })
  server.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  server.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()))
  baseUrl = await waitFor("the server to listen", () => /paydesk listening on (http:\/\/\S+)/.exec(output)?.[1], 90_000)
}, 120_000)

afterAll(async () => {
  if (server.exitCode === null) server.kill("SIGKILL")
  receiver.close()
  rmSync(dataDir, { recursive: true, force: true })
})

describe("reference server end to end", () => {
  it("provisions through the CLI, takes a sandbox payment paid through the page form, and delivers both signed callbacks", async () => {
    const account = await cli("accounts", "create", "--name", "Coffee Roasters", "--email", "owner@coffee.example", "--password", "correct horse")
    const terminal = await cli("terminals", "create", "--account", account.account_id, "--name", "Main shop", "--callback-url", receiverUrl)
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
  }, 120_000)

  it("stops cleanly on SIGTERM", async () => {
    const exited = new Promise<number | null>((ok) => server.once("exit", (code) => ok(code)))
    server.kill("SIGTERM")
    expect(await exited).toBe(0)
  }, 60_000)
})
