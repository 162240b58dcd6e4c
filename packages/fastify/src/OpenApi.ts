/**
 * The OpenAPI 3.1 document of the merchant API, built from the request schemas of `Schemas.ts`,
 * the response schemas of `ResponseSchemas.ts` and the table of operations below, plus a static
 * HTML reference rendered from the document.
 *
 * `registerDocs(app)` serves `GET /openapi.json` and `GET /docs`.
 */
import type { FastifyInstance } from "fastify"
import { JsonSchema, Schema } from "effect"
import { responses } from "./ResponseSchemas.js"
import * as Schemas from "./Schemas.js"

/** Request body schemas by component name. */
export const requests = {
  PaymentCreate: Schemas.PaymentCreate,
  TerminalSettings: Schemas.TerminalSettings,
  PayoutCreate: Schemas.PayoutCreate,
  SubscriptionCreate: Schemas.SubscriptionCreate,
  Login: Schemas.Login,
  Refresh: Schemas.Refresh
} as const

// ---------------------------------------------------------------------------------------------
// Operations

type Ref = keyof typeof responses
type Json = { readonly [key: string]: unknown }

interface Operation {
  readonly method: "get" | "post" | "put"
  readonly path: string
  readonly id: string
  readonly tag: "Auth" | "Payments" | "Terminals" | "Payouts" | "Subscriptions"
  readonly summary: string
  readonly open?: true
  readonly query?: Schema.Top
  readonly headers?: ReadonlyArray<{ readonly name: string; readonly required: boolean; readonly description: string }>
  readonly body?: keyof typeof requests
  readonly ok: ReadonlyArray<{ readonly status: number; readonly description: string; readonly schema: Ref; readonly csv?: true }>
  readonly errors: ReadonlyArray<readonly [number, string]>
}

const common: ReadonlyArray<readonly [number, string]> = [
  [400, "`invalid_request`: a wrong type, missing or unknown field, named in `field`; `invalid_json_body`: malformed JSON, invalid UTF-8 or a body that is not an object; `body_too_large` (over 64 KiB)"],
  [401, "`X-API-Key header is required`, `invalid api key`, `X-Nonce header is required`, `nonce already used`, invalid or expired access token"],
  [403, "`terminal access denied` (API key of another terminal), `account access denied` (terminal of another account)"]
]

