/**
 * The OpenAPI 3.1 document of the whole service, generated from the operation declarations
 * (`MerchantOperations`, `OperatorOperations`): the merchant API, the payer pages and the operator
 * API (its own tag group), the callbacks as `webhooks`, every schema a `$ref` component, an example
 * on every operation. `/docs` renders it with Scalar (`@scalar/api-reference`, served from the
 * package, no CDN), with the "Callbacks" guide in its introduction.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify"
import { Effect, JsonSchema, Schema } from "effect"
import {
  AccessDenied,
  AmountMalformed,
  AmountNotPositive,
  CsrfRejected,
  IdempotencyConflict,
  InsufficientBalance,
  InvalidCredentials,
  InvalidJsonBody,
  MaxActivePayouts,
  NonceAlreadyUsed,
  NotFound,
  OrderIdConflict,
  type PaydeskError,
  PlanNotAvailable,
  ProviderUnavailable,
  RecurringNotConfigured,
  RecurringTemporarilyUnavailable,
  ServiceBusy,
  StopFailed,
  SubscriptionFieldsMissing,
  TerminalIdRequired,
  TerminalUnavailable,
  TestClockAdvancing,
  UnstorableText,
  UsdtAmountMalformed
} from "@paydesk/core"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import * as CallbacksGuide from "./CallbacksGuide.js"
import { fullPath, type Operation, type Reply, route, transportErrors } from "./Contract.js"
import * as Examples from "./Examples.js"
import * as HostOperations from "./HostOperations.js"
import { codeOf, errorResponse, fromExit, statusOf as httpStatusOf } from "./HttpErrors.js"
import * as MerchantOperations from "./MerchantOperations.js"
import * as OperatorOperations from "./OperatorOperations.js"
import { responses } from "./ResponseSchemas.js"

type Json = { readonly [key: string]: unknown }

/** Every declared operation of the app (the docs routes included). */
export const operations: ReadonlyArray<Operation<any, any>> = [
  ...MerchantOperations.merchant,
  ...MerchantOperations.pages,
  ...OperatorOperations.all,
  ...MerchantOperations.docs,
  ...HostOperations.all
]

const tags: ReadonlyArray<{ readonly name: string; readonly description: string }> = [
  { name: "Auth", description: "The dashboard's token pair (login, refresh, logout); no API key." },
  { name: "Payments", description: "One-off payments: create, read, list, statistics, CSV export." },
  { name: "Sandbox", description: "Test payments without the payer (simulation), the sandbox acquirer's answers to sandbox subscription charges, and the events feed of `paydesk listen`." },
  { name: "Terminals", description: "Terminal settings, balance and rate." },
  { name: "Credentials", description: "API keys and the signing secret (the owner's Bearer token)." },
  { name: "Payouts", description: "USDT payouts of the terminal's balance." },
  { name: "Subscriptions", description: "Recurring payments: plans, creation, state, charge history, upcoming charges, stop." },
  { name: "Test clocks", description: "Sandbox time you move: payments and subscriptions on a clock live on its time, and an advance runs their due charges, expiries and callbacks in order." },
  { name: "Events", description: "The terminal's callback events: list, one with its delivery attempts, resend, recovery after an outage, a test `ping`." },
  { name: "Payer pages", description: "The public pages a payer opens (`pay_url`), reached with the page token alone." },
  { name: "Operator", description: "The operator API (`/admin/v1`, `Authorization: Bearer $PAYDESK_ADMIN_TOKEN`): provisioning, bank outcomes, moves, hooks." },
  { name: "Docs", description: "This document and its rendering." },
  { name: "Health", description: "Liveness and readiness probes (no credentials) and the Prometheus scrape (operator token)." }
]

// ---------------------------------------------------------------------------------------------
// Schemas

