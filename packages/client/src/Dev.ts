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
 */
import { Paydesk, type ClientOptions } from "./Client.js"
import { ListenerCursorLost, PaydeskApiError } from "./Errors.js"
import type { FeedEvent, Payment, SimulateOutcome } from "./Types.js"

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
  /** Called after each forward with the local answer's status (or the error). */
  readonly onForward?: (event: FeedEvent, result: { readonly status: number } | { readonly error: string }) => void
  /** Called once the listener is ready (its start cursor read). */
  readonly onReady?: () => void
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted === true) return resolve()
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener("abort", () => {
      clearTimeout(timer)
      resolve()
    }, { once: true })
  })

/** Forwards one event with its headers and exact body. */
const forward = async (event: FeedEvent, url: string, fetcher: typeof fetch): Promise<{ readonly status: number } | { readonly error: string }> => {
  try {
    const response = await fetcher(url, {
      method: "POST",
      headers: { ...event.headers },
      body: event.body,
      signal: AbortSignal.timeout(10_000)
    })
    await response.body?.cancel().catch(() => undefined)
    return { status: response.status }
  } catch (error) {
    return { error: (error as Error)?.message ?? String(error) }
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
  // The settled cursor: every event up to it has been read and forwarded.
  let settled = (await client.events.feed({ after: "latest", environment })).next_after
  options.onReady?.()
  const firstSeen = new Map<string, number>()
  let forwarded = 0
  while (options.signal?.aborted !== true) {
    let after = settled
    const read: Array<FeedEvent> = []
    for (;;) {
      const cursor = after
      const page = await client.events.feed({ ...(cursor === null ? {} : { after: cursor }), limit: 100, environment })
        .catch((error: unknown) => {
          throw cursor !== null && isLostCursor(error) ? new ListenerCursorLost(cursor, { cause: error }) : error
        })
      read.push(...page.items)
      if (page.items.length < 100) break
      after = page.next_after
    }
    const now = Date.now()
    for (const event of read) {
      if (firstSeen.has(event.id)) continue
      firstSeen.set(event.id, now)
      // Forwarded first, then reported: `onForward?.(…, await forward(…))` would skip the forward
      // itself when no `onForward` is given.
      const result = await forward(event, options.forwardTo, fetcher)
      options.onForward?.(event, result)
      forwarded++
    }
    // Advance over the prefix that has been visible long enough for late commits to have shown.
    for (const event of read) {
      if (now - firstSeen.get(event.id)! < settle) break
      // The event's cursor (a server before cursors sends none: its id then).
      settled = (event.cursor as string | undefined) ?? event.id
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
