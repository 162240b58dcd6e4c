/**
 * Two server processes on one database run the same due work at once: every charge and every
 * callback delivery happens once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { randomBytes } from "node:crypto"
import { freshDatabase, type Receiver, startReceiver, startServer } from "./ServerHarness.js"

type Srv = Awaited<ReturnType<typeof startServer>>
let a: Srv
let b: Srv
let receiver: Receiver

beforeAll(async () => {
  // One database and one secret key (secrets at rest must decrypt in both).
  const shared = { DATABASE_URL: await freshDatabase(), PAYDESK_SECRET_KEY: randomBytes(32).toString("base64") }
  a = await startServer(shared)
  b = await startServer(shared)
  receiver = await startReceiver(() => a.now())
}, 120_000)

afterAll(async () => {
  await receiver?.close()
  await a?.stop()
  await b?.stop()
})

const both = async (iso: string) => {
  await Promise.all([a.setClock(iso), b.setClock(iso)])
  await Promise.all([a.work(), b.work(), a.work(), b.work()])
}

describe("two servers on one database", () => {
  it("charge each cycle once and deliver each callback once", async () => {
    await both("2026-01-31T07:00:00.000Z")
    const m = await a.merchant(receiver.url)
    const plan = await a.admin("POST", "/plans", {
      terminal_ids: [m.terminalId], code: "shared", name: "Monthly", interval: "month", schedule: "calendar",
      cap_amount_rub: "4000", consent_text: "Согласен", policy_version: "1"
    })
    const ids: Array<string> = []
    for (let i = 0; i < 10; i++) {
      const created = await m.api("POST", "/subscriptions", { terminal_id: m.terminalId, plan_id: plan.json.id, amount: "100" }, { "idempotency-key": `k-${i}` })
      const page = await fetch(created.json.pay_url).then((r) => r.text())
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(page)![1]!
      const confirmed = await fetch(`${created.json.pay_url}/confirm`, {
        method: "POST", headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify({ csrf_token: csrf })
      }).then((r) => r.json())
      const token = String(confirmed.first_payment_url).split("/").at(-1)!
      const first = (await m.api("GET", "/payments?recurring=true")).json.items.find((p: { pay_url: string }) => p.pay_url.endsWith(token))
      await a.admin("POST", `/acquirer/payments/${first.id}/outcome`, { outcome: "paid" })
      ids.push(created.json.id)
    }
    for (const date of ["2026-02-28T07:00:00.000Z", "2026-03-31T07:00:00.000Z"]) await both(date)
    for (const id of ids) {
      const sub = (await m.api("GET", `/subscriptions/${id}`)).json
      expect(sub.successful_cycles).toBe(3)
      const charges = (await m.api("GET", `/subscriptions/${id}/charges`)).json
      expect(charges.map((c: { cycle_number: number }) => c.cycle_number)).toEqual([2, 1, 0])
    }
    const paid = (await m.api("GET", "/payments?recurring=true")).json
    expect(paid.total).toBe(30)
    const keys = receiver.requests.map((r) => { const body = JSON.parse(r.body); return `${body.payment_id}:${body.event_type}` })
    expect(new Set(keys).size).toBe(keys.length)
    // 10 first payments (created + paid) and 20 charges (paid).
    expect(keys.length).toBe(40)
  }, 120_000)
})
