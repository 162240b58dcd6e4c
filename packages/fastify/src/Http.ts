/**
 * The bridge between Fastify and the core: run one use case per request on the host's runner
 * (a `ManagedRuntime`, or a `Runner` over the host's services) as a child of the request's span,
 * answer its value or its error (one error body for all), and authenticate merchant requests
 * (API key + nonce, or a dashboard Bearer token).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify"
import type { CreateRateLimitOptions } from "@fastify/rate-limit"
import { Effect, Option, type Exit, type Tracer } from "effect"
import { Access, Auth, Instant, InvalidRequest } from "@paydesk/core"
import type { Runner, Services } from "@paydesk/core"
import { errorResponse, fromExit } from "./HttpErrors.js"

declare module "fastify" {
  interface FastifyRequest {
    /** The request's server span (the parent of its use case's spans), once the app opened it. */
    paydeskSpan: Tracer.Span | null
    /** 0 before `onRequest`, 1 arrived (counted in flight), 2 ended: answered or left by its client (see `App`). */
    paydeskStage: 0 | 1 | 2
  }
}

/** What route modules share. */
export interface Context {
  readonly runtime: Runner.Runner
  /** Origin of the payer pages, without trailing slash. */
  readonly publicUrl: string
}

/** Runs `effect` for `request` on the host's runner, its spans under the request's span. */
export const exitOf = <A, E>(ctx: Context, request: FastifyRequest, effect: Effect.Effect<A, E, Services>): Promise<Exit.Exit<A, E>> => {
  const span = request.paydeskSpan
  return ctx.runtime.runPromiseExit(span === null || span === undefined ? effect : Effect.withParentSpan(effect, span))
}

/** Sends the spec's error body with the request id. */
export const sendError = (request: FastifyRequest, reply: FastifyReply, status: number, code: string, message: string, field?: string) => {
  const response = errorResponse(status, code, message, request.id, field)
  return reply.code(response.status).send(response.body)
}

/**
 * What the app's `onRequest` hook refuses before any route, for every route (`null`: nothing): an
 * HTTP/1.1 request without `Host` (Node's own refusal, with `requireHostHeader`, was a bare 400 without
 * a request id: an outside probe), one with more than one `Host` line or a `Host` that is no host (RFC
 * 9112, section 3.2: a server MUST answer both 400; Node keeps the first line and drops the others, so
 * a proxy reading the last one and this server would disagree on the host), likewise more than one
 * `Authorization` line, a version other than HTTP/1.x (an HTTP/0.9 request line, a method and a path
 * without a version, or `HTTP/2.0` in an HTTP/1 request line: 505, as RFC 9110 answers a version not
 * supported; Node handled them as HTTP/1.1 requests), a target in absolute form of another scheme than
 * http(s) or with user information (`targetRefusal`), more than one `Content-Type` line, an HTTP/1.0
 * request with `Transfer-Encoding` (first: its connection closes after whatever answers it), and a body
 * no route can read (`unreadableBody`).
 */
export const refusedOnArrival = (request: FastifyRequest): { readonly status: 400 | 415 | 505; readonly code: string; readonly message: string; readonly field?: string } | null => {
  const raw = request.raw
  if (raw.httpVersionMajor !== 1) {
    return { status: 505, code: "invalid_request", message: `HTTP/${raw.httpVersionMajor}.${raw.httpVersionMinor} is not supported: send HTTP/1.1 (or HTTP/1.0)` }
  }
  // RFC 9112, section 6.1: an HTTP/1.0 message with Transfer-Encoding has faulty framing (HTTP/1.0 has no
  // transfer codings; a proxy of that version reads the body otherwise). Node read it as chunked and
  // kept the connection (an outside probe: a smuggling primitive); the app closes the connection after
  // the answer and runs nothing after it (`App`'s `faultyFraming`).
  if (raw.httpVersionMinor === 0 && request.headers["transfer-encoding"] !== undefined) {
    return { status: 400, code: "invalid_request", message: "an HTTP/1.0 request cannot use Transfer-Encoding: send Content-Length", field: "Transfer-Encoding" }
  }
  const target = (raw as { readonly originalUrl?: string }).originalUrl
  const refusedTarget = target === undefined ? null : targetRefusal(target)
  if (refusedTarget !== null) return { status: 400, code: "invalid_request", message: refusedTarget }
  const host = request.headers.host
  if (host === undefined) {
    if (raw.httpVersionMinor >= 1) {
      return { status: 400, code: "invalid_request", message: "an HTTP/1.1 request must have a Host header", field: "Host" }
    }
  } else if (linesOf(raw.rawHeaders, "host") > 1) {
    return { status: 400, code: "invalid_request", message: "a request must have one Host header, not several", field: "Host" }
  } else if (!hostValue.test(host)) {
    return { status: 400, code: "invalid_request", message: "Host must be a host name or address with an optional port", field: "Host" }
  }
  // Node keeps the first of two Authorization lines too: a Basic line first hid a Bearer token, and with
  // it a request carrying two credentials from the refusal of both (an outside probe). And of two
  // Content-Type lines: a proxy that reads the last would see another type than this server.
  if (request.headers.authorization !== undefined && linesOf(raw.rawHeaders, "authorization") > 1) {
    return { status: 400, code: "invalid_request", message: "a request must have one Authorization header, not several", field: "Authorization" }
  }
  if (request.headers["content-type"] !== undefined && linesOf(raw.rawHeaders, "content-type") > 1) {
    return { status: 400, code: "invalid_request", message: "a request must have one Content-Type header, not several", field: "Content-Type" }
  }
  const unreadable = unreadableBody(request)
  return unreadable === null ? null : { status: 415, code: "unsupported_media_type", message: unreadable }
}

