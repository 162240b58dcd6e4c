/**
 * `CallbackTransport` over undici's keep-alive pools (http and https): POSTs the exact body bytes
 * with the given headers to public hosts only, gives up after the timeout, follows no redirect, and
 * keeps the first `Callback.responseExcerptBytes` of the answer. The rest of the body is read and
 * dropped up to `reuseBytes` in all, within the send's timeout, so that the connection goes back to
 * the pool (a receiver answering with a page of a few KiB costs no new handshake per callback); a
 * longer answer (as announced, or as read), or one not finished within the timeout, has its
 * connection dropped. The send ends when its body does, so a pass's bound on sends in flight
 * (`Callbacks.concurrency`) bounds the connections and the reading too.
 *
 * Destinations are checked with the core's `IpAddress` classifier when the request is sent: an IP
 * literal before connecting, a host name inside the socket's `lookup` (the pool's connector hands
 * it to `net.connect` / `tls.connect`), which resolves every address of the name, refuses the name
 * when any of them is not allowed, and hands the checked address to the socket. The connection
 * therefore goes to the address that was checked (no DNS rebinding between the check and the
 * connect), and a pooled connection stays with it. Loopback, private and carrier-grade NAT
 * addresses are allowed only when `PaydeskConfig.allowPrivateCallbacks` is on
 * (`PAYDESK_CALLBACK_ALLOW_PRIVATE=1`); the two settings use separate pools.
 *
 * A send that gets no answer fails with the real cause as its message (`describeFailure`): the
 * system error code and text (`connect ECONNREFUSED 127.0.0.1:9`), a connection closed before the
 * answer, the TLS error (`ERR_SSL_WRONG_VERSION_NUMBER: TLS: wrong version number`,
 * `DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate`), `timeout: no answer within 10000 ms`, or
 * the refused destination (for a host name without the address it resolved to, which the server's
 * log gets as a warning: `DestinationRefused`); the delivery log stores it with the attempt.
 */
import { Effect, Layer } from "effect"
import { Callback, CallbackTransport, IpAddress, PaydeskConfig, TransportFailure } from "@paydesk/core"
import * as FailureLog from "./FailureLog.js"
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns"
import type { Dispatcher } from "undici"
// undici's agent alone: the package's index also loads fetch, WebSocket, EventSource, its caches and
// mocks, about 2 MB of an idle server's RSS (docs/performance.md, thirty-eighth round). The path is
// undici's own file (8.13.1, pinned exactly); `test/Bundle.test.ts` checks it is undici's `Agent`.
import Agent from "undici/lib/dispatcher/agent.js"

/**
 * A destination the deployment does not allow. Its `message` is what the merchant sees (the
 * attempt's error in the events API and the dashboard): for a host name, only that it resolves to an
 * address callbacks may not go to, so that a merchant cannot map the names of the server's network
 * to their private addresses one callback at a time. `detail` names the address and its kind, for
 * the operator's log.
 */
export class DestinationRefused extends Error {
  readonly code = "EPAYDESK_DESTINATION_REFUSED"
  constructor(message: string, readonly detail: string) {
    super(message)
  }
}

const refusal = (host: string, kind: IpAddress.Kind, address: string) =>
  host === address
    ? new DestinationRefused(`callback destination refused: ${address} is ${IpAddress.withArticle(kind)} address`, `${address} is ${IpAddress.withArticle(kind)} address`)
    : new DestinationRefused(
      `callback destination refused: ${host} resolves to an address callbacks may not go to`,
      `${host} resolves to ${IpAddress.withArticle(kind)} address (${address})`
    )

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | Array<LookupAddress>, family?: number) => void

/** Resolves every address of a name (Node's `dns.lookup` with `all: true` by default; tests pass their own). */
export type Resolver = (hostname: string, done: (error: NodeJS.ErrnoException | null, addresses: ReadonlyArray<LookupAddress>) => void) => void

const systemResolver: Resolver = (hostname, done) =>
  dnsLookup(hostname, { all: true }, (error, addresses) => done(error, error === null ? addresses : []))

/**
 * A socket `lookup` that resolves all addresses of `hostname`, fails when any of them is not allowed,
 * and answers the checked addresses (all of them, or the first, as the socket asks).
 */
