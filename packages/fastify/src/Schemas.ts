/**
 * Request schemas of the merchant API: the JSON bodies and query strings as they arrive on the
 * wire, and the decoders that turn them into the core's use-case inputs.
 *
 * Decoding is strict: a wrong type, a missing required field or an unknown field is a 400
 * `invalid_request` whose message and `field` name the field, and a body that is not a JSON
 * object is a 400 `invalid_json_body`, before any use case runs. The same schemas
 * feed the OpenAPI document (`OpenApi.ts`). The subscription creation body is only documented
 * here: the core decodes it itself, since the spec gives it its own error (`invalid json body`).
 */
import { Effect, Schema, SchemaIssue } from "effect"
import { AmountMalformed, InvalidJsonBody, InvalidRequest, UsdtAmountMalformed } from "@paydesk/core"
import type { Payments, Payouts, PaydeskError, Terminal } from "@paydesk/core"

const text = (description: string) => Schema.String.annotate({ description })
const nullableText = (description: string) => Schema.NullOr(Schema.String).annotate({ description })
const terminalId = Schema.optionalKey(
  Schema.String.annotate({ description: "UUID of the terminal; optional with an API key (taken from the key)", format: "uuid" })
)
const page = Schema.optionalKey(
  Schema.String.annotate({ description: "page number from 1; 50 records per page", pattern: "^[1-9][0-9]{0,8}$" })
    .check(Schema.isPattern(/^[1-9][0-9]{0,8}$/))
)

// ---------------------------------------------------------------------------------------------
// Bodies

/** `POST /payments`. */
export const PaymentCreate = Schema.Struct({
  amount: text("decimal roubles: `1000`, `1000.50` or `1000,50`; 0.01 to 1000000.00"),
  order_id: text("merchant order id, 1 to 128 characters; one order_id is one payment"),
  payment_currency: Schema.optionalKey(nullableText("`RUB` (the default and the only currency)")),
  description: Schema.optionalKey(nullableText("free text, at most 512 characters")),
  payment_method: Schema.optionalKey(nullableText("`sbp` (default); forced to `sbp_test` in sandbox")),
  metadata: Schema.optionalKey(
    Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)).annotate({ description: "object of at most 4096 bytes of JSON, returned in callbacks" })
  ),
  test: Schema.optionalKey(Schema.NullOr(Schema.Boolean).annotate({ description: "true creates a sandbox payment (same as `X-Test-Mode: true`)" })),
  terminal_id: terminalId
}).annotate({ title: "PaymentCreate" })

/** `PUT /terminals/{terminalID}`. */
export const TerminalSettings = Schema.Struct({
  callback_url: Schema.optionalKey(nullableText("http(s) URL that receives callbacks; null removes it")),
  success_redirect_url: Schema.optionalKey(nullableText("redirect of the payer after a successful payment")),
  fail_redirect_url: Schema.optionalKey(nullableText("redirect of the payer after an error or expiry")),
  conversion_mode: Schema.optionalKey(Schema.Literals(["instant", "scheduled"]).annotate({ description: "when roubles are converted to USDT" })),
  conversion_time: Schema.optionalKey(nullableText("`HH:MM` Moscow time of the daily conversion in `scheduled` mode")),
  show_platform_branding: Schema.optionalKey(Schema.Boolean.annotate({ description: "show the platform branding on the payment page" }))
}).annotate({ title: "TerminalSettings" })

/** `POST /payouts`. */
export const PayoutCreate = Schema.Struct({
  amount_usdt: text("USDT amount, a decimal with at most six decimals, greater than zero"),
  wallet_address: text("recipient wallet: 1 to 128 letters, digits, `:`, `_`, `-`"),
  network: Schema.String.annotate({ description: "`TRC-20`, `ERC-20` or `TON`", examples: ["TRC-20"] }),
  idempotency_key: Schema.optionalKey(nullableText("at most 128 printable ASCII characters; the same key and body return the first payout"))
}).annotate({ title: "PayoutCreate" })

/** `POST /subscriptions` (documentation only: the core decodes the raw body). */
export const SubscriptionCreate = Schema.Struct({
  terminal_id: Schema.String.annotate({ description: "UUID of the terminal; must be the key's terminal", format: "uuid" }),
  plan_id: Schema.String.annotate({ description: "UUID of an active plan connected to the terminal", format: "uuid" }),
  amount: Schema.optionalKey(text("ceiling mode only: roubles, greater than zero, not above the plan's cap_amount_rub")),
  payer_id: Schema.optionalKey(text("fixed tariff only: non-empty, at most 32 bytes")),
  merchant_subscription_ref: Schema.optionalKey(text("merchant's own reference, at most 128 bytes")),
  description: Schema.optionalKey(text("fixed tariff only, at most 128 bytes"))
}).annotate({ title: "SubscriptionCreate" })