/** A target in absolute form: its scheme, its authority, then the rest (path, query). */
const absoluteForm = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)/

/**
 * A request target in absolute form (`http://host:port/path?query`, RFC 9112 section 3.2.2) as its
 * origin form (`/path?query`; `/` for none); any other target as it is (`/path`, `*`). Fastify's
 * `rewriteUrl`, before routing, so the router, the log and the spans see the path alone (a target of
 * another scheme or with user information is refused on arrival, `targetRefusal`, and its userinfo is
 * kept out of the log). The authority is the host the client meant; the server serves any host (as
 * with `Host`), so only the path and query are kept.
 */
export const originForm = (request: { readonly url?: string | undefined }): string => {
  const url = request.url ?? "/"
  if (url.charCodeAt(0) === 47 /* "/" */) return url
  const absolute = absoluteForm.exec(url)
  if (absolute === null) return url
  const rest = url.slice(absolute[0].length)
  return rest.charCodeAt(0) === 47 ? rest : `/${rest}`
}

/**
 * Why a request target in absolute form is refused (`null`: it is not): a scheme other than http or
 * https (this server serves no other), or user information (`http://user:password@host/`, which RFC 9110
 * section 4.2.4 says to treat as an error: it was dropped silently). `target` is the request line's, before
 * `originForm`.
 */
const targetRefusal = (target: string): string | null => {
  if (target.charCodeAt(0) === 47 /* "/" */) return null
  const absolute = absoluteForm.exec(target)
  if (absolute === null) return null
  const scheme = absolute[1]!.toLowerCase()
  if (scheme !== "http" && scheme !== "https") return "a request target must be a path or an http(s) URL"
  if (absolute[2]!.includes("@")) return "a request target must not carry user information"
  return null
}

/** The lines of header `name` (lower case) among a request's raw headers (names and values alternate). */
const linesOf = (rawHeaders: ReadonlyArray<string>, name: string): number => {
  let lines = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const line = rawHeaders[i]!
    if (line.length === name.length && line.toLowerCase() === name) lines++
  }
  return lines
}

/**
 * RFC 9112's `Host = uri-host [ ":" port ]`: an IP literal in brackets (IPv6, with a zone as RFC 6874
 * writes it, `%25eth0`, or as Node's and Python's clients send it, `%eth0`; or an IPvFuture), or a name of
 * RFC 3986's unreserved, percent-encoded and sub-delimiter characters (an IPv4 address is one), then an
 * optional port of digits. Empty is allowed (a request whose target has no authority).
 */
