/**
 * The declarations of the merchant API (`/api/v1`), the payer pages (`/public`) and the docs
 * routes: one `Contract.Operation` each, from which routes decode, the OpenAPI document is built
 * and answers are checked.
 */
import { Schema } from "effect"
import { AmountMalformed, Idempotency, UsdtAmountMalformed } from "@paydesk/core"
import { operation } from "./Contract.js"
import type { Header, Operation } from "./Contract.js"
import * as Examples from "./Examples.js"
import { responses as R } from "./ResponseSchemas.js"
import * as S from "./Schemas.js"

const common: ReadonlyArray<readonly [number, string]> = [
  [400, "`invalid_request`: a wrong type, missing or unknown field or query parameter (any, where the operation takes none), named in `field`, with what it expects; `invalid_json_body`: malformed JSON, invalid UTF-8 or a body that is not an object; `body_too_large` (over 64 KiB); `invalid_request` `send X-API-Key (with X-Nonce) or Authorization: Bearer, not both`"],
  [401, "`X-API-Key header is required`, `invalid api key`, `X-Nonce header is required`, `nonce already used`, invalid or expired access token"],
  [403, "`terminal access denied` (API key of another terminal), `account access denied` (terminal of another account); also a `terminal_id` that names no terminal, an empty one included (given, never taken as absent)"]
]
const ownerOnly: readonly [number, string] = [403, "`account owner access required` (an API key), `account access denied` (terminal of another account)"]

const testMode: Header = {
  name: "X-Test-Mode",
  required: false,
  description: "`true` works in the sandbox (same as `test: true` in the body)",
  example: "true",
  schema: Schema.Literals(["true", "false"]).annotate({ expected: "true or false" }),
  normalize: (value) => value.trim().toLowerCase()
}

/** On reads with an `environment`: its default (`true`: the sandbox, `false`: live); a disagreeing `environment` is 400. */
const testModeRead: Header = {
  ...testMode,
  description: "`true` reads the sandbox, `false` live: the default of `environment`, as on creations; given with an `environment` that disagrees (`prod` or `all` with `true`, `sandbox` or `all` with `false`), 400"
}

/** On live-only writes (payouts): `true` is refused, since no sandbox version exists and live money would move. */
const testModeRefused: Header = {
  ...testMode,
  description: "`true` is refused with 400 (`field` `X-Test-Mode`): payouts have no sandbox, a payout sends real USDT from the live balance; `false` or none: live"
}

const idempotencyKey = (what: "payment" | "payout" | "subscription"): Header => ({
  name: "Idempotency-Key",
  required: false,
  documented: S.idempotencyKeyDocumented,
  description: `at most ${Idempotency.maxKeyLength} printable ASCII characters: the same key with the same body answers the first ${what} again (200), with another body 409; kept ${
    what === "payment" ? "24 hours, then free again" : "7 days"
  }. Retry with the same key and a new \`X-Nonce\`.`,
  example: "3c9f1a2e-checkout-1001"
})

const paymentID = { paymentID: "`pay_<uuid>` or the bare UUID" }
const terminalID = { terminalID: "UUID of the terminal" }
const subscriptionID = { subscriptionID: "UUID of the subscription" }
const testClockID = { testClockID: "UUID of the test clock" }

// ---------------------------------------------------------------------------------------------
// Auth

export const login = operation({
  id: "login", surface: "merchant", method: "POST", path: "/auth/login", tag: "Auth", auth: "none",
  summary: "Dashboard login: a token pair",
  description: "Limited to 10 attempts a minute per e-mail and 30 per client address (429 `too_many_requests` with `Retry-After`).",
  body: { schema: S.Login, example: { email: "owner@coffee.example", password: "correct horse battery" } },
  responses: [{ status: 200, description: "token pair", schema: R.TokenPair, example: Examples.tokenPair }],
  errors: [[400, "`invalid_request` (field named), `invalid_json_body`"], [401, "`invalid email or password`"], [429, "`too_many_requests`"], [503, "`service_busy`: too many sign-ins in progress, retry shortly"]]
})

export const refresh = operation({
  id: "refresh", surface: "merchant", method: "POST", path: "/auth/refresh", tag: "Auth", auth: "none",
  summary: "New token pair for a refresh token (single use)",
  body: { schema: S.Refresh, example: { refresh_token: Examples.tokenPair.refresh_token } },
  responses: [{ status: 200, description: "token pair", schema: R.TokenPair, example: Examples.tokenPair }],
  errors: [[400, "`invalid_request` (field named), `invalid_json_body`"], [401, "`invalid or expired refresh token`"]]
})

export const logout = operation({
  id: "logout", surface: "merchant", method: "POST", path: "/auth/logout", tag: "Auth", auth: "none",
  summary: "End a session: revokes the refresh family of `refresh_token`, or else of the Bearer access token",
  body: { schema: S.Logout, example: { refresh_token: Examples.tokenPair.refresh_token }, optional: true },
  responses: [{ status: 200, description: "the session's access and refresh tokens no longer work", schema: R.Ok, example: Examples.ok }],
  errors: [[400, "`invalid_request` (field named), `invalid_json_body`"], [401, "`invalid or expired refresh token`, `invalid or expired access token`"]]
})