export const guardedLookup = (allowPrivate: boolean, resolve: Resolver = systemResolver) => (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
  resolve(hostname, (error, addresses) => {
    if (error !== null) return callback(error, "")
    const list = addresses.filter((a) => options.family === undefined || options.family === 0 || a.family === options.family)
    if (list.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "")
    for (const { address } of list) {
      const kind = IpAddress.classify(address) ?? "reserved"
      if (!IpAddress.isAllowed(kind, allowPrivate)) return callback(refusal(hostname, kind, address), "")
    }
    if (options.all === true) return callback(null, [...list])
    return callback(null, list[0]!.address, list[0]!.family)
  })
}

interface Answer {
  readonly statusCode: number
  readonly body: string
}

/**
 * An undici pool whose sockets resolve names through `guardedLookup`: each connection goes to a
 * checked address. HTTP/1.1 only (undici would offer h2 over TLS), and as many connections per
 * origin as requests in flight, as `node:http`'s agent did: a pass bounds its sends
 * (`Callbacks.concurrency`), and a request queued behind a pool limit would spend its answer time
 * unsent. A connection attempt (the lookup and the TLS handshake included) gives up after the
 * callback's answer time, `Callback.timeoutMs` (undici's default is the same 10 s, but the two
 * belong together): a send that ran out of time while its connection was being made (see `send`)
 * leaves no attempt running much beyond it.
 */
const poolOf = (allowPrivate: boolean, resolver: Resolver) =>
  new Agent({ allowH2: false, connect: { lookup: guardedLookup(allowPrivate, resolver), timeout: Callback.timeoutMs } })

/** The keep-alive pools of the system resolver (an `Agent` opens no connection until asked). */
const pools = { strict: poolOf(false, systemResolver), private: poolOf(true, systemResolver) }

/** Text of a failed send: the error's code (when its message does not already carry it) and message, the causes of an aggregate. */
export const describeFailure = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error)
  if (error instanceof DestinationRefused) return error.message
  const code = (error as NodeJS.ErrnoException).code
  // undici's name for a connection the receiver closed before its answer (a reset is `read ECONNRESET`).
  if (code === "UND_ERR_SOCKET") return `connection closed before an answer: ${error.message}`
  // A TLS failure's message is a dump of OpenSSL's internals; its reason says what went wrong.
  const openssl = /:error:[0-9A-Fa-f]+:[^:]*routines:[^:]*:([^:]+):/.exec(error.message)
  const parts = error instanceof AggregateError && error.errors.length > 0
    ? [...new Set(error.errors.map(describeFailure))].join("; ")
    : openssl !== null
    ? `TLS: ${openssl[1]}`
    // Node's advice to its own user ("if the root CA is installed locally, try running Node.js
    // with --use-system-ca") is not the receiver's problem.
    : error.message.replace(/; if the root CA is installed locally.*$/s, "").trim()
  if (code === undefined || code === "" || parts.includes(code)) return parts === "" ? error.name : parts
  return parts === "" ? code : `${code}: ${parts}`
}

/**
 * How much of an answer's body is read at most (about: a read past it is the last one) so that its
 * connection is kept: a longer answer is not read further, and its connection is dropped.
 */
export const reuseBytes = 64 * 1024

/**
 * One POST over undici's keep-alive pool; resolves with the status and the first
 * `Callback.responseExcerptBytes` of the body once the body is done, or the time ran out. The body
 * is read to its end (the connection then goes back to the pool), cut off (timeout, reset: what
 * arrived is kept, and it counts by its status), or stopped with its connection dropped once it is
 * longer than `reuseBytes` (as announced by its content-length, when it gave one: then only the
 * excerpt is read). Only the excerpt's bytes are held. A send that gets no status line fails: with
 * `timeout: no answer within … ms` when the time ran out, else with undici's error. A custom
 * `resolver` (tests) gets a pool of its own, closed after the request, so its connections are its own.
 *
 * Undici's `dispatch` with a handler of its own, not `request`: no body stream, abort signal or
 * promise per answer (`./run pnpm bench:client`: 20–30 % less CPU per send on loopback). One timer
 * covers the whole exchange, the body included. A request still waiting for its connection when it
 * fires ends the send then; undici offers a handler no way to take it out of its queue, so its
 * connection attempt goes on until it is made (the request is then aborted at once, and the
 * connection dropped) or gives up after the pool's connect timeout, the same `Callback.timeoutMs`
 * (`poolOf`). (`request` with a signal cancelled the attempt at once.)
 */
