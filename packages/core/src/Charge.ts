/**
 * A subscription charge attempt and its history record.
 *
 * An attempt is written `pending` before the acquirer is asked, with an idempotency key
 * derived from (subscription, cycle, attempt), so a crash between the call and the commit is
 * reconciled by asking again with the same key. The acquirer's answer moves it to `payed`
 * (a paid payment exists), `fail` (rejected) or `unconfirmed` (no unambiguous answer; the
 * subscription goes to review). `stop` records a charge that fell on a stopped subscription.
 * The API shows `unconfirmed` as `fail` with `validation_status` `review`.
 */
import type { Machine } from "./StateMachine.js"

export type Status = "pending" | "payed" | "fail" | "unconfirmed" | "stop"
export type Event = "paid" | "failed" | "unknown" | "stopped" | "reconciled_paid" | "reconciled_failed"
export type ValidationStatus = "accepted" | "review"

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

/** The charge state machine. */
export const machine: Machine<Status, Event, never> = {
  entity: "charge",
  initial: ["pending"],
  final: ["payed", "fail", "stop"],
  table: {
    pending: {
      paid: { to: "payed", emits: [] },
      failed: { to: "fail", emits: [] },
      unknown: { to: "unconfirmed", emits: [] },
      stopped: { to: "stop", emits: [] }
    },
    unconfirmed: {
      reconciled_paid: { to: "payed", emits: [] },
      reconciled_failed: { to: "fail", emits: [] }
    },
    payed: {},
    fail: {},
    stop: {}
  }
}

/** The status the API shows for an attempt. */
export const publicStatus = (status: Status): "payed" | "fail" | "stop" | "pending" =>
  status === "unconfirmed" ? "fail" : status