export const changePassword = operation({
  id: "changePassword", surface: "merchant", method: "POST", path: "/auth/password", tag: "Auth", auth: "merchant",
  summary: "Change the signed-in user's password: every session of the user ends, the caller gets a new pair",
  description: "With the user's Bearer access token (an API key is 403). The user's other sessions (other devices, and whoever held its " +
    "password or a token) stop working at once; the answer is a new token pair for the caller. " +
    "Limited to 10 a minute per session (the token's refresh family; 429 `too_many_requests` with `Retry-After`). " +
    "API keys, the callback URL and the signing secret stay as they are: after a leak, review them too.",
  body: { schema: S.PasswordChange, example: { current_password: "correct horse battery", new_password: "staple battery horse correct" } },
  responses: [{ status: 200, description: "the password is changed; a new token pair (the old ones no longer work)", schema: R.TokenPair, example: Examples.tokenPair }],
  errors: [
    [400, "`invalid_request`: `current_password is not the user's password`, `new_password must be 8 to 256 characters`, `new_password must differ from current_password`; `invalid_json_body`"],
    [401, "`Authorization: Bearer <access token> is required` (no credential), `invalid or expired access token`"],
    [403, "`account owner access required` (an API key)"],
    [429, "`too_many_requests`"],
    [503, "`service_busy`: too many sign-ins in progress, retry shortly"]
  ]
})

// ---------------------------------------------------------------------------------------------
// Payments

export const createPayment = operation({
  id: "createPayment", surface: "merchant", method: "POST", path: "/payments", tag: "Payments", auth: "merchant",
  summary: "Create a payment",
  description: "`order_id` is the natural idempotency key: the same `order_id` with the same parameters answers the same payment (200). " +
    "Send the payer to `pay_url`; learn the result from the `payment.paid` callback and by reading the payment.",
  headers: [testMode, idempotencyKey("payment")],
  body: {
    schema: S.PaymentCreate,
    example: { amount: "1000.50", order_id: "ord-1001", description: "Coffee beans, 1 kg", metadata: { cart: "c-77" }, test: true },
    overrides: { amount: (message, field) => new AmountMalformed({ message, field }) }
  },
  responses: [
    { status: 201, description: "payment created", schema: R.Payment, example: Examples.payment },
    { status: 200, description: "the payment of this `order_id` (same parameters) or of this `Idempotency-Key` (same body)", schema: R.Payment, example: Examples.payment }
  ],
  errors: [
    ...common,
    [400, "`amount_malformed` (roubles with at most two decimals), `amount_not_positive`, amount above 1000000.00; `terminal is unavailable`"],
    [409, "`order_id already used for another payment`; `idempotency key conflicts with another request`"]
  ]
})

export const listPayments = operation({
  id: "listPayments", surface: "merchant", method: "GET", path: "/payments", tag: "Payments", auth: "merchant",
  summary: "List payments (newest first) or export CSV",
  description: "Pages of 50 with `page`, or `limit` records after a `cursor` (`next_cursor` of the last answer). " +
    "`status`, `order_id` and the created range narrow the list, the CSV export and the statistics alike. " +
    "`format=csv` exports every payment the filters select, newest first, at most 10 000 rows: it is never a page, so `page`, `limit` and `cursor` " +
    "are refused with it (400 naming the parameter) rather than ignored; narrow an export with `created_from` and `created_to`. " +
    "Exports are built one at a time per server; a terminal (or a dashboard user's account) has at most 2 waiting or being built, " +
    "a third is 429 `too_many_requests` with `Retry-After`, and one whose client leaves is dropped.",
  query: S.PaymentListQuery,
  headers: [testModeRead],
  queryExample: { environment: "sandbox", limit: "20" },
  responses: [{ status: 200, description: "a page of payments, or `text/csv` with `format=csv`", schema: R.PaymentPage, example: Examples.paymentPage, csv: true }],
  errors: [
    ...common,
    [400, "`page`, `limit` or `cursor` with `format=csv` (named in `field`); `created_to` not later than `created_from`; an empty `order_id`"],
    [429, "`too_many_requests`: 2 CSV exports of the terminal (or account) are already waiting or being built"]
  ]
})

export const paymentStats = operation({
  id: "paymentStats", surface: "merchant", method: "GET", path: "/payments/stats", tag: "Payments", auth: "merchant",
  summary: "Payment statistics per status",
  query: S.PaymentStatsQuery,
  headers: [testModeRead],
  queryExample: { environment: "sandbox" },
  responses: [{ status: 200, description: "statistics", schema: R.PaymentStats, example: Examples.paymentStats }],
  errors: common
})

export const paymentDailyStats = operation({
  id: "paymentDailyStats", surface: "merchant", method: "GET", path: "/payments/stats/daily", tag: "Payments", auth: "merchant",
  summary: "Payment statistics per calendar day and status",
  description: "Counts and sums per status of the payments created in `[created_from, created_to)`, for each calendar day of `time_zone` that has payments (a chart of the last 30 days is one call).",
  query: S.PaymentDailyStatsQuery,
  headers: [testModeRead],
  queryExample: { created_from: "2026-02-28T21:00:00Z", created_to: "2026-03-02T21:00:00Z", time_zone: "Europe/Moscow" },
  responses: [{ status: 200, description: "statistics per day", schema: R.PaymentDailyStats, example: Examples.paymentDailyStats }],
  errors: [...common, [400, "`created_from is required`, `created_to is required`, `created_to must be later than created_from`, a range over 366 days, an unknown `time_zone`"]]
})

