/**
 * Builders of valid domain records for tests, and effects that store a parent chain.
 *
 * Every builder returns a complete record with fresh random identifiers (bare lowercase UUIDs, as
 * stored) and unique tokens, so records from different tests never collide in a shared database;
 * pass `overrides` for the fields a test cares about. Timestamps default to `baseTime`. The
 * `seed*` effects insert a record together with the parents a foreign key would demand.
 */
import { Effect } from "effect"
import {
  AccountRepository,
  PaymentRepository,
  PlanRepository,
  SubscriptionRepository,
  TerminalRepository,
  TestClockRepository
} from "@paydesk/core"
import type {
  Callback,
  Charge,
  IdempotencyRecord,
  Ledger,
  Payment,
  Payout,
  Plan,
  Subscription,
  Terminal,
  TestClock,
  WriteConflict
} from "@paydesk/core"
import { toBase64Url } from "./Bytes.js"

/** 2026-01-15T09:00:00.000Z, the default timestamp of built records. */
export const baseTime = 1_768_467_600_000

/** A fresh lowercase UUID (Web Crypto). */
export const uuid = (): string => globalThis.crypto.randomUUID()

/** A fresh random base64url token of `bytes` bytes. */
export const token = (bytes = 24): string => toBase64Url(globalThis.crypto.getRandomValues(new Uint8Array(bytes)))

/** A short fresh suffix for codes, order ids and e-mails. */
export const unique = (): string => uuid().replaceAll("-", "").slice(0, 16)

/** An account. */
export const account = (overrides: Partial<Terminal.Account> = {}): Terminal.Account => ({
  id: uuid(),
  name: `Account ${unique()}`,
  createdAt: baseTime,
  ...overrides
})

/** A dashboard user of `accountId` with a unique lowercase e-mail. */
export const user = (accountId: string, overrides: Partial<Terminal.User> = {}): Terminal.User => ({
  id: uuid(),
  accountId,
  email: `user-${unique()}@example.com`,
  passwordHash: "pbkdf2$1000$c2FsdA==$aGFzaA==",
  role: "owner",
  createdAt: baseTime,
  ...overrides
})

/** An active, instant-conversion terminal of `accountId` without a callback URL. */
export const terminal = (accountId: string, overrides: Partial<Terminal.Terminal> = {}): Terminal.Terminal => ({
  id: uuid(),
  accountId,
  name: `Terminal ${unique()}`,
  status: "active",
  h2h: false,
  callbackUrl: null,
  successRedirectUrl: null,
  failRedirectUrl: null,
  conversionMode: "instant",
  conversionTime: null,
  nextConversionAt: null,
  showPlatformBranding: true,
  signingSecretEncrypted: `v1.${token(12)}.${token(48)}`,
  previousSigningSecretEncrypted: null,
  signingSecretRotatedAt: null,
  createdAt: baseTime,
  updatedAt: baseTime,
  ...overrides
})

/** An API key of `terminalId` with a unique 64-hex-digit hash. */
export const apiKey = (terminalId: string, overrides: Partial<Terminal.ApiKey> = {}): Terminal.ApiKey => ({
  id: uuid(),
  terminalId,
  keyHash: (uuid() + uuid()).replaceAll("-", ""),
  prefix: "pk_test",
  subscriptionWrite: true,
  createdAt: baseTime,
  revokedAt: null,
  ...overrides
})

/** A live refresh-token session of `userId`, alone in its family. */
export const session = (userId: string, overrides: Partial<Terminal.Session> = {}): Terminal.Session => ({
  id: uuid(),
  userId,
  familyId: uuid(),
  tokenHash: (uuid() + uuid()).replaceAll("-", ""),
  expiresAt: baseTime + 30 * 86_400_000,
  revokedAt: null,
  createdAt: baseTime,
  ...overrides
})

/** An active fixed-tariff monthly plan (version 1, unique code) connected to `terminalIds`. */
export const plan = (terminalIds: ReadonlyArray<string>, overrides: Partial<Plan.Plan> = {}): Plan.Plan => ({
  id: uuid(),
  code: `plan-${unique()}`,
  name: "Monthly",
  version: 1,
  interval: "month",
  schedule: "fixed_days",
  mode: "fixed",
  capAmount: null,
  payerAmount: 150_000n,
  merchantAmount: 120_000n,
  maxCycles: null,
  consentText: "I agree to monthly charges.",
  policyVersion: "2026-01",
  active: true,
  terminalIds: [...terminalIds],
  createdAt: baseTime,
  ...overrides
})

