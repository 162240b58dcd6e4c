/**
 * The local development loop. `listen` reads the terminal's events feed (`GET /api/v1/events/feed`,
 * API key) and forwards each event to a local URL with its exact body and its signed headers,
 * as a delivery would send it (like `stripe listen`): the terminal's `callback_url` is not
 * touched, and the server need not reach the developer's machine. `trigger` makes an event
 * happen: a sandbox payment, simulated by API key. The `paydesk listen` and `paydesk trigger`
 * commands call these.
 *
 * Events committed out of order (a long transaction) are caught by re-reading a short trailing
 * window (`settleMs`) and forwarding only events not forwarded yet.
 *
 * A read the server does not answer (it restarts, or is down) or answers with a 5xx or 429 is tried
 * again from the same cursor, after 1 s, then twice as long each time up to 30 s, for as long as it
 * takes (`onRetry` says so each time): nothing that happened meanwhile is skipped. A `feed_` cursor
 * a server cannot open (an older version's process, beside newer ones during a rolling upgrade) is
 * read again by the id of its event when the listener has one, else read again as a failed read for
 * `refusedCursorGraceMs` (5 minutes); then, as for any other refused cursor, the listener stops with
 * `ListenerCursorLost`. Any other error ends it too.
 */
import { Paydesk, type ClientOptions } from "./Client.js"
import { ListenerCursorLost, PaydeskApiError, PaydeskConnectionError } from "./Errors.js"
import { attemptSignal, sleep } from "./Http.js"
import type { EventFeed, FeedEvent, Payment, SimulateOutcome } from "./Types.js"

/** Options of `listen`. */
export interface ListenOptions extends ClientOptions {
  /** Where to POST each event (`http://localhost:3000/webhooks`). */
  readonly forwardTo: string
  /** `sandbox` events (default), `prod` ones or `all`. */
  readonly environment?: "sandbox" | "prod" | "all"
  /** Poll interval in ms (default 1000). */
  readonly intervalMs?: number
  /** How long a read stays open to events committed late, in ms (default 5000). */
  readonly settleMs?: number
  /** Stops listening. */
  readonly signal?: AbortSignal
  /** Called after each forward with the local answer's status (or the error); not for one the stop cut short. */
  readonly onForward?: (event: FeedEvent, result: { readonly status: number } | { readonly error: string }) => void
  /** Called once the listener is ready (its start cursor read). */
  readonly onReady?: () => void
  /** Called when a read of the feed failed and will be tried again after `delayMs`. */
  readonly onRetry?: (error: Error, delayMs: number) => void
  /**
   * The first wait before reading again after a read failed (after the client's own retries,
   * `maxRetries`), in ms (default 1000; doubled each time up to `maxReconnectDelayMs`).
   */
  readonly reconnectDelayMs?: number
  /** The longest wait between failed reads, in ms (default 30000). */
  readonly maxReconnectDelayMs?: number
  /**
   * How long a `feed_` cursor refused with no event id to read by instead is read again (as a failed
   * read: an older process may have answered, beside newer ones in a rolling upgrade) before the
   * listener stops with `ListenerCursorLost`, in ms (default 300000).
   */
  readonly refusedCursorGraceMs?: number
}

/** A `feed_` cursor refused while the listener has no event id to read by: read again for a while. */
class CursorRefused extends Error {
  override readonly name = "CursorRefused"
}

/** Whether a failed read of the feed is worth trying again: the server did not answer, or was failing or busy for now. */
const isTransient = (error: unknown): error is Error =>
  error instanceof PaydeskConnectionError || error instanceof CursorRefused ||
  (error instanceof PaydeskApiError && (error.status >= 500 || error.status === 429))

/** Forwards one event with its headers and exact body: 10 s at most, less when the listener is stopped. */
const forward = async (
  event: FeedEvent,
  url: string,
  fetcher: typeof fetch,
  stop: AbortSignal | undefined
): Promise<{ readonly status: number } | { readonly error: string }> => {
  const attempt = attemptSignal(10_000, stop)
  try {
    // Not followed, as the server's deliveries are not: a receiver answering a redirect fails there
    // (an outside probe: followed, the listener said 200 and sent the signed headers to the redirect's target).
    const response = await fetcher(url, { method: "POST", headers: { ...event.headers }, body: event.body, signal: attempt.signal, redirect: "manual" })
    await response.body?.cancel().catch(() => undefined)
    return { status: response.status }
  } catch (error) {
    return { error: (error as Error)?.message ?? String(error) }
  } finally {
    attempt.end()
  }
}

/** The feed's answer to a cursor it does not know (400 on `after`). */
const isLostCursor = (error: unknown): boolean => error instanceof PaydeskApiError && error.status === 400 && error.field === "after"


