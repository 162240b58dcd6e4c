/**
 * Use cases of USDT payouts: creation with balance hold, the idempotency key and the maximum
 * of active payouts; listing; the operator's approve and reject; and the payout worker that
 * submits new payouts for approval and sends approved ones over the payout network.
 *
 * The network call happens outside any transaction with the payout id as its idempotency key,
 * so a crash or a second worker asks again instead of sending twice.
 */
import { Clock, Effect, Option, Result } from "effect"
import * as Access from "../Access.js"
import type { Principal } from "../Access.js"
import { formatUsdt, maxUsdtMicro, parseUsdt } from "../Amount.js"
import { hasControlCharacter, withoutLoneSurrogates } from "../Bytes.js"
import { PaydeskConfig } from "../Config.js"
import { InsufficientBalance, InvalidRequest, InvalidTransition, MaxActivePayouts, NotFound, OperationNotAllowed, TerminalIdRequired, TerminalUnavailable } from "../Errors.js"
import * as Idempotency from "../Idempotency.js"
import { parsePayoutId } from "../Id.js"
import * as Paging from "../Paging.js"
import * as Payout from "../Payout.js"
import * as StateMachine from "../StateMachine.js"
import { Entropy } from "../ports/Entropy.js"
import { IdempotencyStore } from "../ports/IdempotencyStore.js"
import { LedgerRepository } from "../ports/LedgerRepository.js"
import { PayoutNetwork, type SendOutcome } from "../ports/PayoutNetwork.js"
import { PayoutRepository } from "../ports/PayoutRepository.js"
import { TerminalRepository } from "../ports/TerminalRepository.js"
import { atomic, wakeup } from "./Atomic.js"
import * as Outbox from "./Outbox.js"
import * as Traced from "../Traced.js"
import * as WalletAddress from "../WalletAddress.js"

/** Networks payouts may use. */
export const networks = WalletAddress.networks

/** Longest wallet address (characters). */
export const maxWalletLength = 128

/** A payout creation request, as decoded from JSON. */
export interface CreateInput {
  readonly terminalId?: string | null | undefined
  readonly amountUsdt: string
  readonly walletAddress: string
  readonly network: string
  readonly idempotencyKey?: string | null | undefined
}

const invalid = (field: string, message: string) => new InvalidRequest({ field, message })

