/**
 * Request schemas of every surface (merchant API, payer pages, operator API): the JSON bodies and
 * query strings as they arrive on the wire. Operations (`MerchantOperations.ts`,
 * `OperatorOperations.ts`) pair them with their routes; `Contract.decode` applies them. Limits
 * in the descriptions come from the core's constants, so each limit is written once.
 *
 * Each field says what it expects (`expected`), which is the message of a 400 for it.
 */
import { Schema, SchemaTransformation } from "effect"
import { Access, Amount, Callbacks, Events, Idempotency, Paging, Payment, Payments, Payouts, Subscriptions } from "@paydesk/core"
import type { Header } from "./Contract.js"

const text = (description: string, expected = "a string") => Schema.String.annotate({ description, expected })
const nullableText = (description: string, expected = "a string or null") => Schema.NullOr(Schema.String).annotate({ description, expected })
const flag = (description: string) => Schema.Boolean.annotate({ description, expected: "true or false" })
const oneOf = <const L extends ReadonlyArray<string>>(values: L, description: string) =>
  Schema.Literals(values).annotate({ description, expected: `one of: ${values.join(", ")}` })

/** A `terminal_id` that may be omitted: an empty one is given, not absent (the 403 of another terminal, `Access.resolveTerminal`). */
const someTerminal = (description: string) => Schema.String.annotate({ description, format: "uuid", expected: Access.terminalIdExpected })

/** A UUID of a terminal; optional with an API key. */
const terminalId = Schema.optionalKey(someTerminal("UUID of the terminal; optional with an API key (taken from the key); an empty value is not absent"))

/** An integer query parameter from `min` to `max`: plain decimal digits on the wire (no sign, exponent, hex or spaces). */
const intParam = (min: number, max: number, description: string) =>
  Schema.String.check(Schema.isPattern(/^[0-9]{1,10}$/))
    .pipe(Schema.decodeTo(Schema.Int.check(Schema.isBetween({ minimum: min, maximum: max })), SchemaTransformation.numberFromString))
    .annotate({ description, expected: `an integer from ${min} to ${max}` })

/** `page`, `limit` and `cursor` of the lists (`Paging`). */
const paging = {
  page: Schema.optionalKey(intParam(1, 999_999_999, "page number from 1 (50 records a page, or `limit`); not with `cursor`")),
  limit: Schema.optionalKey(intParam(1, Paging.maxLimit, `records per page, 1 to ${Paging.maxLimit} (default 50)`)),
  cursor: Schema.optionalKey(text("`next_cursor` of the previous answer: the records after it", "the next_cursor of a previous answer"))
}

const testClock = Schema.NullOr(Schema.String).annotate({
  description: "sandbox only: id of a test clock of the terminal to attach the object to (it then lives on the clock's time)",
  format: "uuid",
  expected: "a test clock UUID or null"
})

// ---------------------------------------------------------------------------------------------
// Merchant bodies

/** `POST /payments`. */
export const PaymentCreate = Schema.Struct({
  amount: text(`decimal roubles as a string: \`1000\`, \`1000.50\` or \`1000,50\`; 0.01 to ${Payments.maxAmount / 100n}.00`, "a string like \"1000.50\" (roubles, at most two decimals)"),
  order_id: text(`merchant order id, 1 to ${Payments.maxOrderIdLength} characters; one order_id is one payment (its natural idempotency key)`),
  payment_currency: Schema.optionalKey(nullableText("`RUB` (the default and the only currency)", "\"RUB\"")),
  description: Schema.optionalKey(nullableText(`free text, at most ${Payments.maxDescriptionLength} characters`)),
  payment_method: Schema.optionalKey(nullableText("`sbp` (default); forced to `sbp_test` in sandbox", "\"sbp\"")),
  metadata: Schema.optionalKey(
    Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)).annotate({
      description: `object of at most ${Payments.maxMetadataBytes} bytes of JSON, nested at most ${Payments.maxMetadataDepth} levels, returned in callbacks`,
      expected: "a JSON object or null"
    })
  ),
  test: Schema.optionalKey(Schema.NullOr(Schema.Boolean).annotate({ description: "true creates a sandbox payment (same as `X-Test-Mode: true`)", expected: "true, false or null" })),
  test_clock: Schema.optionalKey(testClock),
  terminal_id: terminalId
}).annotate({ identifier: "PaymentCreate", title: "PaymentCreate" })

