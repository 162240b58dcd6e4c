/**
 * The Fastify app factory: `build(options)` returns an app with the merchant API (`/api/v1`),
 * the public payer pages (`/public`), the operator API (`/admin/v1`) and the OpenAPI document,
 * without listening. JSON bodies are parsed strictly (valid UTF-8, valid JSON, size limit, at most
 * `StrictJson.maxDepth` levels, no duplicate keys); no text with a NUL character reaches a use case
 * (body, path or query: 400). Every response carries `x-request-id` and
 * `x-content-type-options: nosniff`; API answers carry `cache-control: no-store`. The request log
 * is one line per request, at its answer (`OneLineRequestLog`), and shows payer-page paths with their
 * token replaced (`/public/payments/[redacted]`), in whatever spelling they came (`redactUrl`), as
 * does each request span's `url.path`.
 *
 * Every request is a server span on the host's tracer (`METHOD route`, with the OpenTelemetry HTTP
 * attributes; a W3C `traceparent` header continues the caller's trace), the parent of the spans of
 * the use case it runs, when the host records spans (Effect's `TracerEnabled`, asked once);
 * `observe` receives each request's route, status and duration (for metrics), once: at its answer, or
 * with status 499 when its client left before the answer was sent (the span then ends too, with
 * `error.type` `aborted`). `requestsInFlight(app)` counts the requests arrived and not yet so ended.
 * `/health/live`, `/health/ready` and `/metrics` come from `HostRoutes`.
 */
import Fastify, { type FastifyInstance, type FastifyReply, LogController, type FastifyRequest, type FastifyServerOptions } from "fastify"
import formbody from "@fastify/formbody"
import rateLimit from "@fastify/rate-limit"
import { randomUUID } from "node:crypto"
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from "node:http"
import { Socket } from "node:net"
import { Cause, Effect, Exit, References, Tracer } from "effect"
import { Runner } from "@paydesk/core"
import * as AdminRoutes from "./AdminRoutes.js"
import * as Contract from "./Contract.js"
import * as HostRoutes from "./HostRoutes.js"
import type { Context } from "./Http.js"
import { dropEmptyBodyType, limiterKeys, originForm, refusedOnArrival, sendError } from "./Http.js"
import { errorResponse } from "./HttpErrors.js"
import * as MerchantRoutes from "./MerchantRoutes.js"
import * as OpenApi from "./OpenApi.js"
import * as PublicRoutes from "./PublicRoutes.js"
import { responses } from "./ResponseSchemas.js"
import * as StrictJson from "./StrictJson.js"

/** Hooks of the operator API that depend on the deployment (emulators, clock, rate store). */
export interface OperatorHooks {
  /** Sets the exchange rate (micro-RUB per USDT). */
  readonly setRate?: (rate: bigint) => Promise<void>
  /** Sets the manual clock; absent when the clock is the system clock. */
  readonly setClock?: (now: number) => Promise<void>
  /** Programs the acquirer emulator's answers (and how late it gives them, ms) for a subscription's next charges. */
  readonly programCharges?: (
    subscriptionId: string,
    outcomes: ReadonlyArray<{ readonly outcome: "paid" | "failed" | "unknown"; readonly delayMs: number }>
  ) => Promise<void>
  /**
   * Settles the acquirer emulator's answer to a charge it recorded as `unknown` (by its idempotency
   * key); false when the bank has no unknown answer under that key.
   */
  readonly resolveCharge?: (idempotencyKey: string, outcome: "paid" | "failed") => Promise<boolean>
  /**
   * Runs all background work due now and reports it: the answer is sent as is, so a host running the
   * core's `Work` returns `Views.workReport(report)`, the snake_case the operator API documents
   * (without this hook the route runs `Work.runDue` and answers that itself).
   */
  readonly runWork?: () => Promise<unknown>
}

/** One finished request, for the host's metrics. */
export interface Sample {
  readonly method: string
  /** The route's pattern (`/api/v1/payments/:paymentID`), or `unmatched`. */
  readonly route: string
  /** The answer's status, or `abortedStatus` for a request its client left before the answer was sent. */
  readonly status: number
  readonly seconds: number
}

/**
 * The status a request is observed with when its connection closed before its answer was sent (the
 * client left, or the connection broke): nginx's "client closed request", so that such requests show
 * in the request metrics apart from the answered ones.
 */
export const abortedStatus = 499

/**
 * The answer to a request that arrives while the app closes (Fastify has set `Connection: close`):
 * 503 `service_unavailable`, except the health probes (`HostRoutes.whileClosing`: readiness 503 in
 * its own body, liveness handled as usual, `handle`).
 */
const shuttingDown = (request: FastifyRequest, reply: FastifyReply, handle: () => void) => {
  if (HostRoutes.whileClosing(request, reply, handle)) return
  reply.header("retry-after", "1")
  sendError(request, reply, 503, "service_unavailable", "the server is shutting down: retry the request")
}