const hostValue = /^(?:\[[0-9A-Za-z:.%\-_~!$&'()*+,;=]+\]|[A-Za-z0-9\-._~%!$&'()*+,;=]*)(?::[0-9]*)?$/

/** Whether a request has no body at all (RFC 9112: neither a length nor a transfer coding, or a length of 0). */
const bodiless = (request: FastifyRequest): boolean =>
  request.headers["transfer-encoding"] === undefined &&
  (request.headers["content-length"] === undefined || request.headers["content-length"] === "0")

/**
 * Drops the `Content-Type` of a request without a body (run on arrival, before `refusedOnArrival`): an
 * empty body has no type, so `curl -d ''` and Python's `urllib` (which send a form type with no body)
 * reach operations that take no body, as a request without the header does (they were 415).
 */
export const dropEmptyBodyType = (request: FastifyRequest): void => {
  if (bodiless(request) && request.headers["content-type"] !== undefined) delete request.headers["content-type"]
}

/**
 * A request body no route can read, refused on arrival with 415 (`null`: none): a compressed body
 * (`Content-Encoding` other than `identity`; it read "request body is not valid UTF-8", an outside
 * probe), or a transfer coding other than chunked (Node hands the coded bytes on as they are; RFC 9112
 * says 501, a 4xx tells the client what to change). A coding of nothing is nothing (a GET with
 * `Content-Encoding` is answered as without it). Part of `refusedOnArrival`.
 */
const unreadableBody = (request: FastifyRequest): string | null => {
  if (bodiless(request)) return null
  const headers = request.headers
  const transfer = headers["transfer-encoding"]
  const coding = headers["content-encoding"]
  if (coding !== undefined && coding.trim().toLowerCase() !== "identity") {
    return `Content-Encoding ${coding.trim()} is not supported: send the body uncompressed`
  }
  if (transfer !== undefined && !/^\s*chunked\s*$/i.test(transfer)) return `Transfer-Encoding ${transfer.trim()} is not supported: send the body as is, or chunked`
  return null
}

const isJson = (contentType: string | undefined): boolean =>
  contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType.trim())

/**
 * A `preHandler` hook for APIs whose bodies are JSON only (the merchant's and the operator's): a body
 * of any other type (a form, which the payer pages' parser reads) is refused with 415 before any
 * route. Fastify's callback form: no promise per request; answered here, the request goes no further.
 */
export const jsonBodiesOnly = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
  if (request.body !== undefined && !isJson(request.headers["content-type"])) {
    sendError(request, reply, 415, "unsupported_media_type", "Content-Type must be application/json")
    return
  }
  done()
}

/** Runs `effect`; on success calls `ok`, on failure sends the mapped error. */
export const run = async <A, E>(
  ctx: Context,
  request: FastifyRequest,
  reply: FastifyReply,
  effect: Effect.Effect<A, E, Services>,
  ok: (value: A) => unknown
) => {
  const exit = await exitOf(ctx, request, effect)
  const failed = fromExit(exit, request.id)
  if (failed !== null) {
    // Not the server's failures: overload, and a deployment (or terminal) without recurring plans,
    // which the spec answers 503 and a merchant may ask about often (the request log has them).
    const expected = failed.body.error.code === "service_busy" || failed.body.error.code === "recurring_not_configured"
    if (failed.status >= 500 && !expected) request.log.error({ cause: exit._tag === "Failure" ? String(exit.cause) : undefined }, "use case failed")
    // Overload (too many password checks at once) passes in a moment.
    if (failed.body.error.code === "service_busy") reply.header("retry-after", "1")
    return reply.code(failed.status).send(failed.body)
  }
  return ok((exit as { value: A }).value)
}

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

/**
 * The request's Bearer token (`undefined`: none), or `both` when an `X-API-Key` comes with it: two
 * credentials, possibly of two merchants, and no telling which one the sender meant (the Bearer token
 * used to win silently, the key and nonce left unchecked: an outside probe), so neither is used.
 */
export const bearerOf = (request: FastifyRequest): string | "both" | undefined => {
  const authorization = header(request, "authorization")
  if (authorization === undefined || !/^Bearer\s+/i.test(authorization)) return undefined
  // A blank key is none, as a blank Authorization is (a client's template with an empty key).
  const key = header(request, "x-api-key")
  return key !== undefined && key.trim() !== "" ? "both" : authorization.replace(/^Bearer\s+/i, "").trim()
}

const bothCredentials = new InvalidRequest({
  message: "send X-API-Key (with X-Nonce) or Authorization: Bearer, not both",
  field: "X-API-Key"
})

/** The merchant principal: `Authorization: Bearer` (dashboard) or `X-API-Key` + `X-Nonce`, not both. */
export const principal = (request: FastifyRequest): Effect.Effect<Access.Principal, import("@paydesk/core").PaydeskError, Services> => {
  const bearer = bearerOf(request)
  if (bearer === "both") return Effect.fail(bothCredentials)
  if (bearer !== undefined) return Auth.bearer(bearer)
  return Auth.apiKey(header(request, "x-api-key"), header(request, "x-nonce"))
}

