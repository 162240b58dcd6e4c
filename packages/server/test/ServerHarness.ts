/**
 * Test harness of the reference server: an in-process server on a fresh PostgreSQL database
 * (the run's first Postgres target), manual clock, engine off (tests run due work through the
 * operator API), and a callback receiver whose answers tests program.
 */
import { Effect } from "effect"
import { PgStore } from "@paydesk/sql-pg"
import { randomBytes } from "node:crypto"
import { chmodSync, mkdtempSync } from "node:fs"
import { createServer, type Server as HttpServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, inject } from "vitest"
import * as Config from "../src/Config.js"
import * as Server from "../src/Server.js"
import { request } from "./ServerProcess.js"

/** A callback receiver on loopback. */
export interface Receiver {
  readonly url: string
  readonly requests: Array<{ readonly at: number; readonly headers: Record<string, string | string[] | undefined>; readonly body: string }>
  /** Answers the next requests with these statuses ("hang" never answers); then 200. */
  readonly answers: Array<number | "hang">
  /** When set, `answers` apply only to callbacks of this event type (others get 200). */
  answersFor: string | null
  close(): Promise<void>
}

export const startReceiver = async (clock: () => number): Promise<Receiver> => {
  const requests: Receiver["requests"] = []
  const answers: Receiver["answers"] = []
  const hanging: Array<() => void> = []
  const receiver = { answersFor: null as string | null }
  const server: HttpServer = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (c: Buffer) => chunks.push(c))
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      requests.push({ at: clock(), headers: request.headers, body })
      const applies = receiver.answersFor === null || body.includes(`"event_type":"${receiver.answersFor}"`)
      const answer = (applies ? answers.shift() : undefined) ?? 200
      if (answer === "hang") hanging.push(() => response.destroy())
      else response.writeHead(answer).end()
    })
  })
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/callbacks`,
    requests,
    answers,
    close: async () => {
      for (const h of hanging) h()
      server.closeAllConnections()
      await new Promise<void>((ok) => server.close(() => ok()))
    }
  })
}

/** The run's Postgres targets (DATABASE_URL or embedded, plus the machine's service). */
export const pgTargets = () => inject("pgTargets")

/** A fresh database on a Postgres target (default: the run's first). */
export const freshDatabase = async (target = pgTargets()[0]!): Promise<string> => {
  const name = `${inject("pgPrefix")}srv_${randomBytes(4).toString("hex")}`
  return Effect.runPromise(PgStore.createDatabase(target.url, name))
}

/** A running server with helpers for the merchant and operator APIs. */
export const startServer = async (env: Record<string, string> = {}, options: Server.Options = {}) => {
  const dataDir = mkdtempSync(join(tmpdir(), "paydesk-srv-"))
  chmodSync(dataDir, 0o755)
  const adminToken = "test-admin"
  const databaseUrl = await freshDatabase()
  const config = Config.load({
    PORT: "0",
    DATABASE_URL: databaseUrl,
    PAYDESK_DATA_DIR: dataDir,
    PAYDESK_ADMIN_TOKEN: adminToken,
    PAYDESK_CLOCK: "manual",
    PAYDESK_ENGINE: "off",
    PAYDESK_SECRET_KEY: randomBytes(32).toString("base64"),
    // Callbacks go to receivers on 127.0.0.1.
    PAYDESK_CALLBACK_ALLOW_PRIVATE: "1",
    LOG_LEVEL: "silent",
    ...env
  })
  const running = await Server.start(config, options)
  const base = running.url
  const call = (method: string, path: string, init: { body?: unknown; headers?: Record<string, string> } = {}) =>
    request(base, method, path, init)
  const admin = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    call(method, `/admin/v1${path}`, { headers: { authorization: `Bearer ${adminToken}`, ...headers }, ...(body === undefined ? {} : { body }) })
  let now = 0
  return {
    running,
    base,
    /** The server's database (for assertions). */
    databaseUrl: env.DATABASE_URL ?? databaseUrl,
    call,
    admin,
    /** The manual time, as last set. */
    now: () => now,
    setClock: async (iso: string) => {
      now = Date.parse(iso)
      const r = await admin("POST", "/clock", { now: iso })
      if (r.status !== 200) throw new Error(`clock: ${r.text}`)
    },
    work: async () => {
      const r = await admin("POST", "/work/run", {})
      if (r.status !== 200) throw new Error(`work: ${r.text}`)
      return r.json
    },
    /** A merchant: account (with its owner's e-mail and password), terminal (callback to `callbackUrl`), key and secret. */
    merchant: async (callbackUrl: string, options: { h2h?: boolean } = {}) => {
      const email = `o-${randomBytes(4).toString("hex")}@coffee.example`
      const password = "correct horse"
      const account = await admin("POST", "/accounts", { name: "Coffee", owner_email: email, owner_password: password })
      const terminal = await admin("POST", "/terminals", { account_id: account.json.account_id, name: "Shop", callback_url: callbackUrl, h2h: options.h2h ?? false })
      const apiKey: string = terminal.json.api_key
      return {
        accountId: account.json.account_id as string,
        terminalId: terminal.json.terminal_id as string,
        email,
        password,
        apiKey,
        signingSecret: terminal.json.signing_secret as string,
        api: (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
          call(method, `/api/v1${path}`, { headers: { "x-api-key": apiKey, "x-nonce": crypto.randomUUID(), ...headers }, ...(body === undefined ? {} : { body }) })
      }
    },
    stop: () => running.stop()
  }
}

/** A started server (`startServer`'s answer). */
export type StartedServer = Awaited<ReturnType<typeof startServer>>

/**
 * A suite's server, with the settings `env` gives, and a receiver of its callbacks on the server's
 * clock: started before the suite's tests (`use` takes them for the suite's variables), both stopped
 * after them.
 */
export const serverWithReceiver = (
  env: () => Promise<Record<string, string>>,
  use: (srv: StartedServer, receiver: Receiver) => void
): void => {
  let srv: StartedServer | undefined
  let receiver: Receiver | undefined
  beforeAll(async () => {
    const started = await startServer(await env())
    srv = started
    receiver = await startReceiver(() => started.now())
    use(started, receiver)
  }, 120_000)
  afterAll(async () => {
    await receiver?.close()
    await srv?.stop()
  })
}
