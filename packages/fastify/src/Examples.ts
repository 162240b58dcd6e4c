/**
 * Example values of the API's resources, shown in the OpenAPI document beside each operation (the
 * document's lint checks every one against its schema).
 */
import { IdempotencyConflict } from "@paydesk/core"

const terminalId = "7b0e9f5c-3d1a-4c8e-9a57-2f4b6c1d8e90"
const accountId = "0d4f6a2b-8c3e-4b1f-a9d7-5e2c8b1a4f63"
const at = "2026-03-01T09:30:00.000Z"
const later = "2026-03-01T09:31:12.000Z"

export const ids = {
  terminal: terminalId,
  account: accountId,
  user: "5a1c9e3b-7d2f-4e8a-b6c4-1f9d3e7a2b58",
  payment: "pay_3f0c2a8e-6b1d-4f7a-9c5e-8d2b4a6f1e03",
  payout: "po_9e4b7c1a-2f8d-4a6e-b3c9-7d1f5e2a8c46",
  subscription: "c2e8a4f6-1b3d-4c7e-9f5a-6d8b2e4c1a97",
  plan: "e6a2c8f4-9d1b-4e3a-8c7f-2b5d9e1a6c34",
  apiKey: "4d8f2b6e-3a9c-4f1d-b7e5-8c2a6f4d1b93",
  event: "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
  testClock: "d3f5a7c9-2e4b-4d6f-8a1c-5b7e9d2f4a68",
  delivery: "b7c9e1a3-5d2f-4b8e-9a6c-3f1d7e5b2a84"
}

export const payment = {
  id: ids.payment,
  payment_id: ids.payment,
  terminal_id: terminalId,
  order_id: "ord-1001",
  amount: "1000.50",
  payment_currency: "RUB",
  status: "created" as const,
  description: "Coffee beans, 1 kg",
  metadata: { cart: "c-77" },
  payment_method: "sbp_test",
  test: true,
  environment: "sandbox" as const,
  test_clock: null,
  pay_url: "http://127.0.0.1:8080/public/payments/q8Zk3vN1xYb7Tc2LmP4sWd9R",
  subscription_id: null,
  recurring: false,
  created_at: at,
  updated_at: at,
  expires_at: "2026-03-01T10:00:00.000Z",
  paid_at: null,
  settlement: null
}

export const paidPayment = { ...payment, status: "paid" as const, updated_at: later, paid_at: later }

/** A live payment paid and converted at once (instant mode): 1000.50 RUB at 95.50 is 10.476439 USDT, rounded down. */
export const paidLivePayment = {
  ...paidPayment,
  test: false,
  environment: "prod" as const,
  payment_method: "sbp",
  settlement: { merchant_amount_rub: "1000.50", amount_usdt: "10.476439", rate: "95.50", converted_at: later }
}

const pageOf = <A>(item: A) => ({ items: [item], total: 1, page: 1, per_page: 50, next_cursor: null })

export const paymentPage = pageOf(payment)

const counts = { count: 0, amount: "0.00" }

export const paymentStats = {
  terminal_id: terminalId,
  environment: "sandbox" as const,
  recurring: null,
  currency: "RUB" as const,
  by_status: { created: { count: 1, amount: "1000.50" }, processing: counts, paid: { count: 2, amount: "3000.00" }, canceled: counts, expired: counts, chargeback: counts, refunded: counts },
  total: { count: 3, amount: "4000.50" }
}

export const paymentDailyStats = {
  terminal_id: terminalId,
  environment: "prod" as const,
  recurring: null,
  currency: "RUB" as const,
  time_zone: "Europe/Moscow",
  created_from: "2026-02-28T21:00:00.000Z",
  created_to: "2026-03-02T21:00:00.000Z",
  items: [
    {
      date: "2026-03-01",
      by_status: { ...paymentStats.by_status, created: counts, paid: { count: 2, amount: "3000.00" } },
      total: { count: 2, amount: "3000.00" }
    },
    {
      date: "2026-03-02",
      by_status: { ...paymentStats.by_status, created: { count: 1, amount: "1000.50" }, paid: counts },
      total: { count: 1, amount: "1000.50" }
    }
  ]
}

export const terminal = {
  id: terminalId,
  terminal_id: terminalId,
  account_id: accountId,
  name: "Shop",
  status: "active" as const,
  h2h: false,
  callback_url: "https://coffee.example/paydesk/callbacks",
  success_redirect_url: "https://coffee.example/thanks",
  fail_redirect_url: null,
  conversion_mode: "instant" as const,
  conversion_time: null,
  show_platform_branding: true,
  updated_at: at
}