/**
 * Keys each request limiter (`@fastify/rate-limit`'s `createRateLimit`) keeps counting at most, the
 * least recently used dropped beyond: given to every limiter, since the plugin's own `cache` option
 * sizes only its global store and each limiter made with `createRateLimit` kept 5,000 (a review found
 * a locked e-mail freed after 5,000 others were tried).
 */
export const limiterKeys = 10_000

/**
 * A limiter's options for `createRateLimit`, with its store's size (`limiterKeys`): the plugin reads
 * `cache` from them at run time (its store's `child`), though its types leave it out.
 */
export const limiterOptions = (options: CreateRateLimitOptions): CreateRateLimitOptions =>
  ({ ...options, cache: limiterKeys }) as CreateRateLimitOptions

/**
 * A limit counted by a key known only once the request is authenticated (`@fastify/rate-limit`'s
 * store, fixed windows of `timeWindow`): `count(request, key)` counts the request under
 * `<prefix>:<key>` and answers the seconds to wait when it is past `max`, else null.
 */
export const keyedLimit = (app: FastifyInstance, options: { readonly prefix: string; readonly max: number; readonly timeWindow: number }) => {
  const keys = new WeakMap<FastifyRequest, string>()
  const limiter = app.createRateLimit(limiterOptions({ max: options.max, timeWindow: options.timeWindow, keyGenerator: (request) => `${options.prefix}:${keys.get(request)}` }))
  return (request: FastifyRequest, key: string): Effect.Effect<number | null> =>
    Effect.map(
      Effect.promise(() => {
        keys.set(request, key)
        return limiter(request)
      }),
      (result) => !result.isAllowed && result.isExceeded ? Math.max(1, result.ttlInSeconds) : null
    )
}

/**
 * Whose limit a merchant request counts towards: an API key's terminal, or a dashboard user's
 * account (`key` for the counters, `of` for the message).
 */
export const limitScope = (who: Access.Principal): { readonly key: string; readonly of: "terminal" | "account" } =>
  who._tag === "ApiKey" ? { key: `terminal:${who.terminalId}`, of: "terminal" } : { key: `account:${who.accountId}`, of: "account" }

/** Authenticates the merchant (`principal`), then runs the route's use case as that principal. */
export const runAs = <A, E>(
  ctx: Context,
  request: FastifyRequest,
  reply: FastifyReply,
  use: (who: Access.Principal) => Effect.Effect<A, E, Services>,
  ok: (value: A) => unknown
) => {
  // An API key's terminal, read with the key, serves this request's use case (no second read).
  const bearer = bearerOf(request)
  const authenticated: Effect.Effect<A, E | import("@paydesk/core").PaydeskError, Services> = bearer === "both"
    ? Effect.fail(bothCredentials)
    : bearer !== undefined
    ? Effect.flatMap(Auth.bearer(bearer), use)
    : Effect.flatMap(Auth.apiKeyRequest(header(request, "x-api-key"), header(request, "x-nonce")), ({ principal, terminal }) =>
      Access.withRequestTerminal(use(principal), terminal))
  return run(ctx, request, reply, authenticated, ok)
}

/** The value of a header, first one if repeated. */
export const headerOf = header

/**
 * Whether a creation is for the sandbox: `X-Test-Mode: true` or `"test": true` (the spec's equal
 * alternatives). When both are given and disagree, 400 on `test`: neither can be taken as meant.
 */
export const sandboxRequested = (header: string | undefined, body: boolean | null | undefined): Effect.Effect<boolean, InvalidRequest> =>
  header !== undefined && typeof body === "boolean" && (header === "true") !== body
    ? Effect.fail(new InvalidRequest({ field: "test", message: `test (${body}) and X-Test-Mode (${header}) disagree: send one of them, or the same value` }))
    : Effect.succeed(header === "true" || body === true)

/** An ISO 8601 query or body field as epoch milliseconds (400 naming the field when malformed). */
export const instantOf = (field: string, value: string | undefined): Effect.Effect<number | undefined, InvalidRequest> => {
  if (value === undefined) return Effect.succeed(undefined)
  const parsed = Instant.parseIso(value)
  return Option.isSome(parsed)
    ? Effect.succeed(parsed.value)
    : Effect.fail(new InvalidRequest({ field, message: `${field} must be an ISO 8601 date-time with Z or an offset` }))
}