export const send = (
  request: { readonly url: string; readonly headers: Readonly<Record<string, string>>; readonly body: string; readonly timeoutMs: number },
  allowPrivate: boolean,
  resolver: Resolver = systemResolver
): Promise<Answer> => {
  let url: URL
  try {
    url = new URL(request.url)
  } catch {
    return Promise.reject(new Error("callback_url is not a URL"))
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return Promise.reject(new Error(`unsupported scheme ${url.protocol}`))
  const literal = IpAddress.classify(url.hostname)
  if (literal !== null && !IpAddress.isAllowed(literal, allowPrivate)) return Promise.reject(refusal(url.hostname, literal, url.hostname))
  const payload = Buffer.from(request.body, "utf8")
  const own = resolver === systemResolver ? undefined : poolOf(allowPrivate, resolver)
  return new Promise<Answer>((resolve, reject) => {
    // The request's controller once it has its connection.
    let running: Dispatcher.DispatchController | null = null
    let settled = false
    // 0 until the answer's status line (an informational 1xx is not the answer).
    let statusCode = 0
    let announced = 0
    const chunks: Array<Buffer> = []
    let kept = 0
    let size = 0
    const settle = (error: unknown) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (own !== undefined) void own.destroy().catch(() => undefined)
      if (statusCode !== 0) resolve({ statusCode, body: Buffer.concat(chunks, kept).toString("utf8") })
      else reject(error)
    }
    const timer = setTimeout(() => {
      const timeout = new Error(`timeout: no answer within ${request.timeoutMs} ms`)
      settle(timeout)
      running?.abort(timeout)
    }, request.timeoutMs)
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: (started) => {
        // The send ended while the request waited for its connection.
        if (settled) return started.abort(new Error("callback send already ended"))
        running = started
      },
      onResponseStart: (_controller, status, headers) => {
        if (status < 200) return
        statusCode = status
        const length = Number(headers["content-length"] ?? Number.NaN)
        announced = Number.isFinite(length) ? length : 0
      },
      onResponseData: (controller, chunk) => {
        if (settled || statusCode === 0) return
        size += chunk.length
        if (kept < Callback.responseExcerptBytes) {
          // A copy of the excerpt's part: a view would hold the whole read.
          const part = Buffer.from(chunk.subarray(0, Callback.responseExcerptBytes - kept))
          chunks.push(part)
          kept += part.length
        }
        // Too long to be worth the connection: stop reading and drop it, whatever the receiver still sends.
        if (size > reuseBytes || (announced > reuseBytes && kept >= Callback.responseExcerptBytes)) {
          settle(undefined)
          controller.abort(new Error("answer longer than the connection is worth"))
        }
      },
      onResponseEnd: () => settle(undefined),
      onResponseError: (_controller, error) => settle(error)
    }
    ;(own ?? (allowPrivate ? pools.private : pools.strict)).dispatch({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: "POST",
      headers: { ...request.headers, "content-length": String(payload.length) },
      body: payload
    }, handler)
  })
}

/**
 * The transport; whether private destinations are allowed is read from `PaydeskConfig` per request.
 * A refused destination's warning (it names the address, which the attempt's error does not) is
 * logged as failed attempts are (`FailureLog`): the first to a host, then at most one a minute saying
 * how many were left out. It was one per attempt: a merchant's callback URL on a private address wrote
 * a line for each of its callbacks (an outside probe: 76 lines in a second for 50 payments).
 */
export const layer: Layer.Layer<CallbackTransport> = Layer.sync(CallbackTransport)(() => {
  const refusals = FailureLog.make()
  const refused = (host: string, error: DestinationRefused) =>
    FailureLog.logNoted(refusals, host, `callback destination refused: ${error.detail}`, (line) => Effect.logWarning(line), { host })
  return CallbackTransport.of({ post: (request) => post(request, refused) })
})

/** One attempt; `refused` logs a destination refused. */
const post = (request: Parameters<CallbackTransport["Service"]["post"]>[0], refused: (host: string, error: DestinationRefused) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const { allowPrivateCallbacks } = yield* PaydeskConfig
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    return yield* Effect.tryPromise({
      try: async () => {
        const answer = await send(request, allowPrivateCallbacks)
        return { statusCode: answer.statusCode, latencyMs: elapsed(), body: answer.body }
      },
      catch: (error) => error
    }).pipe(
      Effect.tapError((error) => error instanceof DestinationRefused ? refused(URL.parse(request.url)?.host ?? "", error) : Effect.void),
      Effect.mapError((error) => new TransportFailure({ message: describeFailure(error), latencyMs: elapsed() }))
    )
  })