/** `POST /payments/{paymentID}/simulate` (merchant) and the payer page's simulation. */
export const SimulateOutcome = oneOf(Payments.simulationOutcomes, "`paid` (emits `payment.paid`), `failed` (`payment.canceled`) or `processing` (no callback)")

/** `POST /payments/{paymentID}/simulate`. */
export const PaymentSimulate = Schema.Struct({ outcome: SimulateOutcome })
  .annotate({ identifier: "PaymentSimulate", title: "PaymentSimulate" })

/** `PUT /terminals/{terminalID}`. */
export const TerminalSettings = Schema.Struct({
  callback_url: Schema.optionalKey(nullableText("http(s) URL that receives callbacks; null removes it")),
  success_redirect_url: Schema.optionalKey(nullableText("redirect of the payer after a successful payment")),
  fail_redirect_url: Schema.optionalKey(nullableText("redirect of the payer after an error or expiry")),
  conversion_mode: Schema.optionalKey(oneOf(["instant", "scheduled"], "when roubles are converted to USDT")),
  conversion_time: Schema.optionalKey(nullableText("`HH:MM` Moscow time of the daily conversion in `scheduled` mode", "a time like \"18:00\" or null")),
  show_platform_branding: Schema.optionalKey(flag("show the platform branding on the payment page"))
}).annotate({ identifier: "TerminalSettings", title: "TerminalSettings" })

/** `POST /payouts`. */
export const PayoutCreate = Schema.Struct({
  amount_usdt: text(`USDT amount as a string, at most six decimals, greater than zero and at most ${Amount.formatUsdt(Amount.maxUsdtMicro)}`, "a string like \"12.5\" (USDT, at most six decimals)"),
  wallet_address: text(`recipient wallet: 1 to ${Payouts.maxWalletLength} letters, digits, \`:\`, \`_\`, \`-\`, and an address of \`network\`: TRC-20 base58check (T…, 34 characters, checksum checked), ERC-20 \`0x\` and 40 hexadecimal digits (in mixed case, its EIP-55 checksum checked), TON user-friendly (48 base64url characters, checksum checked; standard base64 is stored as base64url) or raw (\`0:\` or \`-1:\` and 64 hexadecimal digits); burn addresses and USDT's own token contract are refused`),
  network: oneOf(Payouts.networks, "payout network"),
  idempotency_key: Schema.optionalKey(
    nullableText(`at most ${Idempotency.maxKeyLength} printable ASCII characters; the same key and body return the first payout (the \`Idempotency-Key\` header is equal)`)
  )
}).annotate({ identifier: "PayoutCreate", title: "PayoutCreate" })

/** `POST /subscriptions`. Required fields are checked by the core (its Russian message names them all). */
export const SubscriptionCreate = Schema.Struct({
  terminal_id: Schema.optionalKey(
    Schema.NullOr(Schema.String).annotate({ description: "UUID of the terminal (required); must be the key's terminal", format: "uuid" })
  ),
  plan_id: Schema.optionalKey(Schema.NullOr(Schema.String).annotate({ description: "UUID of an active plan connected to the terminal (required)", format: "uuid" })),
  amount: Schema.optionalKey(nullableText("ceiling mode only: roubles, greater than zero, not above the plan's cap_amount_rub")),
  payer_id: Schema.optionalKey(nullableText(`fixed tariff only: non-empty, at most ${Subscriptions.maxPayerIdBytes} bytes`)),
  merchant_subscription_ref: Schema.optionalKey(nullableText(`merchant's own reference, at most ${Subscriptions.maxReferenceBytes} bytes`)),
  description: Schema.optionalKey(nullableText(`fixed tariff only, at most ${Subscriptions.maxDescriptionBytes} bytes`)),
  test: Schema.optionalKey(
    Schema.NullOr(Schema.Boolean).annotate({ description: "`true` (or `X-Test-Mode: true`) creates a sandbox subscription (the sandbox acquirer, no real money)" })
  ),
  test_clock: Schema.optionalKey(testClock)
}).annotate({ identifier: "SubscriptionCreate", title: "SubscriptionCreate" })

