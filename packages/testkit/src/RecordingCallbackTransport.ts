/**
 * A `CallbackTransport` that records every request and answers as a test programs it.
 *
 * By default every POST is answered 200 with zero latency. A test can queue failures for the next
 * requests (`failNext`), fail everything (`failAlways`), program one URL (`respondTo`) and go back
 * to the default (`succeed`). Precedence: the queue, then the URL's answer, then `failAlways`.
 * `"timeout"` fails with `TransportFailure` whose latency is the request's `timeoutMs` (no time
 * passes, so it works under `TestClock`); `"refused"` fails with latency 0.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { CallbackTransport, TransportFailure } from "@paydesk/core"

/** How the transport answers: an HTTP status, or no answer at all. */
export type Behaviour = { readonly status: number } | "timeout" | "refused"

/** One recorded POST and what it got. */
export interface RecordedRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly timeoutMs: number
  /** `Clock.currentTimeMillis` when it was sent. */
  readonly at: number
  readonly answer: Behaviour
}

/** Controls and log of the recording transport. */
export class RecordingCallbackTransport extends Context.Service<RecordingCallbackTransport, {
  /** Every request so far, oldest first. */
  readonly requests: ReadonlyArray<RecordedRequest>
  /** Answers the next `n` requests with `how` (queued after earlier `failNext` calls). */
  failNext(n: number, how: Behaviour): Effect.Effect<void>
  /** Answers every request with `how` (after the queue and per-URL answers). */
  failAlways(how: Behaviour): Effect.Effect<void>
  /** Answers requests to `url` with `how`; `null` removes the rule. */
  respondTo(url: string, how: Behaviour | null): Effect.Effect<void>
  /** Back to answering 200: clears the queue, the per-URL rules and `failAlways`. */
  succeed(): Effect.Effect<void>
  /** Forgets the recorded requests. */
  clearRequests(): Effect.Effect<void>
  /** The port's `post`. */
  readonly post: CallbackTransport["Service"]["post"]
}>()("@paydesk/testkit/RecordingCallbackTransport") {}

/** Builds a recording transport that answers 200 until programmed otherwise. */
export const make = (): RecordingCallbackTransport["Service"] => {
  const log: Array<RecordedRequest> = []
  const queue: Array<Behaviour> = []
  const perUrl = new Map<string, Behaviour>()
  let always: Behaviour | null = null
  return RecordingCallbackTransport.of({
    get requests() {
      return [...log]
    },
    failNext: (n, how) => Effect.sync(() => {
      for (let i = 0; i < n; i++) queue.push(how)
    }),
    failAlways: (how) => Effect.sync(() => void (always = how)),
    respondTo: (url, how) => Effect.sync(() => void (how === null ? perUrl.delete(url) : perUrl.set(url, how))),
    succeed: () =>
      Effect.sync(() => {
        queue.length = 0
        perUrl.clear()
        always = null
      }),
    clearRequests: () => Effect.sync(() => void (log.length = 0)),
    post: (request) =>
      Effect.gen(function*() {
        const at = yield* Clock.currentTimeMillis
        const answer: Behaviour = queue.shift() ?? perUrl.get(request.url) ?? always ?? { status: 200 }
        log.push({
          url: request.url,
          headers: { ...request.headers },
          body: request.body,
          timeoutMs: request.timeoutMs,
          at,
          answer
        })
        if (answer === "timeout") {
          return yield* new TransportFailure({
            message: `no answer within ${request.timeoutMs} ms`,
            latencyMs: request.timeoutMs
          })
        }
        if (answer === "refused") return yield* new TransportFailure({ message: "connection refused", latencyMs: 0 })
        return { statusCode: answer.status, latencyMs: 0 }
      })
  })
}

/** `RecordingCallbackTransport` and the `CallbackTransport` port on it; fresh state per build. */
export const layer: Layer.Layer<RecordingCallbackTransport | CallbackTransport> = Layer.effect(
  CallbackTransport,
  Effect.map(RecordingCallbackTransport, (t) => CallbackTransport.of({ post: t.post }))
).pipe(Layer.provideMerge(Layer.sync(RecordingCallbackTransport, make)))
