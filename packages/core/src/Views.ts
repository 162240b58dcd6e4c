/**
 * The API representation of every resource: snake_case fields, decimal strings for amounts,
 * ISO 8601 UTC timestamps, prefixed payment and payout ids. One place, so the HTTP host, the
 * callbacks and the examples show the same shapes.
 */
import { formatRate, formatRub, formatUsdt } from "./Amount.js"
import { type Attempt, type Delivery, type EndpointHealth, eventId, type OutboxEvent } from "./Callback.js"
import * as Charge from "./Charge.js"
import { paymentId, payoutId } from "./Id.js"
import { formatIso, formatMoscow } from "./Instant.js"
import type { Balance } from "./Ledger.js"
import type { Payment, Settlement } from "./Payment.js"
import type { Payout } from "./Payout.js"
import type { Plan } from "./Plan.js"
import type { Rate } from "./ports/RateSource.js"
import type { Subscription } from "./Subscription.js"
import type { TestClock } from "./TestClock.js"
import type { Account, ApiKey, Terminal, User } from "./Terminal.js"
import type { Report as WorkReport } from "./usecases/Work.js"

const iso = (ms: number | null): string | null => (ms === null ? null : formatIso(ms))

/** Link of a payment's payer page. */
export const paymentPageUrl = (publicUrl: string, token: string): string => `${publicUrl}/public/payments/${token}`
/** Link of a subscription's consent page. */
export const subscriptionPageUrl = (publicUrl: string, token: string): string => `${publicUrl}/public/subscriptions/${token}`

/** A payment as the API returns it. */
export const payment = (p: Payment, publicUrl: string) => ({
  id: paymentId(p.id),
  payment_id: paymentId(p.id),
  terminal_id: p.terminalId,
  order_id: p.orderId,
  amount: formatRub(p.amount),
  payment_currency: p.currency,
  status: p.status,
  description: p.description,
  metadata: p.metadata,
  payment_method: p.paymentMethod,
  test: p.environment === "sandbox",
  environment: p.environment,
  test_clock: p.testClockId,
  pay_url: paymentPageUrl(publicUrl, p.payToken),
  subscription_id: p.subscriptionId,
  recurring: p.subscriptionId !== null,
  created_at: formatIso(p.createdAt),
  updated_at: formatIso(p.updatedAt),
  expires_at: iso(p.expiresAt),
  paid_at: iso(p.paidAt),
  settlement: p.settlement === null ? null : settlement(p.settlement)
})

/**
 * What a live paid payment credited to the balance: the merchant amount in roubles (a subscription
 * payment's is the plan's merchant amount, not what the payer paid), and once converted the USDT,
 * the rate and the time; a refund or chargeback (the payment's status) takes back the same figures.
 */
export const settlement = (s: Settlement) => ({
  merchant_amount_rub: formatRub(s.merchantAmount),
  amount_usdt: s.usdt === null ? null : formatUsdt(s.usdt),
  rate: s.rate === null ? null : formatRate(s.rate),
  converted_at: iso(s.convertedAt)
})

/** A subscription; `pay_url` (or `redirect_url` for H2H) only in the creation response. */
export const subscription = (s: Subscription, options: { readonly publicUrl: string; readonly withPayUrl: boolean }) => ({
  id: s.id,
  terminal_id: s.terminalId,
  plan_id: s.planId,
  ...(s.payerId === null ? {} : { payer_id: s.payerId }),
  merchant_subscription_ref: s.merchantSubscriptionRef,
  description: s.description,
  provider_state: s.providerState,
  billing_status: s.billingStatus,
  test: s.environment === "sandbox",
  environment: s.environment,
  test_clock: s.testClockId,
  plan_code: s.terms.planCode,
  plan_version: s.terms.planVersion,
  merchant_amount_rub: formatRub(s.terms.merchantAmount),
  payer_amount_rub: formatRub(s.terms.payerAmount),
  interval: s.terms.interval,
  ...(s.terms.maxCycles === null ? {} : { max_cycles: s.terms.maxCycles }),
  successful_cycles: s.successfulCycles,
  consecutive_failures: s.consecutiveFailures,
  next_charge_at: iso(s.nextChargeAt),
  created_at: formatIso(s.createdAt),
  activated_at: iso(s.activatedAt),
  stopped_at: iso(s.stoppedAt),
  ...(options.withPayUrl
    ? s.h2h ? { redirect_url: s.redirectUrl } : { pay_url: subscriptionPageUrl(options.publicUrl, s.payToken) }
    : {})
})

