/**
 * The document's answers as the server sends them: every answer declares `x-request-id`, every 429
 * `Retry-After`; the statuses any request may get before its route (408, 414, 431) on every
 * operation; the payer pages' errors as HTML pages; and error examples that carry the message the
 * server sends (never the code), checked against real answers of the app.
 */
import { afterEach, describe, expect, it } from "vitest"
import * as OpenApi from "../src/OpenApi.js"
import { adminToken, json, keyCalls, make, type TestApp } from "./TestApp.js"

const document = OpenApi.make()

type Media = { readonly schema?: unknown; readonly example?: { readonly error?: { code: string; message: string; field?: string } } }
type Response = { readonly description: string; readonly headers?: Record<string, { readonly $ref?: string }>; readonly content?: Record<string, Media> }
type Operation = { readonly operationId: string; readonly parameters: ReadonlyArray<{ readonly in: string }>; readonly responses: Record<string, Response> }

const operations = Object.entries(document.paths as Record<string, Record<string, Operation>>).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => ({ path, method, op })))

const responsesOf = () =>
  operations.flatMap(({ path, method, op }) => Object.entries(op.responses).map(([status, response]) => ({ where: `${method.toUpperCase()} ${path} ${status}`, path, method, status: Number(status), response, op })))

/** A `$ref`'d header, resolved in `components.headers`. */
const header = (response: Response, name: string) => {
  const ref = response.headers?.[name]?.$ref
  const key = ref?.replace("#/components/headers/", "")
  return key === undefined ? undefined : (document.components.headers as Record<string, { required?: boolean; schema: Record<string, unknown> }>)[key]
}

/** The document's example error of an answer. */
const exampleOf = (path: string, method: string, status: number) => {
  const example = (document.paths as Record<string, Record<string, Operation>>)[path]?.[method]?.responses[String(status)]?.content?.["application/json"]?.example?.error
  expect(example, `${method} ${path} ${status}`).toBeDefined()
  return example!
}

/** Digits as `N`: a limit or a wait in seconds, which depend on the app's settings and the time. */
const numbersOut = (text: string) => text.replace(/\d+/g, "N")

/** The answer is the document's example error of `path`, `method`, `status`: its code, message and field. */
const answersAsDocumented = (
  response: { statusCode: number; body: string; headers: Record<string, unknown> },
  path: string,
  method: string,
  status: number,
  message: (text: string) => string = (text) => text
) => {
  expect(response.statusCode, response.body).toBe(status)
  const sent = json(response).error as { code: string; message: string; field?: string; request_id: string }
  const example = exampleOf(path, method, status)
  expect(sent.code).toBe(example.code)
  expect(message(sent.message)).toBe(message(example.message))
  expect(sent.field).toBe(example.field)
  expect(response.headers["x-request-id"]).toBe(sent.request_id)
}