/** Creates a payout in `created`, holding its amount; replays a repeated idempotency key. */
export const create = Traced.fn("Payouts.create")(function*(principal: Principal, input: CreateInput) {
  if (principal._tag === "User" && (input.terminalId === undefined || input.terminalId === null || input.terminalId === "")) {
    return yield* TerminalIdRequired.of()
  }
  // Whether the terminal takes new payouts is checked after the idempotency key's replay (below): a
  // retry of a payout made just before the terminal was disabled gets that payout, not a refusal that
  // reads as "not made" (an outside probe's client then took its payout for failed).
  const terminal = yield* Access.resolveTerminal(principal, input.terminalId, "read")
  const amount = parseUsdt(input.amountUsdt)
  if (Result.isFailure(amount)) return yield* amount.failure
  // More than a balance can hold (an outside probe's got a 500 from the store's numeric overflow).
  if (amount.success > maxUsdtMicro) return yield* invalid("amount_usdt", `amount_usdt must not exceed ${formatUsdt(maxUsdtMicro)}`)
  const network = input.network
  if (!WalletAddress.isNetwork(network)) {
    return yield* invalid("network", `network must be one of: ${networks.join(", ")}`)
  }
  const wallet = WalletAddress.normalize(network, input.walletAddress.trim())
  if (wallet.length === 0 || wallet.length > maxWalletLength || !/^[A-Za-z0-9:_-]+$/.test(wallet)) {
    return yield* invalid("wallet_address", `wallet_address must be 1 to ${maxWalletLength} letters, digits, ':', '_' or '-'`)
  }
  // Before any money is held: a malformed or mistyped address is refused here, not by the network.
  // (Also before an idempotency key's replay: a retry of a payout stored before these checks, to an
  // address they refuse, is answered 400, as a new request would be.)
  const walletProblem = yield* WalletAddress.problem(network, wallet)
  if (walletProblem !== undefined) return yield* invalid("wallet_address", walletProblem)
  const key = input.idempotencyKey ?? null
  if (key !== null) {
    const valid = Idempotency.validateKey(key, "idempotency_key")
    if (Result.isFailure(valid)) return yield* valid.failure
  }
  const print = yield* Idempotency.fingerprint({ amount: amount.success.toString(), wallet, network: input.network })
  const config = yield* PaydeskConfig
  const entropy = yield* Entropy
  const id = yield* entropy.uuid
  const payouts = yield* PayoutRepository
  return yield* atomic(Effect.gen(function*() {
    const locked = yield* (yield* TerminalRepository).getForUpdate(terminal.id)
    if (Option.isNone(locked)) return yield* NotFound.of("terminal")
    const store = yield* IdempotencyStore
    if (key !== null) {
      const decision = Idempotency.decide(yield* Idempotency.findMoneyKey(terminal.id, "payout", key), print)
      if (Result.isFailure(decision)) return yield* decision.failure
      if (decision.success._tag === "Replay") {
        const existing = yield* payouts.get(decision.success.resourceId)
        if (Option.isSome(existing)) return { payout: existing.value, created: false }
      }
    }
    if (locked.value.status !== "active") return yield* TerminalUnavailable.of()
    if ((yield* payouts.countActive(terminal.id)) >= config.maxActivePayouts) return yield* MaxActivePayouts.of()
    const ledger = yield* LedgerRepository
    const balance = yield* ledger.balance(terminal.id)
    if (balance.usdtAvailable < amount.success) return yield* InsufficientBalance.of()
    const now = yield* Clock.currentTimeMillis
    const payout: Payout.Payout = {
      id,
      terminalId: terminal.id,
      amountUsdt: amount.success,
      walletAddress: wallet,
      network: input.network,
      status: "created",
      idempotencyKey: key,
      fingerprint: print,
      networkTxId: null,
      rejectReason: null,
      leaseUntil: null,
      createdAt: now,
      updatedAt: now,
      version: 1
    }
    yield* payouts.insert(payout)
    // The worker submits it for approval.
    yield* wakeup({ kind: "payout", payoutId: id, at: now })
    if (key !== null) {
      yield* store.insert({ terminalId: terminal.id, scope: "payout", key, fingerprint: print, resourceId: id, createdAt: now })
    }
    yield* ledger.append([
      { id: yield* entropy.uuid, terminalId: terminal.id, account: "usdt_available", currency: "USDT", amount: -amount.success, kind: "payout_hold", refId: id, createdAt: now },
      { id: yield* entropy.uuid, terminalId: terminal.id, account: "usdt_hold", currency: "USDT", amount: amount.success, kind: "payout_hold", refId: id, createdAt: now }
    ])
    return { payout, created: true }
  }))
})

/** Payouts per page of the list. */
export const pageSize = 50

/** Lists a terminal's payouts, newest first. */
export const list = Traced.fn("Payouts.list")(function*(
  principal: Principal,
  query: Paging.Request & { readonly terminalId?: string | null | undefined }
) {
  if (principal._tag === "User" && (query.terminalId === undefined || query.terminalId === null || query.terminalId === "")) {
    return yield* TerminalIdRequired.of()
  }
  const terminal = yield* Access.resolveTerminal(principal, query.terminalId, "read")
  const window = yield* Paging.resolve(query, pageSize)
  const result = yield* (yield* PayoutRepository).list(terminal.id, Paging.read(window))
  const { items, nextCursor } = Paging.answer(window, result.items)
  return { items, total: result.total, page: window.page, pageSize: window.limit, nextCursor }
})