/** The headers of every answer. */
const commonHeaders = (request: FastifyRequest, reply: FastifyReply) => {
  reply.header("x-request-id", request.id)
  reply.header("x-content-type-options", "nosniff")
  // Answers of the APIs are per caller and often carry secrets (keys, tokens): never cached.
  if (/^\/(api|admin)\//.test(request.url) && !reply.hasHeader("cache-control")) reply.header("cache-control", "no-store")
}

/** The longest path parameter routed (Fastify's default is 100); longer is 414 `uri_too_long`. */
const maxPathParameter = 2048

/** Options of `build`. */
export interface Options {
  /** Runs the core's use cases: a `ManagedRuntime`, or a `Runner` over the host's services. */
  readonly runtime: Runner.Runner
  readonly publicUrl: string
  /** Bearer token of the operator API; the operator API is not mounted without one. */
  readonly adminToken?: string
  readonly operator?: OperatorHooks
  /** Largest accepted body in bytes (default 64 KiB). */
  readonly bodyLimit?: number
  readonly logger?: FastifyServerOptions["logger"]
  /** Login attempts per minute per e-mail and per client address (default 10 and 30). */
  readonly loginLimits?: MerchantRoutes.LoginLimits
  /** Resends and test events a minute per terminal (API key) or account (dashboard user), together (default 30). */
  readonly eventSendsPerMinute?: number
  /**
   * Addresses and CIDR ranges of the reverse proxies whose `X-Forwarded-For` names the client
   * (Fastify's `trustProxy`). Default: none, the client is the TCP peer.
   */
  readonly trustProxy?: ReadonlyArray<string>
  /** Checks every answer against its operation's declaration (500 `response_contract_violation` otherwise); for tests. */
  readonly checkResponses?: boolean
  /** Readiness checks and metrics of the host (`/health/ready`, `/metrics`). */
  readonly host?: HostRoutes.Hooks
  /** Receives every finished request (route, status, duration). */
  readonly observe?: (sample: Sample) => void
  /**
   * How long a request may take to arrive whole, headers and body (default 30 s; then 408
   * `request_timeout`; Node looks every half of it); 0: no limit but Node's 60 s for the headers.
   */
  readonly requestTimeoutMs?: number
}

/** A request id, as Fastify's `genReqId` makes them. */
const requestId = () => `req_${randomUUID().replaceAll("-", "")}`

/** Node's limit for a request's headers, kept (lowered to the whole request's when that is shorter). */
const maxHeadersTimeoutMs = 60_000

/** What a request too slow to arrive is told: the limit it passed (with no limit, or a longer one, the headers' own). */
const timeoutMessage = (requestTimeoutMs: number) =>
  requestTimeoutMs === 0
    ? `the request's headers did not arrive within ${maxHeadersTimeoutMs} ms`
    : `the request did not arrive whole within ${requestTimeoutMs} ms${requestTimeoutMs > maxHeadersTimeoutMs ? ` (its headers within ${maxHeadersTimeoutMs} ms)` : ""}`

/**
 * Malformed HTTP, which Node refuses before any request exists (Fastify's `clientErrorHandler`): the
 * API's error body with a request id and the common headers, the connection closed, and a line in the
 * log (`request refused`, with the client and Node's error code). No metrics sample: there is no
 * method or route to count it under.
 *
 * Unless an earlier request on the connection, received whole, still waits for its answer: the bytes
 * at fault came after it, and a refusal written now would be read as that request's answer (a payment
 * created, its client told 400 `malformed HTTP request`: an outside probe). The connection is then
 * closed without an answer, as a reset is: the earlier request's client learns its outcome is unknown
 * and repeats it (a creation with the same `order_id` or `Idempotency-Key` answers what it made). The
 * earlier request is counted as left by its client (`request aborted`, 499). Bytes after a request that
 * asked to close the connection are no request at all: ignored, the pending answers sent.
 */
const clientError = (requestTimeoutMs: number) => function(this: FastifyInstance, error: Error & { code?: string }, socket: Socket) {
  // A connection reset leaves nothing to answer.
  if (error.code === "ECONNRESET" || socket.destroyed) return
  const [status, code, message] = error.code === "ERR_HTTP_REQUEST_TIMEOUT"
    ? [408, "request_timeout", timeoutMessage(requestTimeoutMs)] as const
    : error.code === "HPE_HEADER_OVERFLOW"
    ? [431, "headers_too_large", "the request's headers are larger than 16 KiB"] as const
    // Chunk extensions are part of a chunked body: the code of a body over its limit, at Node's own status.
    : error.code === "HPE_CHUNK_EXTENSIONS_OVERFLOW"
    ? [413, "body_too_large", "the request's chunk extensions are larger than 16 KiB"] as const
    : [400, "invalid_request", "malformed HTTP request"] as const
  // The answer Node holds for the connection's first request not yet answered (with its request): one
  // under way, or one of a request received whole.
  const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean; req?: { complete?: boolean } } | null })._httpMessage
  const pending = answering !== null && answering !== undefined && (answering.headersSent === true || answering.req?.complete === true)
  // Bytes after a request that asked to close the connection (`Connection: close`, or HTTP/1.0 without
  // keep-alive) are no request (RFC 9112, 9.6: ignored): the answers pending go out, then Node closes the
  // connection. Read and dropped meanwhile, not left unread (as a paused connection leaves them): a
  // connection closed with bytes unread is reset, and the answers not yet sent were lost with it.
  if (error.code === "HPE_CLOSED_CONNECTION") return
  const id = requestId()
  const client = { remoteAddress: socket.remoteAddress, remotePort: socket.remotePort }
  // Nothing is written into an answer under way (as Node's own handler), nor in place of one pending.
  if (pending || !socket.writable) {
    // (Not under `req`, whose serializer takes a request.)
    this.log.info({ reqId: id, client, code: error.code }, "request refused, connection closed without an answer: an earlier request's answer was pending")
    return void socket.destroy()
  }
  // The request being read (a timed-out one: its route waits for its body) never runs now, even if the
  // rest of its body is read before the connection is gone (`preValidation`; a review).
  const reading = (socket as Socket & { parser?: { incoming?: IncomingMessage | null } | null }).parser?.incoming
  if (reading !== null && reading !== undefined) (reading as IncomingMessage & { [refused]?: true })[refused] = true
  const answeringRequest = (answering as { req?: IncomingMessage } | null | undefined)?.req
  if (answeringRequest !== undefined) (answeringRequest as IncomingMessage & { [refused]?: true })[refused] = true
  const body = JSON.stringify(errorResponse(status, code, message, id).body)
  this.log.info({ reqId: id, client, res: { statusCode: status }, code: error.code }, "request refused")
  // Written, then the connection destroyed (not only ended: a client that keeps its side open would
  // keep it, and with it a request whose body timed out and could still complete). Node's own
  // `destroySoon`, not the lingering close: the parser would read the rest of a timed-out request's
  // body meanwhile and its route would run after its 408 (a review).
  socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
    `x-request-id: ${id}\r\nx-content-type-options: nosniff\r\ncache-control: no-store\r\nconnection: close\r\n\r\n${body}`)
  destroyAfterWrites.call(socket)
}

