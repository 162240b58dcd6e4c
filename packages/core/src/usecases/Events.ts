/**
 * Events a merchant can rely on (beyond the spec, changing nothing it fixes): the events API —
 * list with filters and a cursor, one event with its deliveries and attempts, a resend (one
 * attempt now, outside the 8), the recovery of failed events since a time (the same events, ids
 * and order, with 8 attempts again) — a `ping` test event, and the health of a terminal's
 * callback endpoint.
 *
 * Access follows the terminal rule: an API key sees its terminal, a dashboard user the terminals
 * of the account (all of them when no `terminal_id` is given); an event of another terminal of the
 * key's account is 403, another merchant's 404 (as an unknown one). Sandbox and live are kept apart (`environment`, live only by default, as for payments).
 * Events are kept and listed for `PaydeskConfig.eventRetentionMs` (30 days); a test clock's, which carry the
 * clock's time, until their clock is deleted (`TestClocks.purge`).
 */
import { Clock, Effect, Option } from "effect"
import * as Access from "../Access.js"
import type { Principal } from "../Access.js"
import { fromBase64Url, fromUtf8, toBase64Url, utf8 } from "../Bytes.js"
import * as Callback from "../Callback.js"
import { PaydeskConfig } from "../Config.js"
import { AccessDenied, InvalidRequest, NotFound } from "../Errors.js"
import { isUuid, parsePaymentId, parsePayoutId } from "../Id.js"
import { formatIso } from "../Instant.js"
import { OutboxRepository, type EventPageFilter } from "../ports/OutboxRepository.js"
import { TerminalRepository } from "../ports/TerminalRepository.js"
import { TestClockRepository } from "../ports/TestClockRepository.js"
import { atomic } from "./Atomic.js"
import * as Callbacks from "./Callbacks.js"
import * as Outbox from "./Outbox.js"
import { holding } from "./TestClockScope.js"
import * as Traced from "../Traced.js"

const invalid = (field: string, message: string) => new InvalidRequest({ field, message })

/** The event types a listing may filter on. */
export const eventTypes: ReadonlyArray<Callback.EventType> = [
  "payment.created",
  "payment.paid",
  "payment.canceled",
  "payment.expired",
  "payment.chargeback",
  "payment.refunded",
  "refund_request.completed",
  "payout.completed",
  "ping"
]

/** Delivery states a listing may filter on (`none`: the terminal had no callback URL). */
export const deliveryStatuses = ["pending", "delivered", "failed", "none"] as const

/** Events per page by default, and at most. */
export const defaultLimit = 20
export const maxLimit = 100