describe("OpenApi answers", () => {
  it("declares x-request-id on every answer, a shared component header", () => {
    expect(document.components.headers.RequestId).toMatchObject({ required: true, schema: { type: "string" } })
    const all = responsesOf()
    expect(all.length).toBeGreaterThan(300)
    for (const { where, response } of all) expect(header(response, "x-request-id"), where).toBe(document.components.headers.RequestId)
  })

  it("declares Retry-After (integer seconds) on every 429", () => {
    const limited = responsesOf().filter(({ status }) => status === 429)
    expect(limited.map(({ op }) => op.operationId).toSorted()).toEqual(["changePassword", "listPayments", "login", "resendEvent", "sendTestEvent"])
    for (const { where, response } of limited) {
      expect(header(response, "Retry-After"), where).toMatchObject({ required: true, schema: { type: "integer", minimum: 1 } })
    }
  })

  it("declares 400, 408, 431 on every operation and 414 on every one with a path parameter, as the other errors", () => {
    for (const { path, method, op } of operations) {
      const statuses = Object.keys(op.responses)
      expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(["400", "408", "431"]))
      expect(statuses.includes("414"), `${method} ${path}`).toBe(op.parameters.some((p) => p.in === "path"))
    }
    expect(exampleOf("/api/v1/payments", "get", 431)).toMatchObject({ code: "headers_too_large", message: "the request's headers are larger than 16 KiB" })
    expect(exampleOf("/api/v1/payments/{paymentID}", "get", 414)).toMatchObject({ code: "uri_too_long", message: "a path segment is longer than 2048 characters" })
    expect(exampleOf("/openapi.json", "get", 408).code).toBe("request_timeout")
  })

  it("declares the payer pages' errors as the HTML pages they are, and their form posts' as JSON or HTML", () => {
    for (const path of ["/public/payments/{token}", "/public/subscriptions/{token}"]) {
      const notFound = (document.paths as Record<string, Record<string, Operation>>)[path]!["get"]!.responses["404"]!
      expect(Object.keys(notFound.content!), path).toEqual(["text/html"])
    }
    const simulate = (document.paths as Record<string, Record<string, Operation>>)["/public/payments/{token}/simulate"]!["post"]!
    expect(Object.keys(simulate.responses["404"]!.content!)).toEqual(["application/json", "text/html"])
    // Refused before the route: never a page.
    expect(Object.keys(simulate.responses["431"]!.content!)).toEqual(["application/json"])
    const page = (document.paths as Record<string, Record<string, Operation>>)["/public/payments/{token}"]!["get"]!
    expect(Object.keys(page.responses["400"]!.content!)).toEqual(["application/json"])
  })

  it("has an example on every error body, whose message is never its code", () => {
    // (The health probes' 503 is an answer of its own, not the error body.)
    const isError = (media: Media | undefined) => (media?.schema as { $ref?: string } | undefined)?.$ref === "#/components/schemas/Error"
    const errors = responsesOf().filter(({ status, response }) => status >= 400 && isError(response.content?.["application/json"]))
    expect(errors.length).toBeGreaterThan(300)
    for (const { where, response } of errors) {
      const example = response.content!["application/json"]!.example?.error
      expect(example, where).toBeDefined()
      expect(example!.message, where).not.toBe(example!.code)
      expect(example!.message, where).not.toMatch(/^[a-z]+(_[a-z]+)+$/)
    }
  })
})

