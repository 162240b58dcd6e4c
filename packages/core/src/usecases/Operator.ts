/**
 * The operator's provisioning: accounts with their owner, terminals with their API key and
 * signing secret (shown once), further API keys, and subscription plans.
 */
import { Clock, Effect, Option, Result } from "effect"
import { formatRub, parseRub } from "../Amount.js"
import { characterCount, hasControlCharacter, hasLoneSurrogate, withoutLoneSurrogates } from "../Bytes.js"
import * as CallbackUrl from "../CallbackUrl.js"
import { PaydeskConfig } from "../Config.js"
import { InvalidRequest, NotFound } from "../Errors.js"
import { isUuid } from "../Id.js"
import type { Plan } from "../Plan.js"
import { defaultCeilingKopecks, isInterval, type Interval, type ScheduleKind } from "../Schedule.js"
import type { Terminal } from "../Terminal.js"
import { AccountRepository } from "../ports/AccountRepository.js"
import { Entropy } from "../ports/Entropy.js"
import { PasswordHasher } from "../ports/PasswordHasher.js"
import { PlanRepository } from "../ports/PlanRepository.js"
import { SecretCipher } from "../ports/SecretCipher.js"
import { TerminalRepository } from "../ports/TerminalRepository.js"
import { atomic } from "./Atomic.js"
import { maxAmount } from "./Payments.js"
import { passwordProblem } from "./Auth.js"
import * as Credentials from "./Credentials.js"
import * as Traced from "../Traced.js"

const invalid = (field: string, message: string) => new InvalidRequest({ field, message })

/**
 * One-line texts of the operator (account, terminal and plan names, a plan's policy version) take no
 * control characters, as an `order_id` or a test clock's name (`Bytes.hasControlCharacter`: C0, DEL,
 * C1, U+2028/U+2029): merchants read them through the API, the CLI and the dashboard, and a C1 CSI
 * is a terminal's escape. They took any until stop 55 (an outside probe had found it). The consent text is prose
 * and keeps its line breaks.
 */
const controlMessage = (field: string) => `${field} must not contain control characters (line breaks, tabs, escapes)`

/** Creates an account and its owner user. */
export const createAccount = Traced.fn("Operator.createAccount")(function*(input: {
  readonly name: string
  readonly ownerEmail: string
  readonly ownerPassword: string
}) {
  const name = withoutLoneSurrogates(input.name.trim())
  if (name.length === 0 || characterCount(name) > 128) return yield* invalid("name", "name must be 1 to 128 characters")
  if (hasControlCharacter(name)) return yield* invalid("name", controlMessage("name"))
  const email = input.ownerEmail.trim().toLowerCase()
  // (A lone surrogate would be stored as U+FFFD: two addresses would meet.)
  // (Nor a control character: `\s` leaves out ESC, DEL and C1, which the dashboard would show.)
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254 || hasLoneSurrogate(email) || hasControlCharacter(email)) {
    return yield* invalid("owner_email", "owner_email must be an e-mail address")
  }
  const weak = passwordProblem("owner_password", input.ownerPassword)
  if (weak !== null) return yield* weak
  const entropy = yield* Entropy
  const passwordHash = yield* (yield* PasswordHasher).hash(input.ownerPassword)
  const accountId = yield* entropy.uuid
  const userId = yield* entropy.uuid
  return yield* atomic(Effect.gen(function*() {
    const accounts = yield* AccountRepository
    const now = yield* Clock.currentTimeMillis
    yield* accounts.insertAccount({ id: accountId, name, createdAt: now })
    yield* accounts.insertUser({ id: userId, accountId, email, passwordHash, role: "owner", createdAt: now }).pipe(
      Effect.catchTag("WriteConflict", () => Effect.fail(invalid("owner_email", "a user with this e-mail already exists")))
    )
    return { accountId, userId }
  }))
})

