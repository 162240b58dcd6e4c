import { afterAll, beforeAll, describe, expect, it } from "vitest"
import Fastify from "fastify"
import * as OpenApi from "../src/OpenApi.js"
import { json, make, type TestApp } from "./TestApp.js"

let t: TestApp
let docs: ReturnType<typeof Fastify>

beforeAll(async () => {
  t = await make()
  docs = Fastify()
  await OpenApi.registerDocs(docs)
})
afterAll(async () => {
  await docs.close()
  await t.close()
})

describe("MerchantApi OpenAPI document and reference page", () => {
  it("serves an OpenAPI 3.1 document whose every operation is a route of the app", async () => {
    const response = await docs.inject({ method: "GET", url: "/openapi.json" })
    expect(response.statusCode).toBe(200)
    expect(response.headers["content-type"]).toBe("application/json; charset=utf-8")
    const document = json(response)
    expect(document.openapi).toBe("3.1.0")
    expect(document.servers).toEqual([{ url: "/api/v1" }])
    const operations = Object.entries(document.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })))
    expect(operations).toHaveLength(17)
    await t.app.ready()
    for (const { method, path } of operations) {
      const url = `/api/v1${path.replace(/\{(\w+)\}/g, ":$1")}`
      expect(t.app.hasRoute({ method: method as "GET", url }), `${method} ${url}`).toBe(true)
    }
    // Every $ref points at a component.
    const refs = [...response.body.matchAll(/"\$ref":"#\/components\/schemas\/(\w+)"/g)].map((m) => m[1]!)
    expect(refs.length).toBeGreaterThan(20)
    for (const name of refs) expect(document.components.schemas[name], name).toBeDefined()
  })

  it("derives request bodies and query parameters from the request schemas", () => {
    const document = OpenApi.make()
    expect(document.components.schemas["PaymentCreate"]).toMatchObject({
      type: "object",
      required: ["amount", "order_id"],
      additionalProperties: false,
      properties: { test: { anyOf: [{ type: "boolean" }, { type: "null" }] } }
    })
    expect(document.components.schemas["TerminalSettings"]).toMatchObject({
      additionalProperties: false,
      properties: { conversion_mode: { type: "string", enum: ["instant", "scheduled"] } }
    })
    const list = document.paths["/payments"]!["get"] as { parameters: Array<{ name: string; in: string; schema: unknown }> }
    expect(list.parameters.map((p) => p.name)).toEqual(["terminal_id", "environment", "recurring", "page", "format"])
    expect(list.parameters.find((p) => p.name === "environment")!.schema).toEqual({ type: "string", enum: ["sandbox", "all", "prod"] })
    expect(list.parameters.find((p) => p.name === "page")!.schema).toEqual({ type: "string", pattern: "^[1-9][0-9]{0,8}$" })
    const login = document.paths["/auth/login"]!["post"] as { security?: unknown }
    expect(login.security).toEqual([])
    const stop = document.paths["/subscriptions/{subscriptionID}/stop"]!["post"] as { parameters: Array<{ name: string; in: string }> }
    expect(stop.parameters).toContainEqual(expect.objectContaining({ name: "subscriptionID", in: "path" }))
  })

  it("serves a self-contained HTML reference", async () => {
    const response = await docs.inject({ method: "GET", url: "/docs" })
    expect(response.statusCode).toBe(200)
    expect(response.headers["content-type"]).toBe("text/html; charset=utf-8")
    expect(response.body).toContain("<code>/api/v1/subscriptions/{subscriptionID}/stop</code>")
    expect(response.body).toContain("Body: PaymentCreate")
    expect(response.body).not.toMatch(/<script|https?:\/\/(?!pay)/)
  })
})