const operations: ReadonlyArray<Operation> = [
  {
    method: "post", path: "/auth/login", id: "login", tag: "Auth", open: true, summary: "Dashboard login: a token pair",
    body: "Login", ok: [{ status: 200, description: "token pair", schema: "TokenPair" }],
    errors: [[400, "`invalid_request` (field named), `invalid_json_body`"], [401, "`invalid email or password`"]]
  },
  {
    method: "post", path: "/auth/refresh", id: "refresh", tag: "Auth", open: true, summary: "New token pair for a refresh token (single use)",
    body: "Refresh", ok: [{ status: 200, description: "token pair", schema: "TokenPair" }],
    errors: [[400, "`invalid_request` (field named), `invalid_json_body`"], [401, "`invalid or expired refresh token`"]]
  },
  {
    method: "post", path: "/payments", id: "createPayment", tag: "Payments", summary: "Create a payment",
    headers: [{ name: "X-Test-Mode", required: false, description: "`true` creates a sandbox payment" }],
    body: "PaymentCreate",
    ok: [
      { status: 201, description: "payment created", schema: "Payment" },
      { status: 200, description: "the payment of this `order_id` (same parameters)", schema: "Payment" }
    ],
    errors: [...common, [400, "amount malformed, not positive or above 1000000.00; `terminal is unavailable`"], [409, "`order_id already used for another payment`"]]
  },
  {
    method: "get", path: "/payments", id: "listPayments", tag: "Payments", summary: "List payments (newest first) or export CSV",
    query: Schemas.PaymentListQuery,
    ok: [{ status: 200, description: "a page of payments, or `text/csv` with `format=csv`", schema: "PaymentPage", csv: true }],
    errors: common
  },
  {
    method: "get", path: "/payments/stats", id: "paymentStats", tag: "Payments", summary: "Payment statistics per status",
    query: Schemas.PaymentStatsQuery, ok: [{ status: 200, description: "statistics", schema: "PaymentStats" }], errors: common
  },
  {
    method: "get", path: "/payments/{paymentID}", id: "getPayment", tag: "Payments", summary: "Read a payment (`pay_<uuid>` or UUID)",
    ok: [{ status: 200, description: "the payment", schema: "Payment" }], errors: [...common, [404, "`payment not found`"]]
  },
  {
    method: "put", path: "/terminals/{terminalID}", id: "updateTerminal", tag: "Terminals", summary: "Change terminal settings",
    body: "TerminalSettings", ok: [{ status: 200, description: "the terminal", schema: "Terminal" }], errors: common
  },
  {
    method: "get", path: "/balance", id: "getBalance", tag: "Terminals", summary: "Balance of the terminal",
    query: Schemas.TerminalQuery, ok: [{ status: 200, description: "balance", schema: "Balance" }], errors: common
  },
  {
    method: "get", path: "/rate", id: "getRate", tag: "Terminals", summary: "Current USDT/RUB rate (or the terminal's)",
    query: Schemas.TerminalQuery, ok: [{ status: 200, description: "rate", schema: "Rate" }],
    errors: [...common, [503, "`provider not available` (no rate known)"]]
  },
  {
    method: "post", path: "/payouts", id: "createPayout", tag: "Payouts", summary: "Request a USDT payout",
    query: Schemas.TerminalQuery, body: "PayoutCreate",
    ok: [{ status: 200, description: "the payout (`created`), also for a replayed `idempotency_key`", schema: "Payout" }],
    errors: [
      ...common,
      [400, "`terminal_id is required` (dashboard user), `insufficient balance`"],
      [409, "`max active payouts reached`, `idempotency key conflicts with another request`"]
    ]
  },
  {
    method: "get", path: "/payouts", id: "listPayouts", tag: "Payouts", summary: "List payouts (newest first)",
    query: Schemas.PayoutListQuery, ok: [{ status: 200, description: "a page of payouts", schema: "PayoutPage" }],
    errors: [...common, [400, "`terminal_id is required` (dashboard user)"]]
  },
  {
    method: "get", path: "/subscription-plans", id: "listPlans", tag: "Subscriptions", summary: "Active plans of a terminal",
    query: Schemas.TerminalQuery, ok: [{ status: 200, description: "plans", schema: "PlanList" }],
    errors: [...common, [400, "`terminal_id is required`"], [503, "`recurring plans not configured`"]]
  },
  {
    method: "post", path: "/subscriptions", id: "createSubscription", tag: "Subscriptions", summary: "Create a subscription",
    headers: [{ name: "Idempotency-Key", required: true, description: "at most 128 printable ASCII characters" }],
    body: "SubscriptionCreate",
    ok: [
      { status: 201, description: "created, with `pay_url` (or `redirect_url` for H2H)", schema: "Subscription" },
      { status: 200, description: "the subscription of this `Idempotency-Key` (same body)", schema: "Subscription" }
    ],
    errors: [
      ...common,
      [400, "`invalid json body`, `terminal_id is required`, missing fields (Russian text), key or reference over 128, plan not available, amount malformed / not positive / above the ceiling (Russian text), `terminal is unavailable`, fields not accepted in the plan's mode, `recurring scenario temporarily unavailable`"],
      [403, "`subscription write access required`"],
      [409, "`idempotency key conflicts with another request`"],
      [503, "`subscriptions not configured`, `provider not available`"]
    ]
  },
  {
    method: "get", path: "/subscriptions", id: "listSubscriptions", tag: "Subscriptions", summary: "List subscriptions (newest first)",
    query: Schemas.SubscriptionListQuery, ok: [{ status: 200, description: "a page of subscriptions", schema: "SubscriptionPage" }],
    errors: common
  },
  {
    method: "get", path: "/subscriptions/{subscriptionID}", id: "getSubscription", tag: "Subscriptions", summary: "Read a subscription",
    ok: [{ status: 200, description: "the subscription (without `pay_url`)", schema: "Subscription" }],
    errors: [...common, [404, "`subscription not found`"]]
  },
  {
    method: "get", path: "/subscriptions/{subscriptionID}/charges", id: "listCharges", tag: "Subscriptions",
    summary: "Charge history (up to 100 newest)", ok: [{ status: 200, description: "charges", schema: "ChargeList" }],
    errors: [...common, [404, "`subscription not found`"]]
  },
  {
    method: "post", path: "/subscriptions/{subscriptionID}/stop", id: "stopSubscription", tag: "Subscriptions", summary: "Stop a subscription",
    ok: [{ status: 200, description: "stopped (also when already stopped)", schema: "Ok" }],
    errors: [
      ...common,
      [400, "the stop could not be completed, the subscription moved to `review` (Russian text)"],
      [403, "`subscription write access required`"],
      [404, "`subscription not found`"],
      [503, "`provider not available`"]
    ]
  }
]

// ---------------------------------------------------------------------------------------------
// Document

