/**
 * The declarations of the operator API (`/admin/v1`, `Authorization: Bearer <operator token>`):
 * provisioning, credential lifecycle, the acquirer's and the operator's moves, deployment hooks
 * and the callback delivery log. One `Contract.Operation` each.
 */
import { operation } from "./Contract.js"
import type { Operation } from "./Contract.js"
import * as Examples from "./Examples.js"
import { responses as R } from "./ResponseSchemas.js"
import * as S from "./Schemas.js"

const tag = "Operator"
const common: ReadonlyArray<readonly [number, string]> = [
  [400, "`invalid_request` (field or query parameter named, with what it expects; any query parameter where the operation takes none), `invalid_json_body`"],
  [401, "`operator bearer token required`"]
]
const id = (what: string) => ({ id: `UUID of the ${what}` })
const hookMissing: readonly [number, string] = [501, "`not_implemented`: the deployment has no such hook"]

export const createAccount = operation({
  id: "operatorCreateAccount", surface: "operator", method: "POST", path: "/accounts", tag, auth: "operator",
  summary: "Create a merchant account and its owner's dashboard user",
  body: { schema: S.AccountCreate, example: { name: "Coffee", owner_email: "owner@coffee.example", owner_password: "correct horse battery" } },
  responses: [{ status: 201, description: "account and owner", schema: R.AccountCreated, example: Examples.accountCreated }],
  errors: common
})

// Reads: lists (newest first, `page` from 1, 50 per page) and single records

const readErrors = (what: string): ReadonlyArray<readonly [number, string]> => [...common, [404, `\`${what} not found\``]]

export const listAccounts = operation({
  id: "operatorListAccounts", surface: "operator", method: "GET", path: "/accounts", tag, auth: "operator",
  summary: "Accounts, newest first",
  query: S.OperatorPageQuery,
  queryExample: { page: "1" },
  responses: [{ status: 200, description: "a page of accounts", schema: R.AccountPage, example: Examples.accountPage }],
  errors: common
})

export const getAccount = operation({
  id: "operatorGetAccount", surface: "operator", method: "GET", path: "/accounts/{id}", tag, auth: "operator",
  summary: "An account with its terminals",
  params: id("account"),
  responses: [{ status: 200, description: "the account", schema: R.AccountDetail, example: Examples.accountDetail }],
  errors: readErrors("account")
})

export const listAccountTerminals = operation({
  id: "operatorListAccountTerminals", surface: "operator", method: "GET", path: "/accounts/{id}/terminals", tag, auth: "operator",
  summary: "An account's terminals",
  params: id("account"),
  responses: [{ status: 200, description: "the terminals", schema: R.TerminalList, example: { items: [Examples.terminal] } }],
  errors: readErrors("account")
})

export const getTerminal = operation({
  id: "operatorGetTerminal", surface: "operator", method: "GET", path: "/terminals/{id}", tag, auth: "operator",
  summary: "A terminal's settings, the health of its callback endpoint and the signing-secret overlap",
  params: id("terminal"),
  responses: [{ status: 200, description: "the terminal", schema: R.TerminalDetails, example: Examples.terminalDetails }],
  errors: readErrors("terminal")
})

export const updateTerminal = operation({
  id: "operatorUpdateTerminal", surface: "operator", method: "PUT", path: "/terminals/{id}", tag, auth: "operator",
  summary: "Change a terminal's settings (also a disabled one)",
  params: id("terminal"),
  body: { schema: S.TerminalSettings, example: { callback_url: "https://coffee.example/paydesk/callbacks", conversion_mode: "instant" } },
  responses: [{ status: 200, description: "the terminal", schema: R.Terminal, example: Examples.terminal }],
  errors: readErrors("terminal")
})

export const listTerminalPayments = operation({
  id: "operatorListPayments", surface: "operator", method: "GET", path: "/terminals/{id}/payments", tag, auth: "operator",
  summary: "A terminal's payments, newest first (live by default)",
  params: id("terminal"),
  query: S.OperatorPaymentsQuery,
  queryExample: { environment: "all", page: "1" },
  responses: [{ status: 200, description: "a page of payments", schema: R.PaymentPage, example: Examples.paymentPage }],
  errors: readErrors("terminal")
})

