/**
 * Paydesk's background work as Inngest functions. Cron sweeps run each "run what is due now"
 * use case every minute; event-driven flows sleep until the moment a record becomes due and
 * then run the use case that handles it. The events are sent after each commit that writes a
 * due moment (`InngestWakeups`, the core's `Wakeups` port); one lost is caught by the sweeps.
 * Every `step.run` calls one core use case through `Retryability.runStep`, so retries follow the
 * errors' retryability, and every use case is idempotent, so a sweep and a flow doing the same
 * work at once do it once.
 */
import { Schema } from "effect"
import { Callbacks, Payments, Payouts, type Runner, SubscriptionLifecycle, Subscriptions, Terminals, TestClocks, Work } from "@paydesk/core"
import { cron, eventType, type InngestFunction } from "inngest"
import type { Client } from "./InngestClient.js"
import { runStep } from "./Retryability.js"

/** Schedule of the sweeps: every minute. */
export const sweepCron = "* * * * *"

const Timestamp = Schema.String.check(
  Schema.makeFilter((s: string) => Number.isNaN(Date.parse(s)) ? "an ISO 8601 timestamp" : undefined)
)

/**
 * The events the flows react to; `create(...)` builds one to send. Timestamps are ISO 8601
 * strings. Each says when a record becomes due, not that anything else happened.
 */
export const Events = {
  /** A subscription's next charge was scheduled (activation, a charge, a resume): due at `next_charge_at`. */
  chargeScheduled: eventType("paydesk/subscription.charge_scheduled", {
    schema: Schema.toStandardSchemaV1(Schema.Struct({ subscription_id: Schema.String, next_charge_at: Timestamp }))
  }),
  /** A callback delivery was queued or its retry scheduled: the attempt is due at `next_attempt_at`. */
  callbackScheduled: eventType("paydesk/callback.scheduled", {
    schema: Schema.toStandardSchemaV1(Schema.Struct({ delivery_id: Schema.String, next_attempt_at: Timestamp }))
  }),
  /** An unpaid payment was created: unless paid, it expires at `expires_at`. */
  paymentCreated: eventType("paydesk/payment.created", {
    schema: Schema.toStandardSchemaV1(Schema.Struct({ payment_id: Schema.String, expires_at: Timestamp }))
  }),
  /** A payout waits for the worker: a new one to submit for approval, or an approved one to send. */
  payoutDue: eventType("paydesk/payout.due", {
    schema: Schema.toStandardSchemaV1(Schema.Struct({ payout_id: Schema.String }))
  })
}

/** Every function of the engine, by name, and all of them to serve. */
export interface Functions {
  /** Cron: expires unpaid payments past their lifetime. */
  readonly expirePayments: InngestFunction.Any
  /** Cron: charges subscriptions whose charge is due. */
  readonly dueCharges: InngestFunction.Any
  /** Cron: completes stops the acquirer did not confirm at once. */
  readonly pendingStops: InngestFunction.Any
  /** Cron: settles open charge attempts of stopped subscriptions (void at the acquirer, then book). */
  readonly stoppedCharges: InngestFunction.Any
  /** Cron: converts terminals' balances at their conversion time. */
  readonly conversions: InngestFunction.Any
  /** Cron: sends approved payouts. */
  readonly payouts: InngestFunction.Any
  /** Cron: delivers due callbacks. */
  readonly callbacks: InngestFunction.Any
  /** Cron: purges expired nonces, idempotency records, events past their retention and expired sessions. */
  readonly housekeeping: InngestFunction.Any
  /** Cron: continues test clock advances that wait, and runs the work due at ready clocks' time. */
  readonly testClocks: InngestFunction.Any
  /** `paydesk/subscription.charge_scheduled`: sleeps until the charge is due, then charges. */
  readonly chargeWhenDue: InngestFunction.Any
  /** `paydesk/callback.scheduled`: sleeps until the attempt is due, then delivers. */
  readonly deliverWhenDue: InngestFunction.Any
  /** `paydesk/payment.created`: sleeps until the payment's lifetime ends, then expires it. */
  readonly expireWhenDue: InngestFunction.Any
  /** `paydesk/payout.due`: submits or sends the payouts that wait, at once. */
  readonly payoutWhenDue: InngestFunction.Any
  /** Every function above, for `serve`. */
  readonly all: ReadonlyArray<InngestFunction.Any>
}

