/**
 * The subscription: its record, its terms snapshot, and the table over
 * `provider_state` x `billing_status`.
 *
 * The two fields move together, so the table is keyed by the pair ("new/consent_pending").
 * A subscription starts `new/consent_pending`; the payer's consent makes it `new/pending`;
 * the first paid payment makes it `active/enabled`; a failed or unconfirmable charge (or first
 * payment) moves it to `review`, which suspends charges until an operator resumes it; a stop
 * goes through `stop_pending` to `stop/stopped`, or to `review` when the stop cannot be completed.
 */
import type { Machine } from "./StateMachine.js"
import type { Interval, ScheduleKind } from "./Schedule.js"

export type ProviderState = "new" | "active" | "stop"
export type BillingStatus = "consent_pending" | "pending" | "enabled" | "review" | "stop_pending" | "stopped"

/** The pair both fields form. */
export type State =
  | "new/consent_pending"
  | "new/pending"
  | "new/review"
  | "new/stop_pending"
  | "active/enabled"
  | "active/review"
  | "active/stop_pending"
  | "stop/stopped"

export type Event =
  | "consent"
  | "first_payment_paid"
  | "first_payment_failed"
  | "charge_paid"
  | "charge_failed"
  | "request_stop"
  | "stop_confirmed"
  | "stop_failed"
  | "resume"

/** Plan modes: fixed tariff (payer_id, no amount) or amount within a ceiling. */
export type Mode = "fixed" | "ceiling"

/** Terms fixed at creation; they never change afterwards. */
export interface Terms {
  readonly mode: Mode
  readonly planCode: string
  readonly planVersion: number
  readonly interval: Interval
  readonly schedule: ScheduleKind
  /** Amount of one charge for the merchant (kopecks). */
  readonly merchantAmount: bigint
  /** Amount the payer pays per charge (kopecks). */
  readonly payerAmount: bigint
  readonly maxCycles: number | null
  readonly consentText: string
  readonly policyVersion: string
}

/** A subscription record. Timestamps are epoch milliseconds. */
export interface Subscription {
  readonly id: string
  readonly terminalId: string
  readonly planId: string
  readonly payerId: string | null
  readonly merchantSubscriptionRef: string | null
  readonly description: string | null
  readonly providerState: ProviderState
  readonly billingStatus: BillingStatus
  readonly terms: Terms
  readonly h2h: boolean
  readonly successfulCycles: number
  readonly consecutiveFailures: number
  /** Index of the next scheduled charge (1 = first charge after activation). */
  readonly nextCycleIndex: number
  readonly nextChargeAt: number | null
  /** Claimed by a worker until this time; others skip it meanwhile. */
  readonly chargeLeaseUntil: number | null
  readonly firstPaymentId: string | null
  readonly reviewReason: string | null
  readonly payToken: string
  readonly csrfToken: string
  readonly redirectUrl: string | null
  readonly createdAt: number
  readonly updatedAt: number
  readonly activatedAt: number | null
  readonly stoppedAt: number | null
  readonly version: number
}

/** The pair of a subscription. */
export const stateOf = (s: Pick<Subscription, "providerState" | "billingStatus">): State =>
  `${s.providerState}/${s.billingStatus}` as State

/** Splits a pair back into its fields. */
export const fieldsOf = (state: State): { providerState: ProviderState; billingStatus: BillingStatus } => {
  const [providerState, billingStatus] = state.split("/") as [ProviderState, BillingStatus]
  return { providerState, billingStatus }
}

const stopFrom = { request_stop: { to: "new/stop_pending", emits: [] } } as const

/** The subscription state machine. Subscriptions emit no callbacks of their own. */
export const machine: Machine<State, Event, never> = {
  entity: "subscription",
  initial: ["new/consent_pending"],
  final: ["stop/stopped"],
  table: {
    "new/consent_pending": { consent: { to: "new/pending", emits: [] }, ...stopFrom },
    "new/pending": {
      first_payment_paid: { to: "active/enabled", emits: [] },
      first_payment_failed: { to: "new/review", emits: [] },
      ...stopFrom
    },
    "new/review": { ...stopFrom },
    "new/stop_pending": {
      stop_confirmed: { to: "stop/stopped", emits: [] },
      stop_failed: { to: "new/review", emits: [] }
    },
    "active/enabled": {
      charge_paid: { to: "active/enabled", emits: [] },
      charge_failed: { to: "active/review", emits: [] },
      request_stop: { to: "active/stop_pending", emits: [] }
    },
    "active/review": {
      resume: { to: "active/enabled", emits: [] },
      request_stop: { to: "active/stop_pending", emits: [] }
    },
    "active/stop_pending": {
      stop_confirmed: { to: "stop/stopped", emits: [] },
      stop_failed: { to: "active/review", emits: [] }
    },
    "stop/stopped": {}
  }
}

/** True when scheduled charges may run. */
export const isChargeable = (s: Pick<Subscription, "providerState" | "billingStatus">): boolean =>
  s.providerState === "active" && s.billingStatus === "enabled"
