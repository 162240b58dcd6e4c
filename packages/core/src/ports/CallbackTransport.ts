/**
 * Port: the HTTP POST of a callback.
 *
 * Contract: `post` sends `body` byte for byte with `headers` to `url` and gives up after
 * `timeoutMs`. It succeeds with the status code of any answer (2xx or not), the latency and at most
 * `Callback.responseExcerptBytes` of the answer's body as text, once the body is done (read to its
 * end, cut off, or stopped past a bounded length: what it reads beyond the excerpt, to keep a
 * connection for the next send, is dropped); it fails with `TransportFailure` when no answer came
 * (connection error, timeout, or a destination the deployment does not allow).
 */
import { Context, type Effect, Schema } from "effect"

/** No HTTP answer: connection refused, DNS failure, timeout. */
export class TransportFailure extends Schema.TaggedError<TransportFailure>()("TransportFailure", {
  message: Schema.String,
  latencyMs: Schema.Number
}) {}

export class CallbackTransport extends Context.Service<CallbackTransport, {
  post(request: {
    readonly url: string
    readonly headers: Readonly<Record<string, string>>
    readonly body: string
    readonly timeoutMs: number
  }): Effect.Effect<{ readonly statusCode: number; readonly latencyMs: number; readonly body?: string | undefined }, TransportFailure>
}>()("@paydesk/core/CallbackTransport") {}
