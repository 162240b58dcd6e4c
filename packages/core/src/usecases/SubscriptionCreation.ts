/**
 * Creating subscriptions: the terminal's plans for merchants, creation with every rule of the
 * spec (idempotency first, then the plan's mode rules), and the first payment that the payer's
 * consent (or, on H2H terminals, creation) starts.
 *
 * The HTTP adapter decodes the wire body (the spec's `invalid json body` rule) and hands over a
 * typed command; nothing here sees a raw body. No charge ever happens before consent: creation
 * and consent only create the unpaid first payment, which the payer pays on its page.
 */
import { Cause, Clock, Effect, Exit, Option, Result } from "effect"
import * as Access from "../Access.js"
import type { Principal } from "../Access.js"
import { formatRub, parseRub } from "../Amount.js"
import { hasLoneSurrogate, unicodeOnly, withoutLoneSurrogates } from "../Bytes.js"
import { PaydeskConfig } from "../Config.js"
import {
  AmountExceedsCeiling,
  IdempotencyConflict,
  InvalidRequest,
  PlanNotAvailable,
  RecurringNotConfigured,
  SubscriptionFieldsMissing,
  TerminalIdRequired,
  TerminalUnavailable
} from "../Errors.js"
import * as Idempotency from "../Idempotency.js"
import { isUuid } from "../Id.js"
import * as Payment from "../Payment.js"
import type { Plan } from "../Plan.js"
import { intervalLabelRu } from "../Schedule.js"
import * as Subscription from "../Subscription.js"
import type { Terminal } from "../Terminal.js"
import * as TestClock from "../TestClock.js"
import type { Acquirer } from "../ports/Acquirer.js"
import { Entropy } from "../ports/Entropy.js"
import { IdempotencyStore } from "../ports/IdempotencyStore.js"
import { PlanRepository } from "../ports/PlanRepository.js"
import { SubscriptionRepository } from "../ports/SubscriptionRepository.js"
import * as Acquirers from "./Acquirers.js"
import { atomic } from "./Atomic.js"
import * as Payments from "./Payments.js"
import * as Lifecycle from "./SubscriptionLifecycle.js"
import { forObject } from "./TestClockScope.js"
import * as Traced from "../Traced.js"

type Sub = Subscription.Subscription

const bytes = (s: string): number => new TextEncoder().encode(s).length

/** Longest `payer_id` (bytes). */
export const maxPayerIdBytes = 32
/** Longest `merchant_subscription_ref` (bytes). */
export const maxReferenceBytes = 128
/** Longest `description` of a fixed-tariff subscription (bytes). */
export const maxDescriptionBytes = 128
const invalid = (field: string, message: string) => new InvalidRequest({ field, message })

/** Plans of a terminal; 503 when the terminal has no recurring configuration at all. */
export const listPlans = Traced.fn("Subscriptions.listPlans")(function*(principal: Principal, terminalId: string | null | undefined) {
  // Required by the spec even with an API key: absent or empty is its `terminal_id is required`.
  if (terminalId === undefined || terminalId === null || terminalId === "") {
    return yield* TerminalIdRequired.of()
  }
  const terminal = yield* Access.resolveTerminal(principal, terminalId, "read")
  const plans = yield* (yield* PlanRepository).listForTerminal(terminal.id, { activeOnly: false })
  if (plans.length === 0) return yield* RecurringNotConfigured.plans()
  return plans.filter((plan) => plan.active)
})

/** A creation request, decoded from the wire by the adapter (absent and `null` fields are `undefined`). */
export interface CreateCommand {
  /** The `Idempotency-Key` header. */
  readonly idempotencyKey: string | null | undefined
  readonly terminalId?: string | undefined
  readonly planId?: string | undefined
  readonly amount?: string | undefined
  readonly payerId?: string | undefined
  readonly merchantSubscriptionRef?: string | undefined
  readonly description?: string | undefined
  /** `test: true` in the body or `X-Test-Mode: true`: a sandbox subscription (the sandbox acquirer, no real money). */
  readonly test?: boolean | undefined
  /** A test clock of the terminal to attach the (sandbox) subscription to. */
  readonly testClock?: string | undefined
}

