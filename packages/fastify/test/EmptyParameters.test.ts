/**
 * An empty parameter (`?terminal_id=`, `"terminal_id": ""`) is a client's template bug, never an
 * absent one. An empty `terminal_id` is given (spec rule 3: when given it must match the key's
 * terminal, otherwise 403), so it is the 403 of a terminal not the caller's, wherever it is
 * accepted, for an API key (which would otherwise fall back to its terminal) and a dashboard user
 * (all the account's terminals) alike, and writes nothing; where the spec names the error of a
 * missing one (plans, subscription creation, a dashboard user's payouts) it is the spec's
 * `terminal_id is required`. An empty `order_id` to look up or filter by is 400, not an empty
 * answer; every other parameter already refused an empty value.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Kit } from "@paydesk/testkit"
import { expectError, json, keyHeaders, make, type TestApp } from "./TestApp.js"

let t: TestApp
let merchant: Kit.Merchant

beforeEach(async () => {
  t = await make()
  merchant = await t.merchant()
  token = undefined
  await t.plans(merchant.terminal.id)
})
afterEach(() => t.close())

type Who = "key" | "user"

let token: string | undefined
/** The owner's dashboard session (one sign-in per test: sign-ins are rate limited). */
const bearer = async () => {
  if (token === undefined) {
    const login = await t.app.inject({ method: "POST", url: "/api/v1/auth/login", payload: { email: merchant.ownerEmail, password: Kit.ownerPassword } })
    token = json(login).access_token as string
  }
  return { authorization: `Bearer ${token}` }
}
const call = async (who: Who, method: "GET" | "POST", url: string, body?: object, headers: Record<string, string> = {}) =>
  t.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: who === "key" ? keyHeaders(merchant.apiKey, headers) : { ...(await bearer()), ...headers },
    ...(body === undefined ? {} : { payload: body })
  })
const total = async (url: string) => json(await call("key", "GET", url)).total as number

const range = "created_from=2026-01-01T00:00:00Z&created_to=2026-01-02T00:00:00Z"

/** Every read that takes `?terminal_id`. */
const reads = [
  "/payments?terminal_id=",
  "/payments?format=csv&terminal_id=",
  "/payments/stats?terminal_id=",
  `/payments/stats/daily?${range}&terminal_id=`,
  "/payments/by-order?order_id=o-1&terminal_id=",
  "/balance?terminal_id=",
  "/rate?terminal_id=",
  "/payouts?terminal_id=",
  "/subscriptions?terminal_id=",
  "/events?terminal_id=",
  "/events/feed?terminal_id=",
  "/test-clocks?terminal_id="
]

/** What an empty terminal_id gets: the 403 of another terminal, or (a dashboard user's payouts) the spec's `terminal_id is required`. */
const emptyTerminal = (answer: { statusCode: number; body: string; headers: Record<string, unknown> }, where: string, who: Who) => {
  const [status, code, message] = who === "key"
    ? [403, "access_denied", "terminal access denied"]
    : /\/payouts/.test(where)
    ? [400, "terminal_id_required", "terminal_id is required"]
    : [403, "access_denied", "account access denied"]
  expect([where, answer.statusCode, json(answer).error?.message]).toEqual([where, status, message])
  expectError(answer, status, code, message)
}

describe("Empty query parameters and fields", () => {
  for (const who of ["key", "user"] as const) {
    it(`an empty terminal_id is given, not absent, on every read (${who === "key" ? "API key: 403, not its terminal" : "dashboard user: 403, not every terminal"})`, async () => {
      for (const url of reads) emptyTerminal(await call(who, "GET", url), `${who} GET ${url}`, who)
    })

    it(`an empty terminal_id is given, not absent, on every write, and writes nothing (${who})`, async () => {
      const since = new Date(Date.now() - 60_000).toISOString()
      const writes: ReadonlyArray<readonly [string, object]> = [
        ["/payments", { amount: "10", order_id: "empty-1", test: true, terminal_id: "" }],
        ["/payouts?terminal_id=", { amount_usdt: "1", wallet_address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" }],
        ["/test-clocks", { frozen_time: "2026-01-31T10:00:00Z", terminal_id: "" }],
        ["/events/recover", { since, terminal_id: "" }]
      ]
      for (const [url, body] of writes) emptyTerminal(await call(who, "POST", url, body, { "idempotency-key": crypto.randomUUID() }), `${who} POST ${url}`, who)
      expect([await total("/payments?environment=all"), await total("/payouts"), await total("/test-clocks")]).toEqual([0, 0, 0])
    })
  }

  it("where the spec requires terminal_id (plans, subscription creation), an empty one is its terminal_id is required", async () => {
    expectError(await call("key", "GET", "/subscription-plans?terminal_id="), 400, "terminal_id_required", "terminal_id is required")
    const created = await call("key", "POST", "/subscriptions", { terminal_id: "", plan_id: crypto.randomUUID(), amount: "100" }, { "idempotency-key": "empty-sub" })
    expectError(created, 400, "terminal_id_required", "terminal_id is required")
    expect(await total("/subscriptions?environment=all")).toBe(0)
  })

  it("an empty order_id to look up or filter by is 400 on order_id, not an empty answer", async () => {
    for (const url of ["/payments?order_id=", "/payments?format=csv&order_id=", "/payments/stats?order_id=", "/payments/by-order?order_id="]) {
      const error = expectError(await call("key", "GET", url), 400, "invalid_request", "order_id must be a non-empty string")
      expect([url, error.field]).toEqual([url, "order_id"])
    }
  })

  it("every other parameter refuses an empty value with 400 naming it", async () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["/payments?environment=", "environment"],
      ["/payments?recurring=", "recurring"],
      ["/payments?status=", "status"],
      ["/payments?created_from=", "created_from"],
      ["/payments?created_to=", "created_to"],
      ["/payments?page=", "page"],
      ["/payments?limit=", "limit"],
      ["/payments?cursor=", "cursor"],
      ["/payments?format=", "format"],
      [`/payments/stats/daily?${range}&time_zone=`, "time_zone"],
      ["/payments/by-order?order_id=o-1&environment=", "environment"],
      ["/subscriptions?state=", "state"],
      ["/subscriptions?environment=", "environment"],
      [`/subscriptions/${crypto.randomUUID()}/upcoming?count=`, "count"],
      ["/events?environment=", "environment"],
      ["/events?type=", "type"],
      ["/events?object_id=", "object_id"],
      ["/events?delivery_status=", "delivery_status"],
      ["/events?cursor=", "cursor"],
      ["/events?limit=", "limit"],
      ["/events/feed?after=", "after"],
      ["/events/feed?environment=", "environment"],
      ["/test-clocks?page=", "page"]
    ]
    for (const [url, field] of cases) {
      const answer = await call("key", "GET", url)
      expect([url, answer.statusCode, json(answer).error?.field]).toEqual([url, 400, field])
    }
  })
})