/** `POST /test-clocks`. */
export const TestClockCreate = Schema.Struct({
  frozen_time: text("the clock's initial time: ISO 8601 with `Z` or an offset (`2026-01-31T10:00:00+03:00`), years 2000 to 2099", "an ISO 8601 date-time with Z or an offset"),
  name: Schema.optionalKey(nullableText("a label, at most 128 characters")),
  terminal_id: terminalId
}).annotate({ identifier: "TestClockCreate", title: "TestClockCreate" })

/** `POST /test-clocks/{id}/advance`. */
export const TestClockAdvance = Schema.Struct({
  frozen_time: text("the new time, later than the clock's (at most 731 days later): ISO 8601 with `Z` or an offset", "an ISO 8601 date-time with Z or an offset")
}).annotate({ identifier: "TestClockAdvance", title: "TestClockAdvance" })

/** `POST /subscriptions/{id}/sandbox/charge-outcomes`. */
export const SandboxChargeOutcomes = Schema.Struct({
  outcomes: Schema.Array(oneOf(["paid", "failed", "unknown"], "the sandbox acquirer's answer to the next charge"))
    .check(Schema.isBetweenLength(1, 100))
    .annotate({
      description: "the sandbox acquirer's answers to the next charges, in order (1 to 100); `paid` once none is left",
      expected: "1 to 100 of paid, failed or unknown"
    })
}).annotate({ identifier: "SandboxChargeOutcomes", title: "SandboxChargeOutcomes" })

/** `POST /auth/login`. */
export const Login = Schema.Struct({
  email: text("e-mail of the dashboard user"),
  password: text("password")
}).annotate({ identifier: "Login", title: "Login" })

/** `POST /auth/refresh`. */
export const Refresh = Schema.Struct({
  refresh_token: text("the refresh token of the last pair (single use)")
}).annotate({ identifier: "Refresh", title: "Refresh" })

/** `POST /auth/password`: the user's own password change. */
export const PasswordChange = Schema.Struct({
  current_password: text("the user's password now"),
  new_password: text("the new password: 8 to 256 characters, not the current one")
}).annotate({ identifier: "PasswordChange", title: "PasswordChange" })

/** `POST /admin/v1/users/{id}/password`: the operator's reset. */
export const PasswordReset = Schema.Struct({
  password: text("the user's new password: 8 to 256 characters")
}).annotate({ identifier: "PasswordReset", title: "PasswordReset" })

/** `POST /auth/logout`: a refresh token of the family to end (else the bearer token's family). */
export const Logout = Schema.Struct({
  refresh_token: Schema.optionalKey(text("a refresh token of the session to end; without it, the bearer access token's session ends"))
}).annotate({ identifier: "Logout", title: "Logout" })

/** `POST /terminals/{terminalID}/api-keys` (merchant and operator). */
export const ApiKeyCreate = Schema.Struct({
  subscription_write: Schema.optionalKey(flag("whether the key may create and stop subscriptions (default true)"))
}).annotate({ identifier: "ApiKeyCreate", title: "ApiKeyCreate" })

// ---------------------------------------------------------------------------------------------
// Merchant query strings

/** `?terminal_id` (balance, rate, payout creation). */
export const TerminalQuery = Schema.Struct({ terminal_id: terminalId })

/** `GET /subscription-plans`: `terminal_id` is required, also with an API key (absent or empty: the spec's `terminal_id is required`). */
export const PlanListQuery = Schema.Struct({
  terminal_id: Schema.optionalKey(Schema.String.annotate({ description: "UUID of the terminal (required, also with an API key: absent, 400 `terminal_id is required`)", format: "uuid", expected: Access.terminalIdExpected }))
})

