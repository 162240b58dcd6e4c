/**
 * Response schemas of the merchant API: each mirrors a shape of the core's `Views` (plus the
 * list pages, the payment statistics, the token pair and the error body). They document the
 * responses in the OpenAPI document, and the HTTP tests decode real responses with them, so
 * the document cannot drift from what the API answers.
 */
import { Schema } from "effect"
import { Payment } from "@paydesk/core"
import type { Views } from "@paydesk/core"

const Rub = Schema.String.annotate({ description: "decimal roubles, two digits after the point", examples: ["1000.50"] })
const Usdt = Schema.String.annotate({ description: "decimal USDT, six digits after the point", examples: ["12.500000"] })
const Time = Schema.String.annotate({ description: "ISO 8601 UTC timestamp", format: "date-time" })
const Uuid = Schema.String.annotate({ format: "uuid" })
const Int = Schema.Int
const Nullable = <S extends Schema.Top>(schema: S) => Schema.NullOr(schema)

const testClockRef = Nullable(Uuid).annotate({ description: "the test clock the sandbox object is attached to; null for most" })

const SettlementView = Schema.Struct({
  merchant_amount_rub: Rub.annotate({ description: "roubles credited: the payment's amount, or a subscription payment's plan merchant amount" }),
  amount_usdt: Nullable(Usdt).annotate({ description: "USDT credited, rounded down to a micro-USDT; null while awaiting a scheduled conversion (for good when refunded or charged back before it)" }),
  rate: Nullable(Schema.String).annotate({ description: "the USDT/RUB rate of the conversion; null until converted", examples: ["95.50"] }),
  converted_at: Nullable(Time).annotate({ description: "when it was converted; null until then" })
}).annotate({ identifier: "Settlement", title: "Settlement" })

const PaymentView = Schema.Struct({
  id: Schema.String.annotate({ description: "`pay_<uuid>`" }),
  payment_id: Schema.String.annotate({ description: "`pay_<uuid>`, same as id" }),
  terminal_id: Uuid,
  order_id: Schema.String,
  amount: Rub,
  payment_currency: Schema.String,
  status: Schema.Literals(Payment.statuses),
  description: Nullable(Schema.String),
  metadata: Nullable(Schema.Record(Schema.String, Schema.Unknown)),
  payment_method: Schema.String,
  test: Schema.Boolean,
  environment: Schema.Literals(["prod", "sandbox"]),
  test_clock: testClockRef,
  pay_url: Schema.String.annotate({ description: "link to the payer page" }),
  subscription_id: Nullable(Uuid),
  recurring: Schema.Boolean,
  created_at: Time,
  updated_at: Time,
  expires_at: Nullable(Time),
  paid_at: Nullable(Time),
  settlement: Nullable(SettlementView).annotate({
    description: "what a live paid payment credited to the balance (null for sandbox payments and unpaid ones); a refund or chargeback takes back the same figures"
  })
}).annotate({ identifier: "Payment", title: "Payment" })

const AccountView = Schema.Struct({ id: Uuid, name: Schema.String, created_at: Time }).annotate({ identifier: "Account", title: "Account" })

const page = <S extends Schema.Top>(item: S, title: string) =>
  Schema.Struct({
    items: Schema.Array(item),
    total: Int,
    page: Int,
    per_page: Int,
    next_cursor: Nullable(Schema.String).annotate({
      description: "pass as `cursor` for the records after these; null on the last page. The operator's lists (`/admin/v1`) are paged by `page` alone (`total`, `per_page`): there it is always null"
    })
  }).annotate({ identifier: title, title })

const StatusCount = Schema.Struct({ count: Int, amount: Rub }).annotate({ identifier: "StatusCount", title: "StatusCount" })
const ByStatus = Schema.Struct(Object.fromEntries(Payment.statuses.map((s) => [s, StatusCount])) as Record<Payment.Status, typeof StatusCount>)

const PaymentStats = Schema.Struct({
  terminal_id: Uuid,
  environment: Schema.Literals(["prod", "sandbox", "all"]),
  recurring: Nullable(Schema.Boolean),
  currency: Schema.Literal("RUB"),
  by_status: ByStatus,
  total: StatusCount
}).annotate({ identifier: "PaymentStats", title: "PaymentStats", description: "count and amount per status under the filters, plus totals" })

