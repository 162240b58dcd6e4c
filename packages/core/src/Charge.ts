/**
 * A subscription charge attempt and its history record.
 *
 * An attempt is written `pending` before the acquirer is asked, with an idempotency key
 * derived from (subscription, cycle, attempt), so a crash between the call and the commit is
 * reconciled by asking again with the same key. The acquirer's answer moves it to `payed`
 * (a paid payment exists), `fail` (rejected) or `unconfirmed` (no unambiguous answer; the
 * subscription goes to review). `stop` records a charge that fell on a stopping or stopped
 * subscription and took no money: the acquirer declined it, or the service voided it before
 * sending. A charge the acquirer reports paid is always `payed`, whatever the subscription's
 * state. The API shows `unconfirmed` as `fail` with `validation_status` `review`.
 */
import type { Machine } from "./StateMachine.js"

export type Status = "pending" | "payed" | "fail" | "unconfirmed" | "stop"
export type Event = "paid" | "failed" | "unknown" | "stopped" | "reconciled_paid" | "reconciled_failed" | "contradicted_paid"
export type ValidationStatus = "accepted" | "review"

/** The acquirer's answer to a recurring charge. */
export type Outcome =
  | { readonly _tag: "Paid"; readonly reference: string }
  | { readonly _tag: "Failed"; readonly reason: string }
  | { readonly _tag: "Unknown"; readonly reason: string }

/** An answer a sandbox acquirer can be programmed to give to a charge. */
export type Program = "paid" | "failed" | "unknown"

/** The acquirer's answer when the service voids an attempt: its outcome, or `Voided` if it was never performed. */
export type VoidOutcome = Outcome | { readonly _tag: "Voided" }

/** A charge attempt. Amounts in kopecks, timestamps epoch milliseconds. */
export interface Charge {
  readonly id: string
  readonly subscriptionId: string
  readonly terminalId: string
  readonly cycleNumber: number
  readonly attempt: number
  readonly kind: "first" | "recurring"
  readonly status: Status
  readonly validationStatus: ValidationStatus
  readonly validationReason: string | null
  readonly paymentId: string | null
  readonly amount: bigint
  readonly expectedAmount: bigint
  readonly idempotencyKey: string
  readonly message: string | null
  readonly scheduledAt: number
  readonly actualAt: number | null
  readonly createdAt: number
  readonly updatedAt: number
}

/** The acquirer idempotency key of an attempt: stable across crashes and workers. */
export const idempotencyKey = (subscriptionId: string, cycleNumber: number, attempt: number): string =>
  `sub:${subscriptionId}:cycle:${cycleNumber}:attempt:${attempt}`

/**
 * The charge state machine. `fail` and `stop` end an attempt as far as the service decides; only an
 * acquirer breaking its contract (paying a key it had refused or voided) moves one on, to `payed`
 * (`contradicted_paid`): the money came, so it is booked, for review.
 */
export const machine: Machine<Status, Event, never> = {
  entity: "charge",
  initial: ["pending"],
  final: ["payed"],
  table: {
    pending: {
      paid: { to: "payed", emits: [] },
      failed: { to: "fail", emits: [] },
      unknown: { to: "unconfirmed", emits: [] },
      stopped: { to: "stop", emits: [] }
    },
    unconfirmed: {
      reconciled_paid: { to: "payed", emits: [] },
      reconciled_failed: { to: "fail", emits: [] },
      stopped: { to: "stop", emits: [] }
    },
    payed: {},
    fail: { contradicted_paid: { to: "payed", emits: [] } },
    stop: { contradicted_paid: { to: "payed", emits: [] } }
  }
}

/** True while the attempt's outcome is not booked (it may still have taken money). */
export const isOpen = (status: Status): boolean => status === "pending" || status === "unconfirmed"

/**
 * How long an open attempt of a stopping subscription rests between two asks to the acquirer: a
 * `pending` one (never answered: a crash between the call and its booking, or asks that failed)
 * `minMs` (a lease: an attempt still in its call is never settled under it); an `unconfirmed` one
 * (the acquirer answered that it does not know) as long as it has been open, so the asks thin out
 * as the acquirer keeps not knowing, at least `minMs` and at most `maxMs`.
 */
export interface VoidBackoff {
  readonly minMs: number
  readonly maxMs: number
}

/** When the open attempt is next asked about (`updatedAt` is its last ask, or its call). */
export const nextVoidAt = (charge: Pick<Charge, "status" | "createdAt" | "updatedAt">, backoff: VoidBackoff): number =>
  charge.updatedAt + (charge.status === "unconfirmed"
    ? Math.min(Math.max(charge.updatedAt - charge.createdAt, backoff.minMs), backoff.maxMs)
    : backoff.minMs)

/**
 * The event an acquirer answer means for an open attempt; `null` when it changes nothing (an
 * unconfirmed attempt still unconfirmed). `stopping` is true when the subscription is stopping
 * or stopped: a refused or voided charge then "fell on a stopped subscription" (`stop`).
 */
export const eventOf = (status: "pending" | "unconfirmed", answer: VoidOutcome, stopping: boolean): Event | null => {
  switch (answer._tag) {
    case "Paid":
      return status === "pending" ? "paid" : "reconciled_paid"
    case "Voided":
      return "stopped"
    case "Failed":
      return stopping ? "stopped" : status === "pending" ? "failed" : "reconciled_failed"
    case "Unknown":
      return status === "pending" ? "unknown" : null
  }
}

/** The status the API shows for an attempt. */
export const publicStatus = (status: Status): "payed" | "fail" | "stop" | "pending" =>
  status === "unconfirmed" ? "fail" : status