/** An OpenAPI 3.1 schema object (and its definitions) from an Effect schema. */
const jsonSchema = (schema: Schema.Top, closed: boolean) => {
  const doc = Schema.toJsonSchemaDocument(schema, {
    onExcessProperty: closed ? "error" : "ignore",
    includeAnnotationKey: (key) => key === "pattern"
  })
  const openapi = JsonSchema.toMultiDocumentOpenApi3_1({ dialect: doc.dialect, schemas: [doc.schema], definitions: doc.definitions })
  return { schema: openapi.schemas[0] as Json, definitions: openapi.definitions as Record<string, Json> }
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

const parametersOf = (operation: Operation): Array<Json> => {
  const path = [...operation.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1], in: "path", required: true, schema: { type: "string" }
  }))
  const query = operation.query === undefined ? [] : (() => {
    const { schema } = jsonSchema(operation.query, true)
    const properties = (schema["properties"] ?? {}) as Record<string, Json>
    const required = (schema["required"] ?? []) as ReadonlyArray<string>
    return Object.entries(properties).map(([name, s]) => {
      const { description, ...rest } = s
      return { name, in: "query", required: required.includes(name), ...(description === undefined ? {} : { description }), schema: rest }
    })
  })()
  const headers = (operation.headers ?? []).map((h) => ({
    name: h.name, in: "header", required: h.required, description: h.description, schema: { type: "string" }
  }))
  return [...path, ...query, ...headers]
}

const errorResponses = (errors: ReadonlyArray<readonly [number, string]>) => {
  const byStatus = new Map<number, Array<string>>()
  for (const [status, text] of errors) byStatus.set(status, [...(byStatus.get(status) ?? []), text])
  return Object.fromEntries([...byStatus].map(([status, texts]) => [
    String(status),
    { description: texts.join("; "), content: { "application/json": { schema: ref("Error") } } }
  ]))
}

const operationObject = (operation: Operation) => ({
  operationId: operation.id,
  tags: [operation.tag],
  summary: operation.summary,
  ...(operation.open === true ? { security: [] } : {}),
  parameters: parametersOf(operation),
  ...(operation.body === undefined ? {} : {
    requestBody: { required: true, content: { "application/json": { schema: ref(operation.body) } } }
  }),
  responses: {
    ...Object.fromEntries(operation.ok.map((ok) => [String(ok.status), {
      description: ok.description,
      content: {
        "application/json": { schema: ref(ok.schema) },
        ...(ok.csv === true ? { "text/csv": { schema: { type: "string" } } } : {})
      }
    }])),
    ...errorResponses([
      ...operation.errors,
      ...(operation.body === undefined ? [] : [[415, "`unsupported_media_type`: the body is not `application/json`"] as const])
    ])
  }
})

/** Builds the OpenAPI 3.1 document of the merchant API. */
export const make = () => {
  const schemas: Record<string, Json> = {}
  for (const [name, schema] of Object.entries(requests)) {
    const built = jsonSchema(schema, true)
    Object.assign(schemas, built.definitions, { [name]: built.schema })
  }
  for (const [name, schema] of Object.entries(responses)) {
    const built = jsonSchema(schema, false)
    Object.assign(schemas, built.definitions, { [name]: built.schema })
  }
  const paths: Record<string, Record<string, Json>> = {}
  for (const operation of operations) {
    paths[operation.path] = { ...paths[operation.path], [operation.method]: operationObject(operation) }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Paydesk merchant API",
      version: "1",
      description:
        "Payments, recurring subscriptions, payouts, balance and rate of a merchant's terminals. " +
        "Every request except login and refresh carries `X-API-Key` and a fresh `X-Nonce`, or `Authorization: Bearer <access token>`. " +
        "Errors have the body `{ error: { code, message, request_id, field? } }` and every response carries `x-request-id`."
    },
    servers: [{ url: "/api/v1" }],
    tags: [
      { name: "Auth" }, { name: "Payments" }, { name: "Terminals" }, { name: "Payouts" }, { name: "Subscriptions" }
    ],
    security: [{ ApiKey: [], Nonce: [] }, { Bearer: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        ApiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "the terminal's api_key" },
        Nonce: { type: "apiKey", in: "header", name: "X-Nonce", description: "unique per request (not reusable for 10 minutes)" },
        Bearer: { type: "http", scheme: "bearer", description: "access token from /auth/login or /auth/refresh" }
      }
    }
  }
}

/** The document's type. */
export type Document = ReturnType<typeof make>

// ---------------------------------------------------------------------------------------------
// HTML reference

const escape = (value: unknown): string =>
  String(value).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