/** An OpenAPI 3.1 schema (and its `$ref` definitions) from an Effect schema. */
const jsonSchema = (schema: Schema.Top, closed: boolean) => {
  const doc = Schema.toJsonSchemaDocument(schema, {
    onExcessProperty: closed ? "error" : "ignore",
    includeAnnotationKey: (key) => key === "pattern"
  })
  const openapi = JsonSchema.toMultiDocumentOpenApi3_1({ dialect: doc.dialect, schemas: [doc.schema], definitions: doc.definitions })
  return {
    schema: openObjects(openapi.schemas[0]) as Json,
    definitions: Object.fromEntries(Object.entries(openapi.definitions).map(([name, definition]) => [name, openObjects(definition) as Json]))
  }
}

/**
 * A free-form object (`metadata`, an event's `payload`: a record of any values) is written
 * `{"type": "object"}`, which generators such as openapi-typescript read as an object with no
 * property at all (`Record<string, never>`: a generated client could not set `metadata`). Such an
 * object gets `additionalProperties: true`, as it means.
 */
const openObjects = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(openObjects)
  if (typeof node !== "object" || node === null) return node
  const entries = Object.entries(node).map(([key, value]) => [key, openObjects(value)] as const)
  const object = Object.fromEntries(entries) as Record<string, unknown>
  const free = object["type"] === "object" && !("properties" in object) && !("additionalProperties" in object) && !("patternProperties" in object)
  return free ? { ...object, additionalProperties: true } : object
}

/** Collects the components of the schemas it converts. */
const components = () => {
  const schemas: Record<string, Json> = {}
  const add = (schema: Schema.Top, closed: boolean): Json => {
    const built = jsonSchema(schema, closed)
    Object.assign(schemas, built.definitions)
    return built.schema
  }
  return { schemas, add }
}

// ---------------------------------------------------------------------------------------------
// Operations

/**
 * The core's errors of a fixed text (its messages in the spec's words), as the HTTP table
 * (`HttpErrors`) answers them: status, code and message.
 */
const coreErrors: ReadonlyArray<Examples.SentError> = ([
  InvalidJsonBody.of(), AmountMalformed.of(), UsdtAmountMalformed.of(), AmountNotPositive.of(), NonceAlreadyUsed.of(), InvalidCredentials.of(),
  AccessDenied.terminal(), AccessDenied.account(), AccessDenied.owner(), AccessDenied.subscriptionWrite(), CsrfRejected.of(),
  TerminalIdRequired.of(), TerminalUnavailable.of(), PlanNotAvailable.of(), RecurringTemporarilyUnavailable.of(), StopFailed.of(),
  SubscriptionFieldsMissing.of([]), InsufficientBalance.of(), UnstorableText.of(),
  IdempotencyConflict.of(), OrderIdConflict.of(), MaxActivePayouts.of(), TestClockAdvancing.of(),
  RecurringNotConfigured.plans(), RecurringNotConfigured.subscriptions(), ProviderUnavailable.of(), ServiceBusy.of(),
  ...(["subscription", "payment", "payout", "terminal", "account", "plan", "delivery", "user", "api key", "event", "test clock"] as const).map(NotFound.of)
] satisfies ReadonlyArray<PaydeskError>).map((e) => ({ status: httpStatusOf[e._tag], code: codeOf(e._tag), message: e.message }))

/** Every error a declaration may name, as the server sends it. */
const sentErrors: ReadonlyArray<Examples.SentError> = [...Examples.sentErrors, ...coreErrors]

/**
 * The example of an error status of `op`: the operation's own (`Examples.operationErrors`), else the
 * first error its texts name in backticks that the server sends at that status, by message or by
 * code. None when nothing named is known: no example rather than one the server never sends.
 */