describe("OpenApi error examples, sent by the app", () => {
  let t: TestApp | undefined
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  it("are what the app answers", async () => {
    t = await make()
    const app = t.app
    const merchant = await t.merchant()
    const call = keyCalls(app, () => merchant.apiKey)
    const admin = { authorization: `Bearer ${adminToken}` }

    // A query parameter the operation does not take (the docs, the host, the merchant and the operator APIs).
    answersAsDocumented(await app.inject({ method: "GET", url: "/openapi.json?expand=1" }), "/openapi.json", "get", 400)
    answersAsDocumented(await app.inject({ method: "GET", url: "/health/live?expand=1" }), "/health/live", "get", 400)
    answersAsDocumented(await call("GET", "/balance?expand=1"), "/api/v1/balance", "get", 400)
    answersAsDocumented(await app.inject({ method: "GET", url: "/admin/v1/accounts?expand=1", headers: admin }), "/admin/v1/accounts", "get", 400)
    answersAsDocumented(
      await app.inject({ method: "POST", url: "/api/v1/auth/login?expand=1", payload: { email: "nobody@example.com", password: "wrong password" } }),
      "/api/v1/auth/login", "post", 400
    )
    // Credentials.
    answersAsDocumented(
      await app.inject({ method: "POST", url: "/api/v1/auth/login", payload: { email: "nobody@example.com", password: "wrong password" } }),
      "/api/v1/auth/login", "post", 401
    )
    answersAsDocumented(await app.inject({ method: "GET", url: "/api/v1/payments" }), "/api/v1/payments", "get", 401)
    answersAsDocumented(await app.inject({ method: "GET", url: "/admin/v1/accounts" }), "/admin/v1/accounts", "get", 401)
    // A body of another type.
    answersAsDocumented(
      await app.inject({ method: "POST", url: "/api/v1/auth/login", headers: { "content-type": "text/plain" }, payload: "x" }),
      "/api/v1/auth/login", "post", 415
    )
    // Not found, as JSON; the payer pages' as an HTML page.
    answersAsDocumented(await call("GET", `/payments/pay_${crypto.randomUUID()}`), "/api/v1/payments/{paymentID}", "get", 404)
    answersAsDocumented(
      await app.inject({ method: "POST", url: "/public/payments/unknown-token/simulate", payload: { outcome: "paid", csrf_token: "x" } }),
      "/public/payments/{token}/simulate", "post", 404
    )
    // A path or a Host no route can take, refused before any route, also on the payer pages (an outside probe: undeclared there).
    answersAsDocumented(await app.inject({ method: "GET", url: "/public/payments/%ZZ" }), "/public/payments/{token}", "get", 400)
    answersAsDocumented(await app.inject({ method: "GET", url: "/public/payments/%C0%AF/status" }), "/public/payments/{token}/status", "get", 400)
    const nul = await app.inject({ method: "GET", url: "/public/payments/a%00b/status" })
    expect([nul.statusCode, json(nul).error.message]).toEqual([400, "token must not contain NUL characters (\\u0000)"])
    answersAsDocumented(await app.inject({ method: "GET", url: "/public/subscriptions/%E0%A4%A" }), "/public/subscriptions/{token}", "get", 400)
    for (const url of ["/public/payments/unknown-token", "/public/subscriptions/unknown-token"]) {
      const page = await app.inject({ method: "GET", url })
      expect(page.statusCode).toBe(404)
      expect(page.headers["content-type"]).toMatch(/^text\/html/)
      expect(page.headers["x-request-id"]).toMatch(/^req_/)
    }
    // State conflicts.
    const created = await call("POST", "/payments", { amount: "100.00", order_id: "doc-1" })
    expect(created.statusCode, created.body).toBe(201)
    const paymentId = json(created).payment_id as string
    answersAsDocumented(await call("POST", "/payments", { amount: "200.00", order_id: "doc-1" }), "/api/v1/payments", "post", 409)
    answersAsDocumented(await app.inject({ method: "POST", url: `/admin/v1/payments/${paymentId}/refund`, headers: admin }), "/admin/v1/payments/{id}/refund", "post", 409)
    answersAsDocumented(await app.inject({ method: "POST", url: `/admin/v1/payments/${paymentId}/chargeback`, headers: admin }), "/admin/v1/payments/{id}/chargeback", "post", 409)
    const sandbox = json(await call("POST", "/payments", { amount: "100.00", order_id: "doc-2", test: true })).payment_id as string
    expect((await call("POST", `/payments/${sandbox}/simulate`, { outcome: "paid" })).statusCode).toBe(200)
    answersAsDocumented(await call("POST", `/payments/${sandbox}/simulate`, { outcome: "failed" }), "/api/v1/payments/{paymentID}/simulate", "post", 409)
    answersAsDocumented(
      await app.inject({ method: "POST", url: "/admin/v1/clock", headers: admin, payload: { now: "2026-03-01T09:30:00Z" } }),
      "/admin/v1/clock", "post", 409
    )
    // Hooks the deployment lacks.
    answersAsDocumented(await app.inject({ method: "GET", url: "/metrics", headers: admin }), "/metrics", "get", 501)
    answersAsDocumented(await app.inject({ method: "PUT", url: "/admin/v1/rate", headers: admin, payload: { rate: "95.5" } }), "/admin/v1/rate", "put", 501)
  })

  it("of the limits are what the app answers, with Retry-After", async () => {
    t = await make({ loginLimits: { perEmail: 2, perAddress: 1_000_000 }, eventSendsPerMinute: 1 })
    const login = () => t!.app.inject({ method: "POST", url: "/api/v1/auth/login", payload: { email: "nobody@example.com", password: "wrong password" } })
    await login()
    await login()
    const limited = await login()
    answersAsDocumented(limited, "/api/v1/auth/login", "post", 429, numbersOut)
    expect(limited.headers["retry-after"]).toMatch(/^[1-9][0-9]*$/)

    const merchant = await t.merchant()
    const call = keyCalls(t.app, () => merchant.apiKey)
    expect((await call("POST", `/terminals/${merchant.terminal.id}/test-event`, {})).statusCode).toBe(200)
    const sends = await call("POST", `/terminals/${merchant.terminal.id}/test-event`, {})
    answersAsDocumented(sends, "/api/v1/terminals/{terminalID}/test-event", "post", 429, numbersOut)
    expect(sends.headers["retry-after"]).toMatch(/^[1-9][0-9]*$/)
  })
})