/** A live payment of 1000.00 RUB in `created`, expiring 30 minutes after `baseTime`. */
export const payment = (terminalId: string, overrides: Partial<Payment.Payment> = {}): Payment.Payment => ({
  id: uuid(),
  terminalId,
  orderId: `order-${unique()}`,
  amount: 100_000n,
  currency: "RUB",
  description: null,
  metadata: null,
  paymentMethod: "sbp",
  environment: "prod",
  testClockId: null,
  status: "created",
  payToken: token(),
  csrfToken: token(),
  subscriptionId: null,
  fingerprint: `fp-${unique()}`,
  qrPayload: null,
  expiresAt: baseTime + 30 * 60_000,
  createdAt: baseTime,
  updatedAt: baseTime,
  paidAt: null,
  settlement: null,
  version: 1,
  ...overrides
})

/** Terms of a fixed-tariff monthly subscription. */
export const terms = (overrides: Partial<Subscription.Terms> = {}): Subscription.Terms => ({
  mode: "fixed",
  planCode: `plan-${unique()}`,
  planVersion: 1,
  interval: "month",
  schedule: "fixed_days",
  merchantAmount: 120_000n,
  payerAmount: 150_000n,
  maxCycles: null,
  consentText: "I agree to monthly charges.",
  policyVersion: "2026-01",
  ...overrides
})

/** A new subscription (`new/consent_pending`) of `terminalId` on `planId`. */
export const subscription = (
  terminalId: string,
  planId: string,
  overrides: Partial<Subscription.Subscription> = {}
): Subscription.Subscription => ({
  id: uuid(),
  terminalId,
  planId,
  payerId: null,
  merchantSubscriptionRef: null,
  description: null,
  environment: "prod",
  testClockId: null,
  providerState: "new",
  billingStatus: "consent_pending",
  terms: terms(),
  h2h: false,
  successfulCycles: 0,
  consecutiveFailures: 0,
  nextCycleIndex: 1,
  nextChargeAt: null,
  chargeLeaseUntil: null,
  firstPaymentId: null,
  reviewReason: null,
  reviewSince: null,
  payToken: token(),
  csrfToken: token(),
  redirectUrl: null,
  createdAt: baseTime,
  updatedAt: baseTime,
  activatedAt: null,
  stoppedAt: null,
  version: 1,
  ...overrides
})

/** A pending recurring charge attempt of a subscription (cycle 1, attempt 1 unless overridden). */
export const charge = (
  sub: Pick<Subscription.Subscription, "id" | "terminalId">,
  overrides: Partial<Charge.Charge> = {}
): Charge.Charge => {
  const cycleNumber = overrides.cycleNumber ?? 1
  const attempt = overrides.attempt ?? 1
  return {
    id: uuid(),
    subscriptionId: sub.id,
    terminalId: sub.terminalId,
    cycleNumber,
    attempt,
    kind: "recurring",
    status: "pending",
    validationStatus: "accepted",
    validationReason: null,
    paymentId: null,
    amount: 150_000n,
    expectedAmount: 150_000n,
    idempotencyKey: `sub:${sub.id}:cycle:${cycleNumber}:attempt:${attempt}`,
    message: null,
    scheduledAt: baseTime,
    actualAt: null,
    createdAt: baseTime,
    updatedAt: baseTime,
    ...overrides
  }
}

/** A payout of 10 USDT in `created`. */
export const payout = (terminalId: string, overrides: Partial<Payout.Payout> = {}): Payout.Payout => ({
  id: uuid(),
  terminalId,
  amountUsdt: 10_000_000n,
  walletAddress: `T${unique()}${unique()}`,
  network: "TRC20",
  status: "created",
  idempotencyKey: null,
  fingerprint: `fp-${unique()}`,
  networkTxId: null,
  rejectReason: null,
  leaseUntil: null,
  createdAt: baseTime,
  updatedAt: baseTime,
  version: 1,
  ...overrides
})

/** A ledger entry crediting 1 USDT to `usdt_available`. */
export const ledgerEntry = (terminalId: string, overrides: Partial<Ledger.Entry> = {}): Ledger.Entry => ({
  id: uuid(),
  terminalId,
  account: "usdt_available",
  currency: "USDT",
  amount: 1_000_000n,
  kind: "payment_credit",
  refId: uuid(),
  createdAt: baseTime,
  ...overrides
})

/** A `payment.created` outbox event of a terminal. */
export const outboxEvent = (
  terminalId: string,
  overrides: Partial<Callback.OutboxEvent> = {}
): Callback.OutboxEvent => ({
  id: uuid(),
  terminalId,
  eventType: "payment.created",
  paymentId: null,
  payoutId: null,
  body: JSON.stringify({ event: "payment.created", nonce: unique() }),
  test: false,
  testClockId: null,
  sequence: 1,
  createdAt: baseTime,
  ...overrides
})