export const getPayment = operation({
  id: "operatorGetPayment", surface: "operator", method: "GET", path: "/payments/{id}", tag, auth: "operator",
  summary: "A payment (`pay_<uuid>` or the bare UUID)",
  params: { id: "`pay_<uuid>` or the UUID of the payment" },
  responses: [{ status: 200, description: "the payment", schema: R.Payment, example: Examples.payment }],
  errors: readErrors("payment")
})

export const listTerminalSubscriptions = operation({
  id: "operatorListSubscriptions", surface: "operator", method: "GET", path: "/terminals/{id}/subscriptions", tag, auth: "operator",
  summary: "A terminal's subscriptions, newest first",
  params: id("terminal"),
  query: S.OperatorSubscriptionsQuery,
  queryExample: { state: "active", page: "1" },
  responses: [{ status: 200, description: "a page of subscriptions", schema: R.SubscriptionPage, example: Examples.subscriptionPage }],
  errors: readErrors("terminal")
})

export const getSubscription = operation({
  id: "operatorGetSubscription", surface: "operator", method: "GET", path: "/subscriptions/{id}", tag, auth: "operator",
  summary: "A subscription",
  params: id("subscription"),
  responses: [{ status: 200, description: "the subscription", schema: R.Subscription, example: Examples.storedSubscription }],
  errors: readErrors("subscription")
})

export const listTerminalPayouts = operation({
  id: "operatorListPayouts", surface: "operator", method: "GET", path: "/terminals/{id}/payouts", tag, auth: "operator",
  summary: "A terminal's payouts, newest first",
  params: id("terminal"),
  query: S.OperatorPageQuery,
  queryExample: { page: "1" },
  responses: [{ status: 200, description: "a page of payouts", schema: R.PayoutPage, example: Examples.payoutPage }],
  errors: readErrors("terminal")
})

export const getPayout = operation({
  id: "operatorGetPayout", surface: "operator", method: "GET", path: "/payouts/{id}", tag, auth: "operator",
  summary: "A payout (`po_<uuid>` or the bare UUID)",
  params: { id: "`po_<uuid>` or the UUID of the payout" },
  responses: [{ status: 200, description: "the payout", schema: R.Payout, example: Examples.payout }],
  errors: readErrors("payout")
})

export const createTerminal = operation({
  id: "operatorCreateTerminal", surface: "operator", method: "POST", path: "/terminals", tag, auth: "operator",
  summary: "Create a terminal: its API key and signing secret are shown once",
  body: { schema: S.TerminalCreate, example: { account_id: Examples.ids.account, name: "Shop", callback_url: "https://coffee.example/paydesk/callbacks" } },
  responses: [{ status: 201, description: "the terminal with its credentials", schema: R.TerminalCreated, example: Examples.terminalCreated }],
  errors: [...common, [404, "`account not found`"]]
})

export const createApiKey = operation({
  id: "operatorCreateApiKey", surface: "operator", method: "POST", path: "/terminals/{id}/api-keys", tag, auth: "operator",
  summary: "Issue another API key for a terminal",
  params: id("terminal"),
  body: { schema: S.ApiKeyCreate, example: { subscription_write: true }, optional: true },
  responses: [{ status: 201, description: "the key, shown once", schema: R.OperatorApiKey, example: Examples.operatorApiKey }],
  errors: [...common, [400, "`terminal is unavailable`"], [404, "`terminal not found`"]]
})

export const listApiKeys = operation({
  id: "operatorListApiKeys", surface: "operator", method: "GET", path: "/terminals/{id}/api-keys", tag, auth: "operator",
  summary: "A terminal's API keys (never the keys themselves)",
  params: id("terminal"),
  responses: [{ status: 200, description: "keys, oldest first", schema: R.ApiKeyList, example: { items: [Examples.apiKey] } }],
  errors: [...common, [404, "`terminal not found`"]]
})

export const revokeApiKey = operation({
  id: "operatorRevokeApiKey", surface: "operator", method: "POST", path: "/terminals/{id}/api-keys/{keyId}/revoke", tag, auth: "operator",
  summary: "Revoke an API key (idempotent)",
  params: { ...id("terminal"), keyId: "UUID of the key" },
  responses: [{ status: 200, description: "the revoked key", schema: R.ApiKey, example: { ...Examples.apiKey, revoked_at: "2026-03-02T08:00:00.000Z" } }],
  errors: [...common, [404, "`api key not found`"]]
})