/** Inline code spans of the descriptions. */
const prose = (value: unknown): string => escape(value).replace(/`([^`]+)`/g, "<code>$1</code>")

const typeOf = (schema: Json | undefined): string => {
  if (schema === undefined) return ""
  if (typeof schema["$ref"] === "string") return (schema["$ref"] as string).split("/").at(-1)!
  if (Array.isArray(schema["enum"])) return (schema["enum"] as Array<unknown>).map((v) => JSON.stringify(v)).join(" | ")
  if (Array.isArray(schema["anyOf"])) return (schema["anyOf"] as Array<Json>).map(typeOf).join(" | ")
  if (schema["type"] === "array") return `array of ${typeOf(schema["items"] as Json | undefined)}`
  return String(schema["type"] ?? "any")
}

const fieldsTable = (schema: Json | undefined): string => {
  const properties = (schema?.["properties"] ?? {}) as Record<string, Json>
  const required = (schema?.["required"] ?? []) as ReadonlyArray<string>
  const rows = Object.entries(properties).map(([name, s]) =>
    `<tr><td><code>${escape(name)}</code></td><td>${escape(typeOf(s))}</td><td>${required.includes(name) ? "yes" : ""}</td><td>${prose(s["description"] ?? "")}</td></tr>`
  )
  return rows.length === 0 ? "" : `<table><tr><th>Field</th><th>Type</th><th>Required</th><th>Notes</th></tr>${rows.join("")}</table>`
}

/** Renders the document as a self-contained HTML page (no scripts, no external assets). */
export const html = (document: Document): string => {
  const sections = document.tags.map(({ name }) => {
    const items = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, op]) => (op["tags"] as Array<string>).includes(name))
        .map(([method, op]) => {
          const parameters = op["parameters"] as Array<Json>
          const body = (op["requestBody"] as Json | undefined)
          const bodyRef = body === undefined ? undefined : typeOf(((body["content"] as Json)["application/json"] as Json)["schema"] as Json)
          const responses = Object.entries(op["responses"] as Record<string, Json>)
            .map(([status, r]) => `<li><b>${escape(status)}</b> ${prose(r["description"])}</li>`).join("")
          const params = parameters.length === 0 ? "" :
            `<h4>Parameters</h4><table><tr><th>Name</th><th>In</th><th>Type</th><th>Required</th><th>Notes</th></tr>${
              parameters.map((p) =>
                `<tr><td><code>${escape(p["name"])}</code></td><td>${escape(p["in"])}</td><td>${escape(typeOf(p["schema"] as Json))}</td><td>${p["required"] === true ? "yes" : ""}</td><td>${prose(p["description"] ?? "")}</td></tr>`
              ).join("")
            }</table>`
          const bodyHtml = bodyRef === undefined ? "" :
            `<h4>Body: ${escape(bodyRef)}</h4>${fieldsTable(document.components.schemas[bodyRef])}`
          return `<section id="${escape(op["operationId"])}"><h3><span class="m ${escape(method)}">${escape(method.toUpperCase())}</span> <code>${escape(document.servers[0]!.url + path)}</code></h3>` +
            `<p>${prose(op["summary"])}${op["security"] !== undefined ? " <em>(no API key)</em>" : ""}</p>${params}${bodyHtml}<h4>Responses</h4><ul>${responses}</ul></section>`
        })
    )
    return `<h2>${escape(name)}</h2>${items.join("")}`
  })
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(document.info.title)}</title>` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><style>` +
    `body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}` +
    `table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}` +
    `code{background:#f4f4f4;padding:0 .2rem}section{border-top:1px solid #eee;padding:.5rem 0}` +
    `.m{display:inline-block;min-width:3.5rem;color:#fff;border-radius:3px;padding:0 .4rem;font-size:.85rem}` +
    `.get{background:#2b7bb9}.post{background:#3a9d4a}.put{background:#b9772b}</style></head><body>` +
    `<h1>${escape(document.info.title)}</h1><p>${prose(document.info.description)}</p>` +
    `<p>Machine-readable document: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${escape(document.openapi)}).</p>` +
    `${sections.join("")}</body></html>`
}

/** Serves `GET /openapi.json` and `GET /docs` on `app` (mount at the root). */
export const registerDocs = async (app: FastifyInstance): Promise<void> => {
  const document = make()
  const page = html(document)
  app.get("/openapi.json", async (_request, reply) => reply.type("application/json; charset=utf-8").send(document))
  app.get("/docs", async (_request, reply) =>
    reply
      .type("text/html; charset=utf-8")
      .header("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'")
      .send(page))
}
