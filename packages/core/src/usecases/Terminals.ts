/**
 * Use cases of a terminal's money and settings: balance, exchange rate, the settings the API
 * may change, and the scheduled USDT conversion of roubles credited in `scheduled` mode.
 */
import { Clock, Effect, Option, Result } from "effect"
import * as Access from "../Access.js"
import type { Principal } from "../Access.js"
import { hasControlCharacter, hasLoneSurrogate, unicodeOnly } from "../Bytes.js"
import * as CallbackUrl from "../CallbackUrl.js"
import { PaydeskConfig } from "../Config.js"
import { InvalidRequest, NotFound } from "../Errors.js"
import { isUuid } from "../Id.js"
import { DAY_MS, fromMoscowParts, moscowParts } from "../Instant.js"
import type { Settings, Terminal } from "../Terminal.js"
import { LedgerRepository } from "../ports/LedgerRepository.js"
import { PaymentRepository } from "../ports/PaymentRepository.js"
import { RateSource } from "../ports/RateSource.js"
import { TerminalRepository } from "../ports/TerminalRepository.js"
import { atomic } from "./Atomic.js"
import * as Credentials from "./Credentials.js"
import * as Events from "./Events.js"
import * as Settlement from "./Settlement.js"
import * as Traced from "../Traced.js"

/**
 * A terminal's settings as its merchant (or the operator) sees them: the terminal, the health of
 * its callback endpoint, and when a rotated-out signing secret stops signing.
 */
export const details = Traced.fn("Terminals.details")(function*(terminal: Terminal) {
  return {
    terminal,
    callbackEndpoint: yield* Events.health(terminal.id),
    previousSecretExpiresAt: yield* Credentials.previousSecretExpiresAt(terminal)
  }
})

/** The settings of a terminal the principal may read. */
export const get = Traced.fn("Terminals.get")(function*(principal: Principal, terminalId: string) {
  return yield* details(yield* Access.resolveTerminal(principal, terminalId, "read"))
})

/**
 * The terminals the principal may act on: the one of its API key, or every terminal of the
 * user's account (oldest first), so a dashboard never asks for a terminal id.
 */
export const list = Traced.fn("Terminals.list")(function*(principal: Principal) {
  const terminals = yield* TerminalRepository
  if (principal._tag === "ApiKey") {
    const found = yield* terminals.get(principal.terminalId)
    return Option.isSome(found) ? [found.value] : []
  }
  return yield* terminals.listByAccount(principal.accountId)
})

/** Balance of the terminal the principal acts on. */
export const balance = Traced.fn("Terminals.balance")(function*(principal: Principal, terminalId: string | null | undefined) {
  const terminal = yield* Access.resolveTerminal(principal, terminalId, "read")
  return { terminal, balance: yield* (yield* LedgerRepository).balance(terminal.id) }
})

/** The current rate, or the rate of a terminal. */
export const rate = Traced.fn("Terminals.rate")(function*(principal: Principal, terminalId: string | null | undefined) {
  // Absent: the current rate; empty: given, so the 403 of a terminal not the caller's (Access.resolveTerminal).
  const terminal = terminalId === undefined || terminalId === null ? null : yield* Access.resolveTerminal(principal, terminalId, "read")
  return yield* (yield* RateSource).current(terminal === null ? null : terminal.id)
})