/** The fingerprint of a request: everything that defines it, the amount normalized to kopecks. */
const fingerprintOf = (terminalId: string, command: CreateCommand) => {
  const amount = command.amount === undefined ? null : parseRub(command.amount)
  return Idempotency.fingerprint({
    terminal_id: terminalId,
    plan_id: (command.planId ?? "").toLowerCase(),
    amount: amount === null ? null : Result.isSuccess(amount) ? amount.success.toString() : command.amount,
    payer_id: command.payerId ?? null,
    merchant_subscription_ref: command.merchantSubscriptionRef ?? null,
    description: command.description ?? null,
    // Live requests hash as before sandbox subscriptions existed; a sandbox one differs from its live twin.
    ...(command.test === true ? { test: true } : {}),
    ...(command.testClock === undefined ? {} : { test_clock: command.testClock.toLowerCase() })
  })
}

/** Checks the mode rules of a plan and returns the amounts of one charge (kopecks). */
const termsFor = Traced.fn("Subscriptions.termsFor")(function*(plan: Plan, command: CreateCommand) {
  if (plan.mode === "ceiling") {
    if (command.payerId !== undefined || command.description !== undefined) {
      return yield* invalid(
        command.payerId !== undefined ? "payer_id" : "description",
        "payer_id and description are not accepted for a plan with a ceiling"
      )
    }
    if (command.amount === undefined) return yield* SubscriptionFieldsMissing.of(["amount"])
    const amount = parseRub(command.amount)
    if (Result.isFailure(amount)) return yield* amount.failure
    const cap = plan.capAmount ?? 0n
    if (amount.success > cap) return yield* AmountExceedsCeiling.of(formatRub(cap), plan.interval, intervalLabelRu(plan.interval))
    return { payerAmount: amount.success, merchantAmount: amount.success }
  }
  if (command.amount !== undefined) return yield* invalid("amount", "amount is not accepted for a fixed-tariff plan")
  if (command.payerId === undefined || command.payerId.length === 0) {
    return yield* invalid("payer_id", "payer_id is required for a fixed-tariff plan")
  }
  if (bytes(command.payerId) > maxPayerIdBytes) return yield* invalid("payer_id", `payer_id must be at most ${maxPayerIdBytes} bytes`)
  if (hasLoneSurrogate(command.payerId)) return yield* invalid("payer_id", unicodeOnly("payer_id"))
  if (command.description !== undefined && bytes(command.description) > maxDescriptionBytes) {
    return yield* invalid("description", `description must be at most ${maxDescriptionBytes} bytes`)
  }
  return { payerAmount: plan.payerAmount ?? 0n, merchantAmount: plan.merchantAmount ?? plan.payerAmount ?? 0n }
})

/**
 * Creates a subscription (201), or replays the one created with this Idempotency-Key (200).
 *
 * The replay answers right after authentication and terminal ownership (spec rule 6): a retry
 * after a timeout gets its subscription even if the plan was replaced or the terminal disabled
 * since, so the merchant never needs a new key (which would create a duplicate).
 */