const PaymentDailyStats = Schema.Struct({
  terminal_id: Uuid,
  environment: Schema.Literals(["prod", "sandbox", "all"]),
  recurring: Nullable(Schema.Boolean),
  currency: Schema.Literal("RUB"),
  time_zone: Schema.String,
  created_from: Time,
  created_to: Time,
  items: Schema.Array(Schema.Struct({
    date: Schema.String.annotate({ description: "the calendar day in `time_zone`, `YYYY-MM-DD`" }),
    by_status: ByStatus,
    total: StatusCount
  }))
}).annotate({
  identifier: "PaymentDailyStats",
  title: "PaymentDailyStats",
  description: "count and amount per status for each calendar day of the range that has payments, days ascending (days without payments are left out)"
})

const TerminalView = Schema.Struct({
  id: Uuid,
  terminal_id: Uuid,
  account_id: Uuid,
  name: Schema.String,
  status: Schema.Literals(["active", "disabled"]),
  h2h: Schema.Boolean,
  callback_url: Nullable(Schema.String),
  success_redirect_url: Nullable(Schema.String),
  fail_redirect_url: Nullable(Schema.String),
  conversion_mode: Schema.Literals(["instant", "scheduled"]),
  conversion_time: Nullable(Schema.String),
  show_platform_branding: Schema.Boolean,
  updated_at: Time
}).annotate({ identifier: "Terminal", title: "Terminal" })

const BalanceView = Schema.Struct({ terminal_id: Uuid, available_usdt: Usdt, hold_usdt: Usdt, pending_rub: Rub })
  .annotate({ identifier: "Balance", title: "Balance" })

const RateView = Schema.Struct({ rate: Schema.String.annotate({ description: "USDT/RUB", examples: ["95.50"] }), updated_at: Time })
  .annotate({ identifier: "Rate", title: "Rate" })

const PayoutView = Schema.Struct({
  id: Schema.String.annotate({ description: "`po_<uuid>`" }),
  terminal_id: Uuid,
  amount_usdt: Usdt,
  wallet_address: Schema.String,
  network: Schema.String,
  status: Schema.Literals(["created", "pending", "processing", "completed", "rejected"]),
  idempotency_key: Nullable(Schema.String),
  tx_id: Nullable(Schema.String),
  reject_reason: Nullable(Schema.String),
  created_at: Time,
  updated_at: Time
}).annotate({ identifier: "Payout", title: "Payout" })

const interval = Schema.Literals(["day", "month", "quarter", "half_year", "year"])

const PlanView = Schema.Struct({
  id: Uuid,
  code: Schema.String,
  name: Schema.String,
  version: Int,
  interval,
  schedule: Schema.Literals(["calendar", "fixed_days"]),
  cap_amount_rub: Schema.optionalKey(Rub),
  merchant_amount_rub: Schema.optionalKey(Rub),
  payer_amount_rub: Schema.optionalKey(Rub),
  max_cycles: Schema.optionalKey(Int)
}).annotate({ identifier: "Plan", title: "Plan" })

const SubscriptionView = Schema.Struct({
  id: Uuid,
  terminal_id: Uuid,
  plan_id: Uuid,
  payer_id: Schema.optionalKey(Schema.String),
  merchant_subscription_ref: Nullable(Schema.String),
  description: Nullable(Schema.String),
  provider_state: Schema.Literals(["new", "active", "stop"]),
  billing_status: Schema.Literals(["consent_pending", "pending", "enabled", "review", "stop_pending", "stopped"]),
  test: Schema.Boolean,
  environment: Schema.Literals(["prod", "sandbox"]),
  test_clock: testClockRef,
  plan_code: Schema.String,
  plan_version: Int,
  merchant_amount_rub: Rub,
  payer_amount_rub: Rub,
  interval,
  max_cycles: Schema.optionalKey(Int),
  successful_cycles: Int,
  consecutive_failures: Int,
  next_charge_at: Nullable(Time),
  created_at: Time,
  activated_at: Nullable(Time),
  stopped_at: Nullable(Time),
  pay_url: Schema.optionalKey(Schema.String.annotate({ description: "creation response only; use unchanged" })),
  redirect_url: Schema.optionalKey(Nullable(Schema.String).annotate({ description: "creation response of an H2H terminal only" }))
}).annotate({ identifier: "Subscription", title: "Subscription" })