const environment = Schema.optionalKey(oneOf(["sandbox", "all", "prod"], "`sandbox` only, `all`, or live only (`prod`, the default)"))
const recurring = Schema.optionalKey(oneOf(["true", "false"], "`true`: subscription charges only; `false`: one-off payments only"))

const isoTime = (description: string) => text(`${description}: ISO 8601 with \`Z\` or an offset`, "an ISO 8601 date-time with Z or an offset")

/** An `order_id` to look up or filter by: no payment has an empty one, so an empty value is refused. */
const orderIdQuery = (description: string) =>
  Schema.String.check(Schema.isMinLength(1)).annotate({ description, expected: Payments.orderIdQueryExpected })

/** The narrowing filters of the payments list, stats and export (beyond the spec's). */
const paymentFilters = {
  status: Schema.optionalKey(oneOf(Payment.statuses, "payments in this status only")),
  order_id: Schema.optionalKey(orderIdQuery("the payment of this `order_id` only (an empty list when there is none); not empty")),
  created_from: Schema.optionalKey(isoTime("payments created at or after this time")),
  created_to: Schema.optionalKey(isoTime("payments created before this time (exclusive)"))
}

/** `GET /payments`. */
export const PaymentListQuery = Schema.Struct({
  terminal_id: terminalId,
  environment,
  recurring,
  ...paymentFilters,
  ...paging,
  format: Schema.optionalKey(oneOf(
    ["json", "csv"],
    `\`csv\` exports every payment the filters select as CSV (newest first, at most ${Payments.exportLimit} rows); \`page\`, \`limit\` and \`cursor\` are refused with it (400 naming the parameter)`
  ))
})

/** `GET /payments/stats`. */
export const PaymentStatsQuery = Schema.Struct({ terminal_id: terminalId, environment, recurring, ...paymentFilters })

/** `GET /payments/stats/daily`. */
export const PaymentDailyStatsQuery = Schema.Struct({
  terminal_id: terminalId,
  environment,
  recurring,
  status: paymentFilters.status,
  created_from: isoTime(`the first moment counted (required); at most ${Payments.maxDailyRangeDays} days before \`created_to\``),
  created_to: isoTime("the end of the range, exclusive (required)"),
  time_zone: Schema.optionalKey(text("IANA time zone whose calendar days group the payments (default `UTC`), e.g. `Europe/Moscow`", "an IANA time zone such as Europe/Moscow"))
})

/** A query string that takes no parameter. */
export const NoQuery = Schema.Struct({})

/** `GET /payments/by-order`. */
export const PaymentByOrderQuery = Schema.Struct({
  order_id: orderIdQuery("the merchant's `order_id` of the payment"),
  terminal_id: terminalId,
  environment: Schema.optionalKey(oneOf(["sandbox", "prod"], "the payment's environment (`prod`, the default, or `sandbox`)"))
})

/** `GET /payouts`. */
export const PayoutListQuery = Schema.Struct({ terminal_id: terminalId, ...paging })

/** `GET /subscriptions`. */
export const SubscriptionListQuery = Schema.Struct({
  terminal_id: Schema.optionalKey(someTerminal("filter by terminal (UUID); a dashboard user without it lists all terminals of the account; an empty value is not absent")),
  state: Schema.optionalKey(oneOf(["new", "active", "stop"], "filter by binding state (`provider_state`)")),
  environment,
  ...paging
})

/** `GET /events/feed`. */
export const EventFeedQuery = Schema.Struct({
  terminal_id: terminalId,
  after: Schema.optionalKey(text("`next_after` of the last answer (or an item's `cursor`): the events after it; `latest`: none, only the cursor of the newest event; an `evt_` id of the terminal's is accepted too", "latest or the next_after of the last answer")),
  limit: Schema.optionalKey(intParam(1, Callbacks.maxFeedLimit, `events per answer, 1 to ${Callbacks.maxFeedLimit} (default 50)`)),
  environment: Schema.optionalKey(oneOf(["sandbox", "prod", "all"], "events of sandbox payments (the default), of live ones, or all"))
})