/** Creates a terminal; returns its API key and signing secret (the only time they are shown). */
export const createTerminal = Traced.fn("Operator.createTerminal")(function*(input: {
  readonly accountId: string
  readonly name: string
  readonly h2h?: boolean | undefined
  readonly callbackUrl?: string | null | undefined
}) {
  const name = withoutLoneSurrogates(input.name.trim())
  if (name.length === 0 || characterCount(name) > 128) return yield* invalid("name", "name must be 1 to 128 characters")
  if (hasControlCharacter(name)) return yield* invalid("name", controlMessage("name"))
  if (input.callbackUrl !== undefined && input.callbackUrl !== null) {
    const checked = CallbackUrl.check(input.callbackUrl, { allowPrivate: (yield* PaydeskConfig).allowPrivateCallbacks })
    if (Result.isFailure(checked)) return yield* invalid("callback_url", checked.failure)
  }
  const accountId = input.accountId.toLowerCase()
  const account = isUuid(accountId) ? yield* (yield* AccountRepository).getAccount(accountId) : Option.none()
  if (Option.isNone(account)) return yield* NotFound.of("account")
  const entropy = yield* Entropy
  const signingSecret = `sk_sign_${yield* entropy.token(24)}`
  const encrypted = yield* (yield* SecretCipher).encrypt(signingSecret)
  const id = yield* entropy.uuid
  return yield* atomic(Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const terminal: Terminal = {
      id,
      accountId,
      name,
      status: "active",
      h2h: input.h2h === true,
      callbackUrl: input.callbackUrl ?? null,
      successRedirectUrl: null,
      failRedirectUrl: null,
      conversionMode: "instant",
      conversionTime: null,
      nextConversionAt: null,
      showPlatformBranding: true,
      signingSecretEncrypted: encrypted,
      previousSigningSecretEncrypted: null,
      signingSecretRotatedAt: null,
      createdAt: now,
      updatedAt: now
    }
    yield* (yield* TerminalRepository).insert(terminal)
    const { key: apiKey } = yield* Credentials.newApiKey(id, true)
    return { terminal, apiKey, signingSecret }
  }))
})

/** Issues another API key for a terminal. */
export const createApiKey = Traced.fn("Operator.createApiKey")(function*(terminalId: string, options: { readonly subscriptionWrite: boolean }) {
  return (yield* Credentials.createApiKey(Credentials.operator, terminalId, options)).key
})

/** Enables or disables a terminal (a disabled terminal is `terminal is unavailable` for writes). */
export const setTerminalStatus = Traced.fn("Operator.setTerminalStatus")(function*(terminalId: string, status: Terminal["status"]) {
  return yield* atomic(Effect.gen(function*() {
    const terminals = yield* TerminalRepository
    const id = terminalId.toLowerCase()
    const found = isUuid(id) ? yield* terminals.getForUpdate(id) : Option.none()
    if (Option.isNone(found)) return yield* NotFound.of("terminal")
    const next = { ...found.value, status, updatedAt: yield* Clock.currentTimeMillis }
    yield* terminals.update(next)
    return next
  }))
})

/** A plan as the operator defines it. */
export interface PlanInput {
  readonly terminalIds: ReadonlyArray<string>
  readonly code: string
  readonly name: string
  readonly interval: string
  /**
   * `calendar` or `fixed_days`; absent: the kind the spec pairs with the plan's mode (a ceiling
   * plan counts calendar periods, a fixed tariff fixed days). Banks agree schedules per plan, so
   * the operator may still choose the other kind.
   */
  readonly schedule?: string | null | undefined
  readonly capAmountRub?: string | null | undefined
  readonly payerAmountRub?: string | null | undefined
  readonly merchantAmountRub?: string | null | undefined
  readonly maxCycles?: number | null | undefined
  readonly consentText: string
  readonly policyVersion: string
}

/** A plan's amount: each charge is a payment, within a payment's bounds (`Payments.maxAmount`). */
const amountField = (field: string, value: string) => {
  const parsed = parseRub(value)
  if (Result.isFailure(parsed)) return Effect.fail(invalid(field, `${field}: ${parsed.failure.message}`))
  if (parsed.success > maxAmount) return Effect.fail(invalid(field, `${field} must not exceed ${formatRub(maxAmount)}`))
  return Effect.succeed(parsed.success)
}

/** The schedule kind the spec pairs with a plan mode: calendar periods for a ceiling, fixed days for a fixed tariff. */
export const defaultSchedule = (mode: Plan["mode"]): ScheduleKind => mode === "ceiling" ? "calendar" : "fixed_days"

/**
 * Creates the next version of a plan code; older versions stop accepting new subscriptions. Refused
 * (400 on `terminal_ids`) while an older active version is offered on a terminal this one does not
 * name: a new version would withdraw it there, from a merchant the operator may not have meant.
 */