const errorExample = (op: Operation<any, any>, status: number, texts: ReadonlyArray<string>): Examples.SentError | undefined => {
  const own = Examples.operationErrors[op.id]?.[status]
  if (own !== undefined) return own
  const candidates = sentErrors.filter((e) => e.status === status && (e.surfaces === undefined || e.surfaces.includes(op.surface)))
  for (const text of texts) {
    for (const [, named] of text.matchAll(/`([^`]+)`/g)) {
      const found = candidates.find((e) => e.message === named) ?? candidates.find((e) => e.code === named)
      if (found !== undefined) return found
    }
  }
  return undefined
}

/** The `x-request-id` every answer carries (a shared component header). */
const requestIdHeader = { "x-request-id": { $ref: "#/components/headers/RequestId" } }

/** `Retry-After` of the answers that send it (429, and the overloaded login's 503 `service_busy`). */
const retryAfterHeader = { "Retry-After": { $ref: "#/components/headers/RetryAfter" } }

const headerComponents = {
  RequestId: {
    description: "the request's id, on every answer (an error's `request_id`); quote it when reporting a problem",
    required: true,
    schema: { type: "string" },
    example: "req_0f1e2d3c4b5a69788796a5b4c3d2e1f0"
  },
  RetryAfter: {
    description: "seconds to wait before sending the request again",
    required: true,
    schema: { type: "integer", minimum: 1 },
    example: 60
  }
}

/**
 * Whether the operation's errors may be HTML pages: a payer page's (always: the page shows the error),
 * and a payer form post's from a browser (`application/x-www-form-urlencoded` with `Accept: text/html`).
 */
const htmlErrors = (op: Operation<any, any>): "only" | "also" | "no" =>
  op.surface !== "public" ? "no" : op.responses.some((r) => r.contentType === "text/html") ? "only" : op.body?.form === true ? "also" : "no"

const errorResponses = (op: Operation<any, any>, errors: ReadonlyArray<readonly [number, string]>, error: Json) => {
  const byStatus = new Map<number, Array<string>>()
  for (const [status, text] of errors) byStatus.set(status, [...(byStatus.get(status) ?? []), text])
  // A status only the transport sends is never a payer's HTML page (one the operation sends itself may be).
  const own = new Set(op.errors.map(([status]) => status))
  const transport = new Set(transportErrors(op).map(([status]) => status).filter((status) => !own.has(status)))
  return Object.fromEntries([...byStatus].map(([status, texts]) => {
    const sent = errorExample(op, status, texts)
    const json = { "application/json": { schema: error, ...(sent === undefined ? {} : { example: Examples.error(sent.code, sent.message, sent.field) }) } }
    const html = transport.has(status) ? "no" : htmlErrors(op)
    const page = { "text/html": { schema: { type: "string" } } }
    const retries = status === 429 || (status === 503 && sent?.code === "service_busy")
    return [String(status), {
      description: texts.join("; "),
      headers: { ...requestIdHeader, ...(retries ? retryAfterHeader : {}) },
      content: html === "only" ? page : html === "also" ? { ...json, ...page } : json
    }]
  }))
}

const replyObject = (reply: Reply, add: (schema: Schema.Top, closed: boolean) => Json) => {
  const headers = {
    headers: {
      ...requestIdHeader,
      ...Object.fromEntries(Object.entries(reply.headers ?? {}).map(([name, description]) => [name, { description, schema: { type: "string" } }]))
    }
  }
  const content: Record<string, Json> = {}
  if (reply.schema !== undefined) content["application/json"] = { schema: add(reply.schema, false), example: reply.example }
  if (reply.csv === true) content["text/csv"] = { schema: { type: "string" }, example: "payment_id,order_id,created_at,status\r\n" }
  if (reply.contentType !== undefined && reply.schema === undefined) {
    content[reply.contentType] = {
      schema: reply.contentType === "application/json" ? { type: "object", additionalProperties: true } : { type: "string" },
      ...(reply.example === undefined ? {} : { example: reply.example })
    }
  }
  return { description: reply.description, ...headers, ...(Object.keys(content).length === 0 ? {} : { content }) }
}

const parametersOf = (op: Operation<any, any>, add: (schema: Schema.Top, closed: boolean) => Json): Array<Json> => {
  const path = Object.entries(op.params ?? {}).map(([name, description]) => ({
    name, in: "path", required: true, description, schema: { type: "string" }
  }))
  const query = op.query === undefined ? [] : (() => {
    const schema = add(Schema.toType(op.query), true)
    const properties = (schema["properties"] ?? {}) as Record<string, Json>
    const required = (schema["required"] ?? []) as ReadonlyArray<string>
    return Object.entries(properties).map(([name, s]) => {
      const { description, ...rest } = s
      const example = op.queryExample?.[name]
      return {
        name,
        in: "query",
        required: required.includes(name) || (op.queryRequired?.includes(name) ?? false),
        ...(description === undefined ? {} : { description }),
        schema: rest,
        ...(example === undefined ? {} : { example: rest["type"] === "integer" ? Number(example) : example })
      }
    })
  })()
  const headers = (op.headers ?? []).map((h) => ({
    name: h.name,
    in: "header",
    required: h.required,
    description: h.description,
    schema: h.schema === undefined ? { type: "string", ...h.documented } : add(h.schema, true),
    example: h.example
  }))
  return [...path, ...query, ...headers]
}

const security = (op: Operation<any, any>) =>
  op.auth === "none" ? [] : op.auth === "operator" ? [{ Operator: [] }] : [{ ApiKey: [], Nonce: [] }, { Bearer: [] }]

const operationObject = (op: Operation<any, any>, add: (schema: Schema.Top, closed: boolean) => Json, error: Json) => {
  const body = op.body
  const bodyContent = body === undefined ? undefined : (() => {
    const schema = add(body.schema, true)
    return {
      "application/json": { schema, example: body.example },
      ...(body.form === true ? { "application/x-www-form-urlencoded": { schema, example: body.example } } : {})
    }
  })()
  const errors = [
    ...op.errors,
    ...transportErrors(op)
  ]
  return {
    operationId: op.id,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description === undefined ? {} : { description: op.description }),
    security: security(op),
    parameters: parametersOf(op, add),
    ...(bodyContent === undefined ? {} : { requestBody: { required: body!.optional !== true, content: bodyContent } }),
    responses: {
      ...Object.fromEntries(op.responses.map((reply) => [String(reply.status), replyObject(reply, add)])),
      ...errorResponses(op, errors, error)
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Webhooks

const paymentEvents = [
  ["payment.created", "a payment was created"],
  ["payment.paid", "a payment was confirmed (also each successful subscription charge, and a late payment after expiry)"],
  ["payment.canceled", "a payment was cancelled or refused; no money received"],
  ["payment.expired", "a payment's lifetime ran out unpaid"],
  ["payment.chargeback", "a chargeback on a paid payment"],
  ["payment.refunded", "a refund was made (after `refund_request.completed`)"],
  ["refund_request.completed", "a refund request completed (sent first, with `payment.refunded`)"]
] as const

/** Every header of a callback (`Callbacks.headersFor`): the spec's, the event's id and order, Standard Webhooks', the rotation's and the test clock's. */
const callbackParameters = [
  { name: "X-Signature", in: "header", required: true, description: "lowercase hex HMAC-SHA256 of `X-Timestamp + \".\" + raw body` with the terminal's `signing_secret`; during a rotation's overlap with the previous secret (the one receivers have)", schema: { type: "string" }, example: Examples.callbackHeaders["x-signature"] },
  { name: "X-Timestamp", in: "header", required: true, description: "Unix time (seconds) of sending the attempt, on the wall clock (also for a test clock's objects, whose clock time is in `X-Test-Clock-Time`)", schema: { type: "string" }, example: Examples.callbackHeaders["x-timestamp"] },
  { name: "X-Test-Mode", in: "header", required: false, description: "`true` on callbacks of sandbox objects", schema: { type: "string", enum: ["true"] }, example: "true" },
  { name: "X-Event-Id", in: "header", required: true, description: "`evt_<uuid>`: the event's id, the same on every retry, resend and recovery (deduplicate on it)", schema: { type: "string" }, example: Examples.callbackHeaders["x-event-id"] },
  { name: "X-Event-Sequence", in: "header", required: true, description: "the event's position among the events of its payment or payout, from 1 (`ping`: 1): drop an event older than one already applied", schema: { type: "string", pattern: "^[1-9][0-9]*$" }, example: Examples.callbackHeaders["x-event-sequence"] },
  { name: "X-Signature-Next", in: "header", required: false, description: "only during a signing-secret rotation's overlap: the same HMAC as `X-Signature`, with the new secret", schema: { type: "string" }, example: Examples.callbackSignatureNext },
  { name: "X-Test-Clock", in: "header", required: false, description: "the test clock of the sandbox object (`X-Timestamp` is the wall time of sending, as on any callback)", schema: { type: "string", format: "uuid" }, example: Examples.ids.testClock },
  { name: "X-Test-Clock-Time", in: "header", required: false, description: "beside `X-Test-Clock`: the clock's time of the attempt, Unix seconds (not signed)", schema: { type: "string", pattern: "^[0-9]+$" }, example: "1772269200" },
  { name: "webhook-id", in: "header", required: true, description: "Standard Webhooks: the event id (as `X-Event-Id`)", schema: { type: "string" }, example: Examples.callbackHeaders["webhook-id"] },
  { name: "webhook-timestamp", in: "header", required: true, description: "Standard Webhooks: Unix seconds, as `X-Timestamp`", schema: { type: "string" }, example: Examples.callbackHeaders["webhook-timestamp"] },
  { name: "webhook-signature", in: "header", required: true, description: "Standard Webhooks: `v1,<base64 HMAC-SHA256 of id.timestamp.body>` keyed with the `whsec_` form of the secret; during a rotation's overlap two, space-separated (new, previous)", schema: { type: "string" }, example: Examples.callbackHeaders["webhook-signature"] }
]