export const getPaymentByOrder = operation({
  id: "getPaymentByOrderId", surface: "merchant", method: "GET", path: "/payments/by-order", tag: "Payments", auth: "merchant",
  summary: "Read the payment of an `order_id`",
  query: S.PaymentByOrderQuery,
  headers: [testModeRead],
  queryExample: { order_id: "ord-1001", environment: "sandbox" },
  responses: [{ status: 200, description: "the payment", schema: R.Payment, example: Examples.payment }],
  errors: [...common, [404, "`payment not found`"]]
})

export const getPayment = operation({
  id: "getPayment", surface: "merchant", method: "GET", path: "/payments/{paymentID}", tag: "Payments", auth: "merchant",
  summary: "Read a payment (`pay_<uuid>` or UUID)",
  description: "Before giving goods, check `status` = `paid` (and, for subscriptions, the terminal and `subscription_id`).",
  params: paymentID,
  responses: [{ status: 200, description: "the payment (`settlement`: what a live paid one credited to the balance)", schema: R.Payment, example: Examples.paidLivePayment }],
  errors: [...common, [404, "`payment not found`"]]
})

export const simulatePayment = operation({
  id: "simulatePayment", surface: "merchant", method: "POST", path: "/payments/{paymentID}/simulate", tag: "Sandbox", auth: "merchant",
  summary: "Simulate the payer's bank on a sandbox payment",
  description: "`paid` moves the payment through `processing` to `paid` and sends `payment.paid` (with `test: true`); `failed` ends in `canceled` " +
    "(`payment.canceled`); `processing` alone sends nothing. Repeating the outcome a payment already has changes nothing.",
  params: paymentID,
  body: { schema: S.PaymentSimulate, example: { outcome: "paid" } },
  responses: [{ status: 200, description: "the payment after the simulation", schema: R.Payment, example: Examples.paidPayment }],
  errors: [...common, [400, "`simulation is available only for sandbox payments`; `outcome` not one of paid, failed, processing"], [404, "`payment not found`"], [409, "the payment is final (e.g. `paid` then `failed`)"]]
})

// ---------------------------------------------------------------------------------------------
// Terminals, credentials, balance, rate

export const updateTerminal = operation({
  id: "updateTerminal", surface: "merchant", method: "PUT", path: "/terminals/{terminalID}", tag: "Terminals", auth: "merchant",
  summary: "Change terminal settings",
  params: terminalID,
  body: { schema: S.TerminalSettings, example: { callback_url: "https://coffee.example/paydesk/callbacks", conversion_mode: "instant" } },
  responses: [{ status: 200, description: "the terminal", schema: R.Terminal, example: Examples.terminal }],
  errors: [...common, [400, "`callback_url must not point to a loopback address (127.0.0.1)` and other URL rules; `terminal is unavailable`"]]
})

export const listApiKeys = operation({
  id: "listApiKeys", surface: "merchant", method: "GET", path: "/terminals/{terminalID}/api-keys", tag: "Credentials", auth: "merchant",
  summary: "The terminal's API keys (owner's Bearer token only; keys are never shown again)",
  params: terminalID,
  responses: [{ status: 200, description: "keys, oldest first", schema: R.ApiKeyList, example: { items: [Examples.apiKey] } }],
  errors: [...common, ownerOnly]
})

export const createApiKey = operation({
  id: "createApiKey", surface: "merchant", method: "POST", path: "/terminals/{terminalID}/api-keys", tag: "Credentials", auth: "merchant",
  summary: "Issue another API key (owner's Bearer token only)",
  params: terminalID,
  body: { schema: S.ApiKeyCreate, example: { subscription_write: false }, optional: true },
  responses: [{ status: 201, description: "the key, shown once", schema: R.CreatedApiKey, example: Examples.createdApiKey }],
  errors: [...common, [400, "`terminal is unavailable`"], ownerOnly]
})

export const revokeApiKey = operation({
  id: "revokeApiKey", surface: "merchant", method: "POST", path: "/terminals/{terminalID}/api-keys/{keyID}/revoke", tag: "Credentials", auth: "merchant",
  summary: "Revoke an API key at once (owner's Bearer token only; repeating is harmless)",
  params: { ...terminalID, keyID: "UUID of the key (`id` in the list)" },
  responses: [{ status: 200, description: "the revoked key", schema: R.ApiKey, example: { ...Examples.apiKey, revoked_at: "2026-03-02T08:00:00.000Z" } }],
  errors: [...common, ownerOnly, [404, "`api key not found`"]]
})

export const rotateSigningSecret = operation({
  id: "rotateSigningSecret", surface: "merchant", method: "POST", path: "/terminals/{terminalID}/signing-secret/rotate", tag: "Credentials", auth: "merchant",
  summary: "Replace the callback signing secret (owner's Bearer token only)",
  description: "Starts an overlap (24 h by default): `X-Signature` keeps the previous secret, `X-Signature-Next` carries the new one, " +
    "`webhook-signature` both. Deploy a verifier that accepts both, then `retire-previous` (or let the overlap end). See Callbacks above. " +
    "Send an `Idempotency-Key`: a retry after a lost answer then gets the same secret, where a second rotation would replace the unseen one.",
  params: terminalID,
  headers: [S.rotationKey],
  responses: [{ status: 200, description: "the new secret, shown once (again for a repeat of its `Idempotency-Key`)", schema: R.SigningSecretRotation, example: Examples.signingSecretRotation }],
  errors: [...common, ownerOnly, S.rotationReplaced]
})

