/**
 * Use cases of one-off payments: create, read, list, stats and CSV export for merchants;
 * the payer page's sandbox simulation; the acquirer's confirmations (including the late
 * payment); expiry of unpaid payments; operator refunds and chargebacks.
 *
 * Each state change runs in one transaction together with its ledger entries and outbox events.
 */
import { Clock, Effect, Option, Result } from "effect"
import * as Access from "../Access.js"
import type { Principal } from "../Access.js"
import { formatRate, formatRub, formatUsdt, parseRub } from "../Amount.js"
import { characterCount, hasControlCharacter, hasLoneSurrogate, hasLoneSurrogateEscape, unicodeOnly, withoutLoneSurrogates } from "../Bytes.js"
import { PaydeskConfig } from "../Config.js"
import { CsrfRejected, InvalidRequest, InvalidTransition, NotFound, OperationNotAllowed, OrderIdConflict, TerminalUnavailable } from "../Errors.js"
import * as Idempotency from "../Idempotency.js"
import { fingerprint } from "../Idempotency.js"
import { isUuid, parsePaymentId } from "../Id.js"
import { DAY_MS } from "../Instant.js"
import * as Paging from "../Paging.js"
import * as Payment from "../Payment.js"
import { timingSafeEqual } from "../Signature.js"
import * as StateMachine from "../StateMachine.js"
import type { Subscription } from "../Subscription.js"
import type { Terminal } from "../Terminal.js"
import { Acquirer } from "../ports/Acquirer.js"
import { Entropy } from "../ports/Entropy.js"
import { IdempotencyStore } from "../ports/IdempotencyStore.js"
import { PaymentRepository, type PaymentFilter } from "../ports/PaymentRepository.js"
import { TerminalRepository } from "../ports/TerminalRepository.js"
import { TestClockRepository } from "../ports/TestClockRepository.js"
import * as TestClock from "../TestClock.js"
import { atomic, handOff, wakeups } from "./Atomic.js"
import * as Outbox from "./Outbox.js"
import * as Settlement from "./Settlement.js"
import * as Lifecycle from "./SubscriptionLifecycle.js"
import { forObject } from "./TestClockScope.js"
import * as Traced from "../Traced.js"

/** Largest accepted payment amount in kopecks (1 000 000.00 RUB, the bank-transfer limit). */
export const maxAmount = 100_000_000n
/** Longest `order_id` (characters). */
export const maxOrderIdLength = 128
/** Longest `description` (characters). */
export const maxDescriptionLength = 512
/** Largest `metadata` (bytes of JSON). */
export const maxMetadataBytes = 4096

/** Payment methods accepted for live payments. */
export const paymentMethods = ["sbp"] as const
/** The method sandbox payments are forced to. */
export const sandboxMethod = "sbp_test"

/** A payment creation request, as decoded from JSON. */
export interface CreateInput {
  readonly terminalId?: string | null | undefined
  readonly amount: string
  readonly currency?: string | null | undefined
  readonly orderId: string
  readonly description?: string | null | undefined
  readonly paymentMethod?: string | null | undefined
  readonly metadata?: Readonly<Record<string, unknown>> | null | undefined
  readonly test?: boolean | null | undefined
  /** The `Idempotency-Key` header, beside the natural key `order_id` (Stripe's semantics, docs/decisions.md). */
  readonly idempotencyKey?: string | null | undefined
  /** A test clock of the terminal to attach the (sandbox) payment to. */
  readonly testClock?: string | null | undefined
}

const invalid = (field: string, message: string) => new InvalidRequest({ field, message })

/** The message of a field holding a surrogate without its other half (docs/decisions.md "Lone surrogates"). */
export { unicodeOnly }

/** Deepest nesting of `metadata` (the object itself is level 1). */
export const maxMetadataDepth = 8

/** Nesting depth of objects and arrays in a value, counted iteratively (no stack to overflow); stops past `maxMetadataDepth`. */
const depthOf = (value: unknown): number => {
  let deepest = 0
  const pending: Array<readonly [unknown, number]> = [[value, 1]]
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!
    if (typeof item !== "object" || item === null) continue
    deepest = Math.max(deepest, depth)
    if (deepest > maxMetadataDepth) return deepest
    for (const child of Object.values(item)) pending.push([child, depth + 1])
  }
  return deepest
}

/**
 * The first number in `value` JSON cannot carry to the merchant's code as sent: an integer beyond
 * 2^53 - 1 (`12345678901234567890` would come back as `12345678901234567000`: "inexact"), or one
 * beyond the largest double (`1e400` parses as Infinity, which JSON writes as `null`: "infinite").
 * Walked after the depth check, so without recursion limits to mind.
 */
const unfaithfulNumber = (value: unknown): "inexact" | "infinite" | null => {
  const pending: Array<unknown> = [value]
  while (pending.length > 0) {
    const item = pending.pop()
    if (typeof item === "number") {
      if (!Number.isFinite(item)) return "infinite"
      if (Number.isInteger(item) && !Number.isSafeInteger(item)) return "inexact"
    }
    if (typeof item === "object" && item !== null) pending.push(...Object.values(item))
  }
  return null
}

