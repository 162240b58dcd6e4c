/**
 * The errors the client throws: `PaydeskApiError` for an answer of the API (its status, stable
 * `code`, message, `request_id` and the field at fault), `PaydeskConnectionError` when no answer
 * came (after the retries that were safe), and `WebhookVerificationError` for a callback that does
 * not verify, `PaydeskAbortError` when the caller's `signal` cancelled a call,
 * `PaydeskSessionEndedError` for a call on a dashboard session that has ended, and `ListenerCursorLost`
 * when `listen` cannot go on. All extend `PaydeskError`.
 *
 * The errors of a call (`PaydeskApiError`, `PaydeskConnectionError`, `PaydeskAbortError`,
 * `PaydeskSessionEndedError`) also say what the call sent (`CallOutcome`): the attempts, whether a
 * write may have been done all the same (`outcomeUnknown`), and the `Idempotency-Key` (given or
 * generated) or `order_id` that repeats it safely.
 */

/**
 * What the error of a call says about the attempts it sent. The client fills it on every error of a
 * call; an error built by hand without it has 1 attempt (0 for a session that had ended) and
 * `outcomeUnknown` false.
 */
export interface CallOutcome {
  /** The attempts sent (retries included; 0 when the call failed before sending anything). */
  readonly attempts: number
  /**
   * Whether a write (POST or PUT) may have been done although the call failed: some attempt went
   * out and got no definite answer (no answer, a timeout, an answer cut off, a cancel while it was
   * in flight, or a 5xx, which a proxy may give after the server did the work), and no later answer
   * settled it. A later 2xx settles it, or a refusal that judged the request itself (400, 413, 415,
   * 422, a 409 `idempotency_conflict` or `order_id_conflict`): the same body under the same `order_id`
   * or key was judged the same the first time. Other refusals (401, 403, 408, 429, a 409
   * `write_conflict`) refuse that attempt only. Always false for reads and for a call that sent
   * nothing. When true, repeat the call with the same `order_id` or `idempotencyKey` to learn its result.
   */
  readonly outcomeUnknown: boolean
  /**
   * The `Idempotency-Key` the call carried (given, or generated for a payout or a subscription):
   * pass it as `idempotencyKey` to repeat the call; the server answers the first result again.
   */
  readonly idempotencyKey?: string | undefined
  /** A payment creation's `order_id`: creating the payment again with it answers the same payment. */
  readonly orderId?: string | undefined
}

/** Where an error keeps its classes' names (a global symbol: the same in every copy of the package). */
const kinds = Symbol.for("@paydesk/client/error-kinds")

/**
 * Every error of the client. `instanceof` holds across the package's CommonJS and ESM builds loaded
 * in one process (a dependency that `require`s the client, an application that `import`s it): each
 * error carries the names of its classes, which `instanceof` reads when the prototype chain is of
 * the other copy (the "dual package hazard").
 */
export class PaydeskError extends Error {
  override readonly name: string = "PaydeskError"
  /** The class's own name for `instanceof` across copies; a subclass of yours without one is matched by its prototype only. */
  static readonly kind: string = "PaydeskError"
  declare readonly [kinds]: ReadonlyArray<string>

  constructor(message?: string, options?: { readonly cause?: unknown }) {
    super(message, options)
    const chain: Array<string> = []
    for (let c: unknown = new.target; typeof c === "function" && c !== Error; c = Object.getPrototypeOf(c)) {
      if (Object.hasOwn(c, "kind")) chain.push((c as unknown as { readonly kind: string }).kind)
    }
    Object.defineProperty(this, kinds, { value: Object.freeze(chain) })
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true
    if (typeof value !== "object" || value === null || !Object.hasOwn(this, "kind")) return false
    const chain = (value as { readonly [kinds]?: unknown })[kinds]
    return Array.isArray(chain) && chain.includes((this as unknown as { readonly kind: string }).kind)
  }
}

/**
 * The errors of a call: what the call sent (`CallOutcome`), copied from `given`, else `attempts`
 * attempts and a known outcome (explicit fields: `exactOptionalPropertyTypes`).
 */
