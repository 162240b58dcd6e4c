/**
 * The USDT payout: record, statuses and table.
 *
 * `created` holds the amount on the terminal's balance; the payout worker submits it for
 * approval (`pending`); an operator approves (`processing`) and the worker sends it over the
 * payout network (`completed`, callback `payout.completed`). `rejected` leaves `created` or
 * `pending` (operator) or `processing` (the network refused); it releases the hold.
 */
import type { Machine } from "./StateMachine.js"

export type Status = "created" | "pending" | "processing" | "completed" | "rejected"
export type Event = "submit" | "approve" | "complete" | "reject"
export type CallbackEventType = "payout.completed"

/** Payouts that count against the maximum of active payouts and hold balance. */
export const activeStatuses: ReadonlyArray<Status> = ["created", "pending", "processing"]

/** A payout record; `amountUsdt` in micro-USDT. */
export interface Payout {
  readonly id: string
  readonly terminalId: string
  readonly amountUsdt: bigint
  readonly walletAddress: string
  readonly network: string
  readonly status: Status
  readonly idempotencyKey: string | null
  readonly fingerprint: string
  readonly networkTxId: string | null
  readonly rejectReason: string | null
  /** Claimed by a worker sending it until this time. */
  readonly leaseUntil: number | null
  readonly createdAt: number
  readonly updatedAt: number
  readonly version: number
}

/** The payout state machine. */
export const machine: Machine<Status, Event, CallbackEventType> = {
  entity: "payout",
  initial: ["created"],
  final: ["completed", "rejected"],
  table: {
    created: {
      submit: { to: "pending", emits: [] },
      reject: { to: "rejected", emits: [] }
    },
    pending: {
      approve: { to: "processing", emits: [] },
      reject: { to: "rejected", emits: [] }
    },
    processing: {
      complete: { to: "completed", emits: ["payout.completed"] },
      reject: { to: "rejected", emits: [] }
    },
    completed: {},
    rejected: {}
  }
}