export const create = Traced.fn("Subscriptions.create")(function*(principal: Principal, input: CreateCommand) {
  // Free text: a lone surrogate becomes U+FFFD, as a store writes it, so the answer, the stored
  // subscription and later reads hold the same description. The fingerprint stays the request's
  // as sent (`input`): a retry resends the same text, also for keys stored before this replacement.
  const command: CreateCommand = input.description === undefined ? input : { ...input, description: withoutLoneSurrogates(input.description) }
  // Required by the spec even with an API key: absent or empty is its `terminal_id is required`.
  if (command.terminalId === undefined || command.terminalId === "") return yield* TerminalIdRequired.of()
  // Ownership and write access only; the terminal's status is checked after the replay.
  const terminal = yield* Access.resolveTerminal(principal, command.terminalId, "subscription_owner")
  const environment = command.test === true ? "sandbox" as const : "prod" as const
  // A deployment without a sandbox acquirer refuses sandbox requests before anything else.
  const acquirer = yield* Acquirers.acquirerFor(environment)
  // A test clock needs sandbox and must be the terminal's (a request naming another never created anything).
  if (command.testClock !== undefined && environment !== "sandbox") return yield* invalid("test_clock", Payments.testClockSandboxOnly)
  const clock = command.testClock === undefined ? null : yield* Payments.testClockOf(terminal.id, command.testClock)
  const key = command.idempotencyKey ?? ""
  const print = yield* fingerprintOf(terminal.id, input)
  const store = yield* IdempotencyStore
  const subs = yield* SubscriptionRepository
  const replay = Traced.fn("Subscriptions.replay")(function*(resourceId: string) {
    const existing = yield* subs.get(resourceId)
    if (Option.isNone(existing)) return yield* IdempotencyConflict.of()
    return { subscription: existing.value, created: false }
  })
  const keyValid = key !== "" && Result.isSuccess(Idempotency.validateKey(key))
  if (keyValid) {
    const early = Idempotency.decide(yield* store.find(terminal.id, "subscription", key), print)
    if (Result.isFailure(early)) return yield* early.failure
    if (early.success._tag === "Replay") return yield* replay(early.success.resourceId)
  }

  if (terminal.status !== "active") return yield* TerminalUnavailable.of()
  const plans = yield* PlanRepository
  if ((yield* plans.listForTerminal(terminal.id, { activeOnly: false })).length === 0) {
    return yield* RecurringNotConfigured.subscriptions()
  }
  const missing = [
    ...(command.planId === undefined || command.planId === "" ? ["plan_id"] : []),
    ...(key === "" ? ["Idempotency-Key"] : [])
  ]
  if (missing.length > 0) return yield* SubscriptionFieldsMissing.of(missing)
  const validKey = Idempotency.validateKey(key)
  if (Result.isFailure(validKey)) return yield* validKey.failure
  if (command.merchantSubscriptionRef !== undefined && bytes(command.merchantSubscriptionRef) > maxReferenceBytes) {
    return yield* invalid("merchant_subscription_ref", `merchant_subscription_ref must be at most ${maxReferenceBytes} bytes`)
  }
  if (command.merchantSubscriptionRef !== undefined && hasLoneSurrogate(command.merchantSubscriptionRef)) {
    return yield* invalid("merchant_subscription_ref", unicodeOnly("merchant_subscription_ref"))
  }
  const planId = (command.planId ?? "").toLowerCase()
  const found = isUuid(planId) ? yield* plans.get(planId) : Option.none<Plan>()
  if (Option.isNone(found) || !found.value.active || !found.value.terminalIds.includes(terminal.id)) {
    return yield* PlanNotAvailable.of()
  }
  const plan = found.value
  const amounts = yield* termsFor(plan, command)

  const entropy = yield* Entropy
  const id = yield* entropy.uuid
  const redirectUrl = terminal.h2h
    ? (yield* acquirer.startBinding({
      subscriptionId: id,
      terminalId: terminal.id,
      h2h: true,
      payerAmount: amounts.payerAmount
    })).redirectUrl
    : null
  const payToken = yield* entropy.token(24)
  const csrfToken = yield* entropy.token(24)
  // A subscription on a test clock is created at the clock's time.
  const created = forObject(clock?.id ?? null, atomic(Effect.gen(function*() {
    const decision = Idempotency.decide(yield* store.find(terminal.id, "subscription", key), print)
    if (Result.isFailure(decision)) return yield* decision.failure
    if (decision.success._tag === "Replay") return yield* replay(decision.success.resourceId)
    const now = yield* Clock.currentTimeMillis
    const subscription = Subscription.make({
      id,
      terminalId: terminal.id,
      planId: plan.id,
      payerId: command.payerId ?? null,
      merchantSubscriptionRef: command.merchantSubscriptionRef ?? null,
      description: command.description ?? null,
      environment,
      testClockId: clock?.id ?? null,
      terms: {
        mode: plan.mode,
        planCode: plan.code,
        planVersion: plan.version,
        interval: plan.interval,
        schedule: plan.schedule,
        merchantAmount: amounts.merchantAmount,
        payerAmount: amounts.payerAmount,
        maxCycles: plan.maxCycles,
        consentText: plan.consentText,
        policyVersion: plan.policyVersion
      },
      h2h: terminal.h2h,
      payToken,
      csrfToken,
      redirectUrl
    }, now)
    yield* subs.insert(subscription)
    // The record's retention runs on the wall clock, whatever the subscription's clock says.
    yield* store.insert({ terminalId: terminal.id, scope: "subscription", key, fingerprint: print, resourceId: id, createdAt: yield* TestClock.wallTime })
    // H2H: the merchant obtained consent, so the binding and its first payment start at once.
    const started = terminal.h2h ? yield* startFirstPayment(terminal, subscription, null) : subscription
    return { subscription: started, created: true }
  })))
  return yield* (redirectUrl === null ? created : Effect.onExit(created, (exit) => unusedBinding(exit) ? releaseBinding(acquirer, id) : Effect.void))
})