const ChargeView = Schema.Struct({
  id: Uuid,
  payment_id: Nullable(Schema.String),
  status: Schema.Literals(["payed", "fail", "stop", "pending"]),
  validation_status: Schema.Literals(["accepted", "review"]),
  validation_reason: Nullable(Schema.String),
  cycle_number: Int,
  attempt: Int,
  amount_rub: Rub,
  expected_amount_rub: Rub,
  scheduled_at: Time,
  actual_at: Nullable(Time),
  created_at: Time,
  message: Nullable(Schema.String)
}).annotate({ identifier: "Charge", title: "Charge" })

const UpcomingCharge = Schema.Struct({
  cycle_number: Int,
  scheduled_at: Time,
  scheduled_at_moscow: Schema.String.annotate({ description: "the same moment in Moscow time (UTC+03:00), for display", examples: ["2026-02-28T10:00:00.000+03:00"] }),
  amount_rub: Rub
}).annotate({ identifier: "UpcomingCharge", title: "UpcomingCharge" })

const TestClockView = Schema.Struct({
  id: Uuid,
  terminal_id: Uuid,
  name: Nullable(Schema.String),
  frozen_time: Time.annotate({ description: "the clock's time: everything on the clock happens at it" }),
  status: Schema.Literals(["ready", "advancing"]),
  target_frozen_time: Nullable(Time).annotate({ description: "while advancing: the time the clock moves to" }),
  created_at: Time,
  updated_at: Time,
  deletes_after: Time.annotate({ description: "when the clock and its objects are deleted automatically (its creation plus the event retention, 30 days by default)" })
}).annotate({ identifier: "TestClock", title: "TestClock" })

const DeletedTestClock = Schema.Struct({
  id: Uuid.annotate({ description: "the deleted clock's id" }),
  deleted: Schema.Literal(true)
}).annotate({ identifier: "DeletedTestClock", title: "DeletedTestClock" })

const ApiKeyView = Schema.Struct({
  id: Uuid,
  terminal_id: Uuid,
  prefix: Schema.String.annotate({ description: "first characters of the key, to recognise it" }),
  subscription_write: Schema.Boolean,
  created_at: Time,
  revoked_at: Nullable(Time)
}).annotate({ identifier: "ApiKey", title: "ApiKey" })

const UserView = Schema.Struct({ id: Uuid, email: Schema.String, role: Schema.String, account_id: Uuid })

const TokenPair = Schema.Struct({
  access_token: Schema.String,
  refresh_token: Schema.String,
  expires_at: Int.annotate({ description: "Unix time (seconds) when the access token expires" }),
  user: UserView
}).annotate({ identifier: "TokenPair", title: "TokenPair" })

const ErrorBody = Schema.Struct({
  error: Schema.Struct({
    code: Schema.String.annotate({ description: "stable machine-readable code, e.g. `nonce_already_used`" }),
    message: Schema.String.annotate({ description: "the spec's message text" }),
    request_id: Schema.String.annotate({ description: "same as the `x-request-id` response header" }),
    field: Schema.optionalKey(Schema.String)
  })
}).annotate({ identifier: "Error", title: "Error" })

const PlanList = Schema.Struct({ items: Schema.Array(PlanView) }).annotate({ identifier: "PlanList", title: "PlanList" })
const ApiKeyList = Schema.Struct({ items: Schema.Array(ApiKeyView) }).annotate({ identifier: "ApiKeyList", title: "ApiKeyList" })
const CreatedApiKey = Schema.Struct({ ...ApiKeyView.fields, api_key: Schema.String.annotate({ description: "the key, shown only in this answer" }) })
  .annotate({ identifier: "CreatedApiKey", title: "CreatedApiKey" })
