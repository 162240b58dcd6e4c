/**
 * One declaration per operation: its method and path, the Effect schemas of its query, headers,
 * body and responses, its errors, an example of each, and the documentation around them. From
 * one `Operation` value the route is registered and decodes its request (`route`), the OpenAPI
 * document describes it (`OpenApi.ts`), and tests check every answer against it
 * (`checkResponses`).
 *
 * Decoding is strict and speaks one language for every surface: a wrong type, a missing required
 * field or an unknown field is a 400 `invalid_request` whose `field` names it and whose message
 * says what is expected (`amount must be a string like "1000.50"`); a body that is not a JSON
 * object is `invalid_json_body`. A declaration may map a field's failure to a core error (its own
 * code and the spec's message), or, like the subscription body (spec rule 1), answer every
 * failure `invalid json body`.
 *
 * On the merchant and operator APIs an operation that declares no query string takes none: any
 * parameter is refused as unknown, as a declared query refuses one it does not name (before, a
 * `POST /api/v1/payments?terminal_id=<another terminal>` ran on the API key's own terminal). The payer
 * pages take any (their links are shared, and tracking parameters get appended to them).
 *
 * A body is read as Fastify reads it: never for a GET (whatever is sent is not read, so it is neither
 * checked nor refused), and for a POST, PUT or DELETE that declares none it must be absent or `{}`
 * (`noBody`): a DELETE with a body is refused like a POST's stray body, not ignored.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify"
import { Effect, Schema, SchemaIssue } from "effect"
import { InvalidJsonBody, InvalidRequest, type PaydeskError } from "@paydesk/core"

declare module "fastify" {
  interface FastifyContextConfig {
    /** The declared operation of a route (`Contract.route`). */
    readonly operationId?: string
  }
}

/** Where an operation lives: the merchant API, the payer pages, the operator API, the docs or the host (health, metrics). */
export type Surface = "merchant" | "public" | "operator" | "docs" | "host"

/** The path prefix of each surface. */
export const prefixes: Record<Surface, string> = { merchant: "/api/v1", public: "/public", operator: "/admin/v1", docs: "", host: "" }

/** `merchant`: `X-API-Key` + `X-Nonce` or a dashboard Bearer token; `operator`: the operator token; `none`: open. */
export type Auth = "merchant" | "operator" | "none"

/** A request header the operation reads. */
export interface Header {
  readonly name: string
  readonly required: boolean
  readonly description: string
  readonly example: string
  /** The accepted values (after `normalize`); any string when absent. */
  readonly schema?: Schema.Codec<string, string>
  readonly normalize?: (value: string) => string
  /**
   * The OpenAPI schema of a header without `schema` whose values the use case checks itself (an
   * `Idempotency-Key`'s length and characters, with the use case's own message): the document says
   * what is accepted, the decoding stays the use case's. `{ type: "string" }` when absent.
   */
  readonly documented?: Readonly<Record<string, unknown>>
}

/** The request body. */
export interface Body<S extends Schema.Top = Schema.Top> {
  readonly schema: S
  readonly example: S["Encoded"]
  /** An empty body counts as `{}`. */
  readonly optional?: true
  /** Plain HTML forms may post it too (`application/x-www-form-urlencoded`). */
  readonly form?: true
  /** Every failure is `invalid json body` (spec rule 1 of subscription creation). */
  readonly invalidJsonOnly?: true
  /** A field whose failure is a core error of its own code (given the message saying what is expected). */
  readonly overrides?: Readonly<Record<string, (message: string, field: string) => PaydeskError>>
}

/** One documented answer. */
export interface Reply {
  readonly status: number
  readonly description: string
  /** The JSON body (absent: no body, or `contentType` describes it). */
  readonly schema?: Schema.Top
  readonly example?: unknown
  /** Another content type than JSON (a CSV export, an HTML page, a script). */
  readonly contentType?: "text/csv" | "text/html" | "text/javascript" | "text/plain" | "application/json"
  /** Also answers `text/csv` (with `format=csv`). */
  readonly csv?: true
  /** Response headers (a redirect's `Location`). */
  readonly headers?: Readonly<Record<string, string>>
}

/** An operation of the API. */
export interface Operation<
  Q extends Schema.Top | undefined = Schema.Top | undefined,
  B extends Schema.Top | undefined = Schema.Top | undefined