/** A pending delivery of an event, due at the event's creation. */
export const delivery = (
  event: Pick<Callback.OutboxEvent, "id" | "terminalId" | "createdAt"> & { readonly testClockId?: string | null },
  overrides: Partial<Callback.Delivery> = {}
): Callback.Delivery => ({
  id: uuid(),
  eventId: event.id,
  terminalId: event.terminalId,
  kind: "scheduled",
  testClockId: event.testClockId ?? null,
  status: "pending",
  attempts: 0,
  nextAttemptAt: event.createdAt,
  sendingAt: null,
  lastStatusCode: null,
  lastError: null,
  createdAt: event.createdAt,
  updatedAt: event.createdAt,
  deliveredAt: null,
  ...overrides
})

/** A failed first attempt of a delivery. */
export const attempt = (deliveryId: string, overrides: Partial<Callback.Attempt> = {}): Callback.Attempt => ({
  id: uuid(),
  deliveryId,
  attemptNumber: 1,
  at: baseTime,
  url: "https://merchant.example/callback",
  statusCode: 500,
  latencyMs: 12,
  error: null,
  responseBody: null,
  ...overrides
})

/** An idempotency record of a subscription creation. */
export const idempotencyRecord = (
  terminalId: string,
  overrides: Partial<IdempotencyRecord> = {}
): IdempotencyRecord => ({
  terminalId,
  scope: "subscription",
  key: `key-${unique()}`,
  fingerprint: `fp-${unique()}`,
  resourceId: uuid(),
  createdAt: baseTime,
  ...overrides
})

/** A ready test clock of `terminalId`, frozen at `baseTime`. */
export const testClock = (terminalId: string, overrides: Partial<TestClock.TestClock> = {}): TestClock.TestClock => ({
  id: uuid(),
  terminalId,
  name: null,
  frozenTime: baseTime,
  status: "ready",
  targetTime: null,
  leaseUntil: null,
  workDue: false,
  createdAt: baseTime,
  updatedAt: baseTime,
  deletedAt: null,
  deletesAfter: baseTime + 30 * 86_400_000,
  version: 1,
  ...overrides
})

/** Inserts a test clock of a terminal. */
export const seedTestClock = Effect.fnUntraced(function*(
  terminalId: string,
  overrides: Partial<TestClock.TestClock> = {}
): Effect.fn.Return<TestClock.TestClock, WriteConflict, TestClockRepository> {
  const c = testClock(terminalId, overrides)
  yield* (yield* TestClockRepository).insert(c)
  return c
})

/** Inserts a fresh account and a terminal of it. */
export const seedTerminal = Effect.fnUntraced(function*(overrides: Partial<Terminal.Terminal> = {}) {
  const accounts = yield* AccountRepository
  const terminals = yield* TerminalRepository
  const acc = account()
  yield* accounts.insertAccount(acc)
  const term = terminal(acc.id, overrides)
  yield* terminals.insert(term)
  return { account: acc, terminal: term }
})

/** Inserts a plan connected to the given terminals. */
export const seedPlan = Effect.fnUntraced(function*(
  terminalIds: ReadonlyArray<string>,
  overrides: Partial<Plan.Plan> = {}
): Effect.fn.Return<Plan.Plan, WriteConflict, PlanRepository> {
  const p = plan(terminalIds, overrides)
  yield* (yield* PlanRepository).insert(p)
  return p
})

/** Inserts a payment of a terminal. */
export const seedPayment = Effect.fnUntraced(function*(
  terminalId: string,
  overrides: Partial<Payment.Payment> = {}
): Effect.fn.Return<Payment.Payment, WriteConflict, PaymentRepository> {
  const p = payment(terminalId, overrides)
  yield* (yield* PaymentRepository).insert(p)
  return p
})

/** Inserts a plan for the terminal and a subscription on it. */
export const seedSubscription = Effect.fnUntraced(function*(
  terminalId: string,
  overrides: Partial<Subscription.Subscription> = {}
): Effect.fn.Return<Subscription.Subscription, WriteConflict, PlanRepository | SubscriptionRepository> {
  const p = yield* seedPlan([terminalId])
  const s = subscription(terminalId, p.id, {
    terms: terms({ planCode: p.code, planVersion: p.version }),
    ...overrides
  })
  yield* (yield* SubscriptionRepository).insert(s)
  return s
})