export const balance = { terminal_id: terminalId, available_usdt: "125.400000", hold_usdt: "20.000000", pending_rub: "0.00" }

export const rate = { rate: "95.50", updated_at: at }

export const payout = {
  id: ids.payout,
  terminal_id: terminalId,
  amount_usdt: "20.000000",
  wallet_address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE",
  network: "TRC-20",
  status: "created" as const,
  idempotency_key: "payout-2026-03-01",
  tx_id: null,
  reject_reason: null,
  created_at: at,
  updated_at: at
}

export const payoutPage = pageOf(payout)

export const plan = {
  id: ids.plan,
  code: "coffee-monthly",
  name: "Coffee club, monthly",
  version: 1,
  interval: "month" as const,
  schedule: "calendar" as const,
  cap_amount_rub: "4000.00"
}

export const subscription = {
  id: ids.subscription,
  terminal_id: terminalId,
  plan_id: ids.plan,
  merchant_subscription_ref: "member-42",
  description: null,
  provider_state: "new" as const,
  billing_status: "consent_pending" as const,
  test: false,
  environment: "prod" as const,
  test_clock: null,
  plan_code: "coffee-monthly",
  plan_version: 1,
  merchant_amount_rub: "1500.00",
  payer_amount_rub: "1500.00",
  interval: "month" as const,
  successful_cycles: 0,
  consecutive_failures: 0,
  next_charge_at: null,
  created_at: at,
  activated_at: null,
  stopped_at: null,
  pay_url: "http://127.0.0.1:8080/public/subscriptions/Hn4kT8wQz2Lx6Vb1Rc9Ym3Pd"
}

export const { pay_url: _payUrl, ...storedSubscription } = subscription

export const subscriptionPage = pageOf(storedSubscription)

export const charge = {
  id: "f3a7c1e9-2b5d-4f8a-9c6e-1d4b7a2f5c83",
  payment_id: ids.payment,
  status: "payed" as const,
  validation_status: "accepted" as const,
  validation_reason: null,
  cycle_number: 1,
  attempt: 1,
  amount_rub: "1500.00",
  expected_amount_rub: "1500.00",
  scheduled_at: at,
  actual_at: later,
  created_at: later,
  message: null
}

export const apiKey = {
  id: ids.apiKey,
  terminal_id: terminalId,
  prefix: "pk_8Hq2",
  subscription_write: true,
  created_at: at,
  revoked_at: null
}

export const createdApiKey = { ...apiKey, api_key: "pk_8Hq2xV7mN3bL9tR4cW1zY6kD0sF5gJ2p" }

export const signingSecretRotation = {
  terminal_id: terminalId,
  signing_secret: "sk_sign_J7pL2xQ9vB4nM8kT1cR6yW3zD5sF0gH",
  signing_secret_whsec: "whsec_c2tfc2lnbl9KN3BMMnhROXZCNG5NOGtUMWNSNnlXM3pENXNGMGdI",
  rotated_at: at,
  previous_secret_expires_at: "2026-03-02T09:30:00.000Z"
}

export const tokenPair = {
  access_token: "eyJ0eXAiOiJhY2Nlc3MifQ.abc.def",
  refresh_token: "rt_5mQ8xL2vN9bT4kW7cR1yZ6pD3sF0gHj",
  expires_at: 1772358300,
  user: { id: ids.user, email: "owner@coffee.example", role: "owner", account_id: accountId }
}

export const ok = { ok: true as const }

export const paymentEvent = {
  event_type: "payment.paid" as const,
  payment_id: ids.payment,
  order_id: "ord-1001",
  status: "paid" as const,
  amount: "1000.50",
  currency: "RUB",
  test: true,
  metadata: { cart: "c-77" }
}

export const payoutEvent = {
  event_type: "payout.completed" as const,
  payout_id: ids.payout,
  terminal_id: terminalId,
  status: "completed" as const,
  amount_usdt: "20.000000",
  wallet_address: payout.wallet_address,
  network: "TRC-20",
  tx_id: "0x7f3e9a1c",
  test: false as const
}

export const callbackHeaders = {
  "content-type": "application/json" as const,
  "x-signature": "5d41402abc4b2a76b9719d911017c592ae8c0b1e2f3d4a5b6c7d8e9f0a1b2c3d",
  "x-timestamp": "1772357472",
  "x-test-mode": "true" as const,
  "x-event-id": `evt_${ids.event}`,
  "x-event-sequence": "2",
  "webhook-id": `evt_${ids.event}`,
  "webhook-timestamp": "1772357472",
  "webhook-signature": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="
}