const validate = Effect.fnUntraced(function*(input: CreateInput) {
  const amount = parseRub(input.amount)
  if (Result.isFailure(amount)) return yield* amount.failure
  if (amount.success > maxAmount) return yield* invalid("amount", `amount must not exceed ${formatRub(maxAmount)}`)
  const currency = input.currency ?? "RUB"
  if (currency !== "RUB") return yield* invalid("payment_currency", "payment_currency must be RUB")
  const orderId = input.orderId
  if (orderId.length === 0) return yield* invalid("order_id", "order_id is required")
  if (characterCount(orderId) > maxOrderIdLength || hasControlCharacter(orderId)) {
    return yield* invalid("order_id", `order_id must be at most ${maxOrderIdLength} characters without control characters`)
  }
  // The payment's key: stored as sent, or refused (a store would write the lone half as U+FFFD).
  if (hasLoneSurrogate(orderId)) return yield* invalid("order_id", unicodeOnly("order_id"))
  // Free text: a lone surrogate becomes U+FFFD here, as a store would write it, so the answer,
  // the stored payment and later reads say the same (same length in UTF-16 units).
  const description = input.description === undefined || input.description === null ? null : withoutLoneSurrogates(input.description)
  if (description !== null && characterCount(description) > maxDescriptionLength) {
    return yield* invalid("description", `description must be at most ${maxDescriptionLength} characters`)
  }
  const metadata = input.metadata ?? null
  // Depth first (counted without recursion): deeper values are refused before anything walks them.
  if (metadata !== null && depthOf(metadata) > maxMetadataDepth) {
    return yield* invalid("metadata", `metadata must be nested at most ${maxMetadataDepth} levels deep`)
  }
  // Refused rather than stored changed (a conformance probe got 12345678901234567890 back as ...7000).
  const unfaithful = metadata === null ? null : unfaithfulNumber(metadata)
  if (unfaithful === "inexact") {
    return yield* invalid("metadata", "metadata integers must be within ±9007199254740991 (2^53 - 1), which JSON carries exactly; send larger ones as strings")
  }
  // An outside probe's `1e400` was stored, answered and sent in callbacks as null.
  if (unfaithful === "infinite") {
    return yield* invalid("metadata", "metadata numbers must be within ±1.7976931348623157e308, the largest JSON numbers carry; send larger ones as strings")
  }
  const metadataJson = metadata === null ? null : JSON.stringify(metadata)
  if (metadataJson !== null && new TextEncoder().encode(metadataJson).length > maxMetadataBytes) {
    return yield* invalid("metadata", `metadata must be at most ${maxMetadataBytes} bytes of JSON`)
  }
  // Text no JSON store keeps (PostgreSQL's jsonb refuses it).
  if (metadataJson !== null && hasLoneSurrogateEscape(metadataJson)) {
    return yield* invalid("metadata", unicodeOnly("metadata"))
  }
  const sandbox = input.test === true
  const method = input.paymentMethod ?? "sbp"
  if (!sandbox && !(paymentMethods as ReadonlyArray<string>).includes(method)) {
    return yield* invalid("payment_method", `payment_method must be one of: ${paymentMethods.join(", ")}`)
  }
  const testClock = input.testClock ?? null
  if (testClock !== null && !sandbox) return yield* invalid("test_clock", testClockSandboxOnly)
  return {
    amount: amount.success,
    orderId,
    description,
    metadata,
    environment: (sandbox ? "sandbox" : "prod") as Payment.Environment,
    paymentMethod: sandbox ? sandboxMethod : method,
    // Only when set, so the fingerprints of payments on no clock stay as they were.
    ...(testClock === null ? {} : { testClock: testClock.toLowerCase() })
  }
})

/** The message when a test clock is given without sandbox mode. */
export const testClockSandboxOnly = "test_clock is accepted only for sandbox objects (test: true or X-Test-Mode: true)"

/** The test clock of `terminalId` named `id` (a 400 naming `test_clock` when there is none). */
export const testClockOf = Traced.fn("Payments.testClockOf")(function*(terminalId: string, id: string) {
  const found = isUuid(id) ? yield* (yield* TestClockRepository).get(id.toLowerCase()) : Option.none<TestClock.TestClock>()
  if (Option.isNone(found) || found.value.terminalId !== terminalId) {
    return yield* invalid("test_clock", "test_clock: no test clock with this id on the terminal")
  }
  return found.value
})

/**
 * Stores a new payment with its first event (`payment.created` of an unpaid one, `payment.paid` of a
 * recurring charge booked paid) and that event's delivery in one write, in the caller's transaction
 * if there is one, else atomically on its own; then its expiry (if it has one) and delivery wakeups
 * (after the caller's commit, or at once), or the delivery's hand-off to the engine in this process
 * (`Outbox.prepareFirst`). A taken `order_id` is a `WriteConflict` and stores nothing.
 */
