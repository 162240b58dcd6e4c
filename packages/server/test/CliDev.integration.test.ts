/**
 * `paydesk listen` and `paydesk trigger` as a developer runs them: real CLI processes against the
 * reference server, forwarding the terminal's signed callbacks to a local receiver.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { execFile, spawn } from "node:child_process"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { webhooks } from "@paydesk/client"
import * as CliDev from "../src/CliDev.js"
import { type Receiver, startReceiver, startServer } from "./ServerHarness.js"

const root = resolve(import.meta.dirname, "../../..")
const tsx = join(root, "node_modules/.bin/tsx")
const cli = join(root, "packages/server/src/cli.ts")

let srv: Awaited<ReturnType<typeof startServer>>
let local: Receiver

beforeAll(async () => {
  srv = await startServer()
  local = await startReceiver(() => Date.now())
}, 120_000)
afterAll(async () => {
  await local?.close()
  await srv?.stop()
})

describe("CliDev", () => {
  it("parses listen and trigger, and says what is missing", () => {
    expect(CliDev.parse(["listen", "--forward-to", "http://localhost:3000/webhooks"], { PAYDESK_API_KEY: "k" }))
      .toEqual({ _tag: "Listen", apiKey: "k", baseUrl: "http://127.0.0.1:8080", forwardTo: "http://localhost:3000/webhooks", environment: "sandbox" })
    expect(CliDev.parse(["listen", "--forward-to", "http://x", "--live", "--url", "http://h:1/"], { PAYDESK_API_KEY: "k" }))
      .toMatchObject({ environment: "prod", baseUrl: "http://h:1" })
    expect(CliDev.parse(["trigger", "payment.paid", "--amount", "5"], { PAYDESK_API_KEY: "k" })).toMatchObject({ _tag: "Trigger", event: "payment.paid", amount: "5" })
    expect(() => CliDev.parse(["listen"], { PAYDESK_API_KEY: "k" })).toThrow(/--forward-to is required/)
    expect(() => CliDev.parse(["listen", "--forward-to", "http://x"], {})).toThrow(/PAYDESK_API_KEY/)
    expect(() => CliDev.parse(["trigger", "payout.completed"], { PAYDESK_API_KEY: "k" })).toThrow(/one of payment.created, payment.paid, payment.canceled/)
    expect(CliDev.parse(["events", "list", "--sandbox", "--status", "failed", "--since", "2026-01-01T00:00:00Z", "--limit", "5"], { PAYDESK_API_KEY: "k" }))
      .toMatchObject({ _tag: "Events", verb: "list", filter: { environment: "sandbox", delivery_status: "failed", created_from: "2026-01-01T00:00:00Z", limit: 5 } })
    expect(CliDev.parse(["events", "resend", "evt_1"], { PAYDESK_API_KEY: "k" })).toMatchObject({ _tag: "Events", verb: "resend", id: "evt_1", environment: "prod" })
    expect(CliDev.parse(["events", "recover", "--since", "2026-01-01T00:00:00Z", "--all"], { PAYDESK_API_KEY: "k" }))
      .toMatchObject({ _tag: "Events", verb: "recover", since: "2026-01-01T00:00:00Z", environment: "all" })
    expect(() => CliDev.parse(["events", "recover"], { PAYDESK_API_KEY: "k" })).toThrow(/--since/)
    expect(() => CliDev.parse(["events", "show"], { PAYDESK_API_KEY: "k" })).toThrow(/paydesk events show <evt_id>/)
    expect(() => CliDev.parse(["events", "purge"], { PAYDESK_API_KEY: "k" })).toThrow(/one of list, show, resend, recover/)
    expect(() => CliDev.parse(["events", "list", "--limit", "many"], { PAYDESK_API_KEY: "k" })).toThrow(/--limit must be an integer/)
  })

  it("paydesk events lists, shows, resends and recovers a terminal's events", async () => {
    const m = await srv.merchant(local.url)
    const env = { ...process.env, PAYDESK_API_KEY: m.apiKey, PAYDESK_URL: srv.base }
    const paydesk = async (...args: Array<string>) => (await promisify(execFile)(tsx, ["--conditions=@paydesk/source", cli, ...args], { env })).stdout
    const created = await m.api("POST", "/payments", { amount: "15.00", order_id: "cli-events-1", test: true })
    expect(created.status).toBe(201)
    await srv.work()
    const listed = await paydesk("events", "list", "--sandbox")
    const line = listed.trim().split("\n")
    expect(line).toHaveLength(1)
    expect(line[0]).toMatch(new RegExp(`payment\\.created\\s+evt_[0-9a-f-]{36}\\s+${created.json.id}\\s+#1\\s+delivered \\(1 attempts, last HTTP 200\\)`))
    const id = /evt_[0-9a-f-]{36}/.exec(line[0]!)![0]
    expect(JSON.parse(await paydesk("events", "show", id))).toMatchObject({ id, type: "payment.created", deliveries: [{ kind: "scheduled", status: "delivered" }] })
    const before = local.requests.length
    expect(JSON.parse(await paydesk("events", "resend", id))).toMatchObject({ event: { id }, delivery: { kind: "resend", status: "delivered" } })
    expect(local.requests.length).toBe(before + 1)
    expect(local.requests.at(-1)!.headers["x-event-id"]).toBe(id)
    expect(JSON.parse(await paydesk("events", "recover", "--since", "2020-01-01T00:00:00Z", "--sandbox"))).toEqual({ requeued: 0 })
    expect(await paydesk("events", "list")).toBe("")
  }, 90_000)

  it("paydesk listen forwards what paydesk trigger makes happen, signed, and stops on SIGINT", async () => {
    const m = await srv.merchant(local.url.replace("/callbacks", "/ignored"))
    const env = { ...process.env, PAYDESK_API_KEY: m.apiKey, PAYDESK_URL: srv.base }
    const forwardTo = local.url.replace("/callbacks", "/webhooks")
    const listener = spawn(tsx, ["--conditions=@paydesk/source", cli, "listen", "--forward-to", forwardTo], { env, stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    listener.stdout.on("data", (c: Buffer) => (output += c.toString()))
    listener.stderr.on("data", (c: Buffer) => (output += c.toString()))
    const until = async (what: string, check: () => boolean) => {
      const deadline = Date.now() + 30_000
      while (!check()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output}`)
        await new Promise((ok) => setTimeout(ok, 100))
      }
    }
    await until("the listener", () => output.includes("Ready: forwarding sandbox events"))
    const { stdout } = await promisify(execFile)(tsx, ["--conditions=@paydesk/source", cli, "trigger", "payment.paid"], { env })
    const payment = JSON.parse(stdout)
    expect(payment).toMatchObject({ status: "paid", test: true })
    const mine = () => local.requests.filter((r) => r.body.includes(payment.id))
    await until("two forwarded events", () => mine().length === 2)
    const events = await Promise.all(mine().map((r) => webhooks.verify(r.body, r.headers as Record<string, string>, m.signingSecret)))
    expect(events.map((e) => e.event_type)).toEqual(["payment.created", "payment.paid"])
    await until("the forward lines", () => (output.match(/-> 200/g) ?? []).length === 2)
    listener.kill("SIGINT")
    const code = await new Promise<number | null>((ok) => listener.on("exit", ok))
    expect(code).toBe(0)
  }, 90_000)
})