const SigningSecretRotation = Schema.Struct({
  terminal_id: Uuid,
  signing_secret: Schema.String.annotate({ description: "the new secret, shown only in this answer: `X-Signature-Next` now, `X-Signature` once the overlap ends" }),
  signing_secret_whsec: Schema.String.annotate({ description: "the same secret in Standard Webhooks' form (`whsec_` + base64), for their libraries" }),
  rotated_at: Time,
  previous_secret_expires_at: Nullable(Time).annotate({
    description: "until then `X-Signature` is still signed with the previous secret and `X-Signature-Next` with this one (null: no overlap)"
  })
}).annotate({ identifier: "SigningSecretRotation", title: "SigningSecretRotation" })
const Ok = Schema.Struct({ ok: Schema.Literal(true) }).annotate({ identifier: "Ok", title: "Ok" })

// ---------------------------------------------------------------------------------------------
// Callbacks (the `webhooks` of the document) and the events feed

/** Headers of every callback (and of every event of the feed). */
const CallbackHeaders = Schema.Struct({
  "content-type": Schema.Literal("application/json"),
  "x-signature": Schema.String.annotate({
    description: "lowercase hex HMAC-SHA256 of `X-Timestamp + \".\" + raw body` with the terminal's signing_secret (during a rotation's overlap: with the previous secret)"
  }),
  "x-timestamp": Schema.String.annotate({ description: "Unix time (seconds) of sending the attempt, on the wall clock" }),
  "x-test-mode": Schema.optionalKey(Schema.Literal("true").annotate({ description: "on callbacks of sandbox payments" })),
  "x-signature-next": Schema.optionalKey(Schema.String.annotate({ description: "during a rotation's overlap: the same signature with the new secret" })),
  "x-event-id": Schema.optionalKey(Schema.String.annotate({ description: "`evt_<uuid>`: the event's id, the same on every retry, resend and recovery (deduplicate on it)" })),
  "x-event-sequence": Schema.optionalKey(Schema.String.annotate({
    description: "the event's position among the events of its payment or payout, from 1: drop an event older than one already applied"
  })),
  "x-test-clock": Schema.optionalKey(Schema.String.annotate({ description: "the test clock of the sandbox object (`X-Timestamp` is the wall time of sending, as on any callback)" })),
  "x-test-clock-time": Schema.optionalKey(Schema.String.annotate({ description: "beside `x-test-clock`: the clock's time of the attempt, Unix seconds (not signed)" })),
  "webhook-id": Schema.optionalKey(Schema.String.annotate({ description: "Standard Webhooks: the event id" })),
  "webhook-timestamp": Schema.optionalKey(Schema.String.annotate({ description: "Standard Webhooks: same as `X-Timestamp`" })),
  "webhook-signature": Schema.optionalKey(Schema.String.annotate({
    description: "Standard Webhooks: `v1,<base64 HMAC-SHA256 of id.timestamp.body>` with the `whsec_` form of the secret; during an overlap two, space-separated (new, previous)"
  }))
}).annotate({ identifier: "CallbackHeaders", title: "CallbackHeaders" })

/** The body of a payment callback. */
export const PaymentEvent = Schema.Struct({
  event_type: Schema.Literals(["payment.created", "payment.paid", "payment.canceled", "payment.expired", "payment.chargeback", "payment.refunded", "refund_request.completed"])
    .annotate({ description: "corresponds to `status`" }),
  payment_id: Schema.String.annotate({ description: "`pay_<uuid>`" }),
  order_id: Schema.String.annotate({ description: "the merchant's order id (generated for subscription charges; do not parse)" }),
  status: Schema.Literals(Payment.statuses),
  amount: Rub,
  currency: Schema.String,
  test: Schema.Boolean.annotate({ description: "true for sandbox payments" }),
  metadata: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown).annotate({ description: "only if set at creation" }))
}).annotate({ identifier: "PaymentEvent", title: "PaymentEvent" })

/** The body of `payout.completed`. */
export const PayoutEvent = Schema.Struct({
  event_type: Schema.Literal("payout.completed"),
  payout_id: Schema.String.annotate({ description: "`po_<uuid>`" }),
  terminal_id: Uuid,
  status: Schema.Literal("completed"),
  amount_usdt: Usdt,
  wallet_address: Schema.String,
  network: Schema.String,
  tx_id: Nullable(Schema.String),
  test: Schema.Literal(false)
}).annotate({ identifier: "PayoutEvent", title: "PayoutEvent" })

