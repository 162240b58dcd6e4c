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
import { PaydeskConfig } from "../Config.js"
import type { Delivery, DeliveryKind, EventType, OutboxEvent } from "../Callback.js"
import { paymentId as prefixedPaymentId, payoutId as prefixedPayoutId } from "../Id.js"
import type { CallbackEventType, Payment } from "../Payment.js"
import type { Payout } from "../Payout.js"
import type { Terminal } from "../Terminal.js"
import { DeliveryHandoff, type Handed } from "../ports/DeliveryHandoff.js"
import { Entropy } from "../ports/Entropy.js"
import { OutboxRepository } from "../ports/OutboxRepository.js"
import * as TestClock from "../TestClock.js"
import { wakeup } from "./Atomic.js"
import { nowOf } from "./TestClockScope.js"
import * as Traced from "../Traced.js"

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

/** What an event is written from. */
export interface EventInput {
  readonly terminal: Terminal
  readonly eventType: EventType
  readonly body: string
  readonly test: boolean
  readonly paymentId: string | null
  readonly payoutId: string | null
  /** The test clock of the event's object, if any. */
  readonly testClockId?: string | null
  /** The event's number when the caller knows it (the first events of an object it created): no lookup. */
  readonly sequence?: number
}

/** A delivery of `event`, due now (on a test clock: at the clock's time). */
const newDelivery = Effect.fnUntraced(function*(event: Pick<OutboxEvent, "id" | "terminalId" | "testClockId">, kind: DeliveryKind) {
  const now = yield* nowOf(event.testClockId)
  const delivery: Delivery = {
    id: yield* (yield* Entropy).uuid,
    eventId: event.id,
    terminalId: event.terminalId,
    kind,
    testClockId: event.testClockId,
    status: "pending",
    attempts: 0,
    nextAttemptAt: now,
    sendingAt: null,
    lastStatusCode: null,
    lastError: null,
    createdAt: now,
    updatedAt: now,
    deliveredAt: null
  }
  return delivery
})

/**
 * Queues a delivery of a stored event, due now (a `delivery` wakeup after the caller's commit); the
 * delivery of an event of a test clock is due at the clock's time and goes with the clock's work.
 */
export const deliver = Traced.fn("Outbox.deliver")(function*(event: Pick<OutboxEvent, "id" | "terminalId" | "testClockId">, kind: DeliveryKind) {
  const delivery = yield* newDelivery(event, kind)
  yield* (yield* OutboxRepository).insertDelivery(delivery)
  yield* wakeup({ kind: "delivery", deliveryId: delivery.id, at: delivery.createdAt })
  return delivery
})

/**
 * Writes one event, numbered after the earlier events of its payment or payout (the caller holds
 * that object's row lock, so the numbering cannot race), and, when the terminal has a callback
 * URL, its delivery (both in one write).
 */
export const enqueue = Traced.fn("Outbox.enqueue")(function*(input: EventInput) {
  const { event, delivery } = yield* prepare(input)
  yield* (yield* OutboxRepository).insertEvent(event, delivery)
  if (delivery !== undefined) yield* wakeup({ kind: "delivery", deliveryId: delivery.id, at: delivery.createdAt })
  return event.id
})

/**
 * The event of `input` and, when the terminal has a callback URL, its delivery (due now), without
 * writing them: for a caller that stores them together with their object in one write. The caller
 * sends the delivery's wakeup once they are stored.
 */
export const prepare = Effect.fnUntraced(function*(input: EventInput) {
  const event = yield* newEvent(input)
  const delivery = input.terminal.callbackUrl === null ? undefined : yield* newDelivery(event, "scheduled")
  return { event, delivery }
})

/**
 * As `prepare`, for the first event of a payment the caller's transaction creates: while the
 * `DeliveryHandoff` port accepts (and the payment is on no test clock), its delivery is written
 * leased and stamped, as a pass's claim would leave it, and `handed` is what the caller hands off
 * (`Atomic.handOff`) once it is stored, instead of the delivery's wakeup. A later event of a payment
 * is never handed off: its earlier ones may still be waiting for a pass, and one payment's events go
 * out in order.
 */
export const prepareFirst = Effect.fnUntraced(function*(input: EventInput) {
  const { event, delivery } = yield* prepare(input)
  const port = yield* Effect.serviceOption(DeliveryHandoff)
  if (delivery === undefined || port._tag === "None" || event.testClockId !== null || (yield* TestClock.Scope) !== null) {
    return { event, delivery, handed: undefined }
  }
  if (!(yield* port.value.accepting)) return { event, delivery, handed: undefined }
  const { leaseMs } = yield* PaydeskConfig
  const leased: Delivery = { ...delivery, nextAttemptAt: delivery.createdAt + leaseMs, sendingAt: delivery.createdAt }
  const handed: Handed = { delivery: leased, event, terminal: input.terminal }
  return { event, delivery: leased, handed }
})

/** The event of `input`, numbered after the earlier events of its object (unless the caller numbered it). */
const newEvent = Effect.fnUntraced(function*(input: EventInput) {
  const outbox = yield* OutboxRepository
  const entropy = yield* Entropy
  const now = yield* Clock.currentTimeMillis
  const object = input.paymentId ?? input.payoutId
  const event: OutboxEvent = {
    id: yield* entropy.uuid,
    terminalId: input.terminal.id,
    eventType: input.eventType,
    paymentId: input.paymentId,
    payoutId: input.payoutId,
    body: input.body,
    test: input.test,
    testClockId: input.testClockId ?? null,
    sequence: input.sequence ?? (object === null ? 1 : (yield* outbox.lastSequence(object)) + 1),
    createdAt: now
  }
  return event
})

/** Writes one event (numbered after the earlier events of its object) without a delivery; returns it. */
export const write = Traced.fn("Outbox.write")(function*(input: EventInput) {
  const event = yield* newEvent(input)
  yield* (yield* OutboxRepository).insertEvent(event)
  return event
})

/**
 * Writes the events a payment transition emitted, in order; `created` when the payment is new in
 * this transaction (its events are then numbered from 1 without a lookup).
 */
export const paymentEvents = Traced.fn("Outbox.paymentEvents")(function*(
  terminal: Terminal,
  payment: Payment,
  eventTypes: ReadonlyArray<CallbackEventType>,
  created = false
) {
  for (const [index, eventType] of eventTypes.entries()) {
    yield* enqueue(paymentEvent(terminal, payment, eventType, created ? index + 1 : undefined))
  }
})

/** What a payment's event is written from; `sequence` when the caller knows its number. */
export const paymentEvent = (terminal: Terminal, payment: Payment, eventType: CallbackEventType, sequence?: number): EventInput => ({
  ...(sequence === undefined ? {} : { sequence }),
  terminal,
  eventType,
  body: paymentBody(eventType, payment),
  test: payment.environment === "sandbox",
  paymentId: payment.id,
  payoutId: null,
  testClockId: payment.testClockId
})