> {
  readonly id: string
  readonly surface: Surface
  readonly method: "GET" | "POST" | "PUT" | "DELETE"
  /** Path under the surface's prefix, in OpenAPI form (`/payments/{paymentID}`). */
  readonly path: string
  readonly tag: string
  readonly summary: string
  readonly description?: string
  readonly auth: Auth
  /** Path parameters: name to description. */
  readonly params?: Readonly<Record<string, string>>
  readonly query?: Q
  readonly queryExample?: Readonly<Record<string, string>>
  /**
   * Query parameters the document marks required though the decoder lets their absence through,
   * because the use case refuses it with the spec's own message (`terminal_id is required`).
   */
  readonly queryRequired?: ReadonlyArray<string>
  readonly headers?: ReadonlyArray<Header>
  readonly body?: B extends Schema.Top ? Body<B> : undefined
  readonly responses: ReadonlyArray<Reply>
  /** Error answers: status and what causes them (codes and messages). */
  readonly errors: ReadonlyArray<readonly [number, string]>
}

/** Declares an operation (keeps its literal types for `Input`). */
export const operation = <Q extends Schema.Top | undefined = undefined, B extends Schema.Top | undefined = undefined>(
  op: Operation<Q, B>
): Operation<Q, B> => op

/** The decoded request of an operation. */
export interface Input<Q, B> {
  readonly params: Readonly<Record<string, string>>
  readonly query: Q extends Schema.Top ? Q["Type"] : Record<string, never>
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: B extends Schema.Top ? B["Type"] : undefined
}

/** The full path of an operation (with its surface's prefix). */
export const fullPath = (op: Operation<any, any>): string => `${prefixes[op.surface]}${op.path}`

// ---------------------------------------------------------------------------------------------
// Decoding

type Where = "body" | "query"

interface Leaf {
  readonly path: ReadonlyArray<PropertyKey>
  readonly issue: SchemaIssue.Issue
}

/** The first leaf of an issue tree with its path. */
const leafOf = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey> = []): Leaf => {
  switch (issue._tag) {
    case "Composite":
      return leafOf(issue.issues[0], path)
    case "Pointer":
      return leafOf(issue.issue, [...path, ...issue.path])
    default:
      return { path, issue }
  }
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const lowerFirst = (s: string): string => s.length === 0 ? s : s[0]!.toLowerCase() + s.slice(1)

/** What a field of a struct expects, from its `expected` annotation. */
const expectedOf = (schema: Schema.Top, field: string): string | undefined => {
  const fields = (schema as unknown as { readonly fields?: Record<string, Schema.Top> }).fields
  const target = fields?.[field]
  return target === undefined ? undefined : Schema.resolveAnnotations(target)?.expected
}

/** The 400 of a failed decode, naming the field and what it expects (or a core error of its own). */
const failure = (schema: Schema.Top, where: Where, overrides: Readonly<Record<string, (message: string, field: string) => PaydeskError>>) =>
(error: Schema.SchemaError): PaydeskError => {
  const { issue, path } = leafOf(error.issue)
  const field = path.map(String).join(".")
  // A body that is not a JSON object is `invalid json body`, like malformed JSON (docs/decisions.md, HTTP).
  if (field === "") return where === "body" ? InvalidJsonBody.of() : new InvalidRequest({ message: "invalid query string" })
  const top = String(path[0])
  if (issue._tag === "MissingKey") return new InvalidRequest({ field, message: `${field} is required` })
  if (issue._tag === "UnexpectedKey") {
    return new InvalidRequest({ field, message: where === "body" ? `unknown field ${field}` : `unknown query parameter ${field}` })
  }
  // A field that says what it expects is named whole (`outcomes`, not `outcomes.1`).
  const expected = expectedOf(schema, top)
  const message = expected !== undefined
    ? `${top} must be ${expected}`
    : `${field}: ${lowerFirst(formatter(issue).issues[0]?.message ?? "invalid value")}`
  const override = overrides[top]
  if (override !== undefined) return override(message, top)
  return new InvalidRequest({ field: expected !== undefined ? top : field, message })
}

/**
 * The surfaces whose operations without a declared query refuse every query parameter, and without a
 * declared body every body but `{}`: not the payer pages (whose links may carry anything); the docs
 * and host routes declare `NoQuery` (`takesNone`).
 */
const strictSurfaces: ReadonlySet<Surface> = new Set(["merchant", "operator"])

/** The query of an operation that declares none: any parameter is unknown (a nameless one: `invalid query string`, as in a declared query). */
const noQuery = (request: FastifyRequest): Effect.Effect<Record<string, never>, PaydeskError> => {
  const name = Object.keys((request.query ?? {}) as object)[0]
  if (name === undefined) return Effect.succeed({})
  return Effect.fail(name === "" ? new InvalidRequest({ message: "invalid query string" }) : new InvalidRequest({ field: name, message: `unknown query parameter ${name}` }))
}

/**
 * Whether a declared query has no parameter (`NoQuery`, the docs' and health routes'): refused by
 * `noQuery`, since an empty struct lets any key through even with `onExcessProperty: "error"`.
 */
const takesNone = (schema: Schema.Top): boolean => {
  const fields = (schema as { readonly fields?: Readonly<Record<string, unknown>> }).fields
  return fields !== undefined && Object.keys(fields).length === 0
}

const decoders = new WeakMap<Schema.Top, (input: unknown) => Effect.Effect<unknown, Schema.SchemaError>>()

const decoderOf = (schema: Schema.Top) => {
  let decode = decoders.get(schema)
  if (decode === undefined) {
    decode = Schema.decodeUnknownEffect(schema as Schema.Codec<unknown>, { onExcessProperty: "error", errors: "first" })
    decoders.set(schema, decode)
  }
  return decode
}

/** Decodes a value with a schema, failing with the API's 400. */
export const decodeWith = <S extends Schema.Top>(
  schema: S,
  where: Where,
  input: unknown,
  overrides: Readonly<Record<string, (message: string, field: string) => PaydeskError>> = {}
): Effect.Effect<S["Type"], PaydeskError> =>
  Effect.mapError(decoderOf(schema)(input), failure(schema, where, overrides)) as Effect.Effect<S["Type"], PaydeskError>

const headerOf = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name.toLowerCase()]
  return Array.isArray(value) ? value[0] : value
}