/** The body of `ping` (`POST /terminals/{id}/test-event`). */
export const PingEvent = Schema.Struct({
  event_type: Schema.Literal("ping"),
  terminal_id: Uuid,
  sent_at: Time,
  test: Schema.Literal(false)
}).annotate({ identifier: "PingEvent", title: "PingEvent" })

const FeedEvent = Schema.Struct({
  id: Schema.String.annotate({ description: "`evt_<uuid>`" }),
  event_type: Schema.String,
  created_at: Time,
  test: Schema.Boolean,
  body: Schema.String.annotate({ description: "the exact callback body (signed bytes; parse it, never re-serialize before verifying)" }),
  headers: CallbackHeaders,
  cursor: Schema.String.annotate({
    description: "opaque (`feed_…`, bound to this terminal): pass as `after` to read the events after this one; it stays valid when the event is deleted"
  })
}).annotate({ identifier: "FeedEvent", title: "FeedEvent" })

const EventFeed = Schema.Struct({
  items: Schema.Array(FeedEvent),
  next_after: Nullable(Schema.String).annotate({
    description: "pass as `after` next time: the `cursor` of the last item, else a cursor of the place `after` named; null when there is no place yet (no event read, from the start or at `latest`: read from the start next time)"
  })
}).annotate({ identifier: "EventFeed", title: "EventFeed" })

// ---------------------------------------------------------------------------------------------
// The events API

const EventTypes = Schema.Literals(["payment.created", "payment.paid", "payment.canceled", "payment.expired", "payment.chargeback", "payment.refunded", "refund_request.completed", "payout.completed", "ping"])
const DeliveryStatus = Schema.Literals(["pending", "delivered", "failed"])

const EventDeliverySummary = Schema.Struct({
  status: DeliveryStatus,
  attempts: Int,
  next_attempt_at: Nullable(Time),
  last_status_code: Nullable(Int),
  delivered_at: Nullable(Time)
}).annotate({ identifier: "EventDeliverySummary", title: "EventDeliverySummary" })

const EventView = Schema.Struct({
  id: Schema.String.annotate({ description: "`evt_<uuid>`, as `X-Event-Id` and `webhook-id` carry it" }),
  type: EventTypes,
  terminal_id: Uuid,
  object_id: Nullable(Schema.String).annotate({ description: "the payment (`pay_<uuid>`) or payout (`po_<uuid>`); null for `ping`" }),
  sequence: Int.annotate({ description: "position among the events of its object, from 1 (`X-Event-Sequence`)" }),
  test: Schema.Boolean,
  test_clock: testClockRef,
  created_at: Time,
  payload: Schema.Record(Schema.String, Schema.Unknown).annotate({ description: "the callback body" }),
  delivery: Nullable(EventDeliverySummary).annotate({ description: "its delivery: the one that delivered it (a 2xx), else its latest; null when the terminal had no callback URL" })
}).annotate({ identifier: "Event", title: "Event" })

const EventAttempt = Schema.Struct({
  attempt: Int,
  at: Time,
  url: Schema.String,
  status_code: Nullable(Int),
  latency_ms: Int,
  error: Nullable(Schema.String).annotate({ description: "why it failed: a status, a timeout, a refused connection" }),
  response_body: Nullable(Schema.String).annotate({ description: "the first 1 KiB of the answer" })
}).annotate({ identifier: "EventAttempt", title: "EventAttempt" })

const EventDelivery = Schema.Struct({
  id: Uuid,
  kind: Schema.Literals(["scheduled", "recover", "resend"]).annotate({
    description: "`scheduled`: the event's own (8 attempts); `recover`: a recovery (8 attempts); `resend`: one attempt"
  }),
  status: DeliveryStatus,
  attempts: Int,
  next_attempt_at: Nullable(Time),
  last_status_code: Nullable(Int),
  last_error: Nullable(Schema.String),
  created_at: Time,
  delivered_at: Nullable(Time),
  attempt_log: Schema.Array(EventAttempt)
}).annotate({ identifier: "EventDelivery", title: "EventDelivery" })