export const insertNew = Effect.fnUntraced(function*(
  terminal: Terminal,
  payment: Payment.Payment,
  eventType: Payment.CallbackEventType = "payment.created"
) {
  const { event, delivery, handed } = yield* Outbox.prepareFirst(Outbox.paymentEvent(terminal, payment, eventType, 1))
  yield* (yield* PaymentRepository).insertCreated(payment, event, delivery)
  // A delivery handed off is sent by the engine after the commit; any other wakes a pass.
  if (handed !== undefined) yield* handOff(handed)
  yield* wakeups([
    ...(payment.expiresAt === null ? [] : [{ kind: "expiry", paymentId: payment.id, at: payment.expiresAt } as const]),
    ...(delivery === undefined || handed !== undefined ? [] : [{ kind: "delivery", deliveryId: delivery.id, at: delivery.createdAt } as const])
  ])
})

/**
 * The first of a subscription's order ids for its first payment or a cycle's charge
 * (`Payment.recurringOrderId`) that no payment of its terminal and environment has: a merchant may
 * have given one to a payment of its own (an outside probe's payment named `sub-<id>-c1` made the
 * charge of cycle 1 fail to be booked for ever, its money taken), and a payer may confirm again
 * after a first payment expired. One taken meanwhile fails the insert (`WriteConflict`); the
 * caller's next try takes the next.
 */
export const freeRecurringOrderNumber = Effect.fnUntraced(function*(
  sub: { readonly id: string; readonly terminalId: string; readonly environment: Payment.Environment },
  cycle: "first" | number
) {
  const payments = yield* PaymentRepository
  let number = 1
  while (Option.isSome(yield* payments.findByOrderId(sub.terminalId, sub.environment, Payment.recurringOrderId(sub.id, cycle, number)))) number++
  return number
})

const noPayment = Effect.succeed(Option.none<Payment.Payment>())

/** Creates a payment; a repeated `order_id` with the same parameters returns the first one. */
export const create = Traced.fn("Payments.create")(function*(principal: Principal, input: CreateInput) {
  // Whether the terminal takes new payments is checked after the replays (below): a retry of a payment
  // made just before the terminal was disabled gets that payment, not a refusal that reads as "not made".
  const terminal = yield* Access.resolveTerminal(principal, input.terminalId, "read")
  const request = yield* validate(input)
  const key = input.idempotencyKey ?? null
  if (key !== null) {
    const valid = Idempotency.validateKey(key)
    if (Result.isFailure(valid)) return yield* valid.failure
  }
  // The request as sent: its description before the lone-surrogate replacement (`validate`), so a
  // retry (the same text again) replays, also for payments stored before that replacement.
  const print = yield* fingerprint({ ...request, description: input.description ?? null, amount: request.amount.toString() })
  const payments = yield* PaymentRepository
  const store = yield* IdempotencyStore
  // A plain function: an `Effect.fnUntraced` made per creation defined a property on a new function
  // each time (0.7 % of the server's samples in a CPU profile of bench:http's phase 1).
  const keyed = () => key === null ? noPayment : Effect.gen(function*() {
    const decision = Idempotency.decide(yield* Idempotency.findMoneyKey(terminal.id, "payment", key), print)
    if (Result.isFailure(decision)) return yield* decision.failure
    return decision.success._tag === "Replay" ? yield* payments.get(decision.success.resourceId) : Option.none<Payment.Payment>()
  })
  /** Binds the key (if any) to the payment this request answers with. */
  const remember = (payment: Payment.Payment) =>
    // Wall time, also for a payment on a test clock: the key's 24 h are real ones.
    key === null ? Effect.void : Effect.flatMap(TestClock.wallTime, (now) =>
      store.insert({ terminalId: terminal.id, scope: "payment", key, fingerprint: print, resourceId: payment.id, createdAt: now }))
  const replay = (existing: Payment.Payment) =>
    existing.fingerprint === print
      ? Effect.succeed({ payment: existing, created: false })
      : Effect.fail(OrderIdConflict.of())
  const keyedEarly = yield* keyed()
  if (Option.isSome(keyedEarly)) return { payment: keyedEarly.value, created: false }
  // A live payment is registered with the acquirer before the transaction: a repeated order_id is
  // answered first, so a replay never registers another. So is one on a test clock (a replay must
  // not wait for the clock or meet its checks). A sandbox payment on no clock calls no one: its
  // replay is found by the unique order_id rule in the transaction below.
  // (On a disabled terminal a sandbox payment's replay is looked for here too, before the refusal.)
  const active = terminal.status === "active"
  const early = request.environment === "sandbox" && request.testClock === undefined && active
    ? Option.none<Payment.Payment>()
    : yield* payments.findByOrderId(terminal.id, request.environment, request.orderId)
  if (Option.isSome(early)) {
    const answer = yield* replay(early.value)
    yield* atomic(Effect.gen(function*() {
      if (Option.isNone(yield* keyed())) yield* remember(answer.payment)
    }))
    return answer
  }
  if (!active) return yield* TerminalUnavailable.of()

  const clock = request.testClock === undefined ? null : yield* testClockOf(terminal.id, request.testClock)
  const entropy = yield* Entropy
  const config = yield* PaydeskConfig
  const id = yield* entropy.uuid
  const qrPayload = request.environment === "sandbox"
    ? `sandbox-qr:${id}`
    : (yield* (yield* Acquirer).createPayment({
      paymentId: id,
      terminalId: terminal.id,
      amount: request.amount,
      description: request.description
    })).qrPayload
  const payToken = yield* entropy.token(24)
  const csrfToken = yield* entropy.token(24)

  const newPayment = (now: number): Payment.Payment => ({
    id,
    terminalId: terminal.id,
    orderId: request.orderId,
    amount: request.amount,
    currency: "RUB",
    description: request.description,
    metadata: request.metadata,
    paymentMethod: request.paymentMethod,
    environment: request.environment,
    testClockId: clock?.id ?? null,
    status: "created",
    payToken,
    csrfToken,
    subscriptionId: null,
    fingerprint: print,
    qrPayload,
    expiresAt: now + config.paymentLifetimeMs,
    createdAt: now,
    updatedAt: now,
    paidAt: null,
    settlement: null,
    version: 1
  })

  // The first attempt inserts at once (the order_id was free a moment ago); when a concurrent
  // request took it meanwhile, the insert is a WriteConflict and the retry finds that payment and
  // answers it as a replay.
  let attempt = 0
  if (key === null && clock === null) {
    // Nothing else to write with it: the payment, its event and delivery are one write of their own,
    // which the store may commit together with concurrent creations (each answered after its commit).
    attempt++
    const payment = newPayment(yield* Clock.currentTimeMillis)
    const stored = yield* insertNew(terminal, payment).pipe(
      Effect.as(true),
      Effect.catchTag("WriteConflict", () => Effect.succeed(false))
    )
    if (stored) return { payment, created: true }
  }
  // A payment on a test clock is created at the clock's time.
  return yield* forObject(clock?.id ?? null, atomic(Effect.gen(function*() {
    attempt++
    const keyedNow = yield* keyed()
    if (Option.isSome(keyedNow)) return { payment: keyedNow.value, created: false }
    const existing = attempt === 1
      ? Option.none<Payment.Payment>()
      : yield* payments.findByOrderId(terminal.id, request.environment, request.orderId)
    if (Option.isSome(existing)) {
      const answer = yield* replay(existing.value)
      yield* remember(answer.payment)
      return answer
    }
    const payment = newPayment(yield* Clock.currentTimeMillis)
    yield* insertNew(terminal, payment)
    yield* remember(payment)
    return { payment, created: true }
  })))
})