/** `GET /events`. */
export const EventListQuery = Schema.Struct({
  terminal_id: Schema.optionalKey(someTerminal("filter by terminal (UUID); a dashboard user without it lists all terminals of the account; an empty value is not absent")),
  environment: Schema.optionalKey(oneOf(["prod", "sandbox", "all"], "live events only (`prod`, the default), `sandbox`, or `all`")),
  type: Schema.optionalKey(oneOf(Events.eventTypes as ReadonlyArray<string>, "the event type")),
  object_id: Schema.optionalKey(text("a payment (`pay_<uuid>`) or payout (`po_<uuid>`): its events only", "a payment id (pay_<uuid>) or a payout id (po_<uuid>)")),
  created_from: Schema.optionalKey(isoTime("events created at or after this time")),
  created_to: Schema.optionalKey(isoTime("events created before this time (exclusive, as the payments' `created_to`); later than `created_from`")),
  delivery_status: Schema.optionalKey(oneOf(Events.deliveryStatuses, "the state of the event's delivery: the one that delivered it, else its latest (`none`: no callback URL when it was written)")),
  limit: Schema.optionalKey(intParam(1, Events.maxLimit, `events per page, 1 to ${Events.maxLimit} (default ${Events.defaultLimit})`)),
  cursor: Schema.optionalKey(text("`next_cursor` of the previous page: the events after it", "the next_cursor of a previous answer"))
})

/** `POST /events/recover`. */
export const EventRecover = Schema.Struct({
  since: isoTime("re-queue the failed events created at or after this time (at most the retention period back)"),
  terminal_id: terminalId,
  environment: Schema.optionalKey(oneOf(["prod", "sandbox", "all"], "live events only (`prod`, the default), `sandbox`, or `all`"))
}).annotate({ identifier: "EventRecover", title: "EventRecover" })

/** `GET /subscriptions/{id}/upcoming`. */
export const UpcomingQuery = Schema.Struct({
  count: Schema.optionalKey(intParam(1, 60, "how many charges, 1 to 60 (default 12)"))
})

/** `GET /test-clocks`. */
export const TestClockListQuery = Schema.Struct({
  terminal_id: Schema.optionalKey(someTerminal("filter by terminal (UUID); a dashboard user without it lists all terminals of the account; an empty value is not absent")),
  page: Schema.optionalKey(intParam(1, 999_999_999, "page number from 1 (50 records a page)"))
})

// ---------------------------------------------------------------------------------------------
// Payer pages

/** `POST /public/payments/{token}/simulate` (JSON or a form). */
export const PageSimulate = Schema.Struct({
  // Checked by the core after the page's token, so a caller without the token learns nothing.
  outcome: text(`${Payments.simulationOutcomes.join(", ")} (\`processing\` alone sends no callback)`),
  csrf_token: Schema.optionalKey(text("the token of the payer page (required: a missing one is refused with 403 like a wrong one)"))
}).annotate({ identifier: "PageSimulate", title: "PageSimulate" })

/** `POST /public/subscriptions/{token}/confirm` (JSON or a form). */
export const PageConfirm = Schema.Struct({
  csrf_token: Schema.optionalKey(text("the token of the subscription page (required: a missing one is refused with 403 like a wrong one)"))
}).annotate({ identifier: "PageConfirm", title: "PageConfirm" })

// ---------------------------------------------------------------------------------------------
// Operator bodies and query strings

/** `POST /admin/v1/accounts`. */
export const AccountCreate = Schema.Struct({
  name: text("account (merchant) name: 1 to 128 characters, no control characters"),
  owner_email: text("e-mail of the owner's dashboard user"),
  owner_password: text("the owner's password: 8 to 256 characters")
}).annotate({ identifier: "AccountCreate", title: "AccountCreate" })

/** `POST /admin/v1/terminals`. */
export const TerminalCreate = Schema.Struct({
  account_id: text("UUID of the account", "an account UUID"),
  name: text("terminal name: 1 to 128 characters, no control characters"),
  h2h: Schema.optionalKey(Schema.NullOr(Schema.Boolean).annotate({ description: "direct integration (H2H): subscriptions get `redirect_url`", expected: "true, false or null" })),
  callback_url: Schema.optionalKey(nullableText("URL that receives callbacks"))
}).annotate({ identifier: "TerminalCreate", title: "TerminalCreate" })

