/**
 * The subscription: its record, its terms snapshot, and the table over
 * `provider_state` x `billing_status`.
 *
 * The two fields move together, so the table is keyed by the pair ("new/consent_pending").
 * A subscription starts `new/consent_pending`. The payer's consent on the form (or, on H2H
 * terminals, creation itself) creates the first payment and leaves the state as it is; when the
 * payer pays it (the payment goes `processing`) the subscription is `new/pending`, and the
 * confirmed payment makes it `active/enabled` (the spec: "payer confirms terms on the form and pays
 * the first payment" -> pending; "first payment confirmed" -> enabled). A failed or unconfirmable
 * charge (or first payment, from `pending`) moves it to `review`, which suspends charges until an
 * operator resumes it; a stop goes through `stop_pending` to `stop/stopped`, or to `review` when the
 * stop cannot be completed. A charge the acquirer reports paid while the subscription is in review
 * or stopping is booked without a move of the pair (only the cycle counters change), except that
 * reaching `max_cycles` in review begins the stop.
 */
import type { Environment } from "./Payment.js"
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
  | "first_payment_started"
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
  /** `sandbox` subscriptions are charged by the sandbox acquirer and never touch balances. */
  readonly environment: Environment
  /** The test clock the subscription is attached to (sandbox only); `null` for most. */
  readonly testClockId: string | null
  readonly successfulCycles: number
  readonly consecutiveFailures: number
  /** Index of the next scheduled charge (1 = first charge after activation). */
  readonly nextCycleIndex: number
  readonly nextChargeAt: number | null
  /** Claimed by a worker until this time; others skip it meanwhile. */
  readonly chargeLeaseUntil: number | null
  readonly firstPaymentId: string | null
  readonly reviewReason: string | null
  /**
   * When its last review for a charge began (the refusal's or unconfirmed answer's time; null
   * before any, and once the charge a resume delayed is booked): cycles that fell due before it
   * were never in review, so the catch-up after the resume still charges them.
   */
  readonly reviewSince: number | null
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
    "new/consent_pending": {
      first_payment_started: { to: "new/pending", emits: [] },
      ...stopFrom
    },
    "new/pending": {
      first_payment_paid: { to: "active/enabled", emits: [] },
      first_payment_failed: { to: "new/review", emits: [] },
      ...stopFrom
    },
    // The operator's resume, once a first payment of it was paid after all (booked late): activated then.
    "new/review": { resume: { to: "active/enabled", emits: [] }, ...stopFrom },
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

/** What creation fixes: the identity, the terms snapshot and the generated tokens. */
export type Draft = Pick<
  Subscription,
  | "id"
  | "terminalId"
  | "planId"
  | "payerId"
  | "merchantSubscriptionRef"
  | "description"
  | "terms"
  | "h2h"
  | "environment"
  | "testClockId"
  | "payToken"
  | "csrfToken"
  | "redirectUrl"
>

/** A new subscription, `new/consent_pending` with its counters at zero. */
export const make = (draft: Draft, now: number): Subscription => ({
  ...draft,
  providerState: "new",
  billingStatus: "consent_pending",
  successfulCycles: 0,
  consecutiveFailures: 0,
  nextCycleIndex: 0,
  nextChargeAt: null,
  chargeLeaseUntil: null,
  firstPaymentId: null,
  reviewReason: null,
  reviewSince: null,
  createdAt: now,
  updatedAt: now,
  activatedAt: null,
  stoppedAt: null,
  version: 1
})

/** True once the payer consented (on the form, or through the merchant on H2H): the first payment exists. */
export const hasConsent = (s: Pick<Subscription, "firstPaymentId">): boolean => s.firstPaymentId !== null

/** True while a stop is in progress or done: no charge may be sent any more. */
export const isStopping = (s: Pick<Subscription, "billingStatus">): boolean =>
  s.billingStatus === "stop_pending" || s.billingStatus === "stopped"

/** True when scheduled charges may run. */
export const isChargeable = (s: Pick<Subscription, "providerState" | "billingStatus">): boolean =>
  s.providerState === "active" && s.billingStatus === "enabled"