/** A listing query, as decoded from the query string. */
export interface ListQuery {
  readonly terminalId?: string | undefined
  readonly environment?: "sandbox" | "all" | "prod" | undefined
  readonly type?: string | undefined
  /** A payment (`pay_<uuid>`) or payout (`po_<uuid>`) id, or a bare UUID. */
  readonly objectId?: string | undefined
  /** Inclusive (epoch ms). */
  readonly createdFrom?: number | undefined
  /** Exclusive (epoch ms), as the payments' `created_to`. */
  readonly createdTo?: number | undefined
  readonly deliveryStatus?: string | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** The opaque cursor of the event after which a page starts. */
const encodeCursor = (event: Callback.OutboxEvent): string => toBase64Url(utf8(`${event.createdAt}.${event.sequence}.${event.id}`))

const decodeCursor = (cursor: string): { readonly createdAt: number; readonly sequence: number; readonly id: string } | null => {
  const bytes = fromBase64Url(cursor)
  const text = bytes === undefined ? undefined : fromUtf8(bytes)
  const match = text === undefined ? null : /^(\d{1,15})\.(\d{1,9})\.([0-9a-f-]{36})$/.exec(text)
  return match === null || !isUuid(match[3]!) ? null : { createdAt: Number(match[1]), sequence: Number(match[2]), id: match[3]! }
}

/** The terminals a principal acts on for events: the key's, the one named, or all of the user's account. */
const terminalsOf = Traced.fn("Events.terminalsOf")(function*(principal: Principal, terminalId: string | undefined) {
  // An empty terminal_id is given, not absent: a 403 (Access.resolveTerminal), not the account's terminals.
  if (principal._tag === "User" && terminalId === undefined) {
    return (yield* (yield* TerminalRepository).listByAccount(principal.accountId)).map((t) => t.id)
  }
  return [(yield* Access.resolveTerminal(principal, terminalId, "read")).id]
})

/** `test` of the events an environment filter selects: sandbox only, both, or live only (the default). */
const testOf = (environment: ListQuery["environment"]): boolean | null =>
  environment === "sandbox" ? true : environment === "all" ? null : false

/** Lists events, newest first, each with its delivery (the one that delivered it, else its latest); `nextCursor` continues the list. */
export const list = Traced.fn("Events.list")(function*(principal: Principal, query: ListQuery) {
  const config = yield* PaydeskConfig
  const now = yield* Clock.currentTimeMillis
  const terminalIds = yield* terminalsOf(principal, query.terminalId)
  if (query.type !== undefined && !(eventTypes as ReadonlyArray<string>).includes(query.type)) {
    return yield* invalid("type", `type must be one of: ${eventTypes.join(", ")}`)
  }
  if (query.deliveryStatus !== undefined && !(deliveryStatuses as ReadonlyArray<string>).includes(query.deliveryStatus)) {
    return yield* invalid("delivery_status", `delivery_status must be one of: ${deliveryStatuses.join(", ")}`)
  }
  const limit = query.limit ?? defaultLimit
  if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit) return yield* invalid("limit", `limit must be an integer from 1 to ${maxLimit}`)
  // `[created_from, created_to)`, as the payments' filters: a range of days joins up with no event
  // listed twice (it was inclusive until stop 51). An empty or reversed range is a mistake, not an empty page.
  if (query.createdFrom !== undefined && query.createdTo !== undefined && query.createdTo <= query.createdFrom) {
    return yield* invalid("created_to", "created_to must be later than created_from")
  }
  const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
  if (before === null) return yield* invalid("cursor", "cursor must be a next_cursor of an earlier page")
  let objectId: string | undefined
  if (query.objectId !== undefined) {
    const parsed = Option.orElse(parsePaymentId(query.objectId), () => parsePayoutId(query.objectId!))
    if (Option.isNone(parsed)) return yield* invalid("object_id", "object_id must be a payment id (pay_<uuid>) or a payout id (po_<uuid>)")
    objectId = parsed.value
  }
  const retained = now - config.eventRetentionMs
  const filter: EventPageFilter = {
    terminalIds,
    test: testOf(query.environment),
    eventType: query.type as Callback.EventType | undefined,
    objectId,
    createdFrom: query.createdFrom,
    createdBefore: query.createdTo,
    retainedFrom: retained,
    deliveryStatus: query.deliveryStatus as EventPageFilter["deliveryStatus"],
    before,
    limit: limit + 1
  }
  const page = yield* (yield* OutboxRepository).pageEvents(filter)
  const items = page.slice(0, limit)
  const last = items.at(-1)
  return { items, nextCursor: page.length > limit && last !== undefined ? encodeCursor(last.event) : null }
})

/**
 * An event the principal may act on (403 for another terminal's, 404 when unknown or past retention).
 * One past retention that is still being delivered (the retention keeps it) stays visible, so the
 * merchant can read and resend what the service still sends. So does a test clock's, whatever its
 * time (the clock's): it is kept until its clock is deleted (it was 404 once the clock's time lay 30
 * days behind the wall clock, which a clock frozen in January does from the start).
 */
