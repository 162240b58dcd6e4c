/**
 * Writes callback events to the outbox, in the caller's transaction.
 *
 * The body is serialized once, here, and stored as the exact bytes that are later signed and
 * sent. Payment bodies carry the spec's fields in the spec's order; `metadata` only when it was
 * set at creation. A delivery is created when the terminal has a `callback_url`, due at once
 * (a `delivery` wakeup, sent after the caller's commit).
 */
import { Clock, Effect } from "effect"
import { formatRub, formatUsdt } from "../Amount.js"
import type { EventType } from "../Callback.js"
import { paymentId as prefixedPaymentId, payoutId as prefixedPayoutId } from "../Id.js"
import type { CallbackEventType, Payment } from "../Payment.js"
import type { Payout } from "../Payout.js"
import type { Terminal } from "../Terminal.js"
import { Entropy } from "../ports/Entropy.js"
import { OutboxRepository } from "../ports/OutboxRepository.js"
import { wakeup } from "./Atomic.js"

/** The callback body of a payment event. */
export const paymentBody = (eventType: CallbackEventType, payment: Payment): string =>
  JSON.stringify({
    event_type: eventType,
    payment_id: prefixedPaymentId(payment.id),
    order_id: payment.orderId,
    status: payment.status,
    amount: formatRub(payment.amount),
    currency: payment.currency,
    test: payment.environment === "sandbox",
    ...(payment.metadata === null ? {} : { metadata: payment.metadata })
  })

/** The callback body of `payout.completed` (not shown in the spec; see docs/decisions.md). */
export const payoutBody = (payout: Payout): string =>
  JSON.stringify({
    event_type: "payout.completed",
    payout_id: prefixedPayoutId(payout.id),
    terminal_id: payout.terminalId,
    status: payout.status,
    amount_usdt: formatUsdt(payout.amountUsdt),
    wallet_address: payout.walletAddress,
    network: payout.network,
    tx_id: payout.networkTxId,
    test: false
  })

/** Writes one event and, when the terminal has a callback URL, its delivery. */
export const enqueue = Effect.fn("Outbox.enqueue")(function*(input: {
  readonly terminal: Terminal
  readonly eventType: EventType
  readonly body: string
  readonly test: boolean
  readonly paymentId: string | null
  readonly payoutId: string | null
}) {
  const outbox = yield* OutboxRepository
  const entropy = yield* Entropy
  const now = yield* Clock.currentTimeMillis
  const eventId = yield* entropy.uuid
  yield* outbox.insertEvent({
    id: eventId,
    terminalId: input.terminal.id,
    eventType: input.eventType,
    paymentId: input.paymentId,
    payoutId: input.payoutId,
    body: input.body,
    test: input.test,
    createdAt: now
  })
  if (input.terminal.callbackUrl !== null) {
    const deliveryId = yield* entropy.uuid
    yield* outbox.insertDelivery({
      id: deliveryId,
      eventId,
      terminalId: input.terminal.id,
      status: "pending",
      attempts: 0,
      nextAttemptAt: now,
      sendingAt: null,
      lastStatusCode: null,
      lastError: null,
      createdAt: now,
      updatedAt: now,
      deliveredAt: null
    })
    yield* wakeup({ kind: "delivery", deliveryId, at: now })
  }
  return eventId
})

/** Writes the events a payment transition emitted, in order. */
export const paymentEvents = Effect.fn("Outbox.paymentEvents")(function*(
  terminal: Terminal,
  payment: Payment,
  eventTypes: ReadonlyArray<CallbackEventType>
) {
  for (const eventType of eventTypes) {
    yield* enqueue({
      terminal,
      eventType,
      body: paymentBody(eventType, payment),
      test: payment.environment === "sandbox",
      paymentId: payment.id,
      payoutId: null
    })
  }
})