const webhooks = (add: (schema: Schema.Top, closed: boolean) => Json) => {
  const answers = {
    "200": { description: "any 2xx within 10 seconds: delivered, not sent again (answer 2xx for repeats too)" },
    "400": { description: "anything else (or no answer in 10 s) is retried: 30 s x 2^(n-1), at most 8 attempts" }
  }
  const hook = (name: string, summary: string, schema: Schema.Top, example: unknown) => ({
    post: {
      operationId: `callback_${name.replace(/[^a-z]/g, "_")}`,
      summary,
      description: "Sent to the terminal's `callback_url`. Verify `X-Signature` over the raw body before anything else (see Callbacks above).",
      tags: ["Callbacks"],
      security: [],
      parameters: callbackParameters,
      requestBody: { required: true, content: { "application/json": { schema: add(schema, false), example } } },
      responses: answers
    }
  })
  return Object.fromEntries([
    ...paymentEvents.map(([name, summary]) => [name, hook(name, summary, responses.PaymentEvent, { ...Examples.paymentEvent, event_type: name, status: statusOf(name) })]),
    ["payout.completed", hook("payout.completed", "a payout was sent to the wallet", responses.PayoutEvent, Examples.payoutEvent)],
    ["ping", hook("ping", "a test of the endpoint (`POST /api/v1/terminals/{terminalID}/test-event`), signed like every callback", responses.PingEvent, Examples.pingEvent)]
  ])
}