export const createPlan = Traced.fn("Operator.createPlan")(function*(input: PlanInput) {
  if (!/^[a-z0-9][a-z0-9_.-]{0,63}$/.test(input.code)) {
    return yield* invalid("code", "code must be 1 to 64 lowercase letters, digits, '.', '_' or '-'")
  }
  // Free text (names, consent text, policy version): a lone surrogate becomes U+FFFD, as a store
  // writes it, so what the operator is answered is what is stored (docs/decisions.md "Lone surrogates").
  const name = withoutLoneSurrogates(input.name.trim())
  const consentText = withoutLoneSurrogates(input.consentText)
  const policyVersion = withoutLoneSurrogates(input.policyVersion)
  if (name.length === 0 || characterCount(input.name) > 128) return yield* invalid("name", "name must be 1 to 128 characters")
  if (hasControlCharacter(name)) return yield* invalid("name", controlMessage("name"))
  if (!isInterval(input.interval)) return yield* invalid("interval", "interval must be day, month, quarter, half_year or year")
  const interval: Interval = input.interval
  const requested = input.schedule ?? null
  if (requested !== null && requested !== "calendar" && requested !== "fixed_days") {
    return yield* invalid("schedule", "schedule must be calendar or fixed_days")
  }
  const cap = input.capAmountRub ?? null
  const payer = input.payerAmountRub ?? null
  const merchant = input.merchantAmountRub ?? null
  let mode: Plan["mode"]
  let capAmount: bigint | null = null
  let payerAmount: bigint | null = null
  let merchantAmount: bigint | null = null
  if (cap !== null) {
    if (payer !== null || merchant !== null) {
      return yield* invalid("cap_amount_rub", "a plan has either cap_amount_rub or payer_amount_rub and merchant_amount_rub")
    }
    mode = "ceiling"
    capAmount = yield* amountField("cap_amount_rub", cap)
    const limit = defaultCeilingKopecks(interval)
    if (Option.isSome(limit) && capAmount > limit.value) {
      return yield* invalid("cap_amount_rub", `cap_amount_rub must not exceed ${formatRub(limit.value)} for ${interval}`)
    }
  } else {
    if (payer === null || merchant === null) {
      return yield* invalid("payer_amount_rub", "a fixed-tariff plan needs payer_amount_rub and merchant_amount_rub")
    }
    mode = "fixed"
    payerAmount = yield* amountField("payer_amount_rub", payer)
    merchantAmount = yield* amountField("merchant_amount_rub", merchant)
    // The merchant is credited at most what the payer pays (the difference is the payer's commission).
    if (merchantAmount > payerAmount) return yield* invalid("merchant_amount_rub", "merchant_amount_rub must not exceed payer_amount_rub")
  }
  const schedule: ScheduleKind = requested ?? defaultSchedule(mode)
  if (schedule === "calendar" && interval === "half_year") {
    return yield* invalid("interval", "half_year exists only for fixed_days plans")
  }
  const maxCycles = input.maxCycles ?? null
  if (maxCycles !== null && (!Number.isInteger(maxCycles) || maxCycles < 1 || maxCycles > 10_000)) {
    return yield* invalid("max_cycles", "max_cycles must be an integer from 1 to 10000")
  }
  if (consentText.trim().length === 0 || consentText.length > 4000) {
    return yield* invalid("consent_text", "consent_text must be 1 to 4000 characters")
  }
  if (policyVersion.trim().length === 0 || policyVersion.length > 64) {
    return yield* invalid("policy_version", "policy_version must be 1 to 64 characters")
  }
  if (hasControlCharacter(policyVersion)) return yield* invalid("policy_version", controlMessage("policy_version"))
  if (input.terminalIds.length === 0) return yield* invalid("terminal_ids", "terminal_ids must name at least one terminal")
  const terminals = yield* TerminalRepository
  const terminalIds: Array<string> = []
  for (const raw of input.terminalIds) {
    const id = raw.toLowerCase()
    const found = isUuid(id) ? yield* terminals.get(id) : Option.none()
    if (Option.isNone(found)) return yield* invalid("terminal_ids", `unknown terminal ${raw}`)
    if (!terminalIds.includes(id)) terminalIds.push(id)
  }
  const entropy = yield* Entropy
  const id = yield* entropy.uuid
  return yield* atomic(Effect.gen(function*() {
    const plans = yield* PlanRepository
    // The version is read before the versions it replaces: a version another operator adds after the
    // first read is either among the active ones below (and checked) or takes this version's number
    // (a `WriteConflict`, so the whole is tried again and sees it), never replaced unchecked.
    const version = (yield* plans.latestVersion(input.code)) + 1
    // A new version replaces every older one of its code, on all their terminals: one still offered on
    // a terminal this one does not name (another merchant's, often) would be withdrawn there without
    // a word (an outside probe's operator shut two merchants' plan off by provisioning a third).
    for (const older of yield* plans.activeVersions(input.code)) {
      const elsewhere = older.terminalIds.find((terminalId) => !terminalIds.includes(terminalId))
      if (elsewhere !== undefined) {
        return yield* invalid("terminal_ids", `plan ${input.code} version ${older.version} is also offered on terminal ${elsewhere}, which terminal_ids does not name: a new version replaces the older ones on all their terminals; name that terminal too, or give this plan another code`)
      }
    }
    const plan: Plan = {
      id,
      code: input.code,
      name,
      version,
      interval,
      schedule,
      mode,
      capAmount,
      payerAmount,
      merchantAmount,
      maxCycles,
      consentText,
      policyVersion,
      active: true,
      terminalIds,
      createdAt: yield* Clock.currentTimeMillis
    }
    yield* plans.insert(plan)
    yield* plans.deactivateOlder(input.code, version)
    return plan
  }))
})