/** Marks a request `clientError` answered (a 408 for its body): it never runs. */
const refused = Symbol("paydesk.refused")

/** Node's `Socket.destroySoon` (ends the connection, destroys it once written), kept before the lingering close replaces it per connection. */
const destroyAfterWrites = Socket.prototype.destroySoon

/** How long a connection the server closes keeps reading, after its last answer, what its client still sends. */
export const lingerMs = 1_000

/**
 * How many bytes beyond the app's body limit a lingering connection reads and drops before it is
 * reset all the same: the rest of a body refused before it arrived whole, its framing, and a few
 * requests pipelined after it (a cap of its own, below a body's, would reset a client still sending
 * a body the server refused: a review).
 */
export const lingerSlackBytes = 64 * 1024

/**
 * A lingering close, in place of `Socket.destroySoon` (which Node's HTTP server calls once the last
 * answer of a connection it closes is written; not `clientError`'s refusals): a connection closed with bytes
 * of its client unread is reset, and the client loses the answers it had not read yet (a busy server
 * reset pipelined clients that kept sending after `Connection: close`). The answers written, the
 * connection is half-closed and what still arrives is read and dropped until the client closes its
 * side, `lingerMs` passes or the body limit and `lingerSlackBytes` have come. Dropped unparsed: Node's parser is taken off the
 * connection first (as Node does for an upgrade), since nothing after the last request is one (RFC
 * 9112, 9.6). Fed to the parser, a client that kept sending had every request of its second parsed and
 * held until the close, unanswered and uncounted (a review: 126,748 pipelined requests from one
 * connection, 530 MB of heap and the event loop stalled for 15 s).
 */
const lingeringDestroySoon = (maxBytes: number) => function(this: Socket): void {
  if (this.destroyed) return
  if (this.writable) this.end()
  const linger = () => {
    if (this.destroyed) return
    if (this.readableEnded) return void this.destroy()
    const timer = setTimeout(() => this.destroy(), lingerMs)
    // A process stopping does not wait for it.
    timer.unref()
    this.once("end", () => this.destroy())
    this.once("close", () => clearTimeout(timer))
    // The HTTP server's own listener feeds the parser; a `data` listener added to a socket of Node's
    // HTTP server takes the parser off its stream too (`unconsume`), so the bytes come here only.
    this.removeAllListeners("data")
    let left = maxBytes
    this.on("data", (chunk: Buffer) => {
      left -= chunk.length
      if (left < 0) this.destroy()
    })
    this.resume()
  }
  if (this.writableFinished) linger()
  else this.once("finish", linger)
}

