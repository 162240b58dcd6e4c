/**
 * On the merchant and operator APIs an operation that declares no query string takes none: any
 * parameter is 400 `invalid_request` naming it (`unknown query parameter …`), as a declared query
 * refuses one it does not name, and nothing runs. An outside probe found `POST /api/v1/payments`,
 * `POST /api/v1/test-clocks` and `POST /api/v1/events/recover` ignoring the whole query string:
 * `?terminal_id=<another merchant's terminal>` answered 201/200 and acted on the API key's own
 * terminal. The payer pages still take any query string (their links get tracking parameters).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Clock, Effect, Layer, ManagedRuntime } from "effect"
import { Work } from "@paydesk/core"
import { Kit, ManualClock, RecordingCallbackTransport } from "@paydesk/testkit"
import * as App from "../src/App.js"
import * as MerchantOperations from "../src/MerchantOperations.js"
import * as OperatorOperations from "../src/OperatorOperations.js"
import { adminCalls, adminToken, expectError, json, keyCalls, keyHeaders, make, publicUrl, type TestApp } from "./TestApp.js"

type Answer = { statusCode: number; body: string; headers: Record<string, unknown> }

/** The 400 of a stray query parameter, naming it. */
const refused = (answer: Answer, name: string, what: string) => {
  expect([what, answer.statusCode, json(answer).error?.message]).toEqual([what, 400, `unknown query parameter ${name}`])
  expect(expectError(answer, 400, "invalid_request", `unknown query parameter ${name}`).field).toBe(name)
}

let t: TestApp
let merchant: Kit.Merchant
let other: Kit.Merchant
/** The operator hooks that ran (none may, for a refused request). */
let hooksRan: Array<string>

beforeEach(async () => {
  hooksRan = []
  t = await make({
    operator: {
      setRate: async () => void hooksRan.push("setRate"),
      setClock: async () => void hooksRan.push("setClock"),
      programCharges: async () => void hooksRan.push("programCharges"),
      resolveCharge: async () => {
        hooksRan.push("resolveCharge")
        return true
      },
      runWork: async () => {
        hooksRan.push("runWork")
        return {}
      }
    }
  })
  merchant = await t.merchant()
  other = await t.merchant()
})
afterEach(() => t.close())

const call = (method: "GET" | "POST" | "PUT" | "DELETE", url: string, payload?: unknown, headers: Record<string, string> = {}) =>
  keyCalls(t.app, () => merchant.apiKey)(method, url, payload, headers)
const otherCall = (method: "GET" | "POST", url: string) => keyCalls(t.app, () => other.apiKey)(method, url)
const total = async (get: (method: "GET", url: string) => Promise<Answer>, url: string) => {
  const answer = await get("GET", url)
  expect(answer.statusCode, answer.body).toBe(200)
  return json(answer).total as number
}