const decodeHeader = (request: FastifyRequest, header: Header): Effect.Effect<string | undefined, PaydeskError> => {
  const raw = headerOf(request, header.name)
  if (raw === undefined || header.schema === undefined) return Effect.succeed(raw)
  const value = header.normalize === undefined ? raw : header.normalize(raw)
  return Effect.mapError(decoderOf(header.schema)(value), () => {
    const expected = Schema.resolveAnnotations(header.schema!)?.expected ?? "valid"
    return new InvalidRequest({ field: header.name, message: `${header.name} must be ${expected}` })
  }) as Effect.Effect<string, PaydeskError>
}

/**
 * The body of an operation that declares none (the spec's stop: "no body"): none, or `{}` (which
 * many clients send with every POST); anything else is refused as a declared body's would be, a
 * value that is not an object `invalid json body`, a field `unknown field <name>`. An outside probe
 * found the stop taking `[1]`, `"s"` and `{"x":1}`.
 */
const noBody = (body: unknown): Effect.Effect<undefined, PaydeskError> => {
  if (body === undefined) return Effect.succeed(undefined)
  if (typeof body !== "object" || body === null || Array.isArray(body)) return Effect.fail(InvalidJsonBody.of())
  const name = Object.keys(body)[0]
  return name === undefined ? Effect.succeed(undefined) : Effect.fail(new InvalidRequest({ field: name, message: `unknown field ${name}` }))
}