export const pingEvent = { event_type: "ping" as const, terminal_id: terminalId, sent_at: later, test: false as const }

export const callbackSignatureNext = "0c9a7e5b3d1f2a4c6e8b0d2f4a6c8e1b3d5f7a9c2e4b6d8f1a3c5e7b9d2f4a61"

const feedCursor = "feed_v1.Hq3xV0bJ9c2LkRmT.N4pW7sYd1aQe8ZfG2hKj5A.c2FuZGJveC1leGFtcGxlLWN1cnNvci1ieXRlcy0wMDAx"

export const eventFeed = {
  items: [{
    id: `evt_${ids.event}`,
    event_type: "payment.paid",
    created_at: later,
    test: true,
    body: JSON.stringify(paymentEvent),
    headers: callbackHeaders,
    cursor: feedCursor
  }],
  next_after: feedCursor
}

export const pageStatus = { status: "paid" as const, redirect_url: "https://coffee.example/thanks" }

export const consentConfirmed = { billing_status: "consent_pending", first_payment_url: "http://127.0.0.1:8080/public/payments/Wb3nK7qT1xZ9vL4mR8cY2pD6" }

export const error = (code: string, message: string, field?: string) => ({
  error: { code, message, request_id: "req_0f1e2d3c4b5a69788796a5b4c3d2e1f0", ...(field === undefined ? {} : { field }) }
})

export const accountCreated = { account_id: accountId, user_id: ids.user }

export const terminalCreated = {
  terminal_id: terminalId,
  api_key: createdApiKey.api_key,
  signing_secret: signingSecretRotation.signing_secret,
  terminal
}

export const operatorApiKey = { id: ids.apiKey, terminal_id: terminalId, api_key: createdApiKey.api_key, prefix: apiKey.prefix, subscription_write: true }

export const operatorPlan = { ...plan, active: true, terminal_ids: [terminalId] }

export const chargeProgram = { subscription_id: ids.subscription, outcomes: ["paid", { outcome: "failed", delay_ms: 3000 }] }

export const chargeResolved = {
  subscription_id: ids.subscription,
  charge_id: "4b0f6c0e-1d1a-4c55-9f0e-8a2b7c3d9e10",
  idempotency_key: `sub:${ids.subscription}:cycle:4:attempt:1`,
  outcome: "paid"
}

export const workReport = { expired_payments: 0, charges: 1, settled_charges: 0, stops: 0, conversions: 0, payouts: 0, callbacks: 2, test_clocks: 0 }

export const delivery = {
  id: ids.delivery,
  event_id: ids.event,
  terminal_id: terminalId,
  status: "delivered" as const,
  attempts: 1,
  next_attempt_at: null,
  last_status_code: 200,
  last_error: null,
  kind: "scheduled" as const,
  test_clock: null,
  created_at: later,
  delivered_at: later
}

export const deliveryDetail = {
  delivery,
  event: { id: ids.event, event_type: "payment.paid", payment_id: ids.payment, payout_id: null, test: true, created_at: later, body: JSON.stringify(paymentEvent) },
  attempts: [{ attempt: 1, at: later, url: terminal.callback_url, status_code: 200, latency_ms: 42, error: null, response_body: "ok" }]
}

export const account = { id: accountId, name: "Coffee", created_at: at }

export const accountPage = pageOf(account)

export const accountDetail = {
  ...account,
  terminals: [terminal],
  users: [{ id: ids.user, email: "owner@coffee.example", role: "owner", account_id: accountId, created_at: at }]
}

export const upcomingCharges = {
  subscription_id: ids.subscription,
  items: [
    { cycle_number: 2, scheduled_at: "2026-04-01T07:00:00.000Z", scheduled_at_moscow: "2026-04-01T10:00:00.000+03:00", amount_rub: "1500.00" },
    { cycle_number: 3, scheduled_at: "2026-05-01T07:00:00.000Z", scheduled_at_moscow: "2026-05-01T10:00:00.000+03:00", amount_rub: "1500.00" }
  ]
}

export const sandboxChargeOutcomes = { subscription_id: ids.subscription, outcomes: ["failed", "paid"] }

export const testClock = {
  id: ids.testClock,
  terminal_id: terminalId,
  name: "renewal on the 31st",
  frozen_time: "2026-01-31T07:00:00.000Z",
  status: "ready" as const,
  target_frozen_time: null,
  created_at: at,
  updated_at: at,
  deletes_after: "2026-03-31T09:30:00.000Z"
}