/** A charge history record. */
export const charge = (c: Charge.Charge) => ({
  id: c.id,
  payment_id: c.paymentId,
  status: Charge.publicStatus(c.status),
  validation_status: c.validationStatus,
  validation_reason: c.validationReason,
  cycle_number: c.cycleNumber,
  attempt: c.attempt,
  amount_rub: formatRub(c.amount),
  expected_amount_rub: formatRub(c.expectedAmount),
  scheduled_at: formatIso(c.scheduledAt),
  actual_at: iso(c.actualAt),
  created_at: formatIso(c.createdAt),
  message: c.message
})

/** One upcoming charge of a subscription: UTC, and Moscow time (the schedule's) for display. */
export const upcomingCharge = (u: { readonly cycleNumber: number; readonly scheduledAt: number; readonly amount: bigint }) => ({
  cycle_number: u.cycleNumber,
  scheduled_at: formatIso(u.scheduledAt),
  scheduled_at_moscow: formatMoscow(u.scheduledAt),
  amount_rub: formatRub(u.amount)
})

/** A test clock. */
export const testClock = (c: TestClock) => ({
  id: c.id,
  terminal_id: c.terminalId,
  name: c.name,
  frozen_time: formatIso(c.frozenTime),
  status: c.status,
  target_frozen_time: iso(c.targetTime),
  created_at: formatIso(c.createdAt),
  updated_at: formatIso(c.updatedAt),
  deletes_after: formatIso(c.deletesAfter)
})

/** A subscription plan. */
export const plan = (p: Plan) => ({
  id: p.id,
  code: p.code,
  name: p.name,
  version: p.version,
  interval: p.interval,
  schedule: p.schedule,
  ...(p.capAmount === null ? {} : { cap_amount_rub: formatRub(p.capAmount) }),
  ...(p.merchantAmount === null ? {} : { merchant_amount_rub: formatRub(p.merchantAmount) }),
  ...(p.payerAmount === null ? {} : { payer_amount_rub: formatRub(p.payerAmount) }),
  ...(p.maxCycles === null ? {} : { max_cycles: p.maxCycles })
})

/** A payout. */
export const payout = (p: Payout) => ({
  id: payoutId(p.id),
  terminal_id: p.terminalId,
  amount_usdt: formatUsdt(p.amountUsdt),
  wallet_address: p.walletAddress,
  network: p.network,
  status: p.status,
  idempotency_key: p.idempotencyKey,
  tx_id: p.networkTxId,
  reject_reason: p.rejectReason,
  created_at: formatIso(p.createdAt),
  updated_at: formatIso(p.updatedAt)
})

/** A terminal's balance. */
export const balance = (terminalId: string, b: Balance) => ({
  terminal_id: terminalId,
  available_usdt: formatUsdt(b.usdtAvailable),
  hold_usdt: formatUsdt(b.usdtHold),
  pending_rub: formatRub(b.rubPending)
})

/** The exchange rate. */
export const rate = (r: Rate) => ({ rate: formatRate(r.rate), updated_at: formatIso(r.updatedAt) })

/** A terminal with its settings (never its secrets). */
export const terminal = (t: Terminal) => ({
  id: t.id,
  terminal_id: t.id,
  account_id: t.accountId,
  name: t.name,
  status: t.status,
  h2h: t.h2h,
  callback_url: t.callbackUrl,
  success_redirect_url: t.successRedirectUrl,
  fail_redirect_url: t.failRedirectUrl,
  conversion_mode: t.conversionMode,
  conversion_time: t.conversionTime,
  show_platform_branding: t.showPlatformBranding,
  updated_at: formatIso(t.updatedAt)
})