export const retirePreviousSecret = operation({
  id: "retirePreviousSecret", surface: "merchant", method: "POST", path: "/terminals/{terminalID}/signing-secret/retire-previous", tag: "Credentials", auth: "merchant",
  summary: "End a rotation's overlap now: `X-Signature` carries the new secret (owner's Bearer token only)",
  description: "For a receiver that deployed the new secret and checks only `X-Signature`. Repeating it is harmless.",
  params: terminalID,
  responses: [{ status: 200, description: "the terminal, without an overlap", schema: R.TerminalDetails, example: Examples.terminalDetails }],
  errors: [...common, ownerOnly]
})

export const getBalance = operation({
  id: "getBalance", surface: "merchant", method: "GET", path: "/balance", tag: "Terminals", auth: "merchant",
  summary: "Balance of the terminal",
  query: S.TerminalQuery,
  queryExample: { terminal_id: Examples.ids.terminal },
  responses: [{ status: 200, description: "balance", schema: R.Balance, example: Examples.balance }],
  errors: common
})

export const getRate = operation({
  id: "getRate", surface: "merchant", method: "GET", path: "/rate", tag: "Terminals", auth: "merchant",
  summary: "Current USDT/RUB rate (or the terminal's)",
  query: S.TerminalQuery,
  queryExample: {},
  responses: [{ status: 200, description: "rate", schema: R.Rate, example: Examples.rate }],
  errors: [...common, [503, "`provider not available` (no rate known)"]]
})

// ---------------------------------------------------------------------------------------------
// Payouts

export const createPayout = operation({
  id: "createPayout", surface: "merchant", method: "POST", path: "/payouts", tag: "Payouts", auth: "merchant",
  summary: "Request a USDT payout",
  description: "The `Idempotency-Key` header and the body's `idempotency_key` are the same key (send one, or both equal).",
  headers: [idempotencyKey("payout"), testModeRefused],
  query: S.TerminalQuery,
  queryExample: {},
  body: {
    schema: S.PayoutCreate,
    example: { amount_usdt: "20", wallet_address: Examples.payout.wallet_address, network: "TRC-20", idempotency_key: "payout-2026-03-01" },
    overrides: { amount_usdt: (message, field) => new UsdtAmountMalformed({ message, field }) }
  },
  responses: [{ status: 200, description: "the payout (`created`), also for a replayed idempotency key", schema: R.Payout, example: Examples.payout }],
  errors: [
    ...common,
    [400, "`terminal_id is required` (dashboard user), `insufficient balance`, `amount_usdt` malformed, `Idempotency-Key` and `idempotency_key` differ, `X-Test-Mode: true` (payouts have no sandbox)"],
    [409, "`max active payouts reached`, `idempotency key conflicts with another request`"]
  ]
})

export const listPayouts = operation({
  id: "listPayouts", surface: "merchant", method: "GET", path: "/payouts", tag: "Payouts", auth: "merchant",
  summary: "List payouts (newest first)",
  query: S.PayoutListQuery,
  queryExample: { limit: "20" },
  responses: [{ status: 200, description: "a page of payouts", schema: R.PayoutPage, example: Examples.payoutPage }],
  errors: [...common, [400, "`terminal_id is required` (dashboard user)"]]
})

// ---------------------------------------------------------------------------------------------
// Subscriptions

export const listPlans = operation({
  id: "listPlans", surface: "merchant", method: "GET", path: "/subscription-plans", tag: "Subscriptions", auth: "merchant",
  summary: "Active plans of a terminal",
  query: S.PlanListQuery,
  queryExample: { terminal_id: Examples.ids.terminal },
  queryRequired: ["terminal_id"],
  responses: [{ status: 200, description: "plans", schema: R.PlanList, example: { items: [Examples.plan] } }],
  errors: [...common, [400, "`terminal_id is required`"], [503, "`recurring plans not configured`"]]
})

export const createSubscription = operation({
  id: "createSubscription", surface: "merchant", method: "POST", path: "/subscriptions", tag: "Subscriptions", auth: "merchant",
  summary: "Create a subscription",
  description: "Send the payer to `pay_url` (unchanged). Repeating the same `Idempotency-Key` with the same body answers 200 with the same subscription; " +
    "on a timeout or 5xx retry with the same key and a new `X-Nonce`.",
  headers: [{ ...idempotencyKey("subscription"), required: true }, testMode],
  body: {
    schema: S.SubscriptionCreate,
    example: { terminal_id: Examples.ids.terminal, plan_id: Examples.ids.plan, amount: "1500", merchant_subscription_ref: "member-42" },
    invalidJsonOnly: true
  },
  responses: [
    { status: 201, description: "created, with `pay_url` (or `redirect_url` for H2H)", schema: R.Subscription, example: Examples.subscription },
    { status: 200, description: "the subscription of this `Idempotency-Key` (same body)", schema: R.Subscription, example: Examples.subscription }
  ],
  errors: [
    ...common,
    [400, "`invalid json body`, `terminal_id is required`, missing fields (Russian text), key or reference over 128, plan not available, amount malformed / not positive / above the ceiling (Russian text), `terminal is unavailable`, fields not accepted in the plan's mode, `recurring scenario temporarily unavailable`, sandbox refused"],
    [403, "`subscription write access required`"],
    [409, "`idempotency key conflicts with another request`"],
    [503, "`subscriptions not configured`, `provider not available`"]
  ]
})

