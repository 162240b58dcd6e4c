/**
 * The operator's reads: every account (newest first), the terminals of an account, the payments,
 * subscriptions and payouts of a terminal, and any of those records by id. They apply no merchant
 * access rule (the operator API is behind the operator token) and change nothing.
 */
import { Effect, Option } from "effect"
import { InvalidRequest, NotFound } from "../Errors.js"
import { isUuid, parsePaymentId, parsePayoutId } from "../Id.js"
import type { Environment } from "../Payment.js"
import type { ProviderState } from "../Subscription.js"
import { AccountRepository } from "../ports/AccountRepository.js"
import { PaymentRepository } from "../ports/PaymentRepository.js"
import { PayoutRepository } from "../ports/PayoutRepository.js"
import { SubscriptionRepository } from "../ports/SubscriptionRepository.js"
import { TerminalRepository } from "../ports/TerminalRepository.js"
import * as Traced from "../Traced.js"

/** Records per page of the operator's lists. */
export const pageSize = 50

/** The `limit`/`offset` of page `page` (from 1). */
const pageOf = Effect.fnUntraced(function*(page: number | undefined) {
  const n = page ?? 1
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000) return yield* new InvalidRequest({ field: "page", message: "page must be a positive integer" })
  return { page: n, limit: pageSize, offset: (n - 1) * pageSize }
})

/** A UUID in canonical (lowercase) form, or none. */
const uuidOf = (id: string): Option.Option<string> => {
  const lower = id.toLowerCase()
  return isUuid(lower) ? Option.some(lower) : Option.none()
}

/** The account `id`, or `NotFound`. */
const accountOf = Effect.fnUntraced(function*(id: string) {
  const uuid = uuidOf(id)
  const found = Option.isNone(uuid) ? Option.none() : yield* (yield* AccountRepository).getAccount(uuid.value)
  if (Option.isNone(found)) return yield* NotFound.of("account")
  return found.value
})

/** The terminal `id`, or `NotFound`. */
export const getTerminal = Traced.fn("OperatorReads.getTerminal")(function*(id: string) {
  const uuid = uuidOf(id)
  const found = Option.isNone(uuid) ? Option.none() : yield* (yield* TerminalRepository).get(uuid.value)
  if (Option.isNone(found)) return yield* NotFound.of("terminal")
  return found.value
})

/** Accounts, newest first, `pageSize` per page. */
export const listAccounts = Traced.fn("OperatorReads.listAccounts")(function*(page?: number) {
  const at = yield* pageOf(page)
  const { items, total } = yield* (yield* AccountRepository).listAccounts(at)
  return { items, total, page: at.page, pageSize }
})

/** An account with its terminals and its dashboard users (both oldest first). */
export const getAccount = Traced.fn("OperatorReads.getAccount")(function*(id: string) {
  const account = yield* accountOf(id)
  const terminals = yield* (yield* TerminalRepository).listByAccount(account.id)
  const users = yield* (yield* AccountRepository).listUsers(account.id)
  return { account, terminals, users }
})

/** The terminals of an account, oldest first. */
export const listTerminals = Traced.fn("OperatorReads.listTerminals")(function*(accountId: string) {
  const account = yield* accountOf(accountId)
  return yield* (yield* TerminalRepository).listByAccount(account.id)
})

/** Page `page` of a terminal's records, as `list` reads them. */
const pageOfTerminal = <A, R>(
  terminalId: string,
  page: number | undefined,
  list: (terminalId: string, at: { readonly limit: number; readonly offset: number }) => Effect.Effect<{ readonly items: ReadonlyArray<A>; readonly total: number }, never, R>
) =>
  Effect.gen(function*() {
    const terminal = yield* getTerminal(terminalId)
    const at = yield* pageOf(page)
    const { items, total } = yield* list(terminal.id, at)
    return { items, total, page: at.page, pageSize }
  })

/** A terminal's payments, newest first: live ones (`prod`, the default), sandbox ones, or `all`. */
export const listPayments = Traced.fn("OperatorReads.listPayments")(function*(
  terminalId: string,
  query: { readonly environment?: Environment | "all" | undefined; readonly page?: number | undefined } = {}
) {
  const payments = yield* PaymentRepository
  return yield* pageOfTerminal(terminalId, query.page, (id, at) => payments.list({ terminalId: id, environment: query.environment ?? "prod", recurring: null }, at))
})

/** A payment by `pay_<uuid>` or UUID. */
export const getPayment = Traced.fn("OperatorReads.getPayment")(function*(id: string) {
  const parsed = parsePaymentId(id)
  const found = Option.isNone(parsed) ? Option.none() : yield* (yield* PaymentRepository).get(parsed.value)
  if (Option.isNone(found)) return yield* NotFound.of("payment")
  return found.value
})

/** A terminal's subscriptions, newest first, optionally in one provider state. */
export const listSubscriptions = Traced.fn("OperatorReads.listSubscriptions")(function*(
  terminalId: string,
  query: { readonly providerState?: ProviderState | undefined; readonly page?: number | undefined } = {}
) {
  const subscriptions = yield* SubscriptionRepository
  return yield* pageOfTerminal(terminalId, query.page, (id, at) => subscriptions.list({ terminalIds: [id], providerState: query.providerState ?? null }, at))
})

/** A subscription by id. */
export const getSubscription = Traced.fn("OperatorReads.getSubscription")(function*(id: string) {
  const uuid = uuidOf(id)
  const found = Option.isNone(uuid) ? Option.none() : yield* (yield* SubscriptionRepository).get(uuid.value)
  if (Option.isNone(found)) return yield* NotFound.of("subscription")
  return found.value
})

/** A terminal's payouts, newest first. */
export const listPayouts = Traced.fn("OperatorReads.listPayouts")(function*(terminalId: string, query: { readonly page?: number | undefined } = {}) {
  const payouts = yield* PayoutRepository
  return yield* pageOfTerminal(terminalId, query.page, (id, at) => payouts.list(id, at))
})

/** A payout by `po_<uuid>` or UUID. */
export const getPayout = Traced.fn("OperatorReads.getPayout")(function*(id: string) {
  const parsed = parsePayoutId(id)
  const found = Option.isNone(parsed) ? Option.none() : yield* (yield* PayoutRepository).get(parsed.value)
  if (Option.isNone(found)) return yield* NotFound.of("payout")
  return found.value
})