const EventDetail = Schema.Struct({ ...EventView.fields, deliveries: Schema.Array(EventDelivery).annotate({ description: "oldest first" }) })
  .annotate({ identifier: "EventDetail", title: "EventDetail" })

const EventPage = Schema.Struct({
  items: Schema.Array(EventView),
  next_cursor: Nullable(Schema.String).annotate({ description: "pass as `cursor` for the events after these (older); null on the last page" })
}).annotate({ identifier: "EventPage", title: "EventPage" })

const EventSent = Schema.Struct({
  event: EventView,
  delivery: EventDelivery,
  attempt: Nullable(EventAttempt).annotate({ description: "the attempt made now (null only when another worker recorded it first)" })
}).annotate({ identifier: "EventSent", title: "EventSent" })

const EventsRecovered = Schema.Struct({ requeued: Int.annotate({ description: "failed events queued again, oldest first" }) })
  .annotate({ identifier: "EventsRecovered", title: "EventsRecovered" })

const EndpointHealth = Schema.Struct({
  status: Schema.Literals(["healthy", "failing", "unknown"]).annotate({ description: "`unknown` before any attempt; `failing` while the latest attempt failed" }),
  last_attempt_at: Nullable(Time),
  last_error: Nullable(Schema.String),
  failing_since: Nullable(Time).annotate({ description: "the first failed attempt of the current run of failures" })
}).annotate({ identifier: "EndpointHealth", title: "EndpointHealth", description: "from the attempts of the terminal's live and sandbox callbacks; a test clock's attempts (at the clock's time) are not counted" })

const TerminalDetails = Schema.Struct({
  ...TerminalView.fields,
  callback_endpoint: EndpointHealth,
  previous_secret_expires_at: Nullable(Time).annotate({ description: "while a rotated-out signing secret still signs `X-Signature`: until when" })
}).annotate({ identifier: "TerminalDetails", title: "TerminalDetails" })

// ---------------------------------------------------------------------------------------------
// Payer pages

const PageStatus = Schema.Struct({
  status: Schema.Literals(Payment.statuses),
  redirect_url: Nullable(Schema.String).annotate({ description: "where the page sends the payer now (the terminal's success or fail redirect)" })
}).annotate({ identifier: "PageStatus", title: "PageStatus" })

const ConsentConfirmed = Schema.Struct({
  billing_status: Schema.String,
  first_payment_url: Nullable(Schema.String).annotate({ description: "page of the first payment, to pay now" })
}).annotate({ identifier: "ConsentConfirmed", title: "ConsentConfirmed" })

// ---------------------------------------------------------------------------------------------
// Operator API

const AccountCreated = Schema.Struct({ account_id: Uuid, user_id: Uuid }).annotate({ identifier: "AccountCreated", title: "AccountCreated" })

const TerminalCreated = Schema.Struct({
  terminal_id: Uuid,
  api_key: Schema.String.annotate({ description: "shown only in this answer" }),
  signing_secret: Schema.String.annotate({ description: "shown only in this answer" }),
  terminal: TerminalView
}).annotate({ identifier: "TerminalCreated", title: "TerminalCreated" })

const OperatorApiKey = Schema.Struct({
  id: Uuid.annotate({ description: "the key's id (as the key list shows it; revoking it takes this id)" }),
  terminal_id: Uuid,
  api_key: Schema.String,
  prefix: Schema.String.annotate({ description: "the key's first characters, as the key list shows them" }),
  subscription_write: Schema.Boolean
})
  .annotate({ identifier: "OperatorApiKey", title: "OperatorApiKey" })

const OperatorPlan = Schema.Struct({ ...PlanView.fields, active: Schema.Boolean, terminal_ids: Schema.Array(Uuid) })
  .annotate({ identifier: "OperatorPlan", title: "OperatorPlan" })

const ChargeProgramSet = Schema.Struct({
  subscription_id: Uuid,
  outcomes: Schema.Array(Schema.Union([Schema.String, Schema.Struct({ outcome: Schema.String, delay_ms: Int })]))
}).annotate({ identifier: "ChargeProgramSet", title: "ChargeProgramSet" })

const ChargeResolved = Schema.Struct({
  subscription_id: Uuid,
  charge_id: Uuid,
  idempotency_key: Schema.String,
  outcome: Schema.String
}).annotate({ identifier: "ChargeResolved", title: "ChargeResolved" })