export const listSubscriptions = operation({
  id: "listSubscriptions", surface: "merchant", method: "GET", path: "/subscriptions", tag: "Subscriptions", auth: "merchant",
  summary: "List subscriptions (newest first)",
  query: S.SubscriptionListQuery,
  headers: [testModeRead],
  queryExample: { state: "active", page: "1" },
  responses: [{ status: 200, description: "a page of subscriptions", schema: R.SubscriptionPage, example: Examples.subscriptionPage }],
  errors: common
})

export const getSubscription = operation({
  id: "getSubscription", surface: "merchant", method: "GET", path: "/subscriptions/{subscriptionID}", tag: "Subscriptions", auth: "merchant",
  summary: "Read a subscription",
  params: subscriptionID,
  responses: [{ status: 200, description: "the subscription (without `pay_url`)", schema: R.Subscription, example: Examples.storedSubscription }],
  errors: [...common, [404, "`subscription not found`"], [503, "`subscriptions not configured`"]]
})

export const listCharges = operation({
  id: "listCharges", surface: "merchant", method: "GET", path: "/subscriptions/{subscriptionID}/charges", tag: "Subscriptions", auth: "merchant",
  summary: "Charge history (up to 100 newest)",
  params: subscriptionID,
  responses: [{ status: 200, description: "charges", schema: R.ChargeList, example: [Examples.charge] }],
  errors: [...common, [404, "`subscription not found`"]]
})

export const upcomingCharges = operation({
  id: "upcomingCharges", surface: "merchant", method: "GET", path: "/subscriptions/{subscriptionID}/upcoming", tag: "Subscriptions", auth: "merchant",
  summary: "The next charges (UTC and Moscow time) and amounts, by the schedule that charges",
  description: "Empty unless the subscription is active and enabled. A subscription on a test clock counts from the clock's time.",
  params: subscriptionID,
  query: S.UpcomingQuery,
  queryExample: { count: "3" },
  responses: [{ status: 200, description: "upcoming charges, soonest first", schema: R.UpcomingCharges, example: Examples.upcomingCharges }],
  errors: [...common, [404, "`subscription not found`"]]
})

export const programSandboxCharges = operation({
  id: "programSandboxChargeOutcomes", surface: "merchant", method: "POST", path: "/subscriptions/{subscriptionID}/sandbox/charge-outcomes", tag: "Sandbox", auth: "merchant",
  summary: "Queue the sandbox acquirer's answers to the next charges of a sandbox subscription",
  description: "`paid`, `failed` or `unknown` (the bank does not answer: the charge stays open and is resolved later), in order, after any queued before; a charge with none queued is paid.",
  params: subscriptionID,
  body: { schema: S.SandboxChargeOutcomes, example: { outcomes: ["failed", "paid"] } },
  responses: [{ status: 200, description: "the outcomes queued", schema: R.SandboxChargeOutcomes, example: Examples.sandboxChargeOutcomes }],
  errors: [
    ...common,
    [400, "`charge outcomes can be programmed for sandbox subscriptions only`"],
    [403, "`subscription write access required`"],
    [404, "`subscription not found`; `test clock not found` (its test clock was deleted)"],
    [409, "`invalid_transition`: the subscription is stopped or stopping and will not be charged again; `test clock is advancing`"],
    [503, "`provider not available` (the sandbox bank could not store them)"]
  ]
})

export const stopSubscription = operation({
  id: "stopSubscription", surface: "merchant", method: "POST", path: "/subscriptions/{subscriptionID}/stop", tag: "Subscriptions", auth: "merchant",
  summary: "Stop a subscription",
  description: "Re-read the subscription and check `provider_state` = `stop` and `billing_status` = `stopped` before telling the payer.",
  params: subscriptionID,
  responses: [{ status: 200, description: "stopped (also when already stopped)", schema: R.Ok, example: Examples.ok }],
  errors: [
    ...common,
    [400, "the stop could not be completed, the subscription moved to `review` (Russian text)"],
    [403, "`subscription write access required`"],
    [404, "`subscription not found`"],
    [503, "`subscriptions not configured`, `provider not available`"]
  ]
})

// ---------------------------------------------------------------------------------------------
// Events feed

export const eventFeed = operation({
  id: "eventFeed", surface: "merchant", method: "GET", path: "/events/feed", tag: "Sandbox", auth: "merchant",
  summary: "The terminal's callback events as a feed, signed (what `paydesk listen` forwards)",
  description: "Every callback event of the terminal in order, whether or not a `callback_url` is set, each with the exact body and the headers " +
    "a delivery carries (signed now with the terminal's `signing_secret`). Start with `after=latest`, then pass `next_after` each time. " +
    "A cursor is opaque and bound to the terminal; it stays valid when its event is deleted (a deleted test clock's, or by the retention). " +
    "400 on `after` for a cursor the server cannot open (another terminal's, altered, or of a database restored to an earlier point or a key since changed) " +
    "and for an `evt_` id that is no event of the terminal (deleted, or another's): start again from `latest`.",
  query: S.EventFeedQuery,
  headers: [testModeRead],
  queryExample: { after: Examples.eventFeed.next_after, limit: "50" },
  responses: [{ status: 200, description: "events after the cursor, oldest first", schema: R.EventFeed, example: Examples.eventFeed }],
  errors: common
})