/** An account as the operator sees it. */
export const account = (a: Account) => ({ id: a.id, name: a.name, created_at: formatIso(a.createdAt) })

/** An API key as listed (never the key or its hash: only the first characters). */
export const apiKey = (k: ApiKey) => ({
  id: k.id,
  terminal_id: k.terminalId,
  prefix: k.prefix,
  subscription_write: k.subscriptionWrite,
  created_at: formatIso(k.createdAt),
  revoked_at: iso(k.revokedAt)
})

/** A dashboard user. */
export const user = (u: User) => ({ id: u.id, email: u.email, role: u.role, account_id: u.accountId })

/** A callback delivery for the operator. */
export const delivery = (d: Delivery) => ({
  id: d.id,
  event_id: d.eventId,
  terminal_id: d.terminalId,
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: iso(d.nextAttemptAt),
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  kind: d.kind,
  test_clock: d.testClockId,
  created_at: formatIso(d.createdAt),
  delivered_at: iso(d.deliveredAt)
})

/** One delivery attempt for the operator. */
export const attempt = (a: Attempt) => ({
  attempt: a.attemptNumber,
  at: formatIso(a.at),
  url: a.url,
  status_code: a.statusCode,
  latency_ms: a.latencyMs,
  error: a.error,
  response_body: a.responseBody
})

// ---------------------------------------------------------------------------------------------
// The events API (merchants)

/** An event's delivery in a listing: the one that delivered it, else its latest. */
export const eventDeliverySummary = (d: Delivery) => ({
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: iso(d.nextAttemptAt),
  last_status_code: d.lastStatusCode,
  delivered_at: iso(d.deliveredAt)
})

/** A callback event as the events API shows it: its public id, object, sequence and body. */
export const event = (e: OutboxEvent, latest: Delivery | null) => ({
  id: eventId(e.id),
  type: e.eventType,
  terminal_id: e.terminalId,
  object_id: e.paymentId !== null ? paymentId(e.paymentId) : e.payoutId !== null ? payoutId(e.payoutId) : null,
  sequence: e.sequence,
  test: e.test,
  test_clock: e.testClockId,
  created_at: formatIso(e.createdAt),
  payload: JSON.parse(e.body) as Record<string, unknown>,
  delivery: latest === null ? null : eventDeliverySummary(latest)
})

/** One attempt of a delivery, as its merchant sees it. */
export const eventAttempt = (a: Attempt) => ({
  attempt: a.attemptNumber,
  at: formatIso(a.at),
  url: a.url,
  status_code: a.statusCode,
  latency_ms: a.latencyMs,
  error: a.error,
  response_body: a.responseBody
})

/** One delivery of an event with its attempts. */
export const eventDelivery = (d: Delivery, attempts: ReadonlyArray<Attempt>) => ({
  id: d.id,
  kind: d.kind,
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: iso(d.nextAttemptAt),
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  created_at: formatIso(d.createdAt),
  delivered_at: iso(d.deliveredAt),
  attempt_log: attempts.map(eventAttempt)
})

/** The health of a terminal's callback endpoint. */
export const endpointHealth = (h: EndpointHealth) => ({
  status: h.status,
  last_attempt_at: iso(h.lastAttemptAt),
  last_error: h.lastError,
  failing_since: iso(h.failingSince)
})

/** A terminal's settings with the health of its callback endpoint and the rotation overlap. */
export const terminalDetails = (d: {
  readonly terminal: Terminal
  readonly callbackEndpoint: EndpointHealth
  readonly previousSecretExpiresAt: number | null
}) => ({
  ...terminal(d.terminal),
  callback_endpoint: endpointHealth(d.callbackEndpoint),
  previous_secret_expires_at: iso(d.previousSecretExpiresAt)
})

/** What a pass of background work did (the operator's `POST /admin/v1/work/run`), in the API's snake_case. */
export const workReport = (r: WorkReport) => ({
  expired_payments: r.expiredPayments,
  charges: r.charges,
  settled_charges: r.settledCharges,
  stops: r.stops,
  conversions: r.conversions,
  payouts: r.payouts,
  callbacks: r.callbacks,
  test_clocks: r.testClocks
})