export const advancingTestClock = { ...testClock, status: "advancing" as const, target_frozen_time: "2026-03-31T07:00:00.000Z", updated_at: later }

export const testClockPage = { items: [testClock], total: 1, page: 1, per_page: 50 }

export const deletedTestClock = { id: ids.testClock, deleted: true as const }

export const event = {
  id: `evt_${ids.event}`,
  type: "payment.paid" as const,
  terminal_id: terminalId,
  object_id: ids.payment,
  sequence: 2,
  test: true,
  test_clock: null,
  created_at: later,
  payload: paymentEvent,
  delivery: { status: "delivered" as const, attempts: 1, next_attempt_at: null, last_status_code: 200, delivered_at: later }
}

export const eventPage = { items: [event], next_cursor: null }

const attemptLog = {
  attempt: 1,
  at: later,
  url: "https://coffee.example/paydesk/callbacks",
  status_code: 200,
  latency_ms: 84,
  error: null,
  response_body: "{\"received\":true}"
}

export const eventDelivery = {
  id: ids.delivery,
  kind: "scheduled" as const,
  status: "delivered" as const,
  attempts: 1,
  next_attempt_at: null,
  last_status_code: 200,
  last_error: null,
  created_at: later,
  delivered_at: later,
  attempt_log: [attemptLog]
}

export const eventDetail = { ...event, deliveries: [eventDelivery] }

export const eventSent = {
  event,
  delivery: { ...eventDelivery, id: "e4a6c8b2-1d3f-4a5b-9c7e-2f4d6b8a1c35", kind: "resend" as const },
  attempt: attemptLog
}

export const eventsRecovered = { requeued: 12 }

export const terminalDetails = {
  ...terminal,
  callback_endpoint: { status: "failing" as const, last_attempt_at: later, last_error: "HTTP 503", failing_since: at },
  previous_secret_expires_at: null
}

// ---------------------------------------------------------------------------------------------
// Errors as the server sends them

/** An error answer as the server sends it: status, code, message and the field it names, if any. */
export interface SentError {
  readonly status: number
  readonly code: string
  readonly message: string
  readonly field?: string
  /** Only on these surfaces (any, when absent). */
  readonly surfaces?: ReadonlyArray<"merchant" | "public" | "operator" | "docs" | "host">
}

/**
 * The errors the operations' declarations name (in backticks, by code or by message) whose text is
 * no fixed value of the core's error classes (the document takes those from `@paydesk/core` itself),
 * each as the server sends it. For a code, the first entry of its status is the example.
 */
export const sentErrors: ReadonlyArray<SentError> = [
  // Contract: any query parameter an operation does not take (none on the payer pages, which take any).
  { status: 400, code: "invalid_request", message: "unknown query parameter expand", field: "expand", surfaces: ["merchant", "operator", "docs", "host"] },
  // App: a body over the default `bodyLimit` (64 KiB).
  { status: 400, code: "body_too_large", message: "request body larger than 65536 bytes" },
  // App and Http: a body that is not `application/json` on the merchant and operator APIs.
  { status: 415, code: "unsupported_media_type", message: "Content-Type must be application/json" },
  // App: what Node and Fastify refuse before any route (with the default 30 s request timeout).
  { status: 408, code: "request_timeout", message: "the request did not arrive whole within 30000 ms" },
  { status: 414, code: "uri_too_long", message: "a path segment is longer than 2048 characters" },
  { status: 431, code: "headers_too_large", message: "the request's headers are larger than 16 KiB" },
  { status: 413, code: "body_too_large", message: "the request's chunk extensions are larger than 16 KiB" },
  { status: 417, code: "expectation_failed", message: "Expect: 200-ok is not supported (only 100-continue)" },
  // App and Http: a path or a Host no route can take, refused on arrival, on every operation.
  { status: 400, code: "invalid_request", message: "the path is not valid percent-encoded UTF-8" },
  { status: 400, code: "invalid_request", message: "a request must have one Host header, not several", field: "Host" },
  // Http.principal: both credentials on a merchant request.
  { status: 400, code: "invalid_request", message: "send X-API-Key (with X-Nonce) or Authorization: Bearer, not both", field: "X-API-Key", surfaces: ["merchant"] },
  // Core `Auth` and `Nonce`; the operator token (`AdminRoutes.operatorAuth`).
  { status: 401, code: "unauthenticated", message: "X-API-Key header is required" },
  { status: 401, code: "unauthenticated", message: "invalid api key" },
  { status: 401, code: "unauthenticated", message: "X-Nonce header is required" },
  { status: 401, code: "unauthenticated", message: "invalid or expired access token" },
  { status: 401, code: "unauthenticated", message: "invalid or expired refresh token" },
  { status: 401, code: "unauthenticated", message: "Authorization: Bearer <access token> is required", surfaces: ["merchant"] },
  { status: 401, code: "unauthenticated", message: "operator bearer token required" },
  // Core use cases: moves not allowed for the object.
  { status: 400, code: "operation_not_allowed", message: "simulation is available only for sandbox payments" },
  { status: 400, code: "operation_not_allowed", message: "refunds are unavailable for sandbox payments" },
  { status: 400, code: "operation_not_allowed", message: "chargebacks are unavailable for sandbox payments" },
  { status: 400, code: "operation_not_allowed", message: "the subscription has no open charge the bank answered unknown" },
  // Core use cases: fields at fault.
  { status: 400, code: "invalid_request", message: "created_from is required", field: "created_from" },
  { status: 400, code: "invalid_request", message: "created_to is required", field: "created_to" },
  { status: 400, code: "invalid_request", message: "created_to must be later than created_from", field: "created_to" },
  { status: 400, code: "invalid_request", message: "callback_url must not point to a loopback address (127.0.0.1)", field: "callback_url" },
  { status: 400, code: "invalid_request", message: "charge outcomes can be programmed for sandbox subscriptions only", field: "subscription" },
  { status: 400, code: "invalid_request", message: "the terminal has no callback_url to send to", field: "callback_url" },
  // AdminRoutes: the clock hook of a deployment whose clock is the system's.
  { status: 409, code: "clock_not_manual", message: "clock is not manual" }
]