export const rotateSigningSecret = operation({
  id: "operatorRotateSigningSecret", surface: "operator", method: "POST", path: "/terminals/{id}/signing-secret/rotate", tag, auth: "operator",
  summary: "Replace a terminal's signing secret (shown once)",
  description: "As the owner's rotation: with an `Idempotency-Key` a repeat (a retry after a lost answer) answers the same secret.",
  params: id("terminal"),
  headers: [S.rotationKey],
  responses: [{ status: 200, description: "the new secret (again for a repeat of its `Idempotency-Key`)", schema: R.SigningSecretRotation, example: Examples.signingSecretRotation }],
  errors: [...common, [404, "`terminal not found`"], S.rotationReplaced]
})

export const logoutUser = operation({
  id: "operatorLogoutUser", surface: "operator", method: "POST", path: "/users/{id}/logout", tag, auth: "operator",
  summary: "End every session of a dashboard user",
  params: id("user"),
  responses: [{ status: 200, description: "done", schema: R.Ok, example: Examples.ok }],
  errors: [...common, [404, "`user not found`"]]
})

export const resetPassword = operation({
  id: "operatorResetPassword", surface: "operator", method: "POST", path: "/users/{id}/password", tag, auth: "operator",
  summary: "Set a dashboard user's password (forgotten or leaked) and end every session of the user",
  description: "The account's users and their ids are in `GET /accounts/{id}`. Hand the password over out of band; the user can change it " +
    "with `POST /api/v1/auth/password`.",
  params: id("user"),
  body: { schema: S.PasswordReset, example: { password: "a new correct horse" } },
  responses: [{ status: 200, description: "done: the old password and every token of the user no longer work", schema: R.Ok, example: Examples.ok }],
  errors: [...common, [404, "`user not found`"], [503, "`service_busy`: too many sign-ins in progress, retry shortly"]]
})

export const setTerminalStatus = operation({
  id: "operatorSetTerminalStatus", surface: "operator", method: "POST", path: "/terminals/{id}/status", tag, auth: "operator",
  summary: "Enable or disable a terminal",
  params: id("terminal"),
  body: { schema: S.TerminalStatus, example: { status: "disabled" } },
  responses: [{ status: 200, description: "the terminal", schema: R.Terminal, example: { ...Examples.terminal, status: "disabled" } }],
  errors: [...common, [404, "`terminal not found`"]]
})

export const createPlan = operation({
  id: "operatorCreatePlan", surface: "operator", method: "POST", path: "/plans", tag, auth: "operator",
  summary: "Create a subscription plan (or the next version of its code)",
  body: {
    schema: S.PlanCreate,
    example: { terminal_ids: [Examples.ids.terminal], code: "coffee-monthly", name: "Coffee club, monthly", interval: "month", cap_amount_rub: "4000.00", consent_text: "I agree to monthly charges", policy_version: "2026-01" }
  },
  responses: [{ status: 201, description: "the plan", schema: R.OperatorPlan, example: Examples.operatorPlan }],
  errors: [
    [400, "`invalid_request` (field named, with what it expects); on `terminal_ids` also when an older active version of the code is offered on a terminal this one does not name (a new version replaces the older ones on all their terminals: name them all, or use another code), `invalid_json_body`"],
    [401, "`operator bearer token required`"]
  ]
})

export const acquirerOutcome = operation({
  id: "operatorAcquirerOutcome", surface: "operator", method: "POST", path: "/acquirer/payments/{paymentId}/outcome", tag, auth: "operator",
  summary: "The bank's report on a live payment (emulated deployments, manual operations)",
  params: { paymentId: "`pay_<uuid>` or UUID" },
  body: { schema: S.AcquirerOutcome, example: { outcome: "paid" } },
  responses: [{ status: 200, description: "the payment", schema: R.Payment, example: Examples.paidLivePayment }],
  errors: [...common, [400, "sandbox payments are settled by simulation only"], [404, "`payment not found`"], [409, "a state conflict"]]
})

export const chargeOutcomes = operation({
  id: "operatorChargeOutcomes", surface: "operator", method: "POST", path: "/acquirer/subscriptions/{subscriptionId}/charge-outcomes", tag, auth: "operator",
  summary: "Program the emulated bank's answers to a subscription's next charges",
  params: { subscriptionId: "UUID of the subscription" },
  body: { schema: S.ChargeOutcomes, example: { outcomes: ["paid", { outcome: "failed", delay_ms: 3000 }] } },
  responses: [{ status: 200, description: "the program", schema: R.ChargeProgramSet, example: Examples.chargeProgram }],
  errors: [...common, [404, "`subscription not found`"], hookMissing]
})