const RateAnswer = Schema.Struct({ rate: Schema.String }).annotate({ identifier: "RateAnswer", title: "RateAnswer" })
const ClockAnswer = Schema.Struct({ now: Time }).annotate({ identifier: "ClockAnswer", title: "ClockAnswer" })

const WorkReport = Schema.Struct({
  expired_payments: Int,
  charges: Int,
  settled_charges: Int,
  stops: Int,
  conversions: Int,
  payouts: Int,
  callbacks: Int,
  test_clocks: Int.annotate({ description: "test clocks whose waiting work ran (an advance continued, or work due at a clock's time)" })
}).annotate({ identifier: "WorkReport", title: "WorkReport", description: "what the passes did" })

const DeliveryView = Schema.Struct({
  id: Uuid,
  event_id: Uuid,
  terminal_id: Uuid,
  status: Schema.Literals(["pending", "delivered", "failed"]),
  attempts: Int,
  next_attempt_at: Nullable(Time),
  last_status_code: Nullable(Int),
  last_error: Nullable(Schema.String),
  kind: Schema.Literals(["scheduled", "recover", "resend"]).annotate({ description: "`scheduled` (the event's own), `recover` (a merchant's recovery of failed ones) or `resend` (one attempt a merchant asked for)" }),
  test_clock: Nullable(Uuid).annotate({ description: "the test clock of a sandbox object on one (its `created_at` is the clock's time), else null" }),
  created_at: Time,
  delivered_at: Nullable(Time)
}).annotate({ identifier: "Delivery", title: "Delivery" })

const AttemptView = Schema.Struct({
  attempt: Int,
  at: Time,
  url: Schema.String,
  status_code: Nullable(Int),
  latency_ms: Int,
  error: Nullable(Schema.String),
  response_body: Nullable(Schema.String)
}).annotate({ identifier: "Attempt", title: "Attempt" })

const DeliveryDetail = Schema.Struct({
  delivery: DeliveryView,
  event: Nullable(Schema.Struct({
    id: Uuid,
    event_type: Schema.String,
    payment_id: Nullable(Schema.String),
    payout_id: Nullable(Schema.String),
    test: Schema.Boolean,
    created_at: Time,
    body: Schema.String.annotate({ description: "the exact body that was signed and sent" })
  })),
  attempts: Schema.Array(AttemptView)
}).annotate({ identifier: "DeliveryDetail", title: "DeliveryDetail" })

