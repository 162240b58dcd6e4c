/**
 * The merchant API's resources and requests as TypeScript types, with the wire's own field names
 * (snake_case, amounts as decimal strings, ISO 8601 UTC timestamps). A test checks them against
 * the schemas the server's OpenAPI document is generated from.
 */

/** Status of a payment. */
export type PaymentStatus = "created" | "processing" | "paid" | "canceled" | "expired" | "chargeback" | "refunded"

/** A payment. */
export interface Payment {
  readonly id: string
  readonly payment_id: string
  readonly terminal_id: string
  readonly order_id: string
  /** Decimal roubles, two digits after the point (`"1000.50"`). */
  readonly amount: string
  readonly payment_currency: string
  readonly status: PaymentStatus
  readonly description: string | null
  readonly metadata: { readonly [key: string]: unknown } | null
  readonly payment_method: string
  readonly test: boolean
  readonly environment: "prod" | "sandbox"
  /** The test clock the sandbox payment lives on; null for most. */
  readonly test_clock: string | null
  /** Send the payer here. */
  readonly pay_url: string
  readonly subscription_id: string | null
  readonly recurring: boolean
  readonly created_at: string
  readonly updated_at: string
  readonly expires_at: string | null
  readonly paid_at: string | null
  /** What a live paid payment credited to the balance; null for sandbox payments and unpaid ones. */
  readonly settlement: Settlement | null
}

/**
 * A live paid payment's credit: the merchant amount in roubles (a subscription payment's plan
 * merchant amount), and once converted the USDT (rounded down), the rate and the time. A refund or
 * chargeback (the payment's status) takes back the same figures.
 */
export interface Settlement {
  readonly merchant_amount_rub: string
  /** Null while awaiting the terminal's scheduled conversion (for good when refunded or charged back before it). */
  readonly amount_usdt: string | null
  readonly rate: string | null
  readonly converted_at: string | null
}

/** `POST /api/v1/payments`. */
export interface PaymentCreate {
  /** Decimal roubles as a string: `"1000"`, `"1000.50"` or `"1000,50"`. */
  readonly amount: string
  /** Your order id; one order_id is one payment (a retry with the same parameters answers the same payment). */
  readonly order_id: string
  readonly payment_currency?: "RUB"
  readonly description?: string
  readonly payment_method?: string
  readonly metadata?: { readonly [key: string]: unknown }
  /** Sandbox payment (the client's `sandbox` option sets it). */
  readonly test?: boolean
  /** Sandbox only: a test clock of the terminal the payment lives on. */
  readonly test_clock?: string
  readonly terminal_id?: string
}

/** A page of a list. */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
  readonly page: number
  readonly per_page: number
  /** Pass as `cursor` for the records after these; null on the last page. */
  readonly next_cursor: string | null
}

/** `page` (50 a page, or `limit`), or `limit` records after a `cursor`. */
export interface Paging {
  readonly page?: number
  readonly limit?: number
  readonly cursor?: string
}

/** Filters of the payment list and statistics. */
export interface PaymentFilter {
  readonly terminal_id?: string
  /** Live only by default (the client's `sandbox` option makes it `sandbox`). */
  readonly environment?: "sandbox" | "all" | "prod"
  readonly recurring?: boolean
  readonly status?: PaymentStatus
  /** The payment of this `order_id` only. */
  readonly order_id?: string
  /** Created at or after this time (ISO 8601). */
  readonly created_from?: string
  /** Created before this time (ISO 8601, exclusive). */
  readonly created_to?: string
}

/** `GET /api/v1/payments/stats/daily`: the range is required; days group in `time_zone` (default `UTC`). */
export interface DailyStatsQuery extends Omit<PaymentFilter, "order_id" | "created_from" | "created_to"> {
  readonly created_from: string
  readonly created_to: string
  /** An IANA time zone, e.g. `Europe/Moscow`. */
  readonly time_zone?: string
}