// ---------------------------------------------------------------------------------------------
// Events API

const eventID = { eventID: "`evt_<uuid>` (or the bare UUID)" }
const eventErrors: ReadonlyArray<readonly [number, string]> = [
  ...common,
  [403, "`terminal access denied`: an event of another terminal of the key's own account"],
  [404, "`event not found` (unknown, another merchant's, or older than the retention period)"]
]

export const listEvents = operation({
  id: "listEvents", surface: "merchant", method: "GET", path: "/events", tag: "Events", auth: "merchant",
  summary: "The callback events of the terminal (newest first), each with its delivery (the one that delivered it, else its latest)",
  description: "Events are kept for 30 days (`PAYDESK_EVENT_RETENTION_DAYS`). Sandbox and live are apart: live only unless `environment` says otherwise. " +
    "Pass `next_cursor` as `cursor` for the next page.",
  query: S.EventListQuery,
  headers: [testModeRead],
  queryExample: { environment: "sandbox", type: "payment.paid", delivery_status: "failed", limit: "20" },
  responses: [{ status: 200, description: "a page of events", schema: R.EventPage, example: Examples.eventPage }],
  errors: [...common, [400, "`created_from`/`created_to` not ISO 8601, or `created_to must be later than created_from` (`created_to` is exclusive); `cursor` not a `next_cursor`; `object_id` not a payment or payout id"]]
})

export const getEvent = operation({
  id: "getEvent", surface: "merchant", method: "GET", path: "/events/{eventID}", tag: "Events", auth: "merchant",
  summary: "An event with every delivery and attempt (time, status code, latency, error, the first 1 KiB of the answer)",
  params: eventID,
  responses: [{ status: 200, description: "the event", schema: R.EventDetail, example: Examples.eventDetail }],
  errors: eventErrors
})

/** The limit shared by resends and test events (`MerchantEvents.defaultSendsPerMinute`, the server's `PAYDESK_EVENT_SENDS_PER_MINUTE`). */
const manualSendsLimited: readonly [number, string] = [429, "`too_many_requests`: the minute's resends and test events of the terminal (or account) are used up"]

export const resendEvent = operation({
  id: "resendEvent", surface: "merchant", method: "POST", path: "/events/{eventID}/resend", tag: "Events", auth: "merchant",
  summary: "Send an event again now: one attempt, outside the 8 of its delivery",
  description: "The callback carries the same body, `X-Event-Id` and sequence, signed now. The event's own delivery is not touched. " +
    "The answer reports the attempt (an answer of the endpoint other than 2xx is not an error of this request). " +
    "Resends and test events count together: 30 a minute per terminal (or dashboard account) by default; past that 429 with `Retry-After`, nothing sent.",
  params: eventID,
  responses: [{ status: 200, description: "the attempt made", schema: R.EventSent, example: Examples.eventSent }],
  errors: [...eventErrors, [400, "`the terminal has no callback_url to send to`"], manualSendsLimited]
})

export const recoverEvents = operation({
  id: "recoverEvents", surface: "merchant", method: "POST", path: "/events/recover", tag: "Events", auth: "merchant",
  summary: "Queue again every event whose delivery failed since a time",
  description: "After an outage of your endpoint: each failed event (latest delivery `failed`) created since `since` gets a new delivery with 8 attempts, " +
    "due now, sent oldest first and in sequence per payment, with the same event ids. Events delivered meanwhile are not repeated.",
  body: { schema: S.EventRecover, example: { since: "2026-03-01T00:00:00Z", environment: "prod" } },
  responses: [{ status: 200, description: "how many were queued", schema: R.EventsRecovered, example: Examples.eventsRecovered }],
  errors: [...common, [400, "`since` not ISO 8601"]]
})

export const listTerminals = operation({
  id: "listTerminals", surface: "merchant", method: "GET", path: "/terminals", tag: "Terminals", auth: "merchant",
  summary: "The terminals you may act on",
  description: "With an API key: its one terminal. With a dashboard token: every terminal of the account, oldest first.",
  responses: [{ status: 200, description: "the terminals", schema: R.TerminalList, example: { items: [Examples.terminal] } }],
  errors: common.filter(([status]) => status !== 403)
})

export const getTerminal = operation({
  id: "getTerminal", surface: "merchant", method: "GET", path: "/terminals/{terminalID}", tag: "Terminals", auth: "merchant",
  summary: "Terminal settings, the health of its callback endpoint and the signing-secret overlap",
  params: terminalID,
  responses: [{ status: 200, description: "the terminal", schema: R.TerminalDetails, example: Examples.terminalDetails }],
  errors: common
})

export const sendTestEvent = operation({
  id: "sendTestEvent", surface: "merchant", method: "POST", path: "/terminals/{terminalID}/test-event", tag: "Events", auth: "merchant",
  summary: "Send a `ping` event to the callback URL now (checks the endpoint and its signature verification)",
  description: "The body is `{ event_type: \"ping\", terminal_id, sent_at, test: false }`, signed like every callback. It is listed among the events. " +
    "Counts with resends: 30 a minute per terminal (or dashboard account) by default; past that 429 with `Retry-After`, nothing sent.",
  params: terminalID,
  responses: [{ status: 200, description: "the attempt made", schema: R.EventSent, example: { ...Examples.eventSent, event: { ...Examples.event, type: "ping", object_id: null, sequence: 1, test: false, payload: { event_type: "ping" } } } }],
  errors: [...common, [400, "`the terminal has no callback_url to send to`"], manualSendsLimited]
})