export abstract class PaydeskCallError extends PaydeskError implements CallOutcome {
  static override readonly kind: string = "PaydeskCallError"
  readonly attempts: number
  readonly outcomeUnknown: boolean
  readonly idempotencyKey: string | undefined
  readonly orderId: string | undefined
  constructor(message: string, given: Partial<CallOutcome> | undefined, attempts: number, options?: { readonly cause?: unknown }) {
    super(message, options)
    this.attempts = given?.attempts ?? attempts
    this.outcomeUnknown = given?.outcomeUnknown ?? false
    this.idempotencyKey = given?.idempotencyKey
    this.orderId = given?.orderId
  }
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
  | "invalid_credentials"
  | "write_conflict"
  | "test_clock_advancing"
  | "service_busy"
  | "service_unavailable"
  | "uri_too_long"
  | "request_timeout"
  | "headers_too_large"
  | "internal_error"
  | (string & {})

/** The details of an error answer beside its status, code and message. */
export interface ApiErrorDetails extends Partial<CallOutcome> {
  /**
   * The answer's `Retry-After` in ms (delay-seconds, or an HTTP-date counted from the answer's
   * `Date`), as the server sent it; usually on a 429 or a 503.
   */
  readonly retryAfterMs?: number | undefined
}

/** An error answer of the API: `{ error: { code, message, request_id, field? } }`. */
export class PaydeskApiError extends PaydeskCallError {
  static override readonly kind: string = "PaydeskApiError"
  override readonly name = "PaydeskApiError"
  /**
   * How long the server asked to wait before trying again (`Retry-After`, in ms), when it said;
   * the client's own retries (5xx of calls safe to repeat) wait for it up to 60 s. A 429 is not
   * retried by the client: wait this long before calling again.
   */
  readonly retryAfterMs: number | undefined
  constructor(
    /** HTTP status. */
    readonly status: number,
    readonly code: ApiErrorCode,
    message: string,
    /** The request's id (`x-request-id`): quote it to support. */
    readonly requestId: string | undefined,
    /** The request field at fault, when one is. */
    readonly field?: string,
    details: ApiErrorDetails = {}
  ) {
    // The attempts sent, this one included; a 5xx, or an earlier attempt without an answer, leaves the outcome unknown.
    super(message, details, 1)
    this.retryAfterMs = details.retryAfterMs
  }
}

/**
 * Whether an error answer judged the request itself (its body: 400, 413, 415, 422, a 409
 * `idempotency_conflict` or `order_id_conflict`), so the same request under the same key is judged
 * the same again and an earlier attempt of it was refused too; not one that refused that attempt
 * only (401, 403, 408, 429, a 409 `write_conflict`, a 5xx). `CallOutcome.outcomeUnknown` follows it.
 */
export const judgesRequest = (error: unknown): boolean =>
  error instanceof PaydeskApiError && judged(error.status, error.code)

/** `judgesRequest` of an answer's status and code. */
export const judged = (status: number, code: string | undefined): boolean =>
  status === 400 || status === 413 || status === 415 || status === 422 ||
  (status === 409 && (code === "idempotency_conflict" || code === "order_id_conflict"))

/** The options of a call's error: its cause and what the call sent. */
export interface CallErrorOptions extends Partial<Omit<CallOutcome, "attempts">> {
  readonly cause?: unknown
}

/**
 * No answer: a network failure or a timeout, after the retries that were safe. For a write
 * `outcomeUnknown` is true: it may have been done; repeat it with the same `order_id` or
 * `idempotencyKey` (this error's `idempotencyKey` when the client generated it) to learn its result.
 */
export class PaydeskConnectionError extends PaydeskCallError {
  static override readonly kind: string = "PaydeskConnectionError"
  override readonly name = "PaydeskConnectionError"
  constructor(message: string, attempts: number, options?: CallErrorOptions) {
    super(message, options, attempts, options)
  }
}

/**
 * The call was cancelled by the caller's `signal` (its `reason` is the `cause`); not retried. A write
 * cancelled after it was sent may still have taken effect (`outcomeUnknown`): repeat it with the same
 * `order_id` or idempotency key (`idempotencyKey`) to learn its result.
 */
export class PaydeskAbortError extends PaydeskCallError {
  static override readonly kind: string = "PaydeskAbortError"
  override readonly name = "PaydeskAbortError"
  constructor(message: string, attempts: number, options?: CallErrorOptions) {
    super(message, options, attempts, options)
  }
}

/**
 * The client's dashboard session has ended (`auth.logout()`, or its refresh token was refused): the
 * call was not sent, or (when it ended between the attempts of a call) not sent again: `attempts` and
 * `outcomeUnknown` say whether an earlier attempt may have done the work. Sign in again
 * (`Paydesk.login`) and use the new client.
 */
export class PaydeskSessionEndedError extends PaydeskCallError {
  static override readonly kind: string = "PaydeskSessionEndedError"
  override readonly name = "PaydeskSessionEndedError"
  constructor(outcome?: Partial<CallOutcome>) {
    super("Paydesk: the session has ended; sign in again (Paydesk.login)", outcome, 0)
  }
}

/**
 * Every cursor the listener sends came from the server, so a refused one is no longer known to it:
 * the server's data was reset or restored to an earlier point, or its secret key changed (or a server
 * before `feed_` cursors answered, and the cursor's event was purged). Where to go on from is then unknown (the feed's start would forward old events again,
 * its end skip any in between), so the listener stops and says why.
 */
export class ListenerCursorLost extends PaydeskError {
  static override readonly kind: string = "ListenerCursorLost"
  override readonly name = "ListenerCursorLost"
  constructor(readonly cursor: string, options: { readonly cause: unknown }) {
    super(
      `the server does not know the feed cursor ${cursor}, where this listener stood (its data was reset or restored, its secret ` +
        "key changed, or a server of an older version answered and the event was gone): start the listener again (the events list, " +
        "`paydesk events list`, shows what happened meanwhile)",
      options
    )
  }
}

/** Why a callback did not verify. */
export type WebhookFailure = "missing_header" | "malformed_signature" | "signature_mismatch" | "timestamp_out_of_tolerance" | "malformed_body"

/** A callback that must not be trusted (answer it 4xx). */
export class WebhookVerificationError extends PaydeskError {
  static override readonly kind: string = "WebhookVerificationError"
  override readonly name = "WebhookVerificationError"
  constructor(readonly reason: WebhookFailure, message: string) {
    super(message)
  }
}