/** The W3C `traceparent` of a request as the parent of its span, when valid. */
const parentOf = (header: string | Array<string> | undefined): Tracer.ExternalSpan | undefined => {
  const match = typeof header === "string" ? /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(header.trim()) : null
  if (match === null || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return undefined
  return Tracer.externalSpan({ traceId: match[1]!, spanId: match[2]!, sampled: (Number.parseInt(match[3]!, 16) & 1) === 1 })
}

/** A registered route. */
export interface RouteEntry {
  readonly method: string
  readonly url: string
  readonly operationId: string | undefined
}

const registered = new WeakMap<FastifyInstance, Array<RouteEntry>>()

/** The routes `build` registered on `app` (without Fastify's automatic HEAD routes), for the contract tests. */
export const routesOf = (app: FastifyInstance): ReadonlyArray<RouteEntry> => registered.get(app) ?? []

const inFlight = new WeakMap<FastifyInstance, { count: number }>()

/** Requests Node parsed on a connection whose answers have not yet closed (`admitted`). */
const unanswered = Symbol("paydesk.unanswered")

/** Requests one connection may have sent and not yet been answered (pipelined): past them it is dropped. */
export const maxPipelined = 32

/** The request of a connection whose answer closes it, decided on arrival (null: none, the connection dropped); nothing Node parses after it runs. */
const closingAfter = Symbol("paydesk.closingAfter")

/** A connection's requests not yet ended (set on each connection of the app's server; none on `inject`'s). */
const openRequests = Symbol("paydesk.openRequests")
const openOn = (request: FastifyRequest): Map<FastifyRequest, FastifyReply> | undefined =>
  (request.raw.socket as (Socket & { [openRequests]?: Map<FastifyRequest, FastifyReply> }) | null)?.[openRequests]

/**
 * The requests `app` (made by `build`) is handling now: arrived (past routing) and not yet answered
 * or left by their client (for the host's metrics).
 */
export const requestsInFlight = (app: FastifyInstance): number => inFlight.get(app)?.count ?? 0

/**
 * `text` with each `%XX` escape of an ASCII character decoded, up to three times over (`%2570` is
 * `p`), and, for each character, where it came from in `text`. Other escapes (bytes of UTF-8,
 * malformed ones) are kept as they are: this view only looks for ASCII words, and never throws.
 */
const asciiDecoded = (text: string): { readonly decoded: string; readonly from: (index: number) => number } => {
  let decoded = text
  // (null while nothing is decoded: each character where it was.)
  let from: ReadonlyArray<number> | null = null
  for (let round = 0; round < 3 && decoded.includes("%"); round++) {
    let next = ""
    const nextFrom: Array<number> = []
    for (let i = 0; i < decoded.length;) {
      const code = decoded[i] === "%" ? /^[0-7][0-9a-f]$/i.exec(decoded.slice(i + 1, i + 3)) : null
      nextFrom.push(from === null ? i : from[i]!)
      if (code === null) {
        next += decoded[i]
        i++
      } else {
        next += String.fromCharCode(Number.parseInt(code[0], 16))
        i += 3
      }
    }
    nextFrom.push(text.length)
    if (next === decoded) break
    decoded = next
    from = nextFrom
  }
  const at = from
  return { decoded, from: (index) => at === null ? index : at[index]! }
}

/**
 * A payer-page prefix as the router, a person or another server reads it: any case, repeated
 * slashes or backslashes, `./` segments, `;` parameters after a segment, followed by a separator
 * (what comes after it is the token). An outside probe found `/public/payments;x/<token>` and
 * `/public\payments\<token>` logged with the token. A match starts only where a run of separators
 * starts (the lookbehind), so a long run is read once, not again from each of its positions (a
 * review timed 400 ms for one 15 KB path of backslashes without it).
 */
const payerPrefix = /(?<![/\\]|[/\\]\.)[/\\]+(?:\.[/\\]+)*public(?:;[^/\\]*)?[/\\]+(?:\.[/\\]+)*(payments|subscriptions)(?:;[^/\\]*)?[/\\]+/i

/**
 * `part` (a path, or one parameter of a query) cut at the first payer-page prefix it holds, in any
 * spelling (percent-escapes decoded, any case), with what follows replaced: `/public/payments/[redacted]`.
 */
const redactPart = (part: string): string => {
  const { decoded, from } = asciiDecoded(part)
  const match = payerPrefix.exec(decoded)
  return match === null ? part : `${part.slice(0, from(match.index))}/public/${match[1]!.toLowerCase()}/[redacted]`
}

/** A payer page's route (`/public/payments/:token/status`): its path with its parameters replaced, or null for another route. */
const payerRoute = (route: string | undefined): string | null =>
  route !== undefined && /^\/public\/(payments|subscriptions)\/:/.test(route) ? route.replace(/:[^/]+|\*/g, "[redacted]") : null

/**
 * Query parameter names that carry a credential when a client puts one there by mistake (the API
 * reads keys and tokens from headers only, and refuses them in a query): their values are not logged.
 */
const credentialName = /key|token|secret|passw|auth|signature|nonce|session/i

/** One query parameter for logs: a credential's value replaced (its name decoded first), else as `redactPart`. */
const redactParameter = (parameter: string): string => {
  const at = parameter.indexOf("=")
  const name = at === -1 ? parameter : parameter.slice(0, at)
  if (at !== -1 && credentialName.test(asciiDecoded(name).decoded)) return `${name}=[redacted]`
  return redactPart(parameter)
}

/**
 * A request path (with its query) with the payer pages' tokens replaced, for logs and spans. A
 * request that reached a payer page (`route`, its route pattern) shows the route with its parameters
 * replaced (`/public/payments/[redacted]/status`), however its path was spelled; in any other path,
 * and in each query parameter, anything under `/public/payments/` or `/public/subscriptions/`, in
 * any case and with percent-escapes decoded (as the router decodes them), is replaced. The query of
 * a payer page is kept, redacted as any other. A query parameter named like a credential (`api_key`,
 * `token`, `secret`, …) has its value replaced: an outside probe's key sent in a query was refused, and
 * logged in clear.
 */
export const redactUrl = (url: string, route?: string): string => {
  const at = url.indexOf("?")
  const path = at === -1 ? url : url.slice(0, at)
  const query = at === -1 ? null : url.slice(at + 1)
  const shown = payerRoute(route) ?? redactPart(path)
  return query === null ? shown : `${shown}?${query.split("&").map(redactParameter).join("&")}`
}

/** The route pattern a request matched (undefined: none, or a request Fastify refused before routing). */
const routeOf = (request: FastifyRequest): string | undefined =>
  (request.routeOptions as FastifyRequest["routeOptions"] | undefined)?.url

/** The request serializer of the log: Fastify's fields, with the path redacted. */
const requestLog = (request: FastifyRequest) => ({
  method: request.method,
  url: redactUrl(request.url, routeOf(request)),
  host: request.host,
  remoteAddress: request.ip,
  remotePort: request.socket?.remotePort
})

const withRedaction = (logger: FastifyServerOptions["logger"]): NonNullable<FastifyServerOptions["logger"]> => {
  if (logger === undefined || logger === false) return false
  const options = logger === true ? {} : logger
  return { ...options, serializers: { ...options.serializers, req: requestLog as never } }
}

/**
 * The request log in one line per request, written when it is answered: the request (method, path,
 * host, client), the status and the time taken. Fastify writes two (one on arrival, one at the
 * answer), each a write to stdout; its other lines (errors, aborted streams) are kept. A request
 * that ends without its answer (the client left while its body came in or while it was handled, the
 * connection broke) gets a line of its own, `request aborted`, when its connection closes (written
 * by `build`'s hooks, which see that close for the metrics too).
 * (With a controller of its own, Fastify ignores its `disableRequestLogging` and `requestIdLogLabel`
 * options: set them on this controller instead.)
 */
class OneLineRequestLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    // The client's address is read while the connection is open: Node keeps it on the socket, so a
    // line written after the socket is gone (a client that left, a connection closed with the answer)
    // still names the client.
    void request.raw.socket?.remoteAddress
  }
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, "request errored")
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, "request completed")
  }
  /** A request whose connection closed before its answer was sent. */
  requestAborted(request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return
    request.log.info({ req: request, responseTime: reply.elapsedTime }, "request aborted")
  }
}