/** Count and amount of one status. */
export interface StatusCount {
  readonly count: number
  readonly amount: string
}

/** `GET /api/v1/payments/stats`. */
export interface PaymentStats {
  readonly terminal_id: string
  readonly environment: "prod" | "sandbox" | "all"
  readonly recurring: boolean | null
  readonly currency: "RUB"
  readonly by_status: { readonly [S in PaymentStatus]: StatusCount }
  readonly total: StatusCount
}

/** `GET /api/v1/payments/stats/daily`: each calendar day with payments, days ascending. */
export interface PaymentDailyStats {
  readonly terminal_id: string
  readonly environment: "prod" | "sandbox" | "all"
  readonly recurring: boolean | null
  readonly currency: "RUB"
  readonly time_zone: string
  readonly created_from: string
  readonly created_to: string
  readonly items: ReadonlyArray<{
    /** `YYYY-MM-DD` in `time_zone`. */
    readonly date: string
    readonly by_status: { readonly [S in PaymentStatus]: StatusCount }
    readonly total: StatusCount
  }>
}

/** What a sandbox simulation asks for. */
export type SimulateOutcome = "paid" | "failed" | "processing"

/** A terminal and its settings. */
export interface Terminal {
  readonly id: string
  readonly terminal_id: string
  readonly account_id: string
  readonly name: string
  readonly status: "active" | "disabled"
  readonly h2h: boolean
  readonly callback_url: string | null
  readonly success_redirect_url: string | null
  readonly fail_redirect_url: string | null
  readonly conversion_mode: "instant" | "scheduled"
  readonly conversion_time: string | null
  readonly show_platform_branding: boolean
  readonly updated_at: string
}

/** `PUT /api/v1/terminals/{terminalID}`: any of these. */
export interface TerminalSettings {
  readonly callback_url?: string | null
  readonly success_redirect_url?: string | null
  readonly fail_redirect_url?: string | null
  readonly conversion_mode?: "instant" | "scheduled"
  readonly conversion_time?: string | null
  readonly show_platform_branding?: boolean
}

/** A terminal's balance. */
export interface Balance {
  readonly terminal_id: string
  readonly available_usdt: string
  readonly hold_usdt: string
  readonly pending_rub: string
}

/** The USDT/RUB rate. */
export interface Rate {
  readonly rate: string
  readonly updated_at: string
}

/** A USDT payout. */
export interface Payout {
  readonly id: string
  readonly terminal_id: string
  readonly amount_usdt: string
  readonly wallet_address: string
  readonly network: string
  readonly status: "created" | "pending" | "processing" | "completed" | "rejected"
  readonly idempotency_key: string | null
  readonly tx_id: string | null
  readonly reject_reason: string | null
  readonly created_at: string
  readonly updated_at: string
}

/** `POST /api/v1/payouts`. */
export interface PayoutCreate {
  /** USDT as a string, at most six decimals. */
  readonly amount_usdt: string
  readonly wallet_address: string
  readonly network: "TRC-20" | "ERC-20" | "TON"
  /**
   * Prevents duplicates (at most 128 printable ASCII characters): the same key and body answer the
   * first payout. The client sends it as the `Idempotency-Key` header too, on every retry. Absent or
   * null: the client generates one for the call (or takes the `idempotencyKey` option).
   */
  readonly idempotency_key?: string | null
}

/** A subscription plan. */
export interface Plan {
  readonly id: string
  readonly code: string
  readonly name: string
  readonly version: number
  readonly interval: "day" | "month" | "quarter" | "half_year" | "year"
  readonly schedule: "calendar" | "fixed_days"
  readonly cap_amount_rub?: string
  readonly merchant_amount_rub?: string
  readonly payer_amount_rub?: string
  readonly max_cycles?: number
}

