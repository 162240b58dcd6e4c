/**
 * Callbacks: outbox events, their deliveries and the delivery policy of the spec.
 *
 * An event is written to the outbox in the same transaction as the state change that caused
 * it, with its exact JSON body. A delivery per event is created when the terminal has a
 * `callback_url`. A 2xx answer within 10 s ends it; failed attempt n is retried after
 * 30 s x 2^(n-1); after the 8th failed attempt the delivery is `failed`.
 */

export type EventType =
  | "payment.created"
  | "payment.paid"
  | "payment.canceled"
  | "payment.expired"
  | "payment.chargeback"
  | "payment.refunded"
  | "refund_request.completed"
  | "payout.completed"

/** An outbox event; `body` is the exact JSON sent and signed. */
export interface OutboxEvent {
  readonly id: string
  readonly terminalId: string
  readonly eventType: EventType
  readonly paymentId: string | null
  readonly payoutId: string | null
  readonly body: string
  readonly test: boolean
  readonly createdAt: number
}

export type DeliveryStatus = "pending" | "delivered" | "failed"

/** The delivery of one event to the terminal's callback URL. */
export interface Delivery {
  readonly id: string
  readonly eventId: string
  readonly terminalId: string
  readonly status: DeliveryStatus
  readonly attempts: number
  readonly nextAttemptAt: number | null
  /**
   * When an attempt was started and not yet recorded: the moment its `X-Timestamp` names. A
   * delivery re-sent after a crash in the middle of an attempt repeats this timestamp, so the
   * repeat carries the same body, timestamp and signature as the copy that was in flight.
   */
  readonly sendingAt: number | null
  readonly lastStatusCode: number | null
  readonly lastError: string | null
  readonly createdAt: number
  readonly updatedAt: number
  readonly deliveredAt: number | null
}

/** One attempt of a delivery, for the operator's attempt log. */
export interface Attempt {
  readonly id: string
  readonly deliveryId: string
  readonly attemptNumber: number
  readonly at: number
  readonly url: string
  readonly statusCode: number | null
  readonly latencyMs: number
  readonly error: string | null
}

/** At most this many attempts per delivery. */
export const maxAttempts = 8
/** The receiver must answer within this many milliseconds. */
export const timeoutMs = 10_000
/** Delay after the first failed attempt. */
export const baseDelayMs = 30_000

/** Milliseconds to wait after failed attempt `n` (1-based), or null when no attempt follows. */
export const retryDelayMs = (failedAttempt: number): number | null =>
  failedAttempt >= maxAttempts ? null : baseDelayMs * 2 ** (failedAttempt - 1)

/** A status code that ends the delivery. */
/**
 * How long the stamp of an attempt a crash cut short is reused for its re-send: well inside the
 * 300 s a receiver accepts a timestamp for (`Signature.DEFAULT_TOLERANCE_SECONDS`), so the repeat
 * is byte-identical when it can be and still accepted when it cannot.
 */
export const stampReuseMs = 240_000

/** Whether a status code ends a delivery (2xx). */
export const isSuccess = (statusCode: number): boolean => statusCode >= 200 && statusCode < 300
