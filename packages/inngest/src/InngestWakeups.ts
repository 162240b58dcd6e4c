/**
 * The core's `Wakeups` port on Inngest: each due moment a transaction committed is sent as the
 * event whose flow sleeps until then (`InngestFunctions.Events`), in one `client.send` per
 * commit. Every event carries a deterministic `id` (`<kind>:<record id>:<epoch ms>`), so Inngest
 * drops a duplicate of the same moment (a retried send, the same hint twice) within its
 * deduplication window. A failed or slow send is logged and dropped: the cron sweeps find the
 * work anyway, and the flows' use cases are idempotent.
 *
 * By default the send runs in the background, so a merchant's request never waits for Inngest
 * (nor fails or slows down when Inngest is unreachable); `background: false` waits for it. At
 * most `maxInFlight` sends are outstanding at once (the SDK's own retries included); beyond that
 * a hint is dropped with a warning rather than piling up sockets while Inngest is slow.
 */
import { Duration, Effect, Layer } from "effect"
import { Instant, type Wakeup, Wakeups } from "@paydesk/core"
import type { Client } from "./InngestClient.js"
import { Events } from "./InngestFunctions.js"

/** How long `notify` waits for Inngest to accept the events before giving up on them. */
export const defaultTimeout = Duration.seconds(5)

/** The deduplication id of a wakeup's event. */
export const eventId = (w: Wakeup): string => {
  switch (w.kind) {
    case "charge":
      return `charge:${w.subscriptionId}:${w.at}`
    case "delivery":
      return `delivery:${w.deliveryId}:${w.at}`
    case "expiry":
      return `expiry:${w.paymentId}:${w.at}`
    case "payout":
      return `payout:${w.payoutId}:${w.at}`
  }
}

/** The event that starts the flow of a wakeup. */
export const eventOf = (w: Wakeup) => {
  const options = { id: eventId(w) }
  switch (w.kind) {
    case "charge":
      return Events.chargeScheduled.create({ subscription_id: w.subscriptionId, next_charge_at: Instant.formatIso(w.at) }, options)
    case "delivery":
      return Events.callbackScheduled.create({ delivery_id: w.deliveryId, next_attempt_at: Instant.formatIso(w.at) }, options)
    case "expiry":
      return Events.paymentCreated.create({ payment_id: w.paymentId, expires_at: Instant.formatIso(w.at) }, options)
    case "payout":
      return Events.payoutDue.create({ payout_id: w.payoutId }, options)
  }
}

/** Options of `layer`. */
export interface Options {
  /** Longest wait for one send (default `defaultTimeout`). */
  readonly timeout?: Duration.Input
  /** Send in a detached fiber and return at once (default true). */
  readonly background?: boolean
  /** Most sends outstanding at once (default 16). */
  readonly maxInFlight?: number
}

/** `Wakeups` that sends the flows' events with `client`. */
export const layer = (client: Client, options: Options = {}): Layer.Layer<Wakeups> =>
  Layer.sync(Wakeups)(() => {
    const maxInFlight = options.maxInFlight ?? 16
    let inFlight = 0
    return Wakeups.of({
      notify: (items) =>
        Effect.suspend(() => {
          if (items.length === 0) return Effect.void
          const ids = items.map(eventId).join(", ")
          if (inFlight >= maxInFlight) {
            return Effect.logWarning(`Inngest events dropped, ${inFlight} sends outstanding (${ids}); the sweeps will find the work`)
          }
          // Counted until the SDK's promise settles, even when the timeout below gave up on it.
          inFlight++
          const sending = (async () => client.send(items.map(eventOf)))().finally(() => void inFlight--)
          const wait = Effect.tryPromise(() => sending).pipe(
            Effect.timeout(options.timeout ?? defaultTimeout),
            Effect.catchCause((cause) => Effect.logWarning(`Inngest events not sent (${ids}); the sweeps will find the work`, cause)),
            Effect.asVoid
          )
          return options.background === false ? wait : Effect.asVoid(Effect.forkDetach(wait))
        })
    })
  })