/** Response schemas by component name (also used by the tests to check real responses). */
export const responses = {
  Payment: PaymentView,
  PaymentPage: page(PaymentView, "PaymentPage"),
  PaymentStats,
  PaymentDailyStats,
  Terminal: TerminalView,
  Balance: BalanceView,
  Rate: RateView,
  Payout: PayoutView,
  PayoutPage: page(PayoutView, "PayoutPage"),
  PlanList,
  Plan: PlanView,
  Subscription: SubscriptionView,
  SubscriptionPage: page(SubscriptionView, "SubscriptionPage"),
  Charge: ChargeView,
  ChargeList: Schema.Array(ChargeView).annotate({ identifier: "ChargeList", title: "ChargeList" }),
  UpcomingCharges: Schema.Struct({ subscription_id: Uuid, items: Schema.Array(UpcomingCharge) }).annotate({
    identifier: "UpcomingCharges",
    title: "UpcomingCharges",
    description: "the next charges by the schedule that charges (empty unless the subscription is active and enabled)"
  }),
  SandboxChargeOutcomes: Schema.Struct({
    subscription_id: Uuid,
    outcomes: Schema.Array(Schema.Literals(["paid", "failed", "unknown"]))
  }).annotate({ identifier: "SandboxChargeOutcomesQueued", title: "SandboxChargeOutcomesQueued", description: "the outcomes queued for the next charges (after any queued before)" }),
  TestClock: TestClockView,
  TestClockPage: Schema.Struct({ items: Schema.Array(TestClockView), total: Int, page: Int, per_page: Int })
    .annotate({ identifier: "TestClockPage", title: "TestClockPage" }),
  DeletedTestClock,
  TokenPair,
  ApiKey: ApiKeyView,
  ApiKeyList,
  CreatedApiKey,
  SigningSecretRotation,
  Ok,
  EventFeed,
  Event: EventView,
  EventPage,
  EventDetail,
  EventSent,
  EventsRecovered,
  TerminalDetails,
  PaymentEvent,
  PayoutEvent,
  PingEvent,
  CallbackHeaders,
  PageStatus,
  ConsentConfirmed,
  AccountCreated,
  TerminalCreated,
  OperatorApiKey,
  OperatorPlan,
  ChargeProgramSet,
  ChargeResolved,
  RateAnswer,
  ClockAnswer,
  WorkReport,
  WorkAnswer: Schema.Union([WorkReport, Schema.Record(Schema.String, Schema.Unknown)]).annotate({ identifier: "WorkAnswer", title: "WorkAnswer" }),
  Delivery: DeliveryView,
  DeliveryList: Schema.Struct({ items: Schema.Array(DeliveryView) }).annotate({ identifier: "DeliveryList", title: "DeliveryList" }),
  DeliveryDetail,
  Account: AccountView,
  AccountPage: page(AccountView, "AccountPage"),
  AccountDetail: Schema.Struct({
    ...AccountView.fields,
    terminals: Schema.Array(TerminalView),
    users: Schema.Array(Schema.Struct({ ...UserView.fields, created_at: Time })).annotate({ description: "the account's dashboard users, oldest first (`POST /users/{id}/password` sets one's password)" })
  }).annotate({ identifier: "AccountDetail", title: "AccountDetail" }),
  TerminalList: Schema.Struct({ items: Schema.Array(TerminalView) }).annotate({ identifier: "TerminalList", title: "TerminalList" }),
  Liveness: Schema.Struct({
    status: Schema.Literals(["ok", "failing"]),
    detail: Schema.optionalKey(Schema.String.annotate({ description: "with `failing`: why the process must be restarted" }))
  }).annotate({ identifier: "Liveness", title: "Liveness" }),
  Readiness: Schema.Struct({
    status: Schema.Literals(["ready", "not_ready"]),
    checks: Schema.Record(Schema.String, Schema.Struct({ ok: Schema.Boolean, detail: Schema.String }))
      .annotate({ description: "`database` (reachable), `migrations` (all applied), `worker` (the local engine's loop runs, or the engine in use), `probe` (the host's checks could not be run), `server` (failing while the server shuts down)" })
  }).annotate({ identifier: "Readiness", title: "Readiness" }),
  Error: ErrorBody
} as const

// The core's views must produce what the schemas document: a drift is a compile error here.
type Assignable<A, B extends A> = B
export type ViewsMatch = [
  Assignable<typeof PaymentView.Type, ReturnType<typeof Views.payment>>,
  Assignable<typeof SubscriptionView.Type, ReturnType<typeof Views.subscription>>,
  Assignable<typeof ChargeView.Type, ReturnType<typeof Views.charge>>,
  Assignable<typeof PlanView.Type, ReturnType<typeof Views.plan>>,
  Assignable<typeof PayoutView.Type, ReturnType<typeof Views.payout>>,
  Assignable<typeof BalanceView.Type, ReturnType<typeof Views.balance>>,
  Assignable<typeof RateView.Type, ReturnType<typeof Views.rate>>,
  Assignable<typeof TerminalView.Type, ReturnType<typeof Views.terminal>>,
  Assignable<typeof ApiKeyView.Type, ReturnType<typeof Views.apiKey>>,
  Assignable<typeof DeliveryView.Type, ReturnType<typeof Views.delivery>>,
  Assignable<typeof AttemptView.Type, ReturnType<typeof Views.attempt>>,
  Assignable<typeof EventView.Type, ReturnType<typeof Views.event>>,
  Assignable<typeof EventDelivery.Type, ReturnType<typeof Views.eventDelivery>>,
  Assignable<typeof TerminalDetails.Type, ReturnType<typeof Views.terminalDetails>>,
  Assignable<typeof TestClockView.Type, ReturnType<typeof Views.testClock>>,
  Assignable<typeof WorkReport.Type, ReturnType<typeof Views.workReport>>
]
