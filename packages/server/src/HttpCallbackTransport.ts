/**
 * `CallbackTransport` over Node's fetch: POSTs the exact body bytes with the given headers,
 * gives up after the timeout, and reports the status of any answer.
 */
import { Effect, Layer } from "effect"
import { CallbackTransport, TransportFailure } from "@paydesk/core"

/** The transport. */
export const layer: Layer.Layer<CallbackTransport> = Layer.succeed(CallbackTransport)(CallbackTransport.of({
  post: (request) => {
    const started = performance.now()
    const elapsed = () => Math.round(performance.now() - started)
    return Effect.tryPromise({
      try: async () => {
        const response = await fetch(request.url, {
          method: "POST",
          headers: request.headers,
          body: request.body,
          redirect: "manual",
          signal: AbortSignal.timeout(request.timeoutMs)
        })
        await response.arrayBuffer().catch(() => undefined)
        return { statusCode: response.status, latencyMs: elapsed() }
      },
      catch: (error) =>
        new TransportFailure({
          message: error instanceof Error && error.name === "TimeoutError" ? `no answer within ${request.timeoutMs} ms` : String((error as Error)?.message ?? error),
          latencyMs: elapsed()
        })
    })
  }
}))