describe("Stray query parameters", () => {
  it("POST /payments refuses ?terminal_id (another merchant's terminal, garbage, its own) and ?foo=bar with 400 naming it, and creates no payment", async () => {
    const body = { amount: "10.00", order_id: "stray-1", test: true }
    for (const query of [`terminal_id=${other.terminal.id}`, "terminal_id=garbage", `terminal_id=${merchant.terminal.id}`, "foo=bar"]) {
      refused(await call("POST", `/payments?${query}`, body, { "idempotency-key": crypto.randomUUID() }), query.split("=")[0]!, `POST /payments?${query}`)
    }
    expect([await total(call, "/payments?environment=all"), await total(otherCall, "/payments?environment=all")]).toEqual([0, 0])
    // The order_id is still free: the same request without the query string creates the payment (201, not a replay).
    const created = await call("POST", "/payments", body)
    expect(created.statusCode, created.body).toBe(201)
    expect(json(created).terminal_id).toBe(merchant.terminal.id)
  })

  it("a parameter given twice is 400 saying so (it got its value's message); an unknown one given twice is unknown", async () => {
    for (const [url, name] of [["/payments?environment=sandbox&environment=sandbox", "environment"], ["/events?limit=1&limit=2", "limit"]] as const) {
      expect(expectError(await call("GET", url), 400, "invalid_request", `${name} is given more than once`).field).toBe(name)
    }
    refused(await call("GET", "/payments?foo=1&foo=2"), "foo", "GET /payments?foo=1&foo=2")
    // Once each, they are taken.
    expect((await call("GET", "/payments?environment=sandbox&limit=1")).statusCode).toBe(200)
  })

  it("POST /test-clocks?x=1 is 400 naming x and creates no clock", async () => {
    refused(await call("POST", "/test-clocks?x=1", { frozen_time: "2026-01-31T10:00:00Z" }), "x", "POST /test-clocks?x=1")
    refused(await call("POST", `/test-clocks?terminal_id=${other.terminal.id}`, { frozen_time: "2026-01-31T10:00:00Z" }), "terminal_id", "POST /test-clocks?terminal_id")
    expect([await total(call, "/test-clocks"), await total(otherCall, "/test-clocks")]).toEqual([0, 0])
  })

  it("every merchant and operator operation that declares no query parameter refuses any, GET included, before it runs", async () => {
    const admin = adminCalls(t.app)
    const uuid = crypto.randomUUID()
    const pathOf = (path: string) => path.replace(/\{(\w+)\}/g, uuid)
    const untouched = [...MerchantOperations.merchant, ...OperatorOperations.all].filter((op) => op.query === undefined)
    expect(untouched.map((op) => op.id)).toEqual(expect.arrayContaining(["createPayment", "createTestClock", "recoverEvents", "getPayment", "operatorRunWork", "deleteTestClock"]))
    for (const op of untouched) {
      const url = `${pathOf(op.path)}?stray=1`
      const answer = op.surface === "operator" ? await admin(op.method, url) : await call(op.method, url)
      refused(answer, "stray", `${op.id}: ${op.method} ${url}`)
    }
    expect(hooksRan).toEqual([])
  })

  it("every merchant and operator POST, PUT or DELETE that declares no body refuses one that is not {} (an outside probe found the stop taking [1] and {\"x\":1}), before it runs", async () => {
    const uuid = crypto.randomUUID()
    const pathOf = (path: string) => path.replace(/\{(\w+)\}/g, uuid)
    const bodiless = [...MerchantOperations.merchant, ...OperatorOperations.all].filter((op) => op.body === undefined && op.method !== "GET")
    expect(bodiless.map((op) => op.id)).toEqual(expect.arrayContaining(["stopSubscription", "operatorRunWork", "deleteTestClock"]))
    for (const op of bodiless) {
      const send = (payload: unknown) =>
        t.app.inject({
          method: op.method,
          url: `${op.surface === "operator" ? "/admin/v1" : "/api/v1"}${pathOf(op.path)}`,
          headers: op.surface === "operator"
            ? { authorization: `Bearer ${adminToken}`, "content-type": "application/json" }
            : keyHeaders(merchant.apiKey, { "content-type": "application/json" }),
          payload: JSON.stringify(payload)
        })
      for (const payload of [[1], "s", 5, null]) {
        const answer = await send(payload)
        expect([op.id, JSON.stringify(payload), answer.statusCode, json(answer).error?.code]).toEqual([op.id, JSON.stringify(payload), 400, "invalid_json_body"])
      }
      const stray = await send({ x: 1 })
      expect([op.id, stray.statusCode, json(stray).error?.message, json(stray).error?.field]).toEqual([op.id, 400, "unknown field x", "x"])
    }
    expect(hooksRan).toEqual([])
    // No body, or {}, as many clients send with every POST: the operation runs.
    const ping = await call("POST", `/terminals/${merchant.terminal.id}/test-event`, {})
    expect(ping.statusCode, ping.body).toBeLessThan(300)
    expect((await call("POST", `/terminals/${merchant.terminal.id}/test-event`)).statusCode).toBeLessThan(300)
  })

  it("an operator POST with a stray query is 400 naming it and creates nothing", async () => {
    const admin = adminCalls(t.app)
    const accounts = await total(admin, "/accounts")
    refused(await admin("POST", "/accounts?foo=bar", { name: "Stray", owner_email: "stray@shop.example", owner_password: "correct horse battery" }), "foo", "POST /admin/v1/accounts?foo=bar")
    refused(await admin("POST", `/terminals?account_id=${merchant.accountId}`, { account_id: merchant.accountId, name: "Stray shop" }), "account_id", "POST /admin/v1/terminals?account_id")
    expect(await total(admin, "/accounts")).toBe(accounts)
    expect(json(await admin("GET", `/accounts/${merchant.accountId}/terminals`)).items).toHaveLength(1)
    // The same account, without the query string, is created.
    expect((await admin("POST", "/accounts", { name: "Stray", owner_email: "stray@shop.example", owner_password: "correct horse battery" })).statusCode).toBe(201)
  })

  it("the health, metrics and docs routes refuse a query parameter, as their documents say (they answered 200)", async () => {
    for (const url of ["/health/live", "/health/ready", "/openapi.json", "/docs"]) {
      refused(await t.app.inject({ method: "GET", url: `${url}?x=1` }), "x", `GET ${url}?x=1`)
      expect((await t.app.inject({ method: "GET", url })).statusCode, url).toBeLessThan(400)
    }
    refused(await t.app.inject({ method: "GET", url: "/metrics?x=1", headers: { authorization: `Bearer ${adminToken}` } }), "x", "GET /metrics?x=1")
  })

  it("the payer pages still take any query string (links with tracking parameters)", async () => {
    const created = json(await call("POST", "/payments", { amount: "10.00", order_id: "page-1", test: true }))
    const page = new URL(created.pay_url).pathname
    expect((await t.app.inject({ method: "GET", url: `${page}?utm_source=mail` })).statusCode).toBe(200)
    expect((await t.app.inject({ method: "GET", url: `${page}/status?utm_source=mail` })).statusCode).toBe(200)
  })
})