/** Decodes the request of `op`: headers, query string and body. */
export const decode = <Q extends Schema.Top | undefined, B extends Schema.Top | undefined>(
  op: Operation<Q, B>,
  request: FastifyRequest
): Effect.Effect<Input<Q, B>, PaydeskError> =>
  Effect.gen(function*() {
    const headers: Record<string, string | undefined> = {}
    for (const header of op.headers ?? []) headers[header.name] = yield* decodeHeader(request, header)
    // No parameter takes several values: one given twice is named as such (it was refused with its
    // value's message, "environment must be one of …", for `environment=sandbox&environment=sandbox`).
    const known = (op.query as unknown as { readonly fields?: Record<string, unknown> } | undefined)?.fields ?? {}
    const repeated = Object.entries((request.query ?? {}) as Record<string, unknown>).find(([name, value]) => Array.isArray(value) && Object.hasOwn(known, name))
    if (repeated !== undefined) {
      return yield* new InvalidRequest({ field: repeated[0], message: `${repeated[0]} is given more than once` })
    }
    const query = op.query !== undefined && !takesNone(op.query)
      ? yield* decodeWith(op.query, "query", { ...(request.query as object | undefined) })
      : op.query !== undefined || strictSurfaces.has(op.surface)
      ? yield* noQuery(request)
      : {}
    // `X-Test-Mode` on a read with an `environment`: its default, as on creations (it was ignored,
    // so a merchant who sent it read live data); one that disagrees with a valid `environment` is
    // refused, as there.
    const mode = headers["X-Test-Mode"]
    if (mode !== undefined && Object.hasOwn(known, "environment")) {
      const implied = mode === "true" ? "sandbox" : "prod"
      const chosen = (query as Record<string, unknown>)["environment"]
      if (chosen === undefined) (query as Record<string, unknown>)["environment"] = implied
      else if (chosen !== implied) {
        return yield* new InvalidRequest({
          field: "environment",
          message: `environment (${String(chosen)}) and X-Test-Mode (${mode}) disagree: send one of them, or agreeing values`
        })
      }
    }
    const spec = op.body as Body | undefined
    let body: unknown = undefined
    if (spec !== undefined) {
      const given = request.body === undefined && spec.optional === true ? {} : request.body
      body = spec.invalidJsonOnly === true
        // The spec's exact text, naming the field at fault when there is one (an outside probe's
        // `"amount": 10` read only "invalid json body").
        ? yield* Effect.mapError(decoderOf(spec.schema)(given), (error) => {
          const field = leafOf(error.issue).path.map(String).join(".")
          return InvalidJsonBody.of(field === "" ? undefined : field)
        })
        : yield* decodeWith(spec.schema, "body", given, spec.overrides)
    } else if (strictSurfaces.has(op.surface)) {
      yield* noBody(request.body)
    }
    return { params: (request.params ?? {}) as Record<string, string>, query, headers, body } as Input<Q, B>
  })

// ---------------------------------------------------------------------------------------------
// Routes

/** Fastify's form of an OpenAPI path (`{id}` -> `:id`). */
export const fastifyPath = (path: string): string => path.replace(/\{(\w+)\}/g, ":$1")

/** Registers `op` on `app` (mounted at its surface's prefix); the handler gets the request's decoding. */
export const route = <Q extends Schema.Top | undefined, B extends Schema.Top | undefined>(
  app: FastifyInstance,
  op: Operation<Q, B>,
  handler: (request: FastifyRequest, reply: FastifyReply, input: Effect.Effect<Input<Q, B>, PaydeskError>) => unknown,
  options: {
    readonly preHandler?: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>
    readonly onRequest?: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>
    /** Probes and scrapes log at `warn` only. */
    readonly logLevel?: "warn"
  } = {}
): void => {
  app.route({
    method: op.method,
    url: fastifyPath(op.path),
    // `invalidJsonOnly`: the body parser's refusals say only `invalid json body` too (App's error handler).
    config: { operationId: op.id, ...((op.body as Body | undefined)?.invalidJsonOnly === true ? { invalidJsonOnly: true } : {}) },
    // HEAD where a HEAD means something (the payer pages, the health probes, the docs), not on the
    // merchant and operator APIs: there it ran the whole GET, nonce used up and all, for no body, and
    // the document declares none (an outside probe); it is 404 `route_not_found` like any method a path lacks.
    exposeHeadRoute: op.surface !== "merchant" && op.surface !== "operator",
    ...(options.preHandler === undefined ? {} : { preHandler: options.preHandler }),
    ...(options.onRequest === undefined ? {} : { onRequest: options.onRequest }),
    ...(options.logLevel === undefined ? {} : { logLevel: options.logLevel }),
    handler: (request, reply) => handler(request, reply, decode(op, request)) as Promise<unknown>
  })
}

/**
 * Errors any operation may get, before it is reached (`App`): malformed HTTP, a path or `Host` no route
 * can take, a request not arrived whole in time, its headers or chunk extensions too large, and (for a
 * path with parameters) a path segment too long.
 */