/** `POST /admin/v1/terminals/{id}/status`. */
export const TerminalStatus = Schema.Struct({ status: oneOf(["active", "disabled"], "`disabled` refuses new payments and subscriptions") })
  .annotate({ identifier: "TerminalStatus", title: "TerminalStatus" })

const optionalNullable = <S extends Schema.Top>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))

/** `POST /admin/v1/plans`. */
export const PlanCreate = Schema.Struct({
  terminal_ids: Schema.Array(Schema.String).annotate({ description: "terminals the plan is connected to", expected: "an array of strings" }),
  code: text("technical code; a new plan with the code of an existing one is its next version"),
  name: text("plan name: 1 to 128 characters, no control characters"),
  interval: text("`day`, `month`, `quarter`, `half_year` (fixed days only) or `year`"),
  schedule: optionalNullable(text("`calendar` or `fixed_days` (default: by mode)")),
  cap_amount_rub: optionalNullable(text("ceiling mode: maximum amount of one charge (at most 1000000.00)")),
  payer_amount_rub: optionalNullable(text("fixed tariff: what the payer pays (at most 1000000.00)")),
  merchant_amount_rub: optionalNullable(text("fixed tariff: what the merchant gets, at most the payer amount (the rest is the payer's commission)")),
  max_cycles: optionalNullable(Schema.Int.annotate({ description: "limit of successful cycles", expected: "an integer" })),
  consent_text: text("the text the payer consents to"),
  policy_version: text("version of the policy the consent refers to: 1 to 64 characters, no control characters")
}).annotate({ identifier: "PlanCreate", title: "PlanCreate" })

/** `POST /admin/v1/acquirer/payments/{paymentId}/outcome`. */
export const AcquirerOutcome = Schema.Struct({ outcome: oneOf(["processing", "paid", "failed"], "what the bank reports") })
  .annotate({ identifier: "AcquirerOutcome", title: "AcquirerOutcome" })

/** `POST /admin/v1/acquirer/subscriptions/{subscriptionId}/unknown-charge`. */
export const ChargeResolution = Schema.Struct({ outcome: oneOf(["paid", "failed"], "what the bank finally says of the charge it did not know") })
  .annotate({ identifier: "ChargeResolution", title: "ChargeResolution" })

/** Longest answer delay of an emulated charge (ms). */
export const maxChargeDelayMs = 30_000

const ChargeProgram = oneOf(["paid", "failed", "unknown"], "the bank's answer to the next charge")

/** `POST /admin/v1/acquirer/subscriptions/{subscriptionId}/charge-outcomes`. */
export const ChargeOutcomes = Schema.Struct({
  outcomes: Schema.Array(Schema.Union([
    ChargeProgram,
    Schema.Struct({
      outcome: ChargeProgram,
      delay_ms: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: maxChargeDelayMs })))
    })
  ])).check(Schema.isMaxLength(100)).annotate({
    description: "answers of the next charges in order: `paid`, `failed`, `unknown`, or `{outcome, delay_ms}` (the bank answers that late)",
    expected: `at most 100 of paid, failed, unknown or objects {"outcome", "delay_ms"} (delay_ms an integer from 0 to ${maxChargeDelayMs})`
  })
}).annotate({ identifier: "ChargeOutcomes", title: "ChargeOutcomes" })

/** `POST /admin/v1/payouts/{id}/reject`. */
export const PayoutReject = Schema.Struct({
  reason: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isBetweenLength(1, 512), Schema.isPattern(/\S/)))
    .annotate({ description: "why, 1 to 512 characters, no control characters", expected: "1 to 512 characters" }))
}).annotate({ identifier: "PayoutReject", title: "PayoutReject" })

/** `PUT /admin/v1/rate`. */
export const RateSet = Schema.Struct({ rate: text(`USDT/RUB, ${Amount.rateRule}`, "a decimal string like \"95.50\"") })
  .annotate({ identifier: "RateSet", title: "RateSet" })

