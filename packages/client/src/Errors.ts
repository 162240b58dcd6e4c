/**
 * The errors the client throws: `PaydeskApiError` for an answer of the API (its status, stable
 * `code`, message, `request_id` and the field at fault), `PaydeskConnectionError` when no answer
 * came (after the retries that were safe), and `WebhookVerificationError` for a callback that does
 * not verify, `PaydeskAbortError` when the caller's `signal` cancelled a call,
 * `PaydeskSessionEndedError` for a call on a dashboard session that has ended, and `ListenerCursorLost`
 * when `listen` cannot go on. All extend `PaydeskError`.
 */

/** Every error of the client. */
export class PaydeskError extends Error {
  override readonly name: string = "PaydeskError"
}

/** Stable codes of the API's errors (others may come; compare with `code`). */
export type ApiErrorCode =
  | "invalid_request"
  | "invalid_json_body"
  | "body_too_large"
  | "unsupported_media_type"
  | "amount_malformed"
  | "usdt_amount_malformed"
  | "amount_not_positive"
  | "amount_exceeds_ceiling"
  | "unauthenticated"
  | "nonce_already_used"
  | "access_denied"
  | "terminal_id_required"
  | "terminal_unavailable"
  | "not_found"
  | "route_not_found"
  | "idempotency_conflict"
  | "order_id_conflict"
  | "plan_not_available"
  | "recurring_not_configured"
  | "provider_unavailable"
  | "recurring_temporarily_unavailable"
  | "stop_failed"
  | "subscription_fields_missing"
  | "insufficient_balance"
  | "max_active_payouts"
  | "invalid_transition"
  | "operation_not_allowed"
  | "too_many_requests"
  | "service_busy"
  | "service_unavailable"
  | "uri_too_long"
  | "request_timeout"
  | "headers_too_large"
  | "internal_error"
  | (string & {})

/** An error answer of the API: `{ error: { code, message, request_id, field? } }`. */
export class PaydeskApiError extends PaydeskError {
  override readonly name = "PaydeskApiError"
  constructor(
    /** HTTP status. */
    readonly status: number,
    readonly code: ApiErrorCode,
    message: string,
    /** The request's id (`x-request-id`): quote it to support. */
    readonly requestId: string | undefined,
    /** The request field at fault, when one is. */
    readonly field?: string
  ) {
    super(message)
  }
}

/** No answer: a network failure or a timeout, after the retries that were safe. */
export class PaydeskConnectionError extends PaydeskError {
  override readonly name = "PaydeskConnectionError"
  constructor(message: string, readonly attempts: number, options?: { readonly cause?: unknown }) {
    super(message, options)
  }
}

/**
 * The call was cancelled by the caller's `signal` (its `reason` is the `cause`); not retried. A write
 * cancelled after it was sent may still have taken effect: repeat it with the same `order_id` or
 * idempotency key to learn its result.
 */
export class PaydeskAbortError extends PaydeskError {
  override readonly name = "PaydeskAbortError"
  constructor(message: string, readonly attempts: number, options?: { readonly cause?: unknown }) {
    super(message, options)
  }
}

/**
 * The client's dashboard session has ended (`auth.logout()`, or its refresh token was refused): the
 * call was not sent. Sign in again (`Paydesk.login`) and use the new client.
 */
export class PaydeskSessionEndedError extends PaydeskError {
  override readonly name = "PaydeskSessionEndedError"
  constructor() {
    super("Paydesk: the session has ended; sign in again (Paydesk.login)")
  }
}

/**
 * Every cursor the listener sends came from the server, so a refused one is gone from it: purged by
 * the event retention (a listener left that long without an event), or the server's data was reset
 * or restored. Where to go on from is then unknown (the feed's start would forward old events again,
 * its end skip any in between), so the listener stops and says why.
 */
export class ListenerCursorLost extends PaydeskError {
  override readonly name = "ListenerCursorLost"
  constructor(readonly cursor: string, options: { readonly cause: unknown }) {
    super(
      `the server no longer holds event ${cursor}, where this listener stood (purged by the event retention after a long time ` +
        "without events, or the server's data was reset): start the listener again (the events list, `paydesk events list`, shows what happened meanwhile)",
      options
    )
  }
}

/** Why a callback did not verify. */
export type WebhookFailure = "missing_header" | "malformed_signature" | "signature_mismatch" | "timestamp_out_of_tolerance" | "malformed_body"

/** A callback that must not be trusted (answer it 4xx). */
export class WebhookVerificationError extends PaydeskError {
  override readonly name = "WebhookVerificationError"
  constructor(readonly reason: WebhookFailure, message: string) {
    super(message)
  }
}