/** `POST /auth/login`. */
export const Login = Schema.Struct({
  email: text("e-mail of the dashboard user"),
  password: text("password")
}).annotate({ title: "Login" })

/** `POST /auth/refresh`. */
export const Refresh = Schema.Struct({
  refresh_token: text("the refresh token of the last pair (single use)")
}).annotate({ title: "Refresh" })

// ---------------------------------------------------------------------------------------------
// Query strings

/** `?terminal_id` (balance, rate, payout creation, plans). */
export const TerminalQuery = Schema.Struct({ terminal_id: terminalId })

const environment = Schema.optionalKey(
  Schema.Literals(["sandbox", "all", "prod"]).annotate({ description: "`sandbox` only, `all`, or live only (`prod`, the default)" })
)
const recurring = Schema.optionalKey(
  Schema.Literals(["true", "false"]).annotate({ description: "`true`: subscription charges only; `false`: one-off payments only" })
)

/** `GET /payments`. */
export const PaymentListQuery = Schema.Struct({
  terminal_id: terminalId,
  environment,
  recurring,
  page,
  format: Schema.optionalKey(Schema.Literals(["json", "csv"]).annotate({ description: "`csv` exports up to 10 000 rows as CSV" }))
})

/** `GET /payments/stats`. */
export const PaymentStatsQuery = Schema.Struct({ terminal_id: terminalId, environment, recurring })

/** `GET /payouts`. */
export const PayoutListQuery = Schema.Struct({ terminal_id: terminalId, page })

/** `GET /subscriptions`. */
export const SubscriptionListQuery = Schema.Struct({
  terminal_id: Schema.optionalKey(
    Schema.String.annotate({ description: "filter by terminal (UUID); a dashboard user without it lists all terminals of the account", format: "uuid" })
  ),
  state: Schema.optionalKey(Schema.Literals(["new", "active", "stop"]).annotate({ description: "filter by binding state (`provider_state`)" })),
  page
})

// ---------------------------------------------------------------------------------------------
// Decoding

type Where = "body" | "query"
type Overrides = Readonly<Record<string, () => PaydeskError>>

interface Leaf {
  readonly path: ReadonlyArray<PropertyKey>
  readonly issue: SchemaIssue.Issue
}

