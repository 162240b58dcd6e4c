/**
 * The Paydesk core in a host of its own, with adapters of its own: no Fastify, no reference
 * server. The host provides every port the core asks for (`Services`): the in-memory store of
 * `@paydesk/testkit` for persistence (swap in `PgStore.layer(url)` from `@paydesk/sql-pg`), and
 * its own `CallbackTransport` (global `fetch`) and `RateSource` (a fixed rate) written here, plus
 * crypto adapters and the testkit's bank emulators for the ports a real bank integration fills.
 *
 * Everything the service does is a use case: `Operator.createAccount`, `Payments.create`,
 * `Payments.simulate`, `Work.drain` (which signs and sends the callbacks through our transport).
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import { CallbackTransport, Config, HmacTokenIssuer, PaydeskConfig, RateSource, TransportFailure } from "@paydesk/core"
import type { Services } from "@paydesk/core"
import {
  AcquirerEmulator,
  AesGcmSecretCipher,
  layerEntropyCrypto,
  layerMemoryStore,
  PayoutNetworkEmulator,
  Pbkdf2PasswordHasher
} from "@paydesk/testkit"

/** Our `CallbackTransport`: a `fetch` POST with the core's timeout, reading at most 1 KiB of the answer. */
export const fetchTransport = Layer.succeed(CallbackTransport)({
  post: (request) =>
    Effect.tryPromise({
      try: async () => {
        const started = Date.now()
        const response = await fetch(request.url, {
          method: "POST",
          headers: request.headers,
          body: request.body,
          signal: AbortSignal.timeout(request.timeoutMs)
        })
        const body = (await response.text()).slice(0, 1024)
        return { statusCode: response.status, latencyMs: Date.now() - started, body }
      },
      catch: (error) => new TransportFailure({ message: String((error as Error)?.message ?? error), latencyMs: 0 })
    })
})

/** Our `RateSource`: one fixed USDT/RUB rate (micro-RUB per USDT). */
export const fixedRate = (rate: bigint) =>
  Layer.succeed(RateSource)({ current: () => Effect.succeed({ rate, updatedAt: Date.now() }) })

/** Every port of the core, from our adapters and the testkit's; `allowPrivateCallbacks` for local receivers. */
export const layer = (options: { readonly allowPrivateCallbacks?: boolean } = {}): Layer.Layer<Services> => Layer.mergeAll(
  layerMemoryStore,
  layerEntropyCrypto,
  Pbkdf2PasswordHasher.layer(),
  HmacTokenIssuer.layer("embed-core example: use a 32-byte secret from your configuration"),
  AesGcmSecretCipher.layer("embed-core example: use your own key management"),
  fetchTransport,
  fixedRate(95_000_000n),
  AcquirerEmulator.layer,
  PayoutNetworkEmulator.layer,
  Layer.succeed(PaydeskConfig)({ ...Config.defaults, allowPrivateCallbacks: options.allowPrivateCallbacks ?? false })
)

/** A runtime of the host: run use cases with `runtime.runPromise(effect)`; `dispose()` at the end. */
export const makeRuntime = (options: { readonly allowPrivateCallbacks?: boolean } = {}) => ManagedRuntime.make(layer(options))