const statusOf = (event: (typeof paymentEvents)[number][0]) =>
  event === "refund_request.completed" ? "refunded" : event.slice("payment.".length)

// ---------------------------------------------------------------------------------------------
// Document

/** The document's title (`info.title`), also the docs page's. */
export const documentTitle = "Paydesk API"

/**
 * Builds the OpenAPI 3.1 document (the server makes it at its first request: `registerDocs`);
 * `serverUrl` is its `servers` entry, the URL the reference's "try it" sends to (the serving
 * server's public URL; the reference server's default without it).
 */
export const make = (serverUrl = "http://127.0.0.1:8080") => {
  const { schemas, add } = components()
  const error = add(responses.Error, false)
  const paths: Record<string, Record<string, Json>> = {}
  for (const op of operations) {
    const path = fullPath(op)
    paths[path] = { ...paths[path], [op.method.toLowerCase()]: operationObject(op, add, error) }
  }
  const hooks = webhooks(add)
  return {
    openapi: "3.1.0",
    info: {
      title: documentTitle,
      version: "1",
      license: { name: "MIT", identifier: "MIT" },
      description:
        "Payments, recurring subscriptions, payouts, balance and rate of a merchant's terminals (`/api/v1`), the payer pages (`/public`) " +
        "and the operator API (`/admin/v1`). Every merchant request except login, refresh and logout carries `X-API-Key` and a fresh " +
        "`X-Nonce` (a UUID; a retry carries a new one), or `Authorization: Bearer <access token>` (not both: 400). Errors have the body " +
        "`{ error: { code, message, request_id, field? } }` and every response carries `x-request-id`. A server that is shutting down " +
        "refuses new connections and closes idle ones (a request sent on one just then meets a closed or reset connection); a request " +
        "that still arrives on a connection busy with another gets 503 `service_unavailable` with `Retry-After: 1` and " +
        "`Connection: close`: send either again (on a new connection, with a new nonce); the health probes answer for themselves then " +
        "(readiness 503 `not_ready` with the `server` check failing, liveness 200). A request that does not arrive whole within the server's " +
        "limit (30 s by default) is 408 `request_timeout`, malformed HTTP 400 `invalid_request`, headers over 16 KiB 431 " +
        "`headers_too_large` and chunk extensions over 16 KiB 413 `body_too_large`, each closing the connection; a path segment " +
        "over 2048 characters is 414 `uri_too_long`; an HTTP/1.1 request without `Host`, with two or with one that is no host is 400 " +
        "`invalid_request` (`field` `Host`), so is more than one `Authorization`, a path that is not valid percent-encoded UTF-8 400 " +
        "`invalid_request`, a version other than HTTP/1.x 505 `invalid_request`, " +
        "an `Expect` other than `100-continue` 417 `expectation_failed` (the connection closed), a compressed body " +
        "(`Content-Encoding`) or a transfer coding other than chunked 415 `unsupported_media_type`. The TypeScript SDK is " +
        "`@paydesk/client`.\n\n" + CallbacksGuide.markdown
    },
    servers: [{ url: serverUrl, description: "this server" }],
    tags: [...tags, { name: "Callbacks", description: "What the service POSTs to the terminal's `callback_url`." }],
    "x-tagGroups": [
      { name: "Merchant API", tags: ["Auth", "Payments", "Sandbox", "Terminals", "Credentials", "Payouts", "Subscriptions", "Events", "Test clocks"] },
      { name: "Callbacks", tags: ["Callbacks"] },
      { name: "Payer pages", tags: ["Payer pages"] },
      { name: "Operator API", tags: ["Operator"] },
      { name: "Docs", tags: ["Docs"] },
      { name: "Host", tags: ["Health"] }
    ],
    paths,
    webhooks: hooks,
    components: {
      schemas,
      headers: headerComponents,
      securitySchemes: {
        ApiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "the terminal's api_key" },
        Nonce: { type: "apiKey", in: "header", name: "X-Nonce", description: "unique per request (not reusable for 10 minutes)" },
        Bearer: { type: "http", scheme: "bearer", description: "access token from /api/v1/auth/login or /api/v1/auth/refresh" },
        Operator: { type: "http", scheme: "bearer", description: "the operator token (`PAYDESK_ADMIN_TOKEN`)" }
      }
    }
  }
}