/** The first leaf of an issue tree with its path. */
const leafOf = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey> = []): Leaf => {
  switch (issue._tag) {
    case "Composite":
      return leafOf(issue.issues[0], path)
    case "Pointer":
      return leafOf(issue.issue, [...path, ...issue.path])
    default:
      return { path, issue }
  }
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const lowerFirst = (s: string): string => s.length === 0 ? s : s[0]!.toLowerCase() + s.slice(1)

/** The 400 of a failed decode, naming the field (or a core error for a field with its own rule). */
const failure = (where: Where, overrides: Overrides) => (error: Schema.SchemaError): PaydeskError => {
  const { issue, path } = leafOf(error.issue)
  const field = path.map(String).join(".")
  // A body that is not a JSON object is `invalid json body`, like malformed JSON (docs/decisions.md, HTTP).
  if (field === "") return where === "body" ? InvalidJsonBody.of() : new InvalidRequest({ message: "invalid query string" })
  const top = String(path[0])
  if (issue._tag === "MissingKey") return new InvalidRequest({ field, message: `${field} is required` })
  if (issue._tag === "UnexpectedKey") {
    return new InvalidRequest({ field, message: where === "body" ? `unknown field ${field}` : `unknown query parameter ${field}` })
  }
  const override = overrides[top]
  if (override !== undefined) return override()
  const message = formatter(issue).issues[0]?.message ?? "invalid value"
  return new InvalidRequest({ field, message: `${field}: ${lowerFirst(message)}` })
}

const decoder = <S extends Schema.Constraint>(schema: S, where: Where, overrides: Overrides = {}) => {
  const decode = Schema.decodeUnknownEffect(schema, { onExcessProperty: "error", errors: "first" })
  return (input: unknown): Effect.Effect<S["Type"], PaydeskError> =>
    Effect.mapError(decode(where === "query" ? { ...(input as object) } : input), failure(where, overrides)) as Effect.Effect<S["Type"], PaydeskError>
}

const decodePaymentCreate = decoder(PaymentCreate, "body", { amount: () => AmountMalformed.of() })
const decodeSettings = decoder(TerminalSettings, "body")
const decodePayoutCreate = decoder(PayoutCreate, "body", { amount_usdt: () => UsdtAmountMalformed.of() })
const decodeLogin = decoder(Login, "body")
const decodeRefresh = decoder(Refresh, "body")
const decodeTerminalQuery = decoder(TerminalQuery, "query")
const decodePaymentList = decoder(PaymentListQuery, "query")
const decodePaymentStats = decoder(PaymentStatsQuery, "query")
const decodePayoutList = decoder(PayoutListQuery, "query")
const decodeSubscriptionList = decoder(SubscriptionListQuery, "query")

/** `X-Test-Mode`: `true` or `false` (any letter case); absent is false. */
const testMode = (header: string | undefined): Effect.Effect<boolean, PaydeskError> => {
  if (header === undefined) return Effect.succeed(false)
  const value = header.trim().toLowerCase()
  if (value === "true" || value === "false") return Effect.succeed(value === "true")
  return Effect.fail(new InvalidRequest({ field: "X-Test-Mode", message: "X-Test-Mode must be true or false" }))
}

/** The payment creation input from the body and the `X-Test-Mode` header. */
export const paymentCreate = (body: unknown, testHeader: string | undefined) =>
  Effect.gen(function*() {
    const b = yield* decodePaymentCreate(body)
    const header = yield* testMode(testHeader)
    const input: Payments.CreateInput = {
      terminalId: b.terminal_id,
      amount: b.amount,
      currency: b.payment_currency,
      orderId: b.order_id,
      description: b.description,
      paymentMethod: b.payment_method,
      metadata: b.metadata,
      test: header || b.test === true
    }
    return input
  })

const recurringOf = (value: "true" | "false" | undefined): boolean | undefined => value === undefined ? undefined : value === "true"
const pageOf = (value: string | undefined): number | undefined => value === undefined ? undefined : Number(value)

/** The payments list query and whether CSV was asked for. */
export const paymentList = (query: unknown) =>
  Effect.map(decodePaymentList(query), (q) => {
    const list: Payments.ListQuery = {
      terminalId: q.terminal_id,
      environment: q.environment,
      recurring: recurringOf(q.recurring),
      page: pageOf(q.page)
    }
    return { query: list, csv: q.format === "csv" }
  })

/** The payments stats query. */
export const paymentStats = (query: unknown) =>
  Effect.map(decodePaymentStats(query), (q): Payments.ListQuery => ({
    terminalId: q.terminal_id,
    environment: q.environment,
    recurring: recurringOf(q.recurring)
  }))

/** `terminal_id` of a query, if given. */
export const terminalQuery = (query: unknown) => Effect.map(decodeTerminalQuery(query), (q) => q.terminal_id)

/** The terminal settings change (only the fields sent). */
export const settings = (body: unknown) =>
  Effect.map(decodeSettings(body), (b) => {
    const out: { -readonly [K in keyof Terminal.Settings]: Terminal.Settings[K] } = {}
    if (b.callback_url !== undefined) out.callbackUrl = b.callback_url
    if (b.success_redirect_url !== undefined) out.successRedirectUrl = b.success_redirect_url
    if (b.fail_redirect_url !== undefined) out.failRedirectUrl = b.fail_redirect_url
    if (b.conversion_mode !== undefined) out.conversionMode = b.conversion_mode
    if (b.conversion_time !== undefined) out.conversionTime = b.conversion_time
    if (b.show_platform_branding !== undefined) out.showPlatformBranding = b.show_platform_branding
    return out as Terminal.Settings
  })

/** The payout creation input from the body and `?terminal_id`. */
export const payoutCreate = (body: unknown, query: unknown) =>
  Effect.gen(function*() {
    const terminalId = yield* terminalQuery(query)
    const b = yield* decodePayoutCreate(body)
    const input: Payouts.CreateInput = {
      terminalId,
      amountUsdt: b.amount_usdt,
      walletAddress: b.wallet_address,
      network: b.network,
      idempotencyKey: b.idempotency_key
    }
    return input
  })

/** The payouts list query. */
export const payoutList = (query: unknown) =>
  Effect.map(decodePayoutList(query), (q) => ({ terminalId: q.terminal_id, page: pageOf(q.page) }))

/** The subscriptions list query. */
export const subscriptionList = (query: unknown) =>
  Effect.map(decodeSubscriptionList(query), (q) => ({ terminalId: q.terminal_id, state: q.state, page: pageOf(q.page) }))

/** Login credentials. */
export const login = (body: unknown) => decodeLogin(body)

/** The refresh token. */
export const refresh = (body: unknown) => Effect.map(decodeRefresh(body), (b) => b.refresh_token)
