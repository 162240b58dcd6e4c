/**
 * The terminal-access rule: who may act on which terminal.
 *
 * An API key acts on its own terminal only: `terminal_id` may be omitted, and when given it must
 * be the key's terminal (`terminal access denied`, or `subscription write access required` for
 * subscription writes). A dashboard user (Bearer token) acts on the terminals of their account
 * and must name one (`terminal_id is required`); any other terminal is `account access denied`.
 */
import { Context, Effect, Option } from "effect"
import { AccessDenied, TerminalIdRequired, TerminalUnavailable } from "./Errors.js"
import { isUuid } from "./Id.js"
import type { Terminal } from "./Terminal.js"
import { TerminalRepository } from "./ports/TerminalRepository.js"
import * as Traced from "./Traced.js"

/** A server integration: an API key of one terminal. */
export interface ApiKeyPrincipal {
  readonly _tag: "ApiKey"
  readonly apiKeyId: string
  readonly terminalId: string
  readonly subscriptionWrite: boolean
}

/** A dashboard user of an account (Bearer token). */
export interface UserPrincipal {
  readonly _tag: "User"
  readonly userId: string
  readonly accountId: string
  readonly role: string
  /** The session (refresh family) of the access token, when known: per-session limits key on it. */
  readonly sessionId?: string | undefined
}

/** Who makes a request. */
export type Principal = ApiKeyPrincipal | UserPrincipal

/**
 * The terminal of the request's API key as authentication read it (`Auth.apiKeyRequest`), provided
 * by a host for that one request only (`withRequestTerminal`), so resolving the terminal reads
 * nothing again. Never kept beyond the request: a principal outlives it, the terminal's status not.
 */
export const RequestTerminal = Context.Reference<Terminal | null>("@paydesk/core/Access/RequestTerminal", {
  defaultValue: () => null
})

/** Runs `effect` (one request's use case) with the terminal its authentication read. */
export const withRequestTerminal = <A, E, R>(effect: Effect.Effect<A, E, R>, terminal: Terminal | null): Effect.Effect<A, E, R> =>
  terminal === null ? effect : Effect.provideService(effect, RequestTerminal, terminal)

/**
 * What the request does with the terminal. `write` and `subscription_write` need an active
 * terminal; `subscription_owner` needs the same access as `subscription_write` but not an active
 * terminal (a stop must always be possible; a creation replay answers before the status check).
 */
export type Purpose = "read" | "write" | "subscription_write" | "subscription_owner"

/** What a `terminal_id` must be, for messages (the HTTP schemas say the same). */
export const terminalIdExpected = "a terminal UUID"

/**
 * Resolves the terminal a request acts on, applying the access rule. `terminal_id` absent
 * (`undefined` or `null`) takes the API key's terminal. An empty one is given, not absent (spec
 * rule 3: when given it must match the key's terminal): it names no terminal, so it is the 403 of
 * any other; taken as absent, a client's template bug (`?terminal_id=`) would act on a scope it did
 * not name (a dashboard user's lists: every terminal of the account).
 */
export const resolveTerminal = Effect.fnUntraced(function*(
  principal: Principal,
  requested: string | null | undefined,
  purpose: Purpose
) {
  const terminals = yield* TerminalRepository
  // A terminal_id that is not a UUID (or empty) names no terminal the principal has: 403 like any other (spec rule 3).
  const given = requested === undefined || requested === null ? null : requested.toLowerCase()
  const subscriptionWrite = purpose === "subscription_write" || purpose === "subscription_owner"
  let terminal: Terminal
  if (principal._tag === "ApiKey") {
    if (given !== null && given !== principal.terminalId) {
      return yield* (subscriptionWrite ? AccessDenied.subscriptionWrite() : AccessDenied.terminal())
    }
    if (subscriptionWrite && !principal.subscriptionWrite) {
      return yield* AccessDenied.subscriptionWrite()
    }
    const known = yield* RequestTerminal
    const found = known !== null && known.id === principal.terminalId ? Option.some(known) : yield* terminals.get(principal.terminalId)
    if (Option.isNone(found)) return yield* AccessDenied.terminal()
    terminal = found.value
  } else {
    if (given === null) return yield* TerminalIdRequired.of()
    if (!isUuid(given)) return yield* AccessDenied.account()
    const found = yield* terminals.get(given)
    if (Option.isNone(found) || found.value.accountId !== principal.accountId) return yield* AccessDenied.account()
    terminal = found.value
  }
  if ((purpose === "write" || purpose === "subscription_write") && terminal.status !== "active") {
    return yield* TerminalUnavailable.of()
  }
  return terminal
})

/**
 * Whether terminals `a` and `b` belong to one account: a record of another terminal of an API key's
 * own account is the spec's 403, another merchant's a 404 (its existence is not revealed).
 */
export const sameAccount = Effect.fnUntraced(function*(a: string, b: string) {
  const terminals = yield* TerminalRepository
  const [first, second] = [yield* terminals.get(a), yield* terminals.get(b)]
  return Option.isSome(first) && Option.isSome(second) && first.value.accountId === second.value.accountId
})

/** Whether the principal may see records of `terminalId` (for lookups by record id). */
export const canSee = Traced.fn("Access.canSee")(function*(principal: Principal, terminalId: string) {
  if (principal._tag === "ApiKey") return principal.terminalId === terminalId
  const terminals = yield* TerminalRepository
  const found = yield* terminals.get(terminalId)
  return Option.isSome(found) && found.value.accountId === principal.accountId
})