/** Loads a payment the principal may see; `pay_<uuid>` or a bare UUID. */
export const get = Traced.fn("Payments.get")(function*(principal: Principal, paymentId: string) {
  const id = parsePaymentId(paymentId)
  if (Option.isNone(id)) return yield* NotFound.of("payment")
  const found = yield* (yield* PaymentRepository).get(id.value)
  if (Option.isNone(found) || !(yield* Access.canSee(principal, found.value.terminalId))) {
    return yield* NotFound.of("payment")
  }
  return found.value
})

/** What an `order_id` to look up or filter by must be, for messages (the HTTP schemas say the same). */
export const orderIdQueryExpected = "a non-empty string"

/** The 400 of an empty `order_id` to look up or filter by: no payment has one, so it is a client's bug, not a search. */
const emptyOrderId = () => invalid("order_id", `order_id must be ${orderIdQueryExpected}`)

/** Loads the principal's payment of an `order_id` (live unless `environment` is `sandbox`). */
export const getByOrderId = Traced.fn("Payments.getByOrderId")(function*(
  principal: Principal,
  input: { readonly orderId: string; readonly terminalId?: string | null | undefined; readonly environment?: Payment.Environment | null | undefined }
) {
  const terminal = yield* Access.resolveTerminal(principal, input.terminalId, "read")
  if (input.orderId === "") return yield* emptyOrderId()
  const found = yield* (yield* PaymentRepository).findByOrderId(terminal.id, input.environment ?? "prod", input.orderId)
  if (Option.isNone(found)) return yield* NotFound.of("payment")
  return found.value
})

/** Query of listings, stats and exports (`createdFrom` inclusive, `createdTo` exclusive, epoch ms). */
export interface ListQuery extends Paging.Request {
  readonly terminalId?: string | null | undefined
  readonly environment?: "sandbox" | "all" | "prod" | null | undefined
  readonly recurring?: boolean | null | undefined
  readonly status?: Payment.Status | null | undefined
  readonly orderId?: string | null | undefined
  readonly createdFrom?: number | null | undefined
  readonly createdTo?: number | null | undefined
}

/** Payments per page of the list. */
export const pageSize = 50
/** Rows of one CSV export at most. */
export const exportLimit = 10_000

const filterOf = Traced.fn("Payments.filterOf")(function*(principal: Principal, query: ListQuery) {
  const terminal = yield* Access.resolveTerminal(principal, query.terminalId, "read")
  if (query.orderId === "") return yield* emptyOrderId()
  const from = query.createdFrom ?? undefined
  const to = query.createdTo ?? undefined
  if (from !== undefined && to !== undefined && to <= from) {
    return yield* new InvalidRequest({ field: "created_to", message: "created_to must be later than created_from" })
  }
  const filter: PaymentFilter = {
    terminalId: terminal.id,
    environment: query.environment ?? "prod",
    recurring: query.recurring ?? null,
    status: query.status ?? undefined,
    orderId: query.orderId ?? undefined,
    createdFrom: from,
    createdBefore: to
  }
  return filter
})