/** `POST /admin/v1/clock`. */
export const ClockSet = Schema.Struct({ now: text("ISO 8601 date-time with an offset", "an ISO 8601 date-time with an offset") })
  .annotate({ identifier: "ClockSet", title: "ClockSet" })

/** An empty object body (operator moves that take none). */
export const Empty = Schema.Struct({}).annotate({ identifier: "Empty", title: "Empty" })

/** `GET /admin/v1/deliveries`. */
export const DeliveryListQuery = Schema.Struct({
  terminal_id: Schema.optionalKey(text("filter by terminal (UUID)", "a terminal UUID")),
  payment_id: Schema.optionalKey(text("filter by payment (`pay_<uuid>` or UUID)", "pay_<uuid> or a UUID")),
  status: Schema.optionalKey(oneOf(["pending", "delivered", "failed"], "filter by delivery status")),
  environment: Schema.optionalKey(oneOf(["prod", "sandbox", "all"], "live only (`prod`), `sandbox` (test clocks' included), or `all` (the default)")),
  limit: Schema.optionalKey(intParam(1, 500, "deliveries to list, newest written first (default 50)"))
})

// ---------------------------------------------------------------------------------------------
// Operator reads

const operatorPage = Schema.optionalKey(intParam(1, 999_999, "page number from 1 (50 records a page)"))

/** `GET /admin/v1/accounts`, `GET /admin/v1/terminals/{id}/payouts`. */
export const OperatorPageQuery = Schema.Struct({ page: operatorPage })

/** `GET /admin/v1/terminals/{id}/payments`. */
export const OperatorPaymentsQuery = Schema.Struct({
  page: operatorPage,
  environment: Schema.optionalKey(oneOf(["prod", "sandbox", "all"], "live only (`prod`, the default), `sandbox`, or `all`"))
})

/** `GET /admin/v1/terminals/{id}/subscriptions`. */
export const OperatorSubscriptionsQuery = Schema.Struct({
  page: operatorPage,
  state: Schema.optionalKey(oneOf(["new", "active", "stop"], "filter by binding state (`provider_state`)"))
})

/**
 * What every `Idempotency-Key` accepts (`Idempotency.validateKey`, which checks it with its own
 * message), for the OpenAPI document: a generated client can check a key before sending it.
 */
export const idempotencyKeyDocumented = {
  minLength: 1,
  maxLength: Idempotency.maxKeyLength,
  pattern: "^[\\x21-\\x7E]+$"
} as const

/** The `Idempotency-Key` of a signing-secret rotation, the owner's and the operator's. */
export const rotationKey: Header = {
  name: "Idempotency-Key",
  required: false,
  documented: idempotencyKeyDocumented,
  description: `at most ${Idempotency.maxKeyLength} printable ASCII characters: the same key answers the same rotation, its secret, again (200) ` +
    "while no later rotation replaced it (then 409); kept 24 hours. Without one, every call is a new rotation.",
  example: "rotate-2026-03-01"
}

/** The `Idempotency-Key` of an operator's move on a payment or payout (refund, chargeback, approve, reject), with the move's example key. */
export const operatorMoveKey = (example: string): Header => ({
  name: "Idempotency-Key",
  required: false,
  documented: idempotencyKeyDocumented,
  description: `at most ${Idempotency.maxKeyLength} printable ASCII characters, no spaces: a repeat of the key for the same move on the same object ` +
    "(a retry after a lost answer) answers the object as it is now (200, with its status now: a payout approved then may be " +
    "`completed` or `rejected` since) and moves nothing; the key used for another move, object or reason of the same terminal is 409 " +
    "`idempotency_conflict`. Kept 24 hours, per terminal. Without one, a repeat is 409 `invalid_transition` (the object has moved already).",
  example
})

/** An operator move's 409 for its key used before for another move. */
export const operatorKeyConflict = [409, "`idempotency_conflict`: the `Idempotency-Key` was used for another move, object or reason"] as const

/** A rotation's 409 once a later rotation replaced the secret of its key. */
export const rotationReplaced = [409, "`idempotency_conflict`: a later rotation replaced the secret of this `Idempotency-Key`"] as const
