/**
 * "Run what is due now": every background job of the service over the idempotent use cases,
 * in the order that lets one pass finish what the previous produced (callbacks last).
 * Both engines (the local worker and Inngest) call these; running them twice, or on two
 * machines at once, does nothing twice.
 */
import { Clock, Effect } from "effect"
import { PaydeskConfig } from "../Config.js"
import { IdempotencyStore } from "../ports/IdempotencyStore.js"
import { NonceStore } from "../ports/NonceStore.js"
import * as Callbacks from "./Callbacks.js"
import * as Payments from "./Payments.js"
import * as Payouts from "./Payouts.js"
import * as Lifecycle from "./SubscriptionLifecycle.js"
import * as Subscriptions from "./Subscriptions.js"
import * as Terminals from "./Terminals.js"

/** What one pass did. */
export interface Report {
  readonly expiredPayments: number
  readonly charges: number
  readonly stops: number
  readonly conversions: number
  readonly payouts: number
  readonly callbacks: number
}

/** Deletes expired nonces (their 10-minute window is over) and idempotency records past their retention. */
export const housekeeping = Effect.fn("Work.housekeeping")(function*() {
  const config = yield* PaydeskConfig
  const now = yield* Clock.currentTimeMillis
  const nonces = yield* (yield* NonceStore).purge(now)
  const records = yield* (yield* IdempotencyStore).purge(now - config.idempotencyRetentionMs)
  return { nonces, records }
})

/** Runs every due job once. */
export const runDue = Effect.fn("Work.runDue")(function*() {
  const expiredPayments = yield* Payments.expireDue()
  const charges = yield* Subscriptions.runDueCharges()
  const stops = yield* Lifecycle.finishPendingStops()
  const conversions = yield* Terminals.runDueConversions()
  const payouts = yield* Payouts.runDue()
  const callbacks = yield* Callbacks.runDue()
  yield* housekeeping()
  const report: Report = { expiredPayments, charges, stops, conversions, payouts, callbacks }
  return report
})

/** Runs passes until one finds nothing to do (at most `maxPasses`). */
export const drain = Effect.fn("Work.drain")(function*(maxPasses = 20) {
  const total = { expiredPayments: 0, charges: 0, stops: 0, conversions: 0, payouts: 0, callbacks: 0 }
  for (let pass = 0; pass < maxPasses; pass++) {
    const report = yield* runDue()
    let any = false
    for (const key of Object.keys(total) as Array<keyof Report>) {
      total[key] += report[key]
      if (report[key] > 0) any = true
    }
    if (!any) break
  }
  return total as Report
})