export const resolveCharge = operation({
  id: "operatorResolveCharge", surface: "operator", method: "POST", path: "/acquirer/subscriptions/{subscriptionId}/unknown-charge", tag, auth: "operator",
  summary: "The emulated bank settles a subscription's charge it answered `unknown`",
  description: "The open attempt of the subscription's current cycle, which the emulated bank recorded as `unknown`, gets its final " +
    "answer. Nothing is booked here: `POST /subscriptions/{id}/resume` then asks the bank again under the same key and books its answer " +
    "(for a stopping or stopped subscription, the background work's next ask about its open attempt books it: a lease after the attempt's " +
    "last ask at the soonest, up to a day for one long unconfirmed).",
  params: { subscriptionId: "UUID of the subscription" },
  body: { schema: S.ChargeResolution, example: { outcome: "paid" } },
  responses: [{ status: 200, description: "the charge and the bank's answer", schema: R.ChargeResolved, example: Examples.chargeResolved }],
  errors: [...common, [400, "`the subscription has no open charge the bank answered unknown`"], [404, "`subscription not found`"], hookMissing]
})

export const approvePayout = operation({
  id: "operatorApprovePayout", surface: "operator", method: "POST", path: "/payouts/{id}/approve", tag, auth: "operator",
  summary: "Approve a payout for sending",
  params: { id: "`po_<uuid>` or UUID" },
  headers: [S.operatorMoveKey("approve-2026-03-01-0001")],
  responses: [{ status: 200, description: "the payout", schema: R.Payout, example: { ...Examples.payout, status: "processing" } }],
  errors: [
    ...common,
    [400, "`insufficient balance` (negative balance); the payout's terminal is disabled (enable it, or reject the payout)"],
    [404, "`payout not found`"],
    [409, "a state conflict"],
    S.operatorKeyConflict
  ]
})

export const rejectPayout = operation({
  id: "operatorRejectPayout", surface: "operator", method: "POST", path: "/payouts/{id}/reject", tag, auth: "operator",
  summary: "Reject a payout that has not been sent (its hold returns)",
  params: { id: "`po_<uuid>` or UUID" },
  body: { schema: S.PayoutReject, example: { reason: "wallet on a sanctions list" }, optional: true },
  headers: [S.operatorMoveKey("reject-2026-03-01-0001")],
  responses: [{ status: 200, description: "the payout", schema: R.Payout, example: { ...Examples.payout, status: "rejected", reject_reason: "wallet on a sanctions list" } }],
  errors: [...common, [404, "`payout not found`"], [409, "a state conflict"], S.operatorKeyConflict]
})

export const refundPayment = operation({
  id: "operatorRefundPayment", surface: "operator", method: "POST", path: "/payments/{id}/refund", tag, auth: "operator",
  summary: "Refund a paid live payment (`refund_request.completed`, then `payment.refunded`)",
  params: { id: "`pay_<uuid>` or UUID" },
  headers: [S.operatorMoveKey("refund-2026-03-01-0001")],
  responses: [{ status: 200, description: "the payment", schema: R.Payment, example: { ...Examples.paidLivePayment, status: "refunded" } }],
  errors: [...common, [400, "`refunds are unavailable for sandbox payments`"], [404, "`payment not found`"], [409, "not paid"], S.operatorKeyConflict]
})

export const chargebackPayment = operation({
  id: "operatorChargebackPayment", surface: "operator", method: "POST", path: "/payments/{id}/chargeback", tag, auth: "operator",
  summary: "Record a chargeback on a paid live payment (`payment.chargeback`)",
  params: { id: "`pay_<uuid>` or UUID" },
  headers: [S.operatorMoveKey("chargeback-2026-03-01-0001")],
  responses: [{ status: 200, description: "the payment", schema: R.Payment, example: { ...Examples.paidLivePayment, status: "chargeback" } }],
  errors: [...common, [400, "`chargebacks are unavailable for sandbox payments`"], [404, "`payment not found`"], [409, "not paid"], S.operatorKeyConflict]
})