const lockedPayout = Traced.fn("Payouts.lockedPayout")(function*(id: string) {
  const found = yield* (yield* PayoutRepository).getForUpdate(id)
  if (Option.isNone(found)) return yield* NotFound.of("payout")
  return found.value
})

/** Applies payout events to a locked payout, with ledger entries and the completion callback. */
const apply = Traced.fn("Payouts.apply")(function*(
  payout: Payout.Payout,
  events: ReadonlyArray<Payout.Event>,
  patch: Partial<Pick<Payout.Payout, "networkTxId" | "rejectReason">> = {}
) {
  const now = yield* Clock.currentTimeMillis
  let status = payout.status
  const emitted: Array<Payout.CallbackEventType> = []
  for (const event of events) {
    const edge = StateMachine.transition(Payout.machine, status, event)
    if (Result.isFailure(edge)) return yield* edge.failure
    status = edge.success.to
    emitted.push(...edge.success.emits)
  }
  const next: Payout.Payout = { ...payout, ...patch, status, leaseUntil: null, updatedAt: now, version: payout.version + 1 }
  yield* (yield* PayoutRepository).update(next)
  // Approved: the worker sends it now.
  if (status === "processing" && payout.status !== "processing") yield* wakeup({ kind: "payout", payoutId: payout.id, at: now })
  const entropy = yield* Entropy
  const ledger = yield* LedgerRepository
  if (status === "completed") {
    yield* ledger.append([
      { id: yield* entropy.uuid, terminalId: payout.terminalId, account: "usdt_hold", currency: "USDT", amount: -payout.amountUsdt, kind: "payout_sent", refId: payout.id, createdAt: now }
    ])
  }
  if (status === "rejected") {
    yield* ledger.append([
      { id: yield* entropy.uuid, terminalId: payout.terminalId, account: "usdt_hold", currency: "USDT", amount: -payout.amountUsdt, kind: "payout_release", refId: payout.id, createdAt: now },
      { id: yield* entropy.uuid, terminalId: payout.terminalId, account: "usdt_available", currency: "USDT", amount: payout.amountUsdt, kind: "payout_release", refId: payout.id, createdAt: now }
    ])
  }
  if (emitted.length > 0) {
    const terminal = yield* (yield* TerminalRepository).get(payout.terminalId)
    if (Option.isSome(terminal)) {
      yield* Outbox.enqueue({ terminal: terminal.value, eventType: "payout.completed", body: Outbox.payoutBody(next), test: false, paymentId: null, payoutId: next.id })
    }
  }
  return next
})

const parseId = (input: string) => Option.match(parsePayoutId(input), { onNone: () => Effect.fail(NotFound.of("payout")), onSome: Effect.succeed })

/**
 * Operator: approves a payout (from created or pending) for sending. Refused with `insufficient
 * balance` while the terminal's available balance is negative (a refund or chargeback after the
 * hold took more than was left): the held money is owed back first, so the operator rejects the
 * payout (its hold returns to the balance) or waits until new payments cover the debt.
 */
export const approve = Traced.fn("Payouts.approve")(function*(payoutId: string, options: Idempotency.OperatorMoveOptions = {}) {
  const key = options.idempotencyKey
  yield* Idempotency.validateOptionalKey(key)
  const id = yield* parseId(payoutId)
  return yield* atomic(Effect.gen(function*() {
    // The terminal's row first, as a creation takes it (then the payout's): a disable committed while
    // this approval runs is waited for and seen, not approved past (an outside probe read the status
    // unlocked), and payout creations of the terminal wait meanwhile.
    const unlocked = yield* (yield* PayoutRepository).get(id)
    const terminal = Option.isSome(unlocked) ? yield* (yield* TerminalRepository).getForUpdate(unlocked.value.terminalId) : Option.none()
    const payout = yield* lockedPayout(id)
    const move = { move: "approve" as const, objectId: payout.id, terminalId: payout.terminalId }
    if (yield* Idempotency.operatorMoveReplayed(key, move)) return payout
    if (payout.status === "created" || payout.status === "pending") {
      if ((yield* (yield* LedgerRepository).balance(payout.terminalId)).usdtAvailable < 0n) return yield* InsufficientBalance.of()
      // A terminal disabled since the payout was requested (say, for suspected fraud) sends no money
      // until it is enabled again (an outside probe approved and sent such a payout).
      if (Option.isSome(terminal) && terminal.value.status !== "active") {
        return yield* new OperationNotAllowed({ message: "the payout's terminal is disabled: enable it to approve the payout, or reject the payout" })
      }
    }
    const approved = yield* apply(payout, payout.status === "created" ? ["submit", "approve"] : ["approve"])
    yield* Idempotency.recordOperatorMove(key, move)
    return approved
  }))
})