const isHttpUrl = (value: string): boolean => /^https?:\/\/[^\s/?#]+[^\s]*$/i.test(value) && value.length <= CallbackUrl.maxLength

/** Parses "HH:MM" (Moscow time); null when malformed. */
export const parseConversionTime = (value: string): { hour: number; minute: number } | null => {
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(value)
  return match === null ? null : { hour: Number(match[1]), minute: Number(match[2]) }
}

/** The first moment strictly after `now` at which the Moscow wall clock shows `time`. */
export const nextConversionAt = (time: string, now: number): number => {
  const parsed = parseConversionTime(time) ?? { hour: 0, minute: 0 }
  const today = moscowParts(now)
  const candidate = fromMoscowParts({ ...today, hour: parsed.hour, minute: parsed.minute, second: 0, millisecond: 0 })
  return candidate > now ? candidate : candidate + DAY_MS
}

/** Validates and applies a settings change (`PUT /terminals/{id}`); returns the terminal. */
export const updateSettings = Traced.fn("Terminals.updateSettings")(function*(
  principal: Principal,
  terminalId: string,
  settings: Settings
) {
  // A disabled terminal keeps its settings: "write" refuses it with `terminal is unavailable`.
  const target = yield* Access.resolveTerminal(principal, terminalId, "write")
  return yield* applySettings(target.id, settings)
})

/** The operator's settings change of any terminal (disabled ones included); `NotFound` for an unknown id. */
export const updateSettingsAsOperator = Traced.fn("Terminals.updateSettingsAsOperator")(function*(terminalId: string, settings: Settings) {
  const id = terminalId.toLowerCase()
  const found = isUuid(id) ? yield* (yield* TerminalRepository).get(id) : Option.none()
  if (Option.isNone(found)) return yield* NotFound.of("terminal")
  return yield* applySettings(found.value.id, settings)
})

/** Validates `settings` and applies them to terminal `targetId` in one transaction. */
const applySettings = Effect.fnUntraced(function*(targetId: string, settings: Settings) {
  // An empty URL is no way to remove one (null is): said so, rather than the URL rules.
  for (const [field, name] of [["callbackUrl", "callback_url"], ["successRedirectUrl", "success_redirect_url"], ["failRedirectUrl", "fail_redirect_url"]] as const) {
    if (settings[field] === "") return yield* new InvalidRequest({ field: name, message: `${name} must be an http or https URL; null removes it` })
  }
  if (settings.callbackUrl !== undefined && settings.callbackUrl !== null) {
    const checked = CallbackUrl.check(settings.callbackUrl, { allowPrivate: (yield* PaydeskConfig).allowPrivateCallbacks })
    if (Result.isFailure(checked)) return yield* new InvalidRequest({ field: "callback_url", message: checked.failure })
  }
  for (const field of ["callbackUrl", "successRedirectUrl", "failRedirectUrl"] as const) {
    const value = settings[field]
    if (value === undefined || value === null) continue
    const name = field === "callbackUrl" ? "callback_url" : field === "successRedirectUrl" ? "success_redirect_url" : "fail_redirect_url"
    // (A control character is no part of a URL: RFC 3986 has it percent-encoded.)
    if (!isHttpUrl(value) || hasControlCharacter(value)) {
      return yield* new InvalidRequest({ field: name, message: `${name} must be an http or https URL of at most 2048 characters` })
    }
    // Stored as sent, or refused: a store would write the lone half as U+FFFD, another URL than the one answered.
    if (hasLoneSurrogate(value)) return yield* new InvalidRequest({ field: name, message: unicodeOnly(name) })
  }
  if (settings.conversionTime !== undefined && settings.conversionTime !== null && parseConversionTime(settings.conversionTime) === null) {
    return yield* new InvalidRequest({ field: "conversion_time", message: "conversion_time must be HH:MM (Moscow time)" })
  }
  return yield* atomic(Effect.gen(function*() {
    const terminals = yield* TerminalRepository
    const found = yield* terminals.getForUpdate(targetId)
    if (Option.isNone(found)) return yield* NotFound.of("terminal")
    const now = yield* Clock.currentTimeMillis
    const merged: Terminal = {
      ...found.value,
      ...Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined)),
      updatedAt: now
    }
    if (merged.conversionMode === "scheduled" && merged.conversionTime === null) {
      return yield* new InvalidRequest({
        field: "conversion_time",
        message: "conversion_time is required when conversion_mode is scheduled"
      })
    }
    // A switch to instant reads what is pending once the credits in flight, which read the
    // scheduled mode, have committed (and holds off new ones until it commits), so none of their
    // roubles is left pending with no conversion to come.
    if (merged.conversionMode === "instant" && found.value.conversionMode !== "instant") yield* terminals.lockConversionMode(targetId)
    const next: Terminal = {
      ...merged,
      // Scheduled: the next conversion time. Instant: convert what is still pending at once.
      nextConversionAt: merged.conversionMode === "scheduled"
        ? nextConversionAt(merged.conversionTime ?? "00:00", now)
        : (yield* (yield* LedgerRepository).balance(merged.id)).rubPending > 0n
        ? now
        : null
    }
    yield* terminals.update(next)
    return next
  }))
})

/**
 * Payments one conversion run of a terminal converts at most, in one transaction holding the
 * terminal's row (which payouts and settings changes wait for); more go on in the next pass.
 */
export const conversionsPerRun = 1_000

/** How soon a conversion run that left roubles pending (payments held by other transactions) is tried again. */
export const conversionRetryMs = 60_000

/**
 * Converts the pending roubles of terminals whose conversion time has come; returns payments
 * converted. `perRun` bounds the payments of one terminal converted in one transaction (default
 * `conversionsPerRun`); what is left goes on in the next pass.
 */
export const runDueConversions = Traced.fn("Terminals.runDueConversions")(function*(options: { readonly perRun?: number } = {}) {
  const perRun = options.perRun ?? conversionsPerRun
  const config = yield* PaydeskConfig
  const now = yield* Clock.currentTimeMillis
  const due = yield* atomic((yield* TerminalRepository).claimDueConversions(now, config.batchSize))
  let converted = 0
  for (const terminal of due) {
    converted += yield* atomic(Effect.gen(function*() {
      const terminals = yield* TerminalRepository
      const locked = yield* terminals.getForUpdate(terminal.id)
      if (Option.isNone(locked) || locked.value.nextConversionAt === null || locked.value.nextConversionAt > now) return 0
      const { rate } = yield* (yield* RateSource).current(terminal.id)
      const payments = yield* PaymentRepository
      const pending = yield* payments.claimUnconverted(terminal.id, perRun)
      for (const payment of pending) {
        if (payment.settlement === null) continue
        const settlement = yield* Settlement.convert(payment, payment.settlement, rate)
        yield* payments.update({ ...payment, settlement, version: payment.version + 1 })
      }
      const scheduled = locked.value.conversionMode === "scheduled" && locked.value.conversionTime !== null
        ? nextConversionAt(locked.value.conversionTime, now)
        : null
      // More than a run converts goes on at once. In instant mode, payments the claim skipped because
      // another transaction held them (a refund in progress) are tried again a minute later: no
      // other conversion would come (credits in instant mode convert at once, so anything pending
      // now was pending before; `Terminals.applySettings`). In scheduled mode they wait for the next
      // conversion time, as payments credited during the run do.
      const more = pending.length >= perRun
      const left = !more && scheduled === null && (yield* (yield* LedgerRepository).balance(terminal.id)).rubPending > 0n
      yield* terminals.update({
        ...locked.value,
        nextConversionAt: more ? now : left ? now + conversionRetryMs : scheduled,
        updatedAt: now
      })
      return pending.length
    }))
  }
  return converted
})