/** Lists payments, newest first, 50 per page (`page` from 1), or `limit` from a `cursor`. */
export const list = Traced.fn("Payments.list")(function*(principal: Principal, query: ListQuery) {
  const filter = yield* filterOf(principal, query)
  const window = yield* Paging.resolve(query, pageSize)
  const result = yield* (yield* PaymentRepository).list(filter, Paging.read(window))
  const { items, nextCursor } = Paging.answer(window, result.items)
  return { items, total: result.total, page: window.page, pageSize: window.limit, nextCursor, filter }
})

/** Counts and sums per status under the filter. */
export const stats = Traced.fn("Payments.stats")(function*(principal: Principal, query: ListQuery) {
  const filter = yield* filterOf(principal, query)
  const rows = yield* (yield* PaymentRepository).stats(filter)
  return { filter, rows }
})

/** Days one daily statistics request may span at most. */
export const maxDailyRangeDays = 366

/** Whether `name` is an IANA time zone this runtime knows (`Europe/Moscow`, `UTC`). */
export const isTimeZone = (name: string): boolean => {
  if (name.length === 0 || name.length > 64 || !/^[A-Za-z0-9_+\-/]+$/.test(name)) return false
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name })
    return true
  } catch {
    return false
  }
}

/**
 * Counts and sums per status and calendar day (in `timeZone`) of the payments created in
 * `[createdFrom, createdTo)`, which both must be given and span at most `maxDailyRangeDays`.
 * Days without payments are left out.
 */
export const dailyStats = Traced.fn("Payments.dailyStats")(function*(principal: Principal, query: ListQuery, timeZone: string) {
  if (query.createdFrom === undefined || query.createdFrom === null) {
    return yield* new InvalidRequest({ field: "created_from", message: "created_from is required" })
  }
  if (query.createdTo === undefined || query.createdTo === null) {
    return yield* new InvalidRequest({ field: "created_to", message: "created_to is required" })
  }
  if (query.createdTo - query.createdFrom > maxDailyRangeDays * DAY_MS) {
    return yield* new InvalidRequest({ field: "created_to", message: `created_from to created_to must span at most ${maxDailyRangeDays} days` })
  }
  const unknownZone = new InvalidRequest({ field: "time_zone", message: "time_zone must be an IANA time zone such as Europe/Moscow or UTC" })
  if (!isTimeZone(timeZone)) return yield* unknownZone
  const filter = yield* filterOf(principal, query)
  // The runtime's zone table and the database's can differ (a zone new to one of them).
  const rows = yield* (yield* PaymentRepository).daily(filter, timeZone).pipe(Effect.catchTag("UnknownTimeZone", () => Effect.fail(unknownZone)))
  return { filter, timeZone, rows }
})

/** One CSV cell: quoted when needed; text starting like a spreadsheet formula is prefixed with `'`. */
const csvCell = (value: string): string => {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll("\"", "\"\"")}"` : safe
}

/** The CSV export columns. */
export const csvColumns = [
  "payment_id",
  "order_id",
  "created_at",
  "status",
  "amount",
  "currency",
  "environment",
  "recurring",
  "subscription_id",
  "payment_method",
  "paid_at",
  "description",
  // The settlement (a live paid payment's credit; empty for others), after the first columns so a
  // reader of those by position is not moved.
  "merchant_amount_rub",
  "amount_usdt",
  "rate",
  "converted_at"
] as const

/** One payment's CSV row, in `csvColumns`' order. */
const csvRow = (p: Payment.Payment, formatTime: (ms: number) => string): string =>
  [
    `pay_${p.id}`,
    p.orderId,
    formatTime(p.createdAt),
    p.status,
    formatRub(p.amount),
    p.currency,
    p.environment,
    p.subscriptionId === null ? "false" : "true",
    p.subscriptionId ?? "",
    p.paymentMethod,
    p.paidAt === null ? "" : formatTime(p.paidAt),
    p.description ?? "",
    p.settlement === null ? "" : formatRub(p.settlement.merchantAmount),
    p.settlement?.usdt == null ? "" : formatUsdt(p.settlement.usdt),
    p.settlement?.rate == null ? "" : formatRate(p.settlement.rate),
    p.settlement?.convertedAt == null ? "" : formatTime(p.settlement.convertedAt)
  ].map(csvCell).join(",")

/** Payments an export reads at once: it holds one such page and the CSV lines made so far. */
export const exportPageSize = 1_000

/**
 * The 400 of a list's paging (`page`, `limit`, `cursor`) on an export: an export is every payment
 * the filters select (up to `exportLimit`), never a page of them, so a paging parameter is refused
 * rather than ignored (docs/decisions.md "CSV export and paging").
 */
export const exportPagingRefused = (field: "page" | "limit" | "cursor") =>
  invalid(
    field,
    `${field} is not accepted by a CSV export (format=csv): an export holds every payment the filters select, newest first, ` +
      `at most ${exportLimit} rows; narrow it with created_from and created_to`
  )