/** Builds every function over the host's runtime (a `ManagedRuntime`, or a `Runner` over its services). */
export const makeFunctions = (client: Client, runtime: Runner.Runner): Functions => {
  // A sweep skips its minute while the one before still runs (a long pass of due charges, say): a
  // second pass beside it would only find the first one's leased rows, or ask again after a lease ran out.
  const sweep = { triggers: [cron(sweepCron)], singleton: { mode: "skip" as const } }
  /** Wall time a test-clock sweep spends at most (a third of the sweeps' minute). */
  const testClockSweepMs = 20_000

  const expirePayments = client.createFunction(
    { id: "sweep-expire-payments", name: "Expire unpaid payments", ...sweep },
    ({ step }) => step.run("expire-payments", () => runStep(runtime, Payments.expireDue()))
  )
  const dueCharges = client.createFunction(
    { id: "sweep-due-charges", name: "Charge due subscriptions", ...sweep },
    ({ step }) => step.run("run-due-charges", () => runStep(runtime, Subscriptions.runDueCharges()))
  )
  const pendingStops = client.createFunction(
    { id: "sweep-pending-stops", name: "Finish pending subscription stops", ...sweep },
    ({ step }) => step.run("finish-pending-stops", () => runStep(runtime, SubscriptionLifecycle.finishPendingStops()))
  )
  const stoppedCharges = client.createFunction(
    { id: "sweep-stopped-charges", name: "Settle open charges of stopped subscriptions", ...sweep },
    ({ step }) => step.run("settle-stopped-charges", () => runStep(runtime, Subscriptions.settleStoppedCharges()))
  )
  const conversions = client.createFunction(
    { id: "sweep-conversions", name: "Run due terminal conversions", ...sweep },
    ({ step }) => step.run("run-due-conversions", () => runStep(runtime, Terminals.runDueConversions()))
  )
  const payouts = client.createFunction(
    { id: "sweep-payouts", name: "Send approved payouts", ...sweep },
    ({ step }) => step.run("run-due-payouts", () => runStep(runtime, Payouts.runDue()))
  )
  const callbacks = client.createFunction(
    { id: "sweep-callbacks", name: "Deliver due callbacks", ...sweep },
    ({ step }) => step.run("run-due-callbacks", () => runStep(runtime, Callbacks.runDue()))
  )
  const housekeeping = client.createFunction(
    { id: "sweep-housekeeping", name: "Purge expired nonces, idempotency records, events, sessions and test clocks", ...sweep },
    ({ step }) => step.run("housekeeping", () => runStep(runtime, Work.housekeeping()))
  )

  const chargeWhenDue = client.createFunction(
    { id: "charge-when-due", name: "Charge a subscription when its charge is due", triggers: [Events.chargeScheduled] },
    async ({ event, step }) => {
      await step.sleepUntil("wait-for-charge", event.data.next_charge_at)
      return step.run("charge", () => runStep(runtime, Subscriptions.chargeOne(event.data.subscription_id)))
    }
  )
  const deliverWhenDue = client.createFunction(
    { id: "deliver-when-due", name: "Deliver a callback when its attempt is due", triggers: [Events.callbackScheduled] },
    async ({ event, step }) => {
      await step.sleepUntil("wait-for-attempt", event.data.next_attempt_at)
      return step.run("deliver", () => runStep(runtime, Callbacks.runDue()))
    }
  )
  const expireWhenDue = client.createFunction(
    { id: "expire-when-due", name: "Expire a payment when its lifetime ends", triggers: [Events.paymentCreated] },
    async ({ event, step }) => {
      await step.sleepUntil("wait-for-expiry", event.data.expires_at)
      return step.run("expire", () => runStep(runtime, Payments.expireDue()))
    }
  )

  const testClocks = client.createFunction(
    { id: "sweep-test-clocks", name: "Continue test clock advances and their due work", ...sweep },
    // A run of its own: as many clocks as 20 s allow, not the local worker's few per pass.
    ({ step }) => step.run("run-test-clocks", () => runStep(runtime, TestClocks.runPendingFor(testClockSweepMs)))
  )

  const sweeps = { expirePayments, dueCharges, pendingStops, stoppedCharges, conversions, payouts, callbacks, housekeeping, testClocks }
  const payoutWhenDue = client.createFunction(
    { id: "payout-when-due", name: "Submit or send a payout as soon as it waits", triggers: [Events.payoutDue] },
    ({ step }) => step.run("run-due-payouts", () => runStep(runtime, Payouts.runDue()))
  )

  const flows = { chargeWhenDue, deliverWhenDue, expireWhenDue, payoutWhenDue }
  return { ...sweeps, ...flows, all: [...Object.values(sweeps), ...Object.values(flows)] }
}
