/**
 * Callbacks: outbox events, their deliveries and the delivery policy of the spec.
 *
 * An event is written to the outbox in the same transaction as the state change that caused
 * it, with its exact JSON body, its id (`evt_<uuid>`, stable across retries and resends) and its
 * sequence number among the events of its object (payment or payout), so a receiver can drop an
 * older event arriving after a newer one. A delivery is created when the terminal has a
 * `callback_url`: the `scheduled` one at once, a `recover` one when the merchant re-queues a
 * failed event (the same 8 attempts again), a `resend` one for a single attempt now. A 2xx answer
 * within 10 s ends it; failed attempt n is retried after 30 s x 2^(n-1); after the 8th failed
 * attempt the delivery is `failed`.
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
  /** A test event the merchant asks for (`POST /terminals/{id}/test-event`); beyond the spec. */
  | "ping"

/** An outbox event; `body` is the exact JSON sent and signed. */
export interface OutboxEvent {
  readonly id: string
  readonly terminalId: string
  readonly eventType: EventType
  readonly paymentId: string | null
  readonly payoutId: string | null
  readonly body: string
  readonly test: boolean
  /** The test clock of the event's payment (its callbacks carry `X-Test-Clock`); `null` for most. */
  readonly testClockId: string | null
  /** Position among the events of its object (payment or payout; a ping is its own object), from 1. */
  readonly sequence: number
  readonly createdAt: number
}

export type DeliveryStatus = "pending" | "delivered" | "failed"

/** Why a delivery exists: the event itself, a merchant's recovery of a failed one, or a single resend. */
export type DeliveryKind = "scheduled" | "recover" | "resend"

/** The delivery of one event to the terminal's callback URL. */
export interface Delivery {
  readonly id: string
  readonly eventId: string
  readonly terminalId: string
  readonly kind: DeliveryKind
  /** The test clock of its event: attempts run at the clock's time, by its advances only. */
  readonly testClockId: string | null
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
  /** The first bytes of the answer's body (at most `responseExcerptBytes`, as text), when one came. */
  readonly responseBody: string | null
}

/**
 * Which of an event's deliveries (oldest first) stands for the event in lists and reads: the last
 * that got a 2xx, else the last still pending (being retried), else the last; null for none.
 */
export const standing = <D extends Pick<Delivery, "status">>(deliveries: ReadonlyArray<D>): D | null =>
  deliveries.findLast((d) => d.status === "delivered") ?? deliveries.findLast((d) => d.status === "pending") ?? deliveries.at(-1) ?? null

/** At most this many attempts per delivery. */
export const maxAttempts = 8
/** The receiver must answer within this many milliseconds. */
export const timeoutMs = 10_000
/** At most this many bytes of a receiver's answer are read and kept for the attempt log. */
export const responseExcerptBytes = 1024
/** Delay after the first failed attempt. */
export const baseDelayMs = 30_000

/** Milliseconds to wait after failed attempt `n` (1-based), or null when no attempt follows. */
export const retryDelayMs = (failedAttempt: number, kind: DeliveryKind = "scheduled"): number | null =>
  failedAttempt >= attemptsOf(kind) ? null : baseDelayMs * 2 ** (failedAttempt - 1)

/** Attempts a delivery may make: the spec's 8, or 1 for a resend (an attempt now, outside the 8). */
export const attemptsOf = (kind: DeliveryKind): number => kind === "resend" ? 1 : maxAttempts

/** How long a rotated-out signing secret still signs callbacks beside the new one. */
export const defaultSecretOverlapMs = 24 * 3_600_000

/** How long events (with their deliveries and attempts) are kept and listed. */
export const defaultEventRetentionMs = 30 * 24 * 3_600_000

/** The public id of an event (`evt_<uuid>`), as callbacks and the events API carry it. */
export const eventId = (uuid: string): string => `evt_${uuid}`

/** The uuid behind `evt_<uuid>` (a bare UUID is accepted too), or null. */
export const parseEventId = (input: string): string | null => {
  const raw = input.toLowerCase().startsWith("evt_") ? input.slice(4) : input
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw) ? raw.toLowerCase() : null
}

/** The object an event is about, for its sequence and the events API's `object_id` filter. */
export const objectKeyOf = (event: Pick<OutboxEvent, "id" | "paymentId" | "payoutId">): string =>
  event.paymentId ?? event.payoutId ?? event.id

/** Health of a terminal's callback endpoint, from its latest attempts. */
export interface EndpointHealth {
  /** `unknown` before any attempt; `failing` while the latest attempts failed. */
  readonly status: "healthy" | "failing" | "unknown"
  readonly lastAttemptAt: number | null
  readonly lastError: string | null
  /** The first failed attempt of the current run of failures. */
  readonly failingSince: number | null
}

/** A status code that ends the delivery. */
/**
 * How long the stamp of an attempt a crash cut short is reused for its re-send: well inside the
 * 300 s a receiver accepts a timestamp for (`Signature.DEFAULT_TOLERANCE_SECONDS`), so the repeat
 * is byte-identical when it can be and still accepted when it cannot.
 */
export const stampReuseMs = 240_000

/** Whether a status code ends a delivery (2xx). */
export const isSuccess = (statusCode: number): boolean => statusCode >= 200 && statusCode < 300