/** A subscription. */
export interface Subscription {
  readonly id: string
  readonly terminal_id: string
  readonly plan_id: string
  readonly payer_id?: string
  readonly merchant_subscription_ref: string | null
  readonly description: string | null
  readonly provider_state: "new" | "active" | "stop"
  readonly billing_status: "consent_pending" | "pending" | "enabled" | "review" | "stop_pending" | "stopped"
  /** True for sandbox subscriptions (charged by the sandbox acquirer, no real money). */
  readonly test: boolean
  readonly environment: "prod" | "sandbox"
  /** The test clock the sandbox subscription lives on; null for most. */
  readonly test_clock: string | null
  readonly plan_code: string
  readonly plan_version: number
  readonly merchant_amount_rub: string
  readonly payer_amount_rub: string
  readonly interval: Plan["interval"]
  readonly max_cycles?: number
  readonly successful_cycles: number
  readonly consecutive_failures: number
  readonly next_charge_at: string | null
  readonly created_at: string
  readonly activated_at: string | null
  readonly stopped_at: string | null
  /** Creation answer only: send the payer here, unchanged. */
  readonly pay_url?: string
  /** Creation answer of an H2H terminal only. */
  readonly redirect_url?: string | null
}

/** `POST /api/v1/subscriptions`: `amount` for a plan with a ceiling, `payer_id` for a fixed tariff. */
export interface SubscriptionCreate {
  /** Required by the API; the client's `terminalId` option fills it in. */
  readonly terminal_id?: string
  readonly plan_id: string
  readonly amount?: string
  readonly payer_id?: string
  readonly merchant_subscription_ref?: string
  readonly description?: string
  /** `true` creates a sandbox subscription (the client's `sandbox` option does the same). */
  readonly test?: boolean
  /** Sandbox only: a test clock of the terminal the subscription lives on. */
  readonly test_clock?: string
}

/** Filters of the subscription list. */
export interface SubscriptionFilter {
  readonly terminal_id?: string
  /** `sandbox`, `all`, or live only (the default). */
  readonly environment?: "sandbox" | "all" | "prod"
  readonly state?: "new" | "active" | "stop"
}

/** The next charges of a subscription (`subscriptions.upcoming`). */
export interface UpcomingCharges {
  readonly subscription_id: string
  readonly items: ReadonlyArray<{
    readonly cycle_number: number
    readonly scheduled_at: string
    /** The same moment in Moscow time (UTC+03:00), for display. */
    readonly scheduled_at_moscow: string
    readonly amount_rub: string
  }>
}

/** The sandbox acquirer's answer to a charge of a sandbox subscription. */
export type SandboxChargeOutcome = "paid" | "failed" | "unknown"

/** A test clock: sandbox time you move. */
export interface TestClock {
  readonly id: string
  readonly terminal_id: string
  readonly name: string | null
  readonly frozen_time: string
  readonly status: "ready" | "advancing"
  /** While advancing: the time the clock moves to. */
  readonly target_frozen_time: string | null
  readonly created_at: string
  readonly updated_at: string
  /** When the clock and its objects are deleted automatically (its creation plus the event retention, 30 days by default). */
  readonly deletes_after: string
}

/** The answer of `testClocks.delete`. */
export interface DeletedTestClock {
  readonly id: string
  readonly deleted: true
}

/** A charge of a subscription's history. */
export interface Charge {
  readonly id: string
  /**
   * The payment this charge made, as a bare UUID (the spec's charge history), where `Payment.id` and
   * callbacks carry `pay_<uuid>`: compare `` `pay_${charge.payment_id}` `` with them, or read it with
   * `payments.get(charge.payment_id)` (either form is taken). `null` until the charge is booked.
   */
  readonly payment_id: string | null
  readonly status: "payed" | "fail" | "stop" | "pending"
  readonly validation_status: "accepted" | "review"
  readonly validation_reason: string | null
  readonly cycle_number: number
  readonly attempt: number
  readonly amount_rub: string
  readonly expected_amount_rub: string
  readonly scheduled_at: string
  readonly actual_at: string | null
  readonly created_at: string
  readonly message: string | null
}