// ---------------------------------------------------------------------------------------------
// Payer pages

const token = { token: "the page token (the last segment of `pay_url`)" }
const pageErrors: ReadonlyArray<readonly [number, string]> = [[404, "`payment not found` (an HTML page)"]]

export const paymentPage = operation({
  id: "paymentPage", surface: "public", method: "GET", path: "/payments/{token}", tag: "Payer pages", auth: "none",
  summary: "The payer's payment page (QR code; sandbox: simulation buttons)",
  params: token,
  responses: [{ status: 200, description: "the page", contentType: "text/html" }],
  errors: pageErrors
})

export const paymentPageStatus = operation({
  id: "paymentPageStatus", surface: "public", method: "GET", path: "/payments/{token}/status", tag: "Payer pages", auth: "none",
  summary: "Status of the page's payment (polled by the page)",
  params: token,
  responses: [{ status: 200, description: "status and where to send the payer", schema: R.PageStatus, example: Examples.pageStatus }],
  errors: [[404, "`payment not found`"]]
})

export const pageSimulate = operation({
  id: "pageSimulate", surface: "public", method: "POST", path: "/payments/{token}/simulate", tag: "Payer pages", auth: "none",
  summary: "Sandbox simulation from the payer page (the page's `csrf_token`)",
  description: "For server code, `POST /api/v1/payments/{paymentID}/simulate` with the API key is simpler.",
  params: token,
  body: { schema: S.PageSimulate, example: { outcome: "paid", csrf_token: "Kx7mQ2vB9nL4tR8cW1zY6pD3" }, form: true },
  responses: [
    { status: 200, description: "JSON post: the new status", schema: R.PageStatus, example: Examples.pageStatus },
    { status: 303, description: "form post: back to the page", headers: { location: "the payment page" } }
  ],
  errors: [[400, "`simulation is available only for sandbox payments`, outcome not allowed, `invalid_json_body`"], [403, "`invalid csrf_token`"], [404, "`payment not found`"], [409, "the payment is final; `paid` once it expired (late money is the merchant's `POST /api/v1/payments/{paymentID}/simulate`)"]]
})

export const subscriptionPage = operation({
  id: "subscriptionPage", surface: "public", method: "GET", path: "/subscriptions/{token}", tag: "Payer pages", auth: "none",
  summary: "The payer's consent page of a subscription",
  params: { token: "the page token (the last segment of the subscription's `pay_url`)" },
  responses: [{ status: 200, description: "the page", contentType: "text/html" }],
  errors: [[404, "`subscription not found` (an HTML page)"]]
})

export const pageConfirm = operation({
  id: "pageConfirm", surface: "public", method: "POST", path: "/subscriptions/{token}/confirm", tag: "Payer pages", auth: "none",
  summary: "The payer confirms the subscription's terms (the page's `csrf_token`)",
  params: { token: "the page token" },
  body: { schema: S.PageConfirm, example: { csrf_token: "Kx7mQ2vB9nL4tR8cW1zY6pD3" }, form: true },
  responses: [
    { status: 200, description: "JSON post: the state and the first payment's page", schema: R.ConsentConfirmed, example: Examples.consentConfirmed },
    { status: 303, description: "form post: to the first payment's page", headers: { location: "the first payment's page" } }
  ],
  errors: [[400, "`invalid_json_body`"], [403, "`invalid csrf_token`"], [404, "`subscription not found`"]]
})

// ---------------------------------------------------------------------------------------------
// Test clocks

export const createTestClock = operation({
  id: "createTestClock", surface: "merchant", method: "POST", path: "/test-clocks", tag: "Test clocks", auth: "merchant",
  summary: "Create a test clock frozen at a time",
  description: "Sandbox payments and subscriptions created with `test_clock` live on the clock's time: their expiries, charges and callbacks happen when the clock is advanced past them.",
  body: { schema: S.TestClockCreate, example: { frozen_time: "2026-01-31T10:00:00+03:00", name: "renewal on the 31st" } },
  responses: [{ status: 201, description: "the clock, `ready`", schema: R.TestClock, example: Examples.testClock }],
  errors: [...common, [400, "`frozen_time` malformed or outside the years 2000 to 2099; name too long; `terminal is unavailable`"]]
})

export const listTestClocks = operation({
  id: "listTestClocks", surface: "merchant", method: "GET", path: "/test-clocks", tag: "Test clocks", auth: "merchant",
  summary: "List test clocks (newest first)",
  query: S.TestClockListQuery,
  queryExample: { page: "1" },
  responses: [{ status: 200, description: "a page of clocks", schema: R.TestClockPage, example: Examples.testClockPage }],
  errors: common
})

export const getTestClock = operation({
  id: "getTestClock", surface: "merchant", method: "GET", path: "/test-clocks/{testClockID}", tag: "Test clocks", auth: "merchant",
  summary: "Read a test clock (poll it while `advancing`)",
  params: testClockID,
  responses: [{ status: 200, description: "the clock", schema: R.TestClock, example: Examples.testClock }],
  errors: [...common, [404, "`test clock not found`"]]
})