const paymentFinal: SentError = { status: 409, code: "invalid_transition", message: "payment in state paid cannot become canceled (outcome failed)" }
const eventSendsUsedUp: SentError = {
  status: 429,
  code: "too_many_requests",
  message: "30 resends and test events a minute for this terminal; retry in 42 s"
}

/** A rotation's key after a later rotation replaced its secret (merchant and operator alike). */
const rotationReplaced: SentError = { status: 409, code: "idempotency_conflict", message: IdempotencyConflict.rotationReplaced().message }

/**
 * Example errors of operations whose declaration names no message the server sends as such: a
 * message that carries the operation's limit or the object's state (with the default limits), or a
 * hook the deployment lacks. By operation id and status.
 */
export const operationErrors: Readonly<Record<string, Readonly<Record<number, SentError>>>> = {
  login: { 429: { status: 429, code: "too_many_requests", message: "too many login attempts, retry in 60 s" } },
  changePassword: { 429: { status: 429, code: "too_many_requests", message: "too many password changes, retry in 60 s" } },
  listPayments: {
    429: { status: 429, code: "too_many_requests", message: "2 CSV exports of this terminal are already waiting or being built; retry once one is done" }
  },
  operatorRotateSigningSecret: {
    409: rotationReplaced
  },
  rotateSigningSecret: {
    409: rotationReplaced
  },
  resendEvent: { 429: eventSendsUsedUp },
  sendTestEvent: { 429: eventSendsUsedUp },
  simulatePayment: { 409: paymentFinal },
  pageSimulate: { 409: paymentFinal },
  operatorAcquirerOutcome: { 409: paymentFinal },
  operatorRefundPayment: { 409: { status: 409, code: "invalid_transition", message: "payment in state created does not accept refund" } },
  operatorChargebackPayment: { 409: { status: 409, code: "invalid_transition", message: "payment in state created does not accept chargeback" } },
  operatorApprovePayout: { 409: { status: 409, code: "invalid_transition", message: "payout in state rejected does not accept approve" } },
  operatorRejectPayout: { 409: { status: 409, code: "invalid_transition", message: "a payout being sent cannot be rejected by the operator" } },
  operatorResumeSubscription: { 409: { status: 409, code: "invalid_transition", message: "subscription in active/enabled cannot be resumed" } },
  operatorChargeOutcomes: { 501: { status: 501, code: "not_implemented", message: "programming charge outcomes is not available in this deployment" } },
  operatorResolveCharge: { 501: { status: 501, code: "not_implemented", message: "settling unknown charges is not available in this deployment" } },
  operatorSetRate: { 501: { status: 501, code: "not_implemented", message: "setting the rate is not available in this deployment" } },
  metrics: { 501: { status: 501, code: "not_implemented", message: "metrics are not available in this deployment" } },
  docsScript: { 404: { status: 404, code: "not_found", message: "the API reference renderer (@scalar/api-reference) is not installed" } }
}