/** Forwards the terminal's events from now on until `signal` aborts; resolves then with how many were forwarded. */
export const listen = async (options: ListenOptions): Promise<number> => {
  const client = new Paydesk(options)
  const environment = options.environment ?? "sandbox"
  const interval = options.intervalMs ?? 1000
  const settle = options.settleMs ?? 5000
  const fetcher = options.fetch ?? globalThis.fetch
  const firstDelay = Math.max(1, options.reconnectDelayMs ?? 1000)
  const maxDelay = Math.max(firstDelay, options.maxReconnectDelayMs ?? 30_000)
  let delay = firstDelay
  const stopped = () => options.signal?.aborted === true
  /** `read` until it succeeds or fails for good; null when the listener is stopped meanwhile. */
  const persistently = async <A>(read: () => Promise<A>): Promise<A | null> => {
    for (;;) {
      try {
        const result = await read()
        delay = firstDelay
        return result
      } catch (error) {
        // Stopped meanwhile (the read's own abort, or a failure while the client retried): no error.
        if (stopped()) return null
        if (!isTransient(error)) throw error
        // A 429's Retry-After, when longer.
        const wait = Math.max(delay, error instanceof PaydeskApiError ? Math.min(error.retryAfterMs ?? 0, maxDelay) : 0)
        options.onRetry?.(error, wait)
        await sleep(wait, options.signal)
        delay = Math.min(delay * 2, maxDelay)
        if (stopped()) return null
      }
    }
  }
  // The settled cursor: every event up to it has been read and forwarded.
  const signal = options.signal === undefined ? {} : { signal: options.signal }
  const start = await persistently(() => client.events.feed({ after: "latest", environment }, signal))
  if (start === null) return 0
  let settled = start.next_after
  // The id of the event at `settled`: read from it when a server cannot open the cursor, an older one
  // beside a newer during a rolling upgrade (it knows event ids, not `feed_` cursors).
  let settledId: string | null = null
  const grace = options.refusedCursorGraceMs ?? 300_000
  // Since when the settled cursor has been refused with no id to read by (null: it is not).
  let refusedSince: number | null = null
  options.onReady?.()
  const firstSeen = new Map<string, number>()
  let forwarded = 0
  /**
   * One page of the feed after `cursor`. A `feed_` cursor refused is read by `afterId`, the id of its
   * event, when there is one; else it is refused for `grace` as a failed read, then for good.
   */
  const readPage = async (cursor: string | null, afterId: string | null): Promise<EventFeed> => {
    const page = (after?: string) => client.events.feed({ ...(after === undefined ? {} : { after }), limit: 100, environment }, signal)
    if (cursor === null) return page()
    try {
      return await page(cursor)
    } catch (error) {
      if (!isLostCursor(error)) throw error
      if (cursor.startsWith("feed_") && afterId !== null) {
        return await page(afterId).catch((byId: unknown) => {
          throw isLostCursor(byId) ? new ListenerCursorLost(cursor, { cause: byId }) : byId
        })
      }
      // No id to read by (no event settled yet): an older process may have answered; read again a while.
      refusedSince ??= Date.now()
      if (cursor.startsWith("feed_") && Date.now() - refusedSince < grace) {
        throw new CursorRefused(`the server refused the feed cursor (an older version's process?): ${(error as Error).message}`, { cause: error })
      }
      throw new ListenerCursorLost(cursor, { cause: error })
    }
  }
  while (options.signal?.aborted !== true) {
    const result = await persistently(async () => {
      let [after, afterId] = [settled, settledId]
      const events: Array<FeedEvent> = []
      let first: string | null | undefined
      for (;;) {
        const answer = await readPage(after, afterId)
        refusedSince = null
        first ??= answer.next_after
        events.push(...answer.items)
        if (answer.items.length < 100) return { events, first }
        after = answer.next_after
        afterId = answer.items.at(-1)!.id
      }
    })
    if (result === null) break
    const read = result.events
    // An event id the listener stands on (an older process answered it) becomes the newer processes'
    // cursor of that place when one answers with nothing new: a cursor outlives its event, an id does not.
    if (read.length === 0 && settled !== null && !settled.startsWith("feed_") && result.first?.startsWith("feed_") === true) settled = result.first
    const now = Date.now()
    for (const event of read) {
      // Stopped: the rest is not forwarded (a restarted listener starts from `latest`).
      if (stopped()) break
      if (firstSeen.has(event.id)) continue
      firstSeen.set(event.id, now)
      // Forwarded first, then reported: `onForward?.(…, await forward(…))` would skip the forward
      // itself when no `onForward` is given.
      const outcome = await forward(event, options.forwardTo, fetcher, options.signal)
      // A forward the stop cut short is neither reported nor counted: it did not fail, it was left.
      if (stopped() && "error" in outcome) break
      options.onForward?.(event, outcome)
      forwarded++
    }
    if (stopped()) break
    // Advance over the prefix that has been visible long enough for late commits to have shown.
    for (const event of read) {
      if (now - firstSeen.get(event.id)! < settle) break
      // The event's cursor (a server before cursors sends none: its id then).
      settled = (event.cursor as string | undefined) ?? event.id
      settledId = event.id
      firstSeen.delete(event.id)
    }
    await sleep(interval, options.signal)
  }
  return forwarded
}

/** Events `trigger` can make happen, and the simulation behind each. */
export const triggers: Readonly<Record<string, SimulateOutcome | null>> = {
  "payment.created": null,
  "payment.paid": "paid",
  "payment.canceled": "failed"
}

/** Options of `trigger`. */
export interface TriggerOptions extends ClientOptions {
  readonly event: string
  /** Amount of the sandbox payment (default `"100.00"`). */
  readonly amount?: string
}

/** Makes `event` happen on a new sandbox payment; resolves with the payment as it ends. */
export const trigger = async (options: TriggerOptions): Promise<Payment> => {
  if (!(options.event in triggers)) {
    throw new TypeError(`trigger: event must be one of ${Object.keys(triggers).join(", ")} (got ${options.event})`)
  }
  const client = new Paydesk({ ...options, sandbox: true })
  const payment = await client.payments.create({
    amount: options.amount ?? "100.00",
    order_id: `trigger-${Date.now()}-${Math.floor(Math.random() * 1e6)}`,
    description: `paydesk trigger ${options.event}`
  })
  const outcome = triggers[options.event]
  return outcome === null || outcome === undefined ? payment : client.payments.simulate(payment.id, outcome)
}