/**
 * Whether the binding started for a new subscription id is left without its subscription for
 * certain: a concurrent request under the same key won (the replay), or the transaction failed with
 * a refusal, so it rolled back before its commit. A defect or an interruption may have come at the
 * commit itself, so the binding is then kept (a binding without a subscription is never charged;
 * one ended under a committed subscription would be).
 */
const unusedBinding = <E>(exit: Exit.Exit<{ readonly created: boolean }, E>): boolean =>
  Exit.isSuccess(exit) ? !exit.value.created : Cause.hasFails(exit.cause) && !Cause.hasDies(exit.cause) && !Cause.hasInterrupts(exit.cause)

/** Ends, best effort, the acquirer's binding of a subscription id that was never created (a warning when it could not). */
const releaseBinding = (acquirer: Acquirer["Service"], subscriptionId: string): Effect.Effect<void> =>
  acquirer.stopBinding({ subscriptionId }).pipe(
    Effect.flatMap((answer) =>
      answer._tag === "Stopped" ? Effect.void : Effect.logWarning(`binding ${subscriptionId} of a subscription never created not ended: ${answer.reason}`)
    ),
    Effect.catchCause((cause) => Effect.logWarning(`binding ${subscriptionId} of a subscription never created not ended`, cause))
  )

/**
 * Consent given, in the caller's transaction: the first payment is created (in the subscription's
 * environment and on its test clock, in RUB, `sbp_recurrent` live or `sbp_test` in sandbox, unpaid,
 * with its lifetime). The state stays `consent_pending` until the payer
 * pays it (`pending`, then `enabled` once confirmed); if it expires unpaid, the subscription is
 * back to waiting for consent and the next confirmation creates the next first payment.
 */
export const startFirstPayment = Traced.fn("Subscriptions.startFirstPayment")(function*(
  terminal: Terminal,
  sub: Sub,
  registered: { readonly paymentId: string; readonly qrPayload: string } | null
) {
  const now = yield* Clock.currentTimeMillis
  const entropy = yield* Entropy
  const config = yield* PaydeskConfig
  // After a first payment expired unpaid the payer may confirm again: the next one gets the next order id.
  const orderNumber = yield* Payments.freeRecurringOrderNumber(sub, "first")
  const payment = Payment.makeRecurring({
    id: registered?.paymentId ?? (yield* entropy.uuid),
    subscription: sub,
    cycle: "first",
    orderNumber,
    amount: sub.terms.payerAmount,
    payToken: yield* entropy.token(24),
    csrfToken: yield* entropy.token(24),
    // H2H: the payer binds and pays at the acquirer's redirect_url; form flow: the acquirer's QR.
    qrPayload: registered?.qrPayload ?? sub.redirectUrl,
    expiresAt: now + config.paymentLifetimeMs,
    now
  })
  yield* Payments.insertNew(terminal, payment)
  return yield* Lifecycle.save(sub, { ...sub, firstPaymentId: payment.id, updatedAt: now })
})