export const resumeSubscription = operation({
  id: "operatorResumeSubscription", surface: "operator", method: "POST", path: "/subscriptions/{id}/resume", tag, auth: "operator",
  summary: "Resume a subscription in review",
  description: "`active/review`: the open charge of the cycle is asked about again under its key, then charges go on. " +
    "`new/review` (its first payment refused, or expired unanswered): only once one of its first payments was paid after all, " +
    "which activates it at the resume (`activated_at` now, the next charge a period later); otherwise 400, and only a stop ends it.",
  params: id("subscription"),
  responses: [{ status: 200, description: "the subscription", schema: R.Subscription, example: { ...Examples.storedSubscription, provider_state: "active", billing_status: "enabled" } }],
  errors: [...common, [404, "`subscription not found`"], [409, "a state conflict"]]
})

export const stopSubscription = operation({
  id: "operatorStopSubscription", surface: "operator", method: "POST", path: "/subscriptions/{id}/stop", tag, auth: "operator",
  summary: "Stop a subscription",
  params: id("subscription"),
  responses: [{ status: 200, description: "the subscription", schema: R.Subscription, example: { ...Examples.storedSubscription, provider_state: "stop", billing_status: "stopped" } }],
  errors: [...common, [400, "the stop could not be completed"], [404, "`subscription not found`"], [503, "`provider not available`"]]
})

export const setRate = operation({
  id: "operatorSetRate", surface: "operator", method: "PUT", path: "/rate", tag, auth: "operator",
  summary: "Set the USDT/RUB rate",
  body: { schema: S.RateSet, example: { rate: "95.50" } },
  responses: [{ status: 200, description: "the rate", schema: R.RateAnswer, example: { rate: "95.50" } }],
  errors: [...common, hookMissing]
})

export const setClock = operation({
  id: "operatorSetClock", surface: "operator", method: "POST", path: "/clock", tag, auth: "operator",
  summary: "Set the manual clock (`PAYDESK_CLOCK=manual`)",
  body: { schema: S.ClockSet, example: { now: "2026-03-01T09:30:00+03:00" } },
  responses: [{ status: 200, description: "the time", schema: R.ClockAnswer, example: { now: "2026-03-01T06:30:00.000Z" } }],
  errors: [...common, [409, "`clock is not manual`"]]
})

export const runWork = operation({
  id: "operatorRunWork", surface: "operator", method: "POST", path: "/work/run", tag, auth: "operator",
  summary: "Run the background work due now",
  responses: [{ status: 200, description: "what was done: the deployment's report (the reference server's and the core's is a `WorkReport`)", schema: R.WorkAnswer, example: Examples.workReport }],
  errors: common
})

export const listDeliveries = operation({
  id: "operatorListDeliveries", surface: "operator", method: "GET", path: "/deliveries", tag, auth: "operator",
  summary: "Callback deliveries, newest written first",
  description: "In the order they were written (a test clock's deliveries carry the clock's time in `created_at`, so that order is not theirs); at most `limit`, no further pages: narrow with the filters.",
  query: S.DeliveryListQuery,
  queryExample: { payment_id: Examples.ids.payment, status: "failed" },
  responses: [{ status: 200, description: "deliveries", schema: R.DeliveryList, example: { items: [Examples.delivery] } }],
  errors: common
})

export const getDelivery = operation({
  id: "operatorGetDelivery", surface: "operator", method: "GET", path: "/deliveries/{id}", tag, auth: "operator",
  summary: "A delivery with its event (the exact body) and attempt log",
  params: id("delivery"),
  responses: [{ status: 200, description: "the delivery", schema: R.DeliveryDetail, example: Examples.deliveryDetail }],
  errors: [...common, [404, "`delivery not found`"]]
})

/** The operator API's operations, in the document's order. */
export const all: ReadonlyArray<Operation<any, any>> = [
  listAccounts, getAccount, listAccountTerminals, getTerminal, updateTerminal, listTerminalPayments, getPayment,
  listTerminalSubscriptions, getSubscription, listTerminalPayouts, getPayout,
  createAccount, createTerminal, createApiKey, listApiKeys, revokeApiKey, rotateSigningSecret, logoutUser, resetPassword, setTerminalStatus,
  createPlan, acquirerOutcome, chargeOutcomes, resolveCharge, approvePayout, rejectPayout, refundPayment, chargebackPayment,
  resumeSubscription, stopSubscription, setRate, setClock, runWork, listDeliveries, getDelivery
]