/** Headers of a callback (lowercase names). */
export interface CallbackHeaders {
  readonly "content-type": "application/json"
  /** The spec's signature (during a rotation's overlap: with the previous secret). */
  readonly "x-signature": string
  readonly "x-timestamp": string
  readonly "x-test-mode"?: "true"
  /** During a rotation's overlap: the signature with the new secret. */
  readonly "x-signature-next"?: string
  /** `evt_<uuid>`, the same on every retry, resend and recovery. */
  readonly "x-event-id"?: string
  /** Position among the events of the payment or payout, from 1. */
  readonly "x-event-sequence"?: string
  /** On callbacks of a test clock's objects: the clock's id. */
  readonly "x-test-clock"?: string
  /** Beside `x-test-clock`: the clock's time of the attempt, Unix seconds (`x-timestamp` is the wall time of sending). */
  readonly "x-test-clock-time"?: string
  readonly "webhook-id"?: string
  readonly "webhook-timestamp"?: string
  readonly "webhook-signature"?: string
}

/** One event of the events feed: the exact callback body and the headers a delivery carries. */
export interface FeedEvent {
  readonly id: string
  readonly event_type: string
  readonly created_at: string
  readonly test: boolean
  readonly body: string
  readonly headers: CallbackHeaders
  /** Opaque (`feed_…`): pass as `after` to read the events after this one; valid when the event is deleted. */
  readonly cursor: string
}

/** `GET /api/v1/events/feed`. */
export interface EventFeed {
  readonly items: ReadonlyArray<FeedEvent>
  readonly next_after: string | null
}

/** The body of a payment callback. */
export interface PaymentEvent {
  readonly event_type: "payment.created" | "payment.paid" | "payment.canceled" | "payment.expired" | "payment.chargeback" | "payment.refunded" | "refund_request.completed"
  readonly payment_id: string
  readonly order_id: string
  readonly status: PaymentStatus
  readonly amount: string
  readonly currency: string
  readonly test: boolean
  readonly metadata?: { readonly [key: string]: unknown }
}

/** The body of `payout.completed`. */
export interface PayoutEvent {
  readonly event_type: "payout.completed"
  readonly payout_id: string
  readonly terminal_id: string
  readonly status: "completed"
  readonly amount_usdt: string
  readonly wallet_address: string
  readonly network: string
  readonly tx_id: string | null
  readonly test: false
}

/** The body of `ping`: a test of the endpoint (`terminals.testEvent`), signed like every callback. */
export interface PingEvent {
  readonly event_type: "ping"
  readonly terminal_id: string
  readonly sent_at: string
  readonly test: false
}

/** A verified callback. */
export type WebhookEvent = PaymentEvent | PayoutEvent | PingEvent

/** The types of callback events. */
export type EventType =
  | "payment.created"
  | "payment.paid"
  | "payment.canceled"
  | "payment.expired"
  | "payment.chargeback"
  | "payment.refunded"
  | "refund_request.completed"
  | "payout.completed"
  | "ping"

/** The latest delivery of an event, in a listing. */
export interface EventDeliverySummary {
  readonly status: "pending" | "delivered" | "failed"
  readonly attempts: number
  readonly next_attempt_at: string | null
  readonly last_status_code: number | null
  readonly delivered_at: string | null
}

/** A callback event (`GET /api/v1/events`). */
export interface Event {
  /** `evt_<uuid>`, as `X-Event-Id` carries it. */
  readonly id: string
  readonly type: EventType
  readonly terminal_id: string
  /** The payment (`pay_<uuid>`) or payout (`po_<uuid>`); null for `ping`. */
  readonly object_id: string | null
  /** Position among the events of its object, from 1. */
  readonly sequence: number
  readonly test: boolean
  readonly test_clock: string | null
  readonly created_at: string
  /** The callback body. */
  readonly payload: { readonly [key: string]: unknown }
  readonly delivery: EventDeliverySummary | null
}