/**
 * The export's own check of its query (the list's paging refused), which `exportCsv` makes first;
 * a host that limits concurrent exports can make it before waiting for its turn.
 */
export const checkExportQuery = (query: ListQuery): Effect.Effect<void, InvalidRequest> => {
  for (const field of ["page", "limit", "cursor"] as const) {
    if (query[field] !== undefined && query[field] !== null) return Effect.fail(exportPagingRefused(field))
  }
  return Effect.void
}

/**
 * Every check an export makes before it reads: the list's paging refused (`checkExportQuery`), the
 * terminal the principal may read, and the filters. A host that limits concurrent exports makes it
 * before waiting for its turn, so a refused export is answered at once; `exportCsv` makes it again.
 */
export const checkExport = Traced.fn("Payments.checkExport")(function*(principal: Principal, query: ListQuery) {
  yield* checkExportQuery(query)
  yield* filterOf(principal, query)
})

/**
 * Exports the filtered payments as CSV (newest first, at most `exportLimit` rows), read in pages of
 * `exportPageSize` from a keyset cursor, so that an export holds one page of payments at a time
 * rather than all of them. None is listed twice or left out; a payment created during the export at
 * the current time is newer than its first page and is not in it (one on a test clock carries the
 * clock's time, and may be). Each row shows the payment as its page read it. The list's paging
 * (`page`, `limit`, `cursor`) is refused (`exportPagingRefused`).
 */
export const exportCsv = Traced.fn("Payments.exportCsv")(function*(
  principal: Principal,
  query: ListQuery,
  formatTime: (ms: number) => string
) {
  yield* checkExportQuery(query)
  const filter = yield* filterOf(principal, query)
  const repository = yield* PaymentRepository
  const rows: Array<string> = []
  let after: Payment.Payment | null = null
  while (rows.length < exportLimit) {
    const page: ReadonlyArray<Payment.Payment> = yield* repository.listAfter(filter, after, Math.min(exportPageSize, exportLimit - rows.length))
    for (const p of page) rows.push(csvRow(p, formatTime))
    if (page.length < exportPageSize) break
    after = page[page.length - 1]!
  }
  return [csvColumns.join(","), ...rows].join("\r\n") + "\r\n"
})

/** The payment and terminal behind a public page token. */
export const findPublic = Traced.fn("Payments.findPublic")(function*(token: string) {
  const found = yield* (yield* PaymentRepository).findByPayToken(token)
  if (Option.isNone(found)) return yield* NotFound.of("payment")
  const terminal = yield* (yield* TerminalRepository).get(found.value.terminalId)
  if (Option.isNone(terminal)) return yield* NotFound.of("payment")
  return { payment: found.value, terminal: terminal.value }
})

/** Applies events in order to a locked payment, writing it, its money movements and its callbacks. */
const applyEvents = Traced.fn("Payments.apply")(function*(payment: Payment.Payment, events: ReadonlyArray<Payment.Event>) {
  // Live money is credited by the terminal's conversion mode, held until the commit: a switch to
  // instant waits for this credit (and sees it pending) or this credit waits for it (and reads the
  // new mode). A plain read let roubles credited in scheduled mode land after a switch to instant
  // that found nothing pending: they were never converted (found by an outside probe).
  const credits = payment.environment === "prod" && payment.status !== "paid" && events.some((e) => e === "confirm" || e === "late_payment")
  const terminals = yield* TerminalRepository
  const terminal = yield* (credits ? terminals.getForCredit(payment.terminalId) : terminals.get(payment.terminalId))
  if (Option.isNone(terminal)) return yield* NotFound.of("terminal")
  const now = yield* Clock.currentTimeMillis
  let next = payment
  const emitted: Array<Payment.CallbackEventType> = []
  for (const event of events) {
    const edge = StateMachine.transition(Payment.machine, next.status, event)
    if (Result.isFailure(edge)) return yield* edge.failure
    next = { ...next, status: edge.success.to, updatedAt: now }
    emitted.push(...edge.success.emits)
  }
  if (next.status === "paid" && payment.status !== "paid") {
    next = { ...next, paidAt: now }
    if (next.environment === "prod") {
      const merchantAmount = next.subscriptionId === null
        ? next.amount
        : yield* Lifecycle.merchantAmountOf(next.subscriptionId)
      next = { ...next, settlement: yield* Settlement.credit(terminal.value, next, merchantAmount) }
    }
  }
  if (next.status === "refunded" || next.status === "chargeback") {
    yield* Settlement.reverse(next, next.status === "refunded" ? "refund" : "chargeback")
  }
  next = { ...next, version: payment.version + 1 }
  yield* (yield* PaymentRepository).update(next)
  yield* Outbox.paymentEvents(terminal.value, next, emitted)
  const superseded = next.subscriptionId !== null && payment.status !== next.status ? yield* Lifecycle.onFirstPayment(next) : null
  return { next, superseded }
})

/**
 * Applies `events` to a locked payment: its status, settlement, callbacks and subscription. A later
 * first payment of the subscription that this one (paid late) replaced ends too, if still unpaid
 * (it expires: its page says so, the merchant gets `payment.expired`), so the payer pays once.
 */
