/**
 * `paydesk listen` and `paydesk trigger` as a developer runs them: real CLI processes against the
 * reference server, forwarding the terminal's signed callbacks to a local receiver.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { execFile, spawn } from "node:child_process"
import { promisify } from "node:util"
import { webhooks } from "@paydesk/client"
import { type Receiver, startReceiver, startServer } from "./ServerHarness.js"
import { serverProgram } from "./ServerProgram.js"

/** Node's arguments for a `paydesk` command: the built CLI, or its sources when the build is stale. */
const cli = serverProgram("cli")

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
  it("paydesk events lists, shows, resends and recovers a terminal's events", async () => {
    const m = await srv.merchant(local.url)
    const env = { ...process.env, PAYDESK_API_KEY: m.apiKey, PAYDESK_URL: srv.base }
    const paydesk = async (...args: Array<string>) => (await promisify(execFile)(process.execPath, [...cli, ...args], { env })).stdout
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

  it("paydesk test-clocks and subscriptions upcoming / charge-outcomes drive a sandbox subscription from the command line; test-clocks delete ends it", async () => {
    const m = await srv.merchant(local.url)
    const env = { ...process.env, PAYDESK_API_KEY: m.apiKey, PAYDESK_URL: srv.base }
    const paydesk = async (...args: Array<string>) => JSON.parse((await promisify(execFile)(process.execPath, [...cli, ...args], { env })).stdout)
    const clock = await paydesk("test-clocks", "create", "2026-01-31T10:00:00+03:00", "--name", "cli")
    expect([clock.status, clock.frozen_time, clock.name]).toEqual(["ready", "2026-01-31T07:00:00.000Z", "cli"])
    expect((await paydesk("test-clocks", "list")).items.map((c: { id: string }) => c.id)).toEqual([clock.id])
    const plan = await srv.admin("POST", "/plans", {
      terminal_ids: [m.terminalId], code: `cli-${m.terminalId.slice(0, 8)}`, name: "Monthly", interval: "month",
      schedule: "calendar", cap_amount_rub: "4000", consent_text: "Согласен", policy_version: "1"
    })
    expect(plan.status).toBe(201)
    const sub = await m.api("POST", "/subscriptions", { terminal_id: m.terminalId, plan_id: plan.json.id, amount: "100", test: true, test_clock: clock.id }, { "idempotency-key": "cli-sub-1" })
    expect(sub.status).toBe(201)
    // Not active yet: nothing upcoming.
    expect(await paydesk("subscriptions", "upcoming", sub.json.id)).toEqual({ subscription_id: sub.json.id, items: [] })
    // The payer consents and pays the first payment with the sandbox buttons (the consent page's csrf_token, then the payment page's).
    const page = async (path: string) => {
      const html = await (await fetch(`${srv.base}${path}`)).text()
      return /name="csrf_token" value="([^"]*)"/.exec(html)![1]!
    }
    const post = async (path: string, body: unknown) =>
      (await fetch(`${srv.base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).json() as Promise<Record<string, string>>
    const subPath = new URL(sub.json.pay_url).pathname
    const firstPath = new URL((await post(`${subPath}/confirm`, { csrf_token: await page(subPath) })).first_payment_url!).pathname
    expect((await post(`${firstPath}/simulate`, { outcome: "paid", csrf_token: await page(firstPath) })).status).toBe("paid")
    const upcoming = await paydesk("subscriptions", "upcoming", sub.json.id, "--count", "2")
    expect(upcoming.items.map((i: Record<string, string>) => i["scheduled_at_moscow"])).toEqual(["2026-02-28T10:00:00.000+03:00", "2026-03-31T10:00:00.000+03:00"])
    // The next charge programmed to fail; a month on the clock: the 28 February charge fails into review.
    expect(await paydesk("subscriptions", "charge-outcomes", sub.json.id, "failed")).toEqual({ subscription_id: sub.json.id, outcomes: ["failed"] })
    const advanced = await paydesk("test-clocks", "advance", clock.id, "2026-03-01T00:00:00Z", "--wait")
    expect([advanced.status, advanced.frozen_time]).toEqual(["ready", "2026-03-01T00:00:00.000Z"])
    expect((await paydesk("test-clocks", "get", clock.id)).frozen_time).toBe("2026-03-01T00:00:00.000Z")
    const after = await m.api("GET", `/subscriptions/${sub.json.id}`)
    expect([after.json.billing_status, after.json.next_charge_at]).toEqual(["review", null])
    const charges = await m.api("GET", `/subscriptions/${sub.json.id}/charges`)
    expect([charges.json[0].status, charges.json[0].actual_at]).toEqual(["fail", "2026-02-28T07:00:00.000Z"])
    // Done with the clock: deleted with its objects (the clock at once; the housekeeping purges the rest).
    expect(await paydesk("test-clocks", "delete", clock.id)).toEqual({ id: clock.id, deleted: true })
    expect((await m.api("GET", `/test-clocks/${clock.id}`)).status).toBe(404)
    expect((await paydesk("test-clocks", "list")).items).toEqual([])
  }, 90_000)

  it("paydesk listen forwards what paydesk trigger makes happen, signed, and stops on SIGINT", async () => {
    const m = await srv.merchant(local.url.replace("/callbacks", "/ignored"))
    const env = { ...process.env, PAYDESK_API_KEY: m.apiKey, PAYDESK_URL: srv.base }
    const forwardTo = local.url.replace("/callbacks", "/webhooks")
    const listener = spawn(process.execPath, [...cli, "listen", "--forward-to", forwardTo], { env, stdio: ["ignore", "pipe", "pipe"] })
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
    const { stdout } = await promisify(execFile)(process.execPath, [...cli, "trigger", "payment.paid"], { env })
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

  // Last: it moves the server's manual clock a day ahead.
  it("paydesk events recover re-queues an event whose delivery failed: the next pass sends it again, same event id", async () => {
    const m = await srv.merchant(local.url)
    const env = { ...process.env, PAYDESK_API_KEY: m.apiKey, PAYDESK_URL: srv.base }
    const paydesk = async (...args: Array<string>) => (await promisify(execFile)(process.execPath, [...cli, ...args], { env })).stdout
    const start = Date.now() + 3_600_000
    await srv.setClock(new Date(start).toISOString())
    // The callbacks other tests left pending go out first (they must not meet the failures below).
    await srv.work()
    const created = await m.api("POST", "/payments", { amount: "25.00", order_id: "cli-recover-1", test: true })
    expect(created.status).toBe(201)
    const mine = () => local.requests.filter((r) => r.body.includes(created.json.id) && r.body.includes("\"event_type\":\"payment.created\""))
    // The receiver is down for every attempt of the day: the delivery of payment.created fails for good after 8.
    local.answersFor = "payment.created"
    local.answers.push(...Array.from({ length: 8 }, () => 503))
    try {
      for (let hour = 0; hour <= 24; hour++) {
        await srv.setClock(new Date(start + hour * 3_600_000).toISOString())
        await srv.work()
      }
    } finally {
      local.answersFor = null
    }
    expect(mine()).toHaveLength(8)
    const failed = (await paydesk("events", "list", "--sandbox", "--status", "failed")).trim().split("\n")
    expect(failed).toHaveLength(1)
    expect(failed[0]).toMatch(new RegExp(`payment\\.created\\s+evt_[0-9a-f-]{36}\\s+${created.json.id}\\s+#1\\s+failed \\(8 attempts, last HTTP 503\\)`))
    // Back up: recover re-queues it, the next pass sends it once more with the same event id.
    expect(JSON.parse(await paydesk("events", "recover", "--since", new Date(start).toISOString(), "--sandbox"))).toEqual({ requeued: 1 })
    await srv.work()
    expect(mine()).toHaveLength(9)
    expect(mine()[8]!.headers["x-event-id"]).toBe(mine()[0]!.headers["x-event-id"])
    expect(await paydesk("events", "list", "--sandbox", "--status", "failed")).toBe("")
    // Nothing is left to recover.
    expect(JSON.parse(await paydesk("events", "recover", "--since", new Date(start).toISOString(), "--sandbox"))).toEqual({ requeued: 0 })
  }, 90_000)
})