export const transportErrors = (op: Operation<any, any>): ReadonlyArray<readonly [number, string]> => [
  [400, "`invalid_request`: malformed HTTP; an HTTP/1.1 request without `Host`, or with more than one (`a request must have one Host header, not several`) or one that is no host; more than one `Authorization`; a path that is not valid percent-encoded UTF-8 (`the path is not valid percent-encoded UTF-8`)" +
    (op.params === undefined ? "" : " or a path parameter holding a NUL (`\\u0000`)")],
  [408, "`request_timeout`: the request did not arrive whole within the server's limit (30 s by default); the connection is closed"],
  ...(op.params === undefined ? [] : [[414, "`uri_too_long`: a path segment is longer than 2048 characters"] as const]),
  // Node's parser refuses them in any request with a chunked body (an outside probe's validator found it undeclared).
  [413, "`body_too_large`: a chunked body's chunk extensions are larger than 16 KiB; the connection is closed"],
  // A body of another type (or any on an operation that takes none), or a compressed one: refused on arrival (`Http.unreadableBody`).
  ...(op.method === "GET" ? [] : [[415, "`unsupported_media_type`: a body not `application/json` (or, on the payer pages, a form), compressed (`Content-Encoding`) or in a transfer coding other than chunked (an empty body is taken whatever its type)"] as const]),
  [417, "`expectation_failed`: an `Expect` other than `100-continue`; the connection is closed"],
  [431, "`headers_too_large`: the request's headers are larger than 16 KiB; the connection is closed"]
]

// ---------------------------------------------------------------------------------------------
// Checking answers (tests)

/** Why an answer does not match its declaration, or null when it does. */
export const violation = (
  op: Operation<any, any>,
  status: number,
  contentType: string | undefined,
  payload: string,
  errorSchema: Schema.Top
): string | null => {
  const declared = op.responses.find((r) => r.status === status)
  const isJson = (contentType ?? "").startsWith("application/json")
  if (declared === undefined) {
    const own = op.errors.some(([s]) => s === status)
    // Refused on arrival, before any route (declared on every operation, as JSON only).
    const onArrival = !own && transportErrors(op).some(([s]) => s === status)
    if (!own && !onArrival && status < 500 && status !== 415 && status !== 429) {
      return `${op.id}: status ${status} is not declared`
    }
    // Pages (and plain form posts from a browser) answer their own errors as HTML pages.
    const pages = !onArrival && (op.responses.some((r) => r.contentType === "text/html") || (op.body as Body | undefined)?.form === true)
    if (!isJson) return pages ? null : `${op.id}: error ${status} is not JSON`
    return check(errorSchema, payload, `${op.id} ${status}`)
  }
  if (declared.schema === undefined) return null
  if (!isJson) return declared.csv === true || declared.contentType !== undefined ? null : `${op.id}: ${status} is not JSON`
  return check(declared.schema, payload, `${op.id} ${status}`)
}

const check = (schema: Schema.Top, payload: string, what: string): string | null => {
  let value: unknown
  try {
    value = JSON.parse(payload)
  } catch {
    return `${what}: the body is not JSON`
  }
  const result = Schema.decodeUnknownExit(schema as Schema.Codec<unknown>, { onExcessProperty: "error" })(value)
  return result._tag === "Success" ? null : `${what}: ${String(result.cause)}`
}

/**
 * Makes `app` check every answer of a declared operation against its declaration; a mismatch
 * becomes a 500 `response_contract_violation` naming it (for tests).
 */
export const checkResponses = (app: FastifyInstance, operations: ReadonlyArray<Operation<any, any>>, errorSchema: Schema.Top): void => {
  const byId = new Map(operations.map((op) => [op.id, op]))
  app.addHook("onSend", async (request, reply, payload) => {
    const id = request.routeOptions.config?.operationId
    const op = id === undefined ? undefined : byId.get(id)
    // (An answer sent as bytes, the OpenAPI document's, is checked as its text.)
    const text = Buffer.isBuffer(payload) ? payload.toString("utf8") : payload
    if (op === undefined || typeof text !== "string") return payload
    const problem = violation(op, reply.statusCode, reply.getHeader("content-type") as string | undefined, text, errorSchema)
    if (problem === null) return payload
    reply.code(500).header("content-type", "application/json; charset=utf-8")
    return JSON.stringify({ error: { code: "response_contract_violation", message: problem, request_id: request.id } })
  })
}
