/**
 * The Paydesk core in a host of its own, with adapters of its own: no Fastify, no reference
 * server. The host provides every port the core asks for (`Services`): the in-memory store of
 * `@paydesk/testkit` for persistence (swap in `PgStore.layer(url)` from `@paydesk/sql-pg`), and
 * its own `CallbackTransport` (global `fetch`), `RateSource` (a fixed rate) and `Keccak256` (from
 * `@noble/hashes`; Ethereum payout addresses' checksums) written here, plus crypto adapters and the
 * testkit's bank emulators for the ports a real bank integration fills.
 *
 * The callback transport is the host's own, and so is its part of the SSRF defence: callback URLs are
 * merchant-controlled, and `CallbackUrl.check` (at registration) checks only the URL's text. A
 * transport must not follow redirects (a receiver's 3xx would send the signed POST on to any address,
 * the host's own network included, and store that address's answer) and must check every address a
 * name resolves to where it connects. `fetchTransport` below does the first, bounds the answer it
 * reads and the time it waits; it does NOT check resolved addresses (global `fetch` offers no hook
 * for that). In production use the reference server's transport as the model
 * (`packages/server/src/HttpCallbackTransport.ts`: undici with a checking `lookup`), or your own
 * egress proxy that refuses private destinations.
 *
 * Everything the service does is a use case: `Operator.createAccount`, `Payments.create`,
 * `Payments.simulate`, `Work.drain` (which signs and sends the callbacks through our transport).
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import { keccak_256 } from "@noble/hashes/sha3.js"
import { Callback, CallbackTransport, Config, HmacTokenIssuer, Keccak256, RateSource, TransportFailure } from "@paydesk/core"
import type { Services } from "@paydesk/core"
import {
  AcquirerEmulator,
  AesGcmSecretCipher,
  layerEntropyCrypto,
  layerMemoryStore,
  PayoutNetworkEmulator,
  Pbkdf2PasswordHasher
} from "@paydesk/testkit"

/**
 * Reads at most `limit` bytes of an answer's body, then stops reading (the rest is never fetched
 * into memory: a receiver answering gigabytes costs nothing), as text.
 */
const readExcerpt = async (response: Response, limit: number): Promise<string> => {
  if (response.body === null) return ""
  const reader = response.body.getReader()
  const chunks: Array<Uint8Array> = []
  let kept = 0
  try {
    while (kept < limit) {
      const { done, value } = await reader.read()
      if (done) break
      const part = value.subarray(0, limit - kept)
      chunks.push(part)
      kept += part.length
    }
  } catch {
    // Cut off (timeout, reset): what arrived counts, with the answer's status.
  } finally {
    void reader.cancel().catch(() => undefined)
  }
  return Buffer.concat(chunks).toString("utf8")
}

/**
 * Our `CallbackTransport`: a `fetch` POST that follows no redirect (a 3xx is the answer: the core
 * counts it as a failed attempt, `HTTP 307`, and retries later, as for any answer other than 2xx),
 * gives up after the core's timeout (`request.timeoutMs`, the body's reading included), and keeps the
 * first `Callback.responseExcerptBytes` of the answer. An interrupted post (the runtime disposed of
 * during a run) is cancelled: `fetch` gets the signal `Effect.tryPromise` aborts then. Destinations
 * are NOT checked here (see the module's comment): a production host checks resolved addresses as the
 * reference server does.
 */
export const fetchTransport = Layer.succeed(CallbackTransport)({
  post: (request) =>
    Effect.tryPromise({
      try: async (interrupted) => {
        const started = Date.now()
        const url = new URL(request.url)
        // `fetch` also reads data:, blob: and file: URLs; a callback goes over HTTP only.
        if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`unsupported scheme ${url.protocol}`)
        const response = await fetch(url, {
          method: "POST",
          headers: request.headers,
          body: request.body,
          redirect: "manual",
          signal: AbortSignal.any([interrupted, AbortSignal.timeout(request.timeoutMs)])
        })
        const body = await readExcerpt(response, Callback.responseExcerptBytes)
        return { statusCode: response.status, latencyMs: Date.now() - started, body }
      },
      catch: (error) => new TransportFailure({ message: String((error as Error)?.message ?? error), latencyMs: 0 })
    })
})

/** Our `RateSource`: one fixed USDT/RUB rate (micro-RUB per USDT). */
export const fixedRate = (rate: bigint) =>
  Layer.succeed(RateSource)({ current: () => Effect.succeed({ rate, updatedAt: Date.now() }) })

/** Our `Keccak256`: Node's crypto has none; `@noble/hashes`' (audited, no dependencies) checks Ethereum payout addresses. */
export const nobleKeccak = Layer.succeed(Keccak256)({ hash: (bytes) => keccak_256(bytes) })

/**
 * Every port of the core, from our adapters and the testkit's; `allowPrivateCallbacks` for local
 * receivers. The settings are checked when the layer is built: one out of range fails the build with
 * `Config.InvalidSettings` (made a defect here, so that the runtime's first run rejects with it).
 */
export const layer = (options: { readonly allowPrivateCallbacks?: boolean } = {}): Layer.Layer<Services> => Layer.mergeAll(
  layerMemoryStore,
  layerEntropyCrypto,
  Pbkdf2PasswordHasher.layer(),
  HmacTokenIssuer.layer("embed-core example: use a 32-byte secret from your configuration"),
  AesGcmSecretCipher.layer("embed-core example: use your own key management"),
  fetchTransport,
  fixedRate(95_000_000n),
  nobleKeccak,
  AcquirerEmulator.layer,
  PayoutNetworkEmulator.layer,
  Layer.orDie(Config.layer({ allowPrivateCallbacks: options.allowPrivateCallbacks ?? false }))
)

/** A runtime of the host: run use cases with `runtime.runPromise(effect)`; `dispose()` at the end. */
export const makeRuntime = (options: { readonly allowPrivateCallbacks?: boolean } = {}) => ManagedRuntime.make(layer(options))