/** The document's type. */
export type Document = ReturnType<typeof make>

// ---------------------------------------------------------------------------------------------
// Docs page

/**
 * The Scalar bundle in the installed `@scalar/api-reference` (one self-contained script), or `null`
 * when that optional peer is not installed (an embedding host that serves no reference page need not
 * install its 150 MB of packages).
 */
export const installedRenderer = (): string | null => {
  try {
    return join(dirname(createRequire(import.meta.url).resolve("@scalar/api-reference/style.css")), "browser", "standalone.js")
  } catch {
    return null
  }
}

/** The page served at `/docs` when the renderer is not installed: where the document is, and what to install. */
export const withoutRenderer = (title: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
  `<meta name="viewport" content="width=device-width, initial-scale=1"></head><body>` +
  `<h1>${title}</h1><p>The OpenAPI document is <a href="/openapi.json">/openapi.json</a>.</p>` +
  `<p>The interactive reference needs the optional package <code>@scalar/api-reference</code>, which is not ` +
  `installed beside <code>@paydesk/fastify</code> here (<code>npm install @scalar/api-reference</code>).</p></body></html>`

// Nothing that would call out (fonts, the hosted AI agent, MCP, telemetry): the page stays on this origin.
const configuration = JSON.stringify({
  withDefaultFonts: false,
  hideClientButton: true,
  telemetry: false,
  showDeveloperTools: "never",
  agent: { disabled: true },
  mcp: { disabled: true }
})

/** The reference page: Scalar renders `/openapi.json`; nothing is loaded from elsewhere. */
export const html = (title: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
  `<meta name="viewport" content="width=device-width, initial-scale=1"></head><body>` +
  `<noscript>The reference needs JavaScript; the document itself is <a href="/openapi.json">/openapi.json</a>.</noscript>` +
  `<script id="api-reference" data-url="/openapi.json" data-configuration='${configuration}'></script>` +
  `<script src="/docs/scalar.js"></script></body></html>`

const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-ancestors 'none'"
].join("; ")

/**
 * Serves `GET /openapi.json`, `GET /docs` and the renderer's script on `app` (mount at the root).
 * `renderer` finds the script (`installedRenderer`: the optional peer `@scalar/api-reference`);
 * without it `/docs` is a plain page linking the document and `/docs/scalar.js` is 404.
 */
export const registerDocs = async (
  app: FastifyInstance,
  renderer: () => string | null = installedRenderer,
  serverUrl?: string
): Promise<void> => {
  // The document (530 KB of JSON) is made and written once, at its first request, and kept as bytes:
  // written per request, a few hundred requests pipelined on one connection held as many copies and
  // ran the server out of heap (an outside probe), and an idle server never asked for it holds none.
  let documentBytes: Buffer | undefined
  const scriptPath = renderer()
  const page = scriptPath === null ? withoutRenderer(documentTitle) : html(documentTitle)
  let script: string | null = null
  /** Answers with `send` once the (empty) query string decodes. */
  const serve = (send: (reply: FastifyReply) => unknown) => async (request: FastifyRequest, reply: FastifyReply, decoded: Effect.Effect<unknown, PaydeskError>) => {
    const exit = await Effect.runPromiseExit(decoded)
    if (exit._tag === "Success") return send(reply)
    const failed = fromExit(exit, request.id)!
    return reply.code(failed.status).send(failed.body)
  }
  route(app, MerchantOperations.openApiDocument, serve((reply) =>
    reply.type("application/json; charset=utf-8").send(documentBytes ??= Buffer.from(JSON.stringify(make(serverUrl))))))
  route(app, MerchantOperations.docsPage, serve((reply) =>
    reply.type("text/html; charset=utf-8").header("content-security-policy", contentSecurityPolicy).send(page)))
  route(app, MerchantOperations.docsScript, serve((reply) => {
    if (scriptPath === null) {
      return reply.code(404).send(errorResponse(404, "not_found", "the API reference renderer (@scalar/api-reference) is not installed", reply.request.id).body)
    }
    script ??= readFileSync(scriptPath, "utf8")
    return reply.type("text/javascript; charset=utf-8").header("cache-control", "public, max-age=3600").send(script)
  }))
}
