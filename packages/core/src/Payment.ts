/**
 * The payment: its record, its statuses and the table of moves between them.
 *
 * A payment is created `created` (callback `payment.created`), goes `processing` when the
 * payer starts paying, and ends `paid` or `canceled`; an unpaid payment `expired` at the end
 * of its lifetime. `canceled` and `expired` are final except for the late payment
 * (expired -> paid, a second `payment.paid`). Refund and chargeback are operator-initiated
 * moves out of `paid`. A recurring charge is born `paid`.
 */
import type { Machine } from "./StateMachine.js"

/** Payment statuses of the spec. */
export const statuses = ["created", "processing", "paid", "canceled", "expired", "chargeback", "refunded"] as const
export type Status = (typeof statuses)[number]

/** Events that move a payment. */
export type Event =
  | "start_processing"
  | "confirm"
  | "cancel"
  | "expire"
  | "late_payment"
  | "chargeback"
  | "refund"

/** Callback event types a payment emits. */
export type CallbackEventType =
  | "payment.created"
  | "payment.paid"
  | "payment.canceled"
  | "payment.expired"
  | "payment.chargeback"
  | "payment.refunded"
  | "refund_request.completed"

/** `sandbox` for test payments; `prod` for live ones (the spec's list filter name). */
export type Environment = "prod" | "sandbox"

/** How the merchant's share of a live paid payment was credited. */
export interface Settlement {
  /** Roubles credited to the merchant (the plan's merchant amount for subscription charges). */
  readonly merchantAmount: bigint
  /** USDT credited once converted; null while waiting for a scheduled conversion. */
  readonly usdt: bigint | null
  /** Rate (micro-RUB per USDT) used for the conversion; null until converted. */
  readonly rate: bigint | null
  readonly convertedAt: number | null
}

/** A payment record. Timestamps are epoch milliseconds; amounts are kopecks. */
export interface Payment {
  readonly id: string
  readonly terminalId: string
  readonly orderId: string
  readonly amount: bigint
  readonly currency: "RUB"
  readonly description: string | null
  readonly metadata: Readonly<Record<string, unknown>> | null
  readonly paymentMethod: string
  readonly environment: Environment
  /** The test clock the payment is attached to (sandbox only); `null` for most. */
  readonly testClockId: string | null
  readonly status: Status
  /** Unguessable token of the public payer page. */
  readonly payToken: string
  readonly csrfToken: string
  readonly subscriptionId: string | null
  /** Fingerprint of the creation parameters; a repeated order_id with another one is a conflict. */
  readonly fingerprint: string
  readonly qrPayload: string | null
  readonly expiresAt: number | null
  readonly createdAt: number
  readonly updatedAt: number
  readonly paidAt: number | null
  readonly settlement: Settlement | null
  readonly version: number
}

/**
 * A payment of a subscription: its first payment (unpaid, the payer pays it on its page) or a
 * charge (born paid). A first payment that expired unpaid is followed by another when the payer
 * confirms again: `firstAttempt` numbers them (order ids `sub-<id>-first`, `sub-<id>-first-2`, …).
 */
/**
 * Whether `payment` is one of subscription `subscriptionId`'s first payments (`sub-<id>-first`,
 * `sub-<id>-first-2`, …: one per consent given), not one of its charges.
 */
export const isFirstOf = (subscriptionId: string, payment: Payment): boolean => {
  const prefix = `sub-${subscriptionId}-`
  return payment.subscriptionId === subscriptionId && payment.orderId.startsWith(prefix) && /^first(-[0-9]+)?$/.test(payment.orderId.slice(prefix.length))
}

/**
 * The order id of a subscription's payment: `sub-<id>-first` for its first payment and
 * `sub-<id>-c<cycle>` for a charge; `number` above 1 when the one before is taken (a first payment
 * after one that expired, `sub-<id>-first-2`; a charge whose order id a merchant's payment took,
 * `sub-<id>-c3-2`). Not to be parsed by merchants.
 */
export const recurringOrderId = (subscriptionId: string, cycle: "first" | number, number: number): string => {
  const base = cycle === "first" ? "first" : `c${cycle}`
  return `sub-${subscriptionId}-${number === 1 ? base : `${base}-${number}`}`
}

export const makeRecurring = (input: {
  readonly id: string
  readonly subscription: {
    readonly id: string
    readonly terminalId: string
    readonly description: string | null
    readonly environment: Environment
    readonly testClockId: string | null
  }
  /** `first` for the first payment, else the cycle number of the charge. */
  readonly cycle: "first" | number
  /** Which of its order ids it takes (`recurringOrderId`; 1, the default, for the first). */
  readonly orderNumber?: number | undefined
  readonly amount: bigint
  readonly payToken: string
  readonly csrfToken: string
  readonly qrPayload: string | null
  /** The first payment's end of life; null for a charge. */
  readonly expiresAt: number | null
  readonly now: number
}): Payment => {
  const paid = input.cycle !== "first"
  const orderId = recurringOrderId(input.subscription.id, input.cycle, input.orderNumber ?? 1)
  const suffix = orderId.slice(`sub-${input.subscription.id}-`.length)
  return {
    id: input.id,
    terminalId: input.subscription.terminalId,
    orderId,
    amount: input.amount,
    currency: "RUB",
    description: input.subscription.description,
    metadata: null,
    // In sandbox the method is forced to the test stub, as for any sandbox payment.
    paymentMethod: input.subscription.environment === "sandbox" ? "sbp_test" : "sbp_recurrent",
    environment: input.subscription.environment,
    testClockId: input.subscription.testClockId,
    status: paid ? "paid" : "created",
    payToken: input.payToken,
    csrfToken: input.csrfToken,
    subscriptionId: input.subscription.id,
    fingerprint: paid ? `subscription:${input.subscription.id}:cycle:${input.cycle}` : `subscription:${input.subscription.id}:${suffix}`,
    qrPayload: input.qrPayload,
    expiresAt: paid ? null : input.expiresAt,
    createdAt: input.now,
    updatedAt: input.now,
    paidAt: paid ? input.now : null,
    settlement: null,
    version: 1
  }
}

/** The payment state machine. */
export const machine: Machine<Status, Event, CallbackEventType> = {
  entity: "payment",
  initial: ["created", "paid"],
  final: ["canceled", "chargeback", "refunded"],
  table: {
    created: {
      start_processing: { to: "processing", emits: [] },
      expire: { to: "expired", emits: ["payment.expired"] }
    },
    processing: {
      confirm: { to: "paid", emits: ["payment.paid"] },
      cancel: { to: "canceled", emits: ["payment.canceled"] },
      expire: { to: "expired", emits: ["payment.expired"] }
    },
    paid: {
      chargeback: { to: "chargeback", emits: ["payment.chargeback"] },
      refund: { to: "refunded", emits: ["refund_request.completed", "payment.refunded"] }
    },
    canceled: {},
    expired: {
      late_payment: { to: "paid", emits: ["payment.paid"] }
    },
    chargeback: {},
    refunded: {}
  }
}

/** True for payments the payer can still pay on the page. */
export const isOpen = (status: Status): boolean => status === "created" || status === "processing"
