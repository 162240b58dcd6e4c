/**
 * Response schemas of the merchant API: each mirrors a shape of the core's `Views` (plus the
 * list pages, the payment statistics, the token pair and the error body). They document the
 * responses in the OpenAPI document, and the HTTP tests decode real responses with them, so
 * the document cannot drift from what the API answers.
 */
import { Schema } from "effect"
import { Payment } from "@paydesk/core"

const Rub = Schema.String.annotate({ description: "decimal roubles, two digits after the point", examples: ["1000.50"] })
const Usdt = Schema.String.annotate({ description: "decimal USDT, six digits after the point", examples: ["12.500000"] })
const Time = Schema.String.annotate({ description: "ISO 8601 UTC timestamp", format: "date-time" })
const Uuid = Schema.String.annotate({ format: "uuid" })
const Int = Schema.Int
const Nullable = <S extends Schema.Top>(schema: S) => Schema.NullOr(schema)

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
  pay_url: Schema.String.annotate({ description: "link to the payer page" }),
  subscription_id: Nullable(Uuid),
  recurring: Schema.Boolean,
  created_at: Time,
  updated_at: Time,
  expires_at: Nullable(Time),
  paid_at: Nullable(Time)
}).annotate({ title: "Payment" })

const page = <S extends Schema.Top>(item: S, title: string) =>
  Schema.Struct({ items: Schema.Array(item), total: Int, page: Int, per_page: Int }).annotate({ title })

const StatusCount = Schema.Struct({ count: Int, amount: Rub })

const PaymentStats = Schema.Struct({
  terminal_id: Uuid,
  environment: Schema.Literals(["prod", "sandbox", "all"]),
  recurring: Nullable(Schema.Boolean),
  currency: Schema.Literal("RUB"),
  by_status: Schema.Struct(Object.fromEntries(Payment.statuses.map((s) => [s, StatusCount])) as Record<Payment.Status, typeof StatusCount>),
  total: StatusCount
}).annotate({ title: "PaymentStats", description: "count and amount per status under the filters, plus totals" })

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
}).annotate({ title: "Terminal" })

const BalanceView = Schema.Struct({ terminal_id: Uuid, available_usdt: Usdt, hold_usdt: Usdt, pending_rub: Rub })
  .annotate({ title: "Balance" })

const RateView = Schema.Struct({ rate: Schema.String.annotate({ description: "USDT/RUB", examples: ["95.50"] }), updated_at: Time })
  .annotate({ title: "Rate" })

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
}).annotate({ title: "Payout" })

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
}).annotate({ title: "Plan" })

const SubscriptionView = Schema.Struct({
  id: Uuid,
  terminal_id: Uuid,
  plan_id: Uuid,
  payer_id: Schema.optionalKey(Schema.String),
  merchant_subscription_ref: Nullable(Schema.String),
  description: Nullable(Schema.String),
  provider_state: Schema.Literals(["new", "active", "stop"]),
  billing_status: Schema.Literals(["consent_pending", "pending", "enabled", "review", "stop_pending", "stopped"]),
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
}).annotate({ title: "Subscription" })

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
}).annotate({ title: "Charge" })

const TokenPair = Schema.Struct({
  access_token: Schema.String,
  refresh_token: Schema.String,
  expires_at: Int.annotate({ description: "Unix time (seconds) when the access token expires" }),
  user: Schema.Struct({ id: Uuid, email: Schema.String, role: Schema.String, account_id: Uuid })
}).annotate({ title: "TokenPair" })

const ErrorBody = Schema.Struct({
  error: Schema.Struct({
    code: Schema.String.annotate({ description: "stable machine-readable code, e.g. `nonce_already_used`" }),
    message: Schema.String.annotate({ description: "the spec's message text" }),
    request_id: Schema.String.annotate({ description: "same as the `x-request-id` response header" }),
    field: Schema.optionalKey(Schema.String)
  })
}).annotate({ title: "Error" })

/** Response schemas by component name (also used by the tests to check real responses). */
export const responses = {
  Payment: PaymentView,
  PaymentPage: page(PaymentView, "PaymentPage"),
  PaymentStats,
  Terminal: TerminalView,
  Balance: BalanceView,
  Rate: RateView,
  Payout: PayoutView,
  PayoutPage: page(PayoutView, "PayoutPage"),
  PlanList: Schema.Struct({ items: Schema.Array(PlanView) }).annotate({ title: "PlanList" }),
  Plan: PlanView,
  Subscription: SubscriptionView,
  SubscriptionPage: page(SubscriptionView, "SubscriptionPage"),
  Charge: ChargeView,
  ChargeList: Schema.Array(ChargeView).annotate({ title: "ChargeList" }),
  TokenPair,
  Ok: Schema.Struct({ ok: Schema.Literal(true) }).annotate({ title: "Ok" }),
  Error: ErrorBody
} as const