const invalidBody = (message: string) => Object.assign(new Error(message), { statusCode: 400, code: "invalid_json_body" })


/** Builds the app (call `listen` or `inject` on it). */
export const build = async (options: Options): Promise<FastifyInstance> => {
  const bodyLimit = options.bodyLimit ?? 64 * 1024
  const trustProxy = options.trustProxy === undefined || options.trustProxy.length === 0 ? false : [...options.trustProxy]
  const requestLog = new OneLineRequestLog()
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000
  if (!Number.isSafeInteger(requestTimeoutMs) || requestTimeoutMs < 0) throw new RangeError(`requestTimeoutMs must be a whole number of ms, 0 or more: ${requestTimeoutMs}`)
  const sends = options.eventSendsPerMinute
  if (sends !== undefined && (!Number.isSafeInteger(sends) || sends < 1)) throw new RangeError(`eventSendsPerMinute must be a whole number, 1 or more: ${sends}`)
  const app = Fastify({
    logger: withRedaction(options.logger),
    logController: requestLog,
    bodyLimit,
    genReqId: requestId,
    // The whole request within this (Fastify's default is no limit: a body sent a byte a minute would hold its connection for ever).
    requestTimeout: requestTimeoutMs,
    // Node looks for requests past their time every 30 s by default, so a 30 s limit answered 408 after
    // up to 60 s (45 s at half the limit: an outside probe): every second here (a tenth of a shorter limit). Its
    // headers' limit (60 s) is kept within the whole request's (Node would apply the longer to both).
    // An HTTP/1.1 request without `Host` is refused by the `onRequest` hook, in the API's error body
    // (Node's own refusal is a bare 400 without a request id: an outside probe).
    http: requestTimeoutMs === 0
      ? { requireHostHeader: false }
      : { requireHostHeader: false, connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(requestTimeoutMs / 10))), headersTimeout: Math.min(maxHeadersTimeoutMs, requestTimeoutMs) },
    clientErrorHandler: clientError(requestTimeoutMs),
    // RFC 9112, section 3.2.2: a server MUST accept a target in absolute form (`GET http://host/path`,
    // as a client sends it to a proxy); it is routed by its path and query (it was a 404 `route_not_found`).
    rewriteUrl: originForm,
    // Answered by the `onRequest` hook instead (see `closing`).
    return503OnClosing: false,
    // A path parameter of any length reaches its route, whose answer for an id that is no id is its 404.
    routerOptions: { maxParamLength: maxPathParameter },
    // What Fastify refuses before routing: no hook runs for it, so it is given here what the hooks give
    // every answer (the API's error body, the common headers, its log line and `observe` sample).
    frameworkErrors: (error, request, reply) => {
      // Fastify's plain request here, without the decorations: not arrived, no span.
      request.paydeskStage = 0
      request.paydeskSpan = null
      reply.raw.once("finish", () => {
        requestLog.requestCompleted(null, request, reply)
        ended(request, reply, reply.statusCode)
      })
      commonHeaders(request, reply)
      if (error.code === "FST_ERR_BAD_URL") return sendError(request, reply, 400, "invalid_request", "the path is not valid percent-encoded UTF-8")
      if (error.code === "FST_ERR_MAX_PARAM_LENGTH") return sendError(request, reply, 414, "uri_too_long", `a path segment is longer than ${maxPathParameter} characters`)
      return sendError(request, reply, 500, "internal_error", "internal error")
    },
    trustProxy
  })
  const ctx: Context = { runtime: options.runtime, publicUrl: options.publicUrl.replace(/\/+$/, "") }
  const routes: Array<RouteEntry> = []
  registered.set(app, routes)
  app.addHook("onRoute", (r) => {
    for (const method of [r.method].flat()) {
      if (method !== "HEAD") routes.push({ method, url: r.url, operationId: r.config?.operationId })
    }
  })
  if (options.checkResponses === true) Contract.checkResponses(app, OpenApi.operations, responses.Error)

  // The request's server span, opened on the host's tracer and clock, closed with the status.
  app.decorateRequest("paydeskSpan", null)
  // Where the request is: 0 not arrived (not past our `onRequest`, the first hook of every request),
  // 1 arrived and counted in flight, 2 ended (answered or left by its client; observed once).
  app.decorateRequest("paydeskStage", 0)
  const counter = { count: 0 }
  inFlight.set(app, counter)
  // Whether the host records spans, asked of its runner at the first request. When it does not, no
  // request span is opened: a span nobody records would cost every request two fibers and garbage.
  let tracing: boolean | undefined
  const recordsSpans = async (): Promise<boolean> => {
    if (tracing === undefined) {
      const enabled = await Runner.runExit(options.runtime, Effect.gen(function*() {
        return yield* References.TracerEnabled
      }))
      tracing = Exit.isFailure(enabled) || enabled.value
    }
    return tracing
  }
  /** Ends `span` (status null: its client left before the answer); a failure to end it is logged. */
  const endSpan = (request: FastifyRequest, span: Tracer.Span, status: number | null): Promise<void> => {
    if (status === null) span.attribute("error.type", "aborted")
    else span.attribute("http.response.status_code", status)
    const exit = status !== null && status >= 500 ? Exit.fail(`HTTP ${status}`) : Exit.void
    const failed = (cause: unknown) => void request.log.error({ err: cause }, "request span not ended")
    return Promise.resolve(Runner.runExit(options.runtime, Effect.clockWith((clock) => Effect.sync(() => span.end(clock.currentTimeNanosUnsafe(), exit)))))
      .then((ended) => Exit.isFailure(ended) ? failed(Cause.squash(ended.cause)) : undefined, failed)
  }
  const openSpan = async (request: FastifyRequest) => {
    if (!(await recordsSpans())) return
    const route = request.routeOptions.url ?? "unmatched"
    const parent = parentOf(request.headers.traceparent)
    // Opening a span waits for nothing: run at once, without a fiber's promise per request.
    const opened = await Runner.runExit(options.runtime, Effect.makeSpan(`${request.method} ${route}`, {
      kind: "server",
      ...(parent === undefined ? { root: true } : { parent }),
      attributes: {
        "http.request.method": request.method,
        "http.route": route,
        "url.path": redactUrl(request.url.split("?")[0]!, request.routeOptions.url),
        "url.scheme": request.protocol,
        "paydesk.request_id": request.id
      }
    }))
    if (Exit.isFailure(opened)) return
    request.paydeskSpan = opened.value
    // A client that left while the span was being opened (the first request asks the runner first):
    // ended now, still the parent of what the handler runs.
    if (request.paydeskStage === 2) await endSpan(request, opened.value, null)
  }
  /**
   * Ends the request once: its span, the count in flight, `observe`; with status null (its client
   * left before the answer was sent) also its `request aborted` line.
   */
  const ended = (request: FastifyRequest, reply: FastifyReply, status: number | null) => {
    if (request.paydeskStage === 2) return undefined
    if (request.paydeskStage === 1) counter.count--
    request.paydeskStage = 2
    openOn(request)?.delete(request)
    // The span is ended first: an observer that throws leaves no span open.
    const span = request.paydeskSpan
    request.paydeskSpan = null
    const closed = span === null ? undefined : endSpan(request, span, status)
    if (status === null) requestLog.requestAborted(request, reply)
    options.observe?.({ method: request.method, route: request.routeOptions.url ?? "unmatched", status: status ?? abortedStatus, seconds: reply.elapsedTime / 1000 })
    return closed
  }
  const aborted = (request: FastifyRequest, reply: FastifyReply) => {
    try {
      ended(request, reply, null)
    } catch (cause) {
      request.log.error({ err: cause }, "observing an aborted request failed")
    }
  }
  // A request whose connection closes before its answer is ended by its answer's `close` (below),
  // except the answers Node still queues behind another on the connection (pipelined requests) when
  // it drops the connection for a `CONNECT`: it takes its own listeners off the connection first, and
  // those answers never close, so their requests stayed in flight and unlogged for ever (an outside
  // probe pipelined them by the hundred, unauthenticated). Each connection's requests not yet ended
  // are ended when it closes (`openOn`).
  const lingering = lingeringDestroySoon(bodyLimit + lingerSlackBytes)
  const onConnection = (socket: Socket) => {
    socket.destroySoon = lingering
    const open = new Map<FastifyRequest, FastifyReply>()
    ;(socket as Socket & { [openRequests]?: typeof open })[openRequests] = open
    ;(socket as Socket & { [unanswered]?: { count: number } })[unanswered] = { count: 0 }
    socket.once("close", () => {
      for (const [request, reply] of open) setImmediate(aborted, request, reply)
      open.clear()
    })
  }
  app.server.on("connection", onConnection)
  // Requests after which the connection closes, decided when Node parses them (before any route or
  // hook), with nothing Node parses after them on the connection run (`onRequest`; such requests are
  // ended when it closes): RFC 9112, section 9.6, a server that closes MUST NOT process further requests.
  // - An HTTP/1.0 request with `Transfer-Encoding` (RFC 9112, 6.1: faulty framing, as HTTP/1.0 has no
  //   transfer codings and a proxy of that version reads its body otherwise; its connection must close).
  //   Node reads it as chunked, so what follows may be a request smuggled past such a proxy: it is
  //   refused (`refusedOnArrival`, or Fastify's own refusals), and a review found a request pipelined
  //   after it run when only the answer closed the connection.
  // - A request asking to upgrade the connection (`Connection: upgrade` with `Upgrade`, h2c say), which
  //   this server answers as a plain request: Node drops the bytes read after it (an outside probe's
  //   pipelined payment was never run, and the next request's answer was read as its own).
  // - `Expect` other than 100-continue (`checkExpectation`, below).
  // - Past `maxPipelined` requests not yet answered on one connection: Node parses every request of a
  //   read and each runs at once, so one connection ran hundreds side by side (an outside probe's 300
  //   pipelined documents ran the server out of heap). The connection is dropped, with what it had in
  //   flight (`request aborted`); an ordinary client waits for its answers long before.
  /**
   * Counts a request Node parsed on its connection until its answer closes (every one: routed, refused
   * by Fastify before any hook, an `Expect` refused), and drops the connection past `maxPipelined`
   * (false: dropped, or closing already: the request is not to run).
   */
  const admitted = (request: IncomingMessage, response: ServerResponse): boolean => {
    const socket = request.socket as Socket & { [closingAfter]?: IncomingMessage | null; [unanswered]?: { count: number } }
    const counted = socket[unanswered]
    if (socket[closingAfter] !== undefined) {
      // Parsed after the connection's last request: never run, yet Node holds it until the connection
      // closes. Counted as well (nothing answers them): past the bound the connection goes at once.
      if (counted !== undefined && ++counted.count > maxPipelined && !socket.destroyed) {
        app.log.warn({ client: { remoteAddress: socket.remoteAddress, remotePort: socket.remotePort } },
          `connection dropped: more than ${maxPipelined} requests sent on it after its last one`)
        socket.destroy()
      }
      return false
    }
    if (counted === undefined) return true
    if (counted.count >= maxPipelined) {
      socket[closingAfter] = null
      app.log.warn({ client: { remoteAddress: socket.remoteAddress, remotePort: socket.remotePort } },
        `connection dropped: more than ${maxPipelined} requests sent on it without waiting for their answers`)
      socket.destroy()
      return false
    }
    counted.count++
    response.once("close", () => void counted.count--)
    return true
  }
  app.server.prependListener("request", (request: IncomingMessage, response: ServerResponse) => {
    if (!admitted(request, response)) return
    const socket = request.socket as Socket & { [closingAfter]?: IncomingMessage | null }
    const headers = request.headers
    if ((request.httpVersionMinor === 0 && headers["transfer-encoding"] !== undefined) ||
      (headers.upgrade !== undefined && headers.connection !== undefined && /(?:^|[\s,])upgrade(?:$|[\s,])/i.test(headers.connection))) {
      socket[closingAfter] = request
      response.shouldKeepAlive = false
    }
  })
  // Set when the app starts closing (`preClose`, right after Fastify marks its router closing and
  // before the server stops listening). A request that still arrives, on a kept-alive connection busy
  // with another one, is answered 503 by `onRequest` rather than by Fastify (`return503OnClosing`),
  // whose answer skips the hooks and has a body of its own (the health probes: see `shuttingDown`).
  let closing = false
  app.addHook("preClose", (done) => {
    closing = true
    done()
  })
  // The hooks every request passes take Fastify's callback form: an async hook costs a promise and
  // a microtask turn per request even when it has nothing to wait for.
  app.addHook("onRequest", (request, reply, done) => {
    // Parsed after a request whose answer closes the connection, or on a connection dropped: never run,
    // nor counted or logged (they go with the connection; see `closingAfter`).
    const last = (request.raw.socket as (Socket & { [closingAfter]?: IncomingMessage | null }) | null)?.[closingAfter]
    if (last !== undefined && last !== request.raw) return
    request.paydeskStage = 1
    counter.count++
    openOn(request)?.set(request, reply)
    // A request whose connection closes before its answer was sent never reaches `onResponse`. An
    // answer that is finishing (Fastify's `inject` closes before it finishes) reaches it within the
    // turn. (A response emits `close` once.)
    reply.raw.on("close", () => {
      if (request.paydeskStage !== 2) setImmediate(aborted, request, reply)
    })
    dropEmptyBodyType(request)
    // Answered here: the request goes no further (`done` is not called).
    const refused = refusedOnArrival(request)
    if (refused !== null) return void sendError(request, reply, refused.status, refused.code, refused.message, refused.field)
    // Decided on arrival, as Fastify decides its `Connection: close`: a request that arrived before
    // the close is handled even if the close starts while its span opens.
    const late = closing
    if (tracing === false) return late ? shuttingDown(request, reply, done) : done()
    openSpan(request).then(() => late ? shuttingDown(request, reply, done) : done(), done)
  })
  app.addHook("onResponse", (request, reply, done) => {
    const closed = ended(request, reply, reply.statusCode)
    if (closed === undefined) return done()
    closed.then(() => done())
  })

  app.addHook("onSend", (request, reply, payload, done) => {
    commonHeaders(request, reply)
    // An answer sent before its request's body has arrived whole (a refusal on arrival, say) closes the
    // connection: the rest of the body might be read as another request, or refused as one, and that
    // second answer read as the next request's (an outside probe); nothing parsed after it runs. Only
    // with a body: an answer sent at once to a request without one (a 404 with tracing off) comes
    // before Node has marked even a bodiless request complete (a review).
    const raw = request.raw
    if (raw.complete === false && (raw.headers["transfer-encoding"] !== undefined || (raw.headers["content-length"] ?? "0") !== "0")) {
      reply.header("connection", "close")
      const socket = raw.socket as (Socket & { [closingAfter]?: IncomingMessage | null }) | null
      if (socket !== null) socket[closingAfter] ??= raw
    }
    done(null, payload)
  })

  // No NUL character reaches a use case: PostgreSQL text cannot hold it (and nothing needs it).
  app.addHook("preValidation", (request, reply, done) => {
    // Answered by `clientError` already (its body timed out): it goes no further, and ends with its connection.
    if ((request.raw as IncomingMessage & { [refused]?: true })[refused] === true) return
    for (const [where, value] of [["path", request.params], ["query", request.query], ["body", request.body]] as const) {
      const field = StrictJson.findNul(value, "")
      if (field !== null) {
        // Answered here: the request goes no further (`done` is not called).
        sendError(request, reply, 400, "invalid_request", `${field === "" ? where : field} must not contain NUL characters (\\u0000)`, field === "" ? undefined : field)
        return
      }
    }
    done()
  })

  app.removeContentTypeParser("application/json")
  // No route takes text: Fastify's own text/plain parser would hand a JSON text sent as text/plain to
  // the operator routes, which answered 400 "invalid json body" (or took it); without it, 415 as for
  // any other type (an outside probe).
  app.removeContentTypeParser("text/plain")
  const utf8 = new TextDecoder("utf-8", { fatal: true })
  app.addContentTypeParser("application/json", { parseAs: "buffer", bodyLimit }, (_request, body, done) => {
    let text: string
    try {
      text = utf8.decode(body as Buffer)
    } catch {
      return done(Object.assign(new Error("request body is not valid UTF-8"), { statusCode: 400, code: "invalid_json_body" }))
    }
    if (text.trim().length === 0) return done(null, undefined)
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      return done(invalidBody("invalid json body"))
    }
    const problem = StrictJson.check(text)
    if (problem?._tag === "TooDeep") return done(invalidBody(`invalid json body: nested deeper than ${problem.limit} levels`))
    if (problem?._tag === "DuplicateKey") return done(invalidBody(`invalid json body: duplicate key ${JSON.stringify(problem.key)}`))
    done(null, value)
  })
  await app.register(formbody, { bodyLimit })
  // Limits are created per route (login); the plugin limits nothing by itself.
  await app.register(rateLimit, { global: false, cache: limiterKeys })

  app.setErrorHandler((error: Error & { statusCode?: number; code?: string; validation?: unknown }, request, reply) => {
    if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") return sendError(request, reply, 400, "body_too_large", `request body larger than ${bodyLimit} bytes`)
    if (error.code === "invalid_json_body") {
      // Subscription creation's body errors are the spec's exact `invalid json body` (its rule 1),
      // also for invalid UTF-8, a duplicate key or too deep a nesting.
      const plain = (request.routeOptions.config as { invalidJsonOnly?: boolean } | undefined)?.invalidJsonOnly === true
      return sendError(request, reply, 400, "invalid_json_body", plain ? "invalid json body" : error.message)
    }
    if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") return sendError(request, reply, 415, "unsupported_media_type", "Content-Type must be application/json")
    if (error.validation !== undefined) return sendError(request, reply, 400, "invalid_request", error.message)
    if (error.statusCode !== undefined && error.statusCode < 500) return sendError(request, reply, error.statusCode, "invalid_request", error.message)
    request.log.error({ err: error }, "unhandled error")
    return sendError(request, reply, 500, "internal_error", "internal error")
  })
  app.setNotFoundHandler((request, reply) => sendError(request, reply, 404, "route_not_found", `no route ${request.method} ${request.url.split("?")[0]}`))

  // An `Expect` other than 100-continue, which Node answers with a bare 417 unless told otherwise: the
  // API's error body, request id and log line, the connection closed (an outside probe).
  app.server.on("checkExpectation", (request: IncomingMessage, response: ServerResponse) => {
    // Left unanswered after the connection's close was decided (the first refused one decides it).
    if (!admitted(request, response)) return
    ;(request.socket as Socket & { [closingAfter]?: IncomingMessage | null })[closingAfter] = request
    const id = requestId()
    const message = `Expect: ${String(request.headers.expect)} is not supported (only 100-continue)`
    const body = JSON.stringify(errorResponse(417, "expectation_failed", message, id).body)
    app.log.info({ reqId: id, client: { remoteAddress: request.socket.remoteAddress, remotePort: request.socket.remotePort }, res: { statusCode: 417 } }, "request refused")
    response.writeHead(417, {
      "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body),
      "x-request-id": id, "x-content-type-options": "nosniff", "cache-control": "no-store", connection: "close"
    })
    response.end(body)
  })

  // No `connect` listener: Node closes a `CONNECT` (a proxy's method) without an answer. A listener
  // would take the connection from Node's HTTP server first, and requests pipelined before the CONNECT
  // would lose their answers and never end (`request aborted` and the in-flight count depend on Node's
  // close of the connection): tried in stop 55, found by a review and an outside probe, removed.

  await OpenApi.registerDocs(app, undefined, ctx.publicUrl)
  await HostRoutes.register(app, options.host ?? {}, options.adminToken)
  await app.register(async (api) => MerchantRoutes.register(api, ctx, options.loginLimits, options.eventSendsPerMinute), { prefix: "/api/v1" })
  await app.register(async (pages) => PublicRoutes.register(pages, ctx), { prefix: "/public" })
  if (options.adminToken !== undefined) {
    const adminToken = options.adminToken
    await app.register(async (admin) => AdminRoutes.register(admin, ctx, { token: adminToken, hooks: options.operator ?? {} }), { prefix: "/admin/v1" })
  }
  return app
}