const apply = (payment: Payment.Payment, events: ReadonlyArray<Payment.Event>) =>
  Effect.flatMap(applyEvents(payment, events), ({ next, superseded }) =>
    superseded === null ? Effect.succeed(next) : Effect.flatMap(lockedPayment(superseded), (other) =>
      other.status === "created" ? Effect.as(applyEvents(other, ["expire"]), next) : Effect.succeed(next)))

const lockedPayment = Traced.fn("Payments.lockedPayment")(function*(id: string) {
  const found = yield* (yield* PaymentRepository).getForUpdate(id)
  if (Option.isNone(found)) return yield* NotFound.of("payment")
  return found.value
})

/** Events that bring a payment from its status to paid (empty when already paid). */
const toPaid = (status: Payment.Status): ReadonlyArray<Payment.Event> | null =>
  status === "created"
    ? ["start_processing", "confirm"]
    : status === "processing"
    ? ["confirm"]
    : status === "expired"
    ? ["late_payment"]
    : status === "paid"
    ? []
    : null

/** Events that bring a payment to processing (empty when already processing). */
const toProcessing = (status: Payment.Status): ReadonlyArray<Payment.Event> | null =>
  status === "created" ? ["start_processing"] : status === "processing" ? [] : null

/** What the acquirer (or the sandbox) reports for a payment: the payer started paying, paid, or failed. */
export type Outcome = "processing" | "paid" | "failed"

/** The events of an outcome from a status; null when the outcome cannot apply (a state conflict). */
const eventsFor = (status: Payment.Status, outcome: Outcome): ReadonlyArray<Payment.Event> | null =>
  outcome === "paid" ? toPaid(status) : outcome === "failed" ? toCanceled(status) : toProcessing(status)

/** Events that bring an open payment to canceled (empty when already canceled). */
const toCanceled = (status: Payment.Status): ReadonlyArray<Payment.Event> | null =>
  status === "created" ? ["start_processing", "cancel"] : status === "processing" ? ["cancel"] : status === "canceled" ? [] : null

const settleWith = Traced.fn("Payments.settleWith")(function*(payment: Payment.Payment, outcome: Outcome) {
  const events = eventsFor(payment.status, outcome)
  if (events === null) {
    const event = outcome === "paid" ? "confirm" : outcome === "failed" ? "cancel" : "start_processing"
    const edge = StateMachine.transition(Payment.machine, payment.status, event)
    // Named by the outcome asked for, not the state machine's event ("does not accept cancel" for a `failed`).
    const becomes = outcome === "paid" ? "paid" : outcome === "failed" ? "canceled" : "processing"
    if (Result.isFailure(edge)) return yield* new InvalidTransition({ ...edge.failure, message: `payment in state ${payment.status} cannot become ${becomes} (outcome ${outcome})` })
  }
  if (events === null || events.length === 0) return payment
  return yield* apply(payment, events)
})

/**
 * Sandbox simulation from the payer page, with the page's csrf_token: `paid` or `failed` (the
 * payment passes through `processing` on the way, as a live one does), or `processing` alone
 * (the payer started paying), which a later `paid` or `failed` completes.
 */
export const simulate = Traced.fn("Payments.simulate")(function*(
  token: string,
  input: { readonly outcome: string; readonly csrfToken: string }
) {
  const { payment } = yield* findPublic(token)
  // The page's token first: a caller without it learns nothing about the payment.
  if (!timingSafeEqual(input.csrfToken, payment.csrfToken)) return yield* CsrfRejected.of()
  yield* sandboxOnly(payment)
  return yield* simulateLocked(payment, input.outcome, "payer")
})

/** What a sandbox simulation may ask for. */
export const simulationOutcomes = ["paid", "failed", "processing"] as const

/**
 * The payer pays only an open payment: an expired one's page (a tab left open, a stopped
 * subscription's first payment) no longer takes `paid`. Late money after expiry is the acquirer's
 * (the merchant simulates it with `POST /payments/{id}/simulate`).
 */
const simulateLocked = (payment: Payment.Payment, outcome: string, by: "payer" | "merchant" = "merchant") =>
  Effect.gen(function*() {
    if (!(simulationOutcomes as ReadonlyArray<string>).includes(outcome)) {
      return yield* invalid("outcome", `outcome must be one of: ${simulationOutcomes.join(", ")}`)
    }
    // On a test clock the payment moves at the clock's time.
    return yield* forObject(payment.testClockId, atomic(Effect.gen(function*() {
      const locked = yield* lockedPayment(payment.id)
      // Expired (then `paid` only: the other outcomes are no move from it), or open past its lifetime
      // and not yet expired by the sweep (then any outcome: `processing` then `paid` paid it, a review).
      const now = yield* Clock.currentTimeMillis
      const pastLifetime = (locked.status === "expired" && outcome === "paid") ||
        (Payment.isOpen(locked.status) && locked.expiresAt !== null && locked.expiresAt <= now)
      if (by === "payer" && pastLifetime) {
        return yield* new InvalidTransition({
          entity: "payment",
          from: locked.status,
          event: outcome === "paid" ? "confirm" : outcome === "failed" ? "cancel" : "start_processing",
          message: "the payment expired before it was paid: the payer page can no longer change it"
        })
      }
      return yield* settleWith(locked, outcome as Outcome)
    })))
  })