describe("Stray query parameters: event recovery", () => {
  const start = Date.parse("2026-03-01T09:00:00.000Z")

  it("POST /events/recover?terminal_id=<another terminal> is 400 naming it and queues nothing again", async () => {
    const manual = await Effect.runPromise(ManualClock.make(start))
    const runtime = ManagedRuntime.make(Layer.merge(Kit.layer, Layer.succeed(Clock.Clock)(manual.clock)))
    const app = await App.build({ runtime, publicUrl, adminToken, checkResponses: true })
    const run = <A, E>(effect: Effect.Effect<A, E, Kit.Services>) => runtime.runPromise(effect)
    try {
      const owner = await run(Kit.provisionMerchant())
      const stranger = await run(Kit.provisionMerchant())
      const api = (url: string, payload?: object) =>
        app.inject({ method: payload === undefined ? "GET" : "POST", url: `/api/v1${url}`, headers: keyHeaders(owner.apiKey), ...(payload === undefined ? {} : { payload }) })
      const failed = async () => json(await api("/events?environment=sandbox&delivery_status=failed")).items.length as number
      // The receiver is down for a day: every delivery of the paid sandbox payment's events fails.
      await run(Effect.gen(function*() {
        yield* (yield* RecordingCallbackTransport.RecordingCallbackTransport).failAlways("refused")
      }))
      const payment = json(await api("/payments", { amount: "10.00", order_id: "recover-1", test: true }))
      expect((await api(`/payments/${payment.id}/simulate`, { outcome: "paid" })).statusCode).toBe(200)
      for (let hour = 1; hour <= 24; hour++) {
        await run(Work.drain())
        await Effect.runPromise(manual.set(start + hour * 3_600_000))
      }
      const before = await failed()
      expect(before).toBeGreaterThan(0)
      const since = new Date(start - 60_000).toISOString()
      for (const query of [`terminal_id=${stranger.terminal.id}`, "terminal_id=garbage", "foo=bar"]) {
        refused(await api(`/events/recover?${query}`, { since, environment: "sandbox" }), query.split("=")[0]!, `POST /events/recover?${query}`)
      }
      expect(await failed()).toBe(before)
      // Without the query string, every failed event is queued again: none was before.
      expect(json(await api("/events/recover", { since, environment: "sandbox" }))).toEqual({ requeued: before })
    } finally {
      await app.close()
      await runtime.dispose()
    }
  })
})