/** Operator: rejects a payout that has not been sent; the hold returns to the available balance. */
export const reject = Traced.fn("Payouts.reject")(function*(payoutId: string, reason: string | null, options: Idempotency.OperatorMoveOptions = {}) {
  const key = options.idempotencyKey
  yield* Idempotency.validateOptionalKey(key)
  const id = yield* parseId(payoutId)
  // The merchant reads it (`reject_reason`): one line, no terminal escapes (as the operator's names).
  if (reason !== null && hasControlCharacter(reason)) {
    return yield* new InvalidRequest({ field: "reason", message: "reason must not contain control characters (line breaks, tabs, escapes)" })
  }
  return yield* atomic(Effect.gen(function*() {
    const payout = yield* lockedPayout(id)
    // The reason as sent: the same key with another reason is another request.
    const move = { move: "reject" as const, objectId: payout.id, terminalId: payout.terminalId, details: { reason } }
    if (yield* Idempotency.operatorMoveReplayed(key, move)) return payout
    if (payout.status === "processing") {
      // A state conflict, like any transition the payout's state does not allow (409).
      return yield* new InvalidTransition({
        message: "a payout being sent cannot be rejected by the operator",
        entity: "payout",
        from: payout.status,
        event: "reject"
      })
    }
    // Free text: a lone surrogate becomes U+FFFD, as a store writes it, so the answer is what is stored.
    const rejected = yield* apply(payout, ["reject"], { rejectReason: reason === null ? "rejected by operator" : withoutLoneSurrogates(reason) })
    yield* Idempotency.recordOperatorMove(key, move)
    return rejected
  }))
})

/** Worker: submits new payouts for approval and sends approved ones; returns how many moved. */
export const runDue = Traced.fn("Payouts.runDue")(function*() {
  const config = yield* PaydeskConfig
  const payouts = yield* PayoutRepository
  const now = yield* Clock.currentTimeMillis
  const submitted = yield* atomic(Effect.gen(function*() {
    const created = yield* payouts.claimDue("created", now, now + config.leaseMs, config.batchSize)
    for (const payout of created) yield* apply(payout, ["submit"])
    return created.length
  }))
  const sending = yield* atomic(payouts.claimDue("processing", now, now + config.leaseMs, config.batchSize))
  let sent = 0
  for (const payout of sending) {
    const outcome = yield* (yield* PayoutNetwork).send({
      idempotencyKey: payout.id,
      amountUsdt: payout.amountUsdt,
      walletAddress: payout.walletAddress,
      network: payout.network
    })
    const recorded = yield* recordSend(payout.id, outcome).pipe(
      Effect.catchCause((cause) => Effect.as(Effect.logError("payout outcome not recorded", cause), false))
    )
    if (recorded) sent++
  }
  return submitted + sent
})

const recordSend = Traced.fn("Payouts.recordSend")(function*(id: string, outcome: SendOutcome) {
  if (outcome._tag === "Unknown") return false
  return yield* atomic(Effect.gen(function*() {
    const payout = yield* lockedPayout(id)
    if (payout.status !== "processing") return false
    yield* outcome._tag === "Sent"
      ? apply(payout, ["complete"], { networkTxId: outcome.txId })
      : apply(payout, ["reject"], { rejectReason: outcome.reason })
    return true
  }))
})