/** 400 for a live payment: simulation is a sandbox tool. */
const sandboxOnly = (payment: Payment.Payment) =>
  payment.environment === "sandbox"
    ? Effect.void
    : Effect.fail(new OperationNotAllowed({ message: "simulation is available only for sandbox payments" }))

/**
 * Sandbox simulation by the merchant (API key or dashboard token), without the payer page:
 * the same outcomes and moves as `simulate`, for payments the principal may see.
 */
export const simulateAsMerchant = Traced.fn("Payments.simulateAsMerchant")(function*(
  principal: Principal,
  paymentId: string,
  outcome: string
) {
  const payment = yield* get(principal, paymentId)
  yield* Access.resolveTerminal(principal, payment.terminalId, "write")
  yield* sandboxOnly(payment)
  return yield* simulateLocked(payment, outcome)
})

/**
 * The acquirer's report on a live payment: the payer started paying (`processing`), paid (also
 * late, after expiry) or failed. Idempotent.
 */
export const settle = Traced.fn("Payments.settle")(function*(paymentId: string, outcome: Outcome) {
  const id = parsePaymentId(paymentId)
  if (Option.isNone(id)) return yield* NotFound.of("payment")
  return yield* atomic(Effect.gen(function*() {
    const payment = yield* lockedPayment(id.value)
    if (payment.environment === "sandbox") {
      return yield* new OperationNotAllowed({ message: "sandbox payments are settled by simulation only" })
    }
    return yield* settleWith(payment, outcome)
  }))
})

/**
 * The first payment of a subscription being stopped (or stopped), while still unpaid and not started
 * (`created`), expires: its page says so and the merchant gets `payment.expired`, so the payer is no
 * longer offered a subscription that charges no more (an outside probe paid one after the stop, and
 * its money was booked on the stopped subscription). One the payer is paying (`processing`) goes on:
 * a stop does not cancel an operation already started. Money that arrives for either later is booked
 * as for any first payment paid after its subscription stopped. Idempotent.
 */
export const expireFirstOfStopping = Traced.fn("Payments.expireFirstOfStopping")(function*(sub: Pick<Subscription, "id" | "firstPaymentId" | "billingStatus">) {
  const firstPaymentId = sub.firstPaymentId
  if (firstPaymentId === null || (sub.billingStatus !== "stop_pending" && sub.billingStatus !== "stopped")) return
  yield* atomic(Effect.gen(function*() {
    const payment = yield* lockedPayment(firstPaymentId)
    if (payment.status === "created" && payment.subscriptionId === sub.id) yield* apply(payment, ["expire"])
  }))
})

/** Expires unpaid payments (of the test clock in scope, or of none) whose lifetime has run out; returns how many. Idempotent. */
export const expireDue = Traced.fn("Payments.expireDue")(function*() {
  const config = yield* PaydeskConfig
  const payments = yield* PaymentRepository
  return yield* atomic(Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const due = yield* payments.claimExpired(now, config.batchSize, yield* TestClock.Scope)
    for (const payment of due) yield* apply(payment, ["expire"])
    return due.length
  }))
})

/**
 * An operator's move on a payment. With an `Idempotency-Key` (`options.idempotencyKey`), a repeat of
 * the key for the same move (a retry after a lost answer) answers the payment as it is now, and
 * moves nothing (it was 409 `invalid_transition`, though the first had done it); the key used for
 * another move or payment is 409 `idempotency_conflict` (`Idempotency.operatorMoveReplayed`).
 */
const operatorMove = (event: "refund" | "chargeback") =>
  Traced.fn(`Payments.${event}`)(function*(paymentId: string, options: Idempotency.OperatorMoveOptions = {}) {
    const key = options.idempotencyKey
    yield* Idempotency.validateOptionalKey(key)
    const id = parsePaymentId(paymentId)
    if (Option.isNone(id)) return yield* NotFound.of("payment")
    return yield* atomic(Effect.gen(function*() {
      const payment = yield* lockedPayment(id.value)
      // Under the payment's lock: of two repeats at once, the second finds the first's record.
      const move = { move: event, objectId: payment.id, terminalId: payment.terminalId }
      if (yield* Idempotency.operatorMoveReplayed(key, move)) return payment
      if (payment.environment === "sandbox") {
        return yield* new OperationNotAllowed({
          message: event === "refund" ? "refunds are unavailable for sandbox payments" : "chargebacks are unavailable for sandbox payments"
        })
      }
      const moved = yield* apply(payment, [event])
      yield* Idempotency.recordOperatorMove(key, move)
      return moved
    }))
  })

/** Operator: refunds a paid live payment (`refund_request.completed`, then `payment.refunded`). */
export const refund = operatorMove("refund")
/** Operator: records a chargeback on a paid live payment (`payment.chargeback`). */
export const chargeback = operatorMove("chargeback")