const visible = Traced.fn("Events.visible")(function*(principal: Principal, id: string) {
  const uuid = Callback.parseEventId(id)
  const outbox = yield* OutboxRepository
  const found = uuid === null ? Option.none() : yield* outbox.getEvent(uuid)
  const config = yield* PaydeskConfig
  const now = yield* Clock.currentTimeMillis
  if (Option.isNone(found)) return yield* NotFound.of("event")
  if (
    found.value.testClockId === null && found.value.createdAt < now - config.eventRetentionMs &&
    !(yield* outbox.deliveriesOf(found.value.id)).some((d) => d.status === "pending")
  ) {
    return yield* NotFound.of("event")
  }
  if (!(yield* Access.canSee(principal, found.value.terminalId))) {
    // Another terminal of the key's own account: the spec's 403. Another merchant's: 404, as its
    // payments, subscriptions and clocks, so an event id tells nothing of another merchant (an
    // outside probe told "exists" from "does not" by 403 against 404).
    if (principal._tag === "ApiKey" && (yield* Access.sameAccount(principal.terminalId, found.value.terminalId))) return yield* AccessDenied.terminal()
    return yield* NotFound.of("event")
  }
  return found.value
})

/** One event with every delivery (oldest first) and its attempts. */
export const get = Traced.fn("Events.get")(function*(principal: Principal, id: string) {
  const event = yield* visible(principal, id)
  const outbox = yield* OutboxRepository
  const deliveries = yield* Effect.forEach(yield* outbox.deliveriesOf(event.id), (delivery) =>
    Effect.map(outbox.listAttempts(delivery.id), (attempts) => ({ delivery, attempts })))
  return { event, deliveries }
})

/**
 * Sends a delivery that exists for a single attempt now, in the request: the delivery is created
 * leased (no worker takes it meanwhile; if the request dies, a worker sends it after the lease).
 */
const attemptNow = Traced.fn("Events.attemptNow")(function*(event: Callback.OutboxEvent, kind: Callback.DeliveryKind) {
  const config = yield* PaydeskConfig
  const now = yield* Clock.currentTimeMillis
  const delivery = yield* atomic(Effect.gen(function*() {
    const created = yield* Outbox.deliver(event, kind)
    const leased: Callback.Delivery = { ...created, nextAttemptAt: now + config.leaseMs }
    yield* (yield* OutboxRepository).updateDelivery(leased)
    return leased
  }))
  const attempt = yield* Callbacks.attempt(delivery, event)
  const after = yield* (yield* OutboxRepository).getDelivery(delivery.id)
  // "After a 2xx the event is not sent again": a delivered resend ends the event's own delivery
  // still retrying (an outside probe saw the scheduled retry deliver it a second time).
  if (Option.exists(after, (d) => d.status === "delivered")) {
    yield* (yield* OutboxRepository).endPending(event.id, yield* Clock.currentTimeMillis)
  }
  const result: { readonly delivery: Callback.Delivery; readonly attempt: Callback.Attempt | null } = {
    delivery: Option.getOrElse(after, () => delivery),
    attempt: Option.getOrNull(attempt)
  }
  return result
})

/** Resends an event now: one attempt outside the 8 (the event's own delivery keeps its count; a 2xx ends it, see `attemptNow`). */
export const resend = Traced.fn("Events.resend")(function*(principal: Principal, id: string) {
  const event = yield* visible(principal, id)
  const terminal = yield* (yield* TerminalRepository).get(event.terminalId)
  if (Option.isNone(terminal) || terminal.value.callbackUrl === null) {
    return yield* invalid("callback_url", "the terminal has no callback_url to send to")
  }
  // An event of a test clock is resent at the clock's time, holding the clock: an advance waits for
  // the attempt, which it would otherwise send again once past the resend's lease.
  return { event, ...(yield* holding(event.testClockId, attemptNow(event, "resend"))) }
})

/** Events re-queued by one recovery at most. */
export const maxRecovered = 10_000

/**
 * Re-queues every event created since `since` that never got a 2xx and whose latest delivery failed (the
 * events the list shows `failed`): a new delivery with
 * 8 attempts, due now, in the order the events were written (a payment's events go out in order).
 * The events are read and re-queued in one transaction holding the terminals' recovery
 * (`lockRecovery`): a recovery at the same time waits and then finds them no longer failed.
 */