export const advanceTestClock = operation({
  id: "advanceTestClock", surface: "merchant", method: "POST", path: "/test-clocks/{testClockID}/advance", tag: "Test clocks", auth: "merchant",
  summary: "Move a test clock to a later time",
  description: "The due charges, expiries and callback attempts of the clock's objects run at their own moments, in order. " +
    "Within the request's budget (about 20 s) the answer is 200 with the clock `ready` at the new time; otherwise 202 with the clock " +
    "still `advancing`, and the service finishes in the background (poll `GET /test-clocks/{testClockID}`).",
  params: testClockID,
  body: { schema: S.TestClockAdvance, example: { frozen_time: "2026-03-31T10:00:00+03:00" } },
  responses: [
    { status: 200, description: "done: the clock is `ready` at the new time", schema: R.TestClock, example: Examples.testClock },
    { status: 202, description: "the request's budget ran out: the clock is still `advancing`", schema: R.TestClock, example: Examples.advancingTestClock }
  ],
  errors: [
    ...common,
    [400, "`frozen_time` malformed, not later than the clock's, or more than 731 days later"],
    [400, "`terminal is unavailable` (a disabled terminal: advancing needs write access)"],
    [403, "`subscription write access required`: an API key without it, while a subscription on the clock has a charge or a stop to come (advancing would charge it)"],
    [404, "`test clock not found`"],
    [409, "`test clock is advancing`"]
  ]
})

export const deleteTestClock = operation({
  id: "deleteTestClock", surface: "merchant", method: "DELETE", path: "/test-clocks/{testClockID}", tag: "Test clocks", auth: "merchant",
  summary: "Delete a test clock",
  description: "Deletes the clock and every object on it. The clock is gone at once: reading it is 404, the list leaves it out, " +
    "a payment or subscription created with it as `test_clock` is 400, and any action on its objects is 404 `test clock not found`. " +
    "Its payments, subscriptions, charges, events and deliveries are removed from the store within minutes (a lease after the deletion, " +
    "in batches). Not while it advances (409: wait until it is `ready`). Clocks are also deleted automatically at their `deletes_after`. " +
    "Takes no body and no query parameter.",
  params: testClockID,
  responses: [{ status: 200, description: "deleted", schema: R.DeletedTestClock, example: Examples.deletedTestClock }],
  errors: [
    ...common,
    [400, "`terminal is unavailable` (a disabled terminal: deleting needs write access, as advancing)"],
    [403, "`subscription write access required`: an API key without it, while a subscription on the clock is not stopped (deleting would end it)"],
    [404, "`test clock not found` (another terminal's, or deleted already)"],
    [409, "`test clock is advancing`"]
  ]
})

// ---------------------------------------------------------------------------------------------
// Docs

/** A docs route: a GET that takes no query parameter and answers one kind of content. */
const docsOperation = (
  id: string,
  path: string,
  summary: string,
  description: string,
  contentType: "application/json" | "text/html" | "text/javascript",
  errors: ReadonlyArray<readonly [number, string]> = [],
  example?: unknown
) =>
  operation({
    id, surface: "docs", method: "GET", path, tag: "Docs", auth: "none", summary,
    query: S.NoQuery,
    queryExample: {},
    responses: [{ status: 200, description, contentType, ...(example === undefined ? {} : { example }) }],
    errors: [[400, "`invalid_request`: `unknown query parameter …` (these take none)"], ...errors]
  })

export const openApiDocument = docsOperation("openApiDocument", "/openapi.json", "This OpenAPI 3.1 document", "the document", "application/json", [], {
  openapi: "3.1.0",
  info: { title: "Paydesk API", version: "1", license: { name: "MIT", identifier: "MIT" } },
  paths: { "/api/v1/payments": { post: { operationId: "createPayment", summary: "Create a payment" } } }
})

export const docsPage = docsOperation(
  "docsPage", "/docs", "The API reference (rendered by Scalar from this document, served locally)", "the page", "text/html"
)

export const docsScript = docsOperation(
  "docsScript", "/docs/scalar.js", "The renderer's script (the `@scalar/api-reference` package, no CDN)", "the script", "text/javascript",
  [[404, "`not_found`: the optional package `@scalar/api-reference` is not installed beside `@paydesk/fastify`"]]
)

/** The merchant API's operations, in the document's order. */
export const merchant: ReadonlyArray<Operation<any, any>> = [
  login, refresh, logout, changePassword,
  createPayment, listPayments, paymentStats, paymentDailyStats, getPaymentByOrder, getPayment, simulatePayment,
  updateTerminal, listApiKeys, createApiKey, revokeApiKey, rotateSigningSecret, getBalance, getRate,
  createPayout, listPayouts,
  listPlans, createSubscription, listSubscriptions, getSubscription, listCharges, upcomingCharges, programSandboxCharges, stopSubscription,
  createTestClock, listTestClocks, getTestClock, advanceTestClock, deleteTestClock,
  listEvents, getEvent, resendEvent, recoverEvents, listTerminals, getTerminal, sendTestEvent, retirePreviousSecret, eventFeed
]

/** The payer pages. */
export const pages: ReadonlyArray<Operation<any, any>> = [paymentPage, paymentPageStatus, pageSimulate, subscriptionPage, pageConfirm]

/** The docs routes. */
export const docs: ReadonlyArray<Operation<any, any>> = [openApiDocument, docsPage, docsScript]