/** One attempt of a delivery. */
export interface EventAttempt {
  readonly attempt: number
  readonly at: string
  readonly url: string
  readonly status_code: number | null
  readonly latency_ms: number
  readonly error: string | null
  /** The first 1 KiB of the endpoint's answer. */
  readonly response_body: string | null
}

/** One delivery of an event, with its attempts. */
export interface EventDelivery {
  readonly id: string
  /** `scheduled` (the event's own), `recover` (a recovery) or `resend` (one attempt). */
  readonly kind: "scheduled" | "recover" | "resend"
  readonly status: "pending" | "delivered" | "failed"
  readonly attempts: number
  readonly next_attempt_at: string | null
  readonly last_status_code: number | null
  readonly last_error: string | null
  readonly created_at: string
  readonly delivered_at: string | null
  readonly attempt_log: ReadonlyArray<EventAttempt>
}

/** An event with every delivery (`GET /api/v1/events/{id}`). */
export interface EventDetail extends Event {
  readonly deliveries: ReadonlyArray<EventDelivery>
}

/** A page of events, newest first. */
export interface EventPage {
  readonly items: ReadonlyArray<Event>
  /** Pass as `cursor` for the older events; null on the last page. */
  readonly next_cursor: string | null
}

/** Filters of the events list. */
export interface EventFilter {
  readonly terminal_id?: string
  /** `sandbox`, `all`, or live only (the default). */
  readonly environment?: "sandbox" | "all" | "prod"
  readonly type?: EventType
  /** A payment (`pay_<uuid>`) or payout (`po_<uuid>`). */
  readonly object_id?: string
  /** ISO 8601: created at or after this time. */
  readonly created_from?: string
  /** ISO 8601: created before this time (exclusive), later than `created_from`. */
  readonly created_to?: string
  readonly delivery_status?: "pending" | "delivered" | "failed" | "none"
  readonly limit?: number
  readonly cursor?: string
}

/** The answer of a resend or a test event. */
export interface EventSent {
  readonly event: Event
  readonly delivery: EventDelivery
  readonly attempt: EventAttempt | null
}

/** The health of a terminal's callback endpoint. */
export interface EndpointHealth {
  readonly status: "healthy" | "failing" | "unknown"
  readonly last_attempt_at: string | null
  readonly last_error: string | null
  readonly failing_since: string | null
}

/** A terminal with its callback endpoint's health (`GET /api/v1/terminals/{id}`). */
export interface TerminalDetails extends Terminal {
  readonly callback_endpoint: EndpointHealth
  /** While a rotated-out signing secret still signs `X-Signature`: until when. */
  readonly previous_secret_expires_at: string | null
}

/** A session of the dashboard (`Paydesk.login`, `auth.refresh`). */
export interface TokenPair {
  readonly access_token: string
  readonly refresh_token: string
  /** Unix time (seconds) when the access token expires. */
  readonly expires_at: number
  readonly user: { readonly id: string; readonly email: string; readonly role: string; readonly account_id: string }
}

/** An API key as listed (the key itself is never shown again). */
export interface ApiKey {
  readonly id: string
  readonly terminal_id: string
  /** The first characters of the key, to recognise it. */
  readonly prefix: string
  readonly subscription_write: boolean
  readonly created_at: string
  readonly revoked_at: string | null
}

/** A new API key: `api_key` is shown only in this answer. */
export interface CreatedApiKey extends ApiKey {
  readonly api_key: string
}

/** A rotated signing secret: shown only in this answer. */
export interface SigningSecretRotation {
  readonly terminal_id: string
  /** The new secret: signs `X-Signature-Next` during the overlap, `X-Signature` after it. */
  readonly signing_secret: string
  /** The same secret in Standard Webhooks' form (`whsec_` + base64). */
  readonly signing_secret_whsec: string
  readonly rotated_at: string
  /** Until then `X-Signature` is still signed with the previous secret (null: no overlap). */
  readonly previous_secret_expires_at: string | null
}