export const recover = Traced.fn("Events.recover")(function*(
  principal: Principal,
  input: { readonly terminalId?: string | undefined; readonly since: number; readonly environment?: ListQuery["environment"] }
) {
  const config = yield* PaydeskConfig
  const now = yield* Clock.currentTimeMillis
  const terminalIds = yield* terminalsOf(principal, input.terminalId)
  const outbox = yield* OutboxRepository
  const ordered = yield* atomic(Effect.gen(function*() {
    yield* outbox.lockRecovery(terminalIds)
    const failed: Array<Callback.OutboxEvent> = []
    let before: { readonly createdAt: number; readonly sequence: number; readonly id: string } | undefined
    while (failed.length < maxRecovered) {
      const page = yield* outbox.pageEvents({
        terminalIds,
        test: testOf(input.environment),
        createdFrom: input.since,
        retainedFrom: now - config.eventRetentionMs,
        deliveryStatus: "failed",
        before,
        limit: 500
      })
      failed.push(...page.map((p) => p.event))
      const last = page.at(-1)
      if (page.length < 500 || last === undefined) break
      before = { createdAt: last.event.createdAt, sequence: last.event.sequence, id: last.event.id }
    }
    // A deleted test clock's events are never sent again (its work stopped; the housekeeping purges them).
    const clockIds = new Set(failed.flatMap((event) => event.testClockId === null ? [] : [event.testClockId]))
    const gone = new Set<string>()
    for (const id of clockIds) if (Option.isNone(yield* (yield* TestClockRepository).get(id))) gone.add(id)
    // Oldest first, each payment's events in their sequence: the worker sends them in this order.
    const ordered = failed
      .filter((event) => event.testClockId === null || !gone.has(event.testClockId))
      .slice(0, maxRecovered)
      .sort((a, b) => a.createdAt - b.createdAt || a.sequence - b.sequence)
    yield* Effect.forEach(ordered, (event) => Outbox.deliver(event, "recover"), { discard: true })
    return ordered
  }))
  // Recovered events of test clocks are due at their clocks' time, with the clocks' work.
  const clocks = new Set(ordered.flatMap((event) => event.testClockId === null ? [] : [event.testClockId]))
  yield* Effect.forEach(clocks, (id) => Effect.flatMap(TestClockRepository, (repo) => repo.markWorkDue(id)), { discard: true })
  return { requeued: ordered.length }
})

/** Sends a `ping` event to the terminal's callback URL now (a test of the endpoint and its signature check). */
export const ping = Traced.fn("Events.ping")(function*(principal: Principal, terminalId: string) {
  const terminal = yield* Access.resolveTerminal(principal, terminalId, "read")
  if (terminal.callbackUrl === null) return yield* invalid("callback_url", "the terminal has no callback_url to send to")
  const now = yield* Clock.currentTimeMillis
  const event = yield* atomic(Outbox.write({
    terminal,
    eventType: "ping",
    body: JSON.stringify({ event_type: "ping", terminal_id: terminal.id, sent_at: formatIso(now), test: false }),
    test: false,
    paymentId: null,
    payoutId: null
  }))
  return { event, ...(yield* attemptNow(event, "scheduled")) }
})

/** The health of a terminal's callback endpoint, from its attempt log. */
export const health = Traced.fn("Events.health")(function*(terminalId: string) {
  const facts = yield* (yield* OutboxRepository).attemptFacts(terminalId)
  const last = facts.last
  const status: Callback.EndpointHealth["status"] = last === null ? "unknown" : last.error === null ? "healthy" : "failing"
  const result: Callback.EndpointHealth = {
    status,
    lastAttemptAt: last?.at ?? null,
    lastError: status === "failing" ? last!.error : null,
    failingSince: status === "failing" ? facts.firstFailureAfterSuccess : null
  }
  return result
})
