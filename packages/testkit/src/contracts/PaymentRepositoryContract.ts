/**
 * Contract suite of `PaymentRepository`: round trip of every field, unique order ids and pay
 * tokens, a new payment stored with its event and delivery (`insertCreated`), optimistic updates, listing order, paging, filters and totals, stats, and the claims.
 *
 * Every test works on a fresh terminal (and a fresh subscription for recurring payments), so the
 * suite runs on a shared database; claims are checked on the suite's own rows among whatever else
 * is due.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Exit, Layer, Option } from "effect"
import {
  AccountRepository,
  OutboxRepository,
  PaymentRepository,
  PlanRepository,
  SubscriptionRepository,
  TerminalRepository,
  Transactions
} from "@paydesk/core"
import type { Payment, PaymentFilter, StatusStats } from "@paydesk/core"
import * as Fixtures from "../Fixtures.js"
import { expectWriteConflict, ids, none, only, some } from "./Support.js"

/** What the suite needs. */
export type Requirements =
  | PaymentRepository
  | OutboxRepository
  | AccountRepository
  | TerminalRepository
  | PlanRepository
  | SubscriptionRepository
  | Transactions

const statsOf = (stats: ReadonlyArray<StatusStats>, status: Payment.Status) => {
  const found = stats.filter((s) => s.status === status)
  assert.isAtMost(found.length, 1, `one stats row per status (${status})`)
  return { count: found[0]?.count ?? 0, amount: found[0]?.amount ?? 0n }
}

/** Registers the `PaymentRepository` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`PaymentRepository contract (${name})`, (it) => {
    const setup = Effect.gen(function*() {
      const { terminal } = yield* Fixtures.seedTerminal()
      return { terminal, repo: yield* PaymentRepository }
    })

    it.effect("insert and get round-trip every field", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const subscription = yield* Fixtures.seedSubscription(terminal.id)
        const plain = Fixtures.payment(terminal.id)
        const rich = Fixtures.payment(terminal.id, {
          amount: 9_007_199_254_740_993n,
          description: "Кофе в зёрнах, 1 kg",
          metadata: { cart: 42, tags: ["a", "b"], nested: { ok: true, note: null }, text: "привет" },
          environment: "sandbox",
          status: "paid",
          subscriptionId: subscription.id,
          qrPayload: "https://qr.example/abc",
          expiresAt: null,
          createdAt: Fixtures.baseTime + 1,
          updatedAt: Fixtures.baseTime + 2,
          paidAt: Fixtures.baseTime + 3,
          settlement: { merchantAmount: 95_000n, usdt: 1_000_000n, rate: 95_000_000n, convertedAt: Fixtures.baseTime + 3 },
          version: 7
        })
        const pending = Fixtures.payment(terminal.id, {
          status: "paid",
          settlement: { merchantAmount: 1n, usdt: null, rate: null, convertedAt: null }
        })
        for (const p of [plain, rich, pending]) {
          yield* repo.insert(p)
          assert.deepStrictEqual(some(yield* repo.get(p.id)), p)
          assert.deepStrictEqual(some(yield* repo.getForUpdate(p.id)), p)
          assert.deepStrictEqual(some(yield* repo.findByPayToken(p.payToken)), p)
          assert.deepStrictEqual(some(yield* repo.findByOrderId(p.terminalId, p.environment, p.orderId)), p)
        }
        none(yield* repo.get(Fixtures.uuid()))
        none(yield* repo.findByPayToken(Fixtures.token()))
        none(yield* repo.findByOrderId(terminal.id, "sandbox", plain.orderId))
      }))

    it.effect("order ids are unique per terminal and environment; pay tokens are unique", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const { terminal: other } = yield* Fixtures.seedTerminal()
        const first = yield* Fixtures.seedPayment(terminal.id)
        const sameOrder = Fixtures.payment(terminal.id, { orderId: first.orderId })
        yield* expectWriteConflict(repo.insert(sameOrder))
        none(yield* repo.get(sameOrder.id), "the conflicting payment")
        none(yield* repo.findByPayToken(sameOrder.payToken), "the conflicting payment")
        yield* expectWriteConflict(repo.insert(Fixtures.payment(terminal.id, { payToken: first.payToken })))
        yield* expectWriteConflict(repo.insert(Fixtures.payment(other.id, { payToken: first.payToken })))
        yield* expectWriteConflict(repo.insert({ ...first, orderId: `other-${first.orderId}`, payToken: Fixtures.token() }))
        // The same order id in the other environment or on another terminal is another payment.
        const sandbox = Fixtures.payment(terminal.id, { orderId: first.orderId, environment: "sandbox" })
        yield* repo.insert(sandbox)
        yield* repo.insert(Fixtures.payment(other.id, { orderId: first.orderId }))
        assert.strictEqual(some(yield* repo.findByOrderId(terminal.id, "prod", first.orderId)).id, first.id)
        assert.strictEqual(some(yield* repo.findByOrderId(terminal.id, "sandbox", first.orderId)).id, sandbox.id)
      }))

    it.effect("update stores a record one version above and rejects any other version", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const created = yield* Fixtures.seedPayment(terminal.id)
        const paid: Payment.Payment = {
          ...created,
          status: "paid",
          paidAt: Fixtures.baseTime + 60_000,
          updatedAt: Fixtures.baseTime + 60_000,
          settlement: { merchantAmount: 100_000n, usdt: null, rate: null, convertedAt: null },
          metadata: { updated: true },
          version: created.version + 1
        }
        yield* repo.update(paid)
        assert.deepStrictEqual(some(yield* repo.get(created.id)), paid)
        yield* expectWriteConflict(repo.update({ ...paid, status: "refunded" }))
        yield* expectWriteConflict(repo.update({ ...paid, status: "refunded", version: paid.version + 2 }))
        yield* expectWriteConflict(repo.update({ ...created, status: "expired", version: created.version }))
        assert.deepStrictEqual(some(yield* repo.get(created.id)), paid)
        yield* expectWriteConflict(repo.update(Fixtures.payment(terminal.id, { version: 2 })))
      }))

    it.effect("list is newest first with paging and the total of the filter", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const payments: Array<Payment.Payment> = []
        for (let i = 0; i < 5; i++) {
          payments.push(yield* Fixtures.seedPayment(terminal.id, { createdAt: Fixtures.baseTime + i * 1000 }))
        }
        const newestFirst = [...payments].reverse()
        const filter: PaymentFilter = { terminalId: terminal.id, environment: "all", recurring: null }
        const page1 = yield* repo.list(filter, { limit: 2, offset: 0 })
        assert.strictEqual(page1.total, 5)
        assert.deepStrictEqual(page1.items, newestFirst.slice(0, 2))
        const page2 = yield* repo.list(filter, { limit: 2, offset: 2 })
        assert.deepStrictEqual(ids(page2.items), ids(newestFirst.slice(2, 4)))
        const page3 = yield* repo.list(filter, { limit: 2, offset: 4 })
        assert.deepStrictEqual(ids(page3.items), ids(newestFirst.slice(4)))
        const beyond = yield* repo.list(filter, { limit: 2, offset: 10 })
        assert.deepStrictEqual(beyond, { items: [], total: 5 })
      }))

    it.effect("list after a position: the filter's payments after it in list's order, offset from there, the total of the whole filter", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        // Seven payments, three of them created in the same millisecond (their order is by id).
        for (const offset of [0, 1000, 1000, 1000, 2000, 3000, 4000]) {
          yield* Fixtures.seedPayment(terminal.id, { createdAt: Fixtures.baseTime + offset })
        }
        const filter: PaymentFilter = { terminalId: terminal.id, environment: "all", recurring: null, status: "created" }
        const listed = (yield* repo.list(filter, { limit: 100, offset: 0, after: null })).items
        const order = ids(listed)
        assert.strictEqual(order.length, 7)
        // The two newest leave the filter; the pages after them hold the rest, one of the millisecond at a time.
        for (const p of listed.slice(0, 2)) yield* repo.update({ ...p, status: "paid", version: p.version + 1 })
        const pages: Array<ReadonlyArray<string>> = []
        let after: Payment.Payment = listed[1]!
        for (let i = 0; i < 4; i++) {
          const page = yield* repo.list(filter, { limit: 2, offset: 0, after })
          assert.strictEqual(page.total, 5)
          pages.push(ids(page.items))
          if (page.items.length === 0) break
          after = page.items.at(-1)!
        }
        assert.deepStrictEqual(pages, [order.slice(2, 4), order.slice(4, 6), order.slice(6), []])
        // `offset` counts from the position; a payment newer than it stays out.
        yield* Fixtures.seedPayment(terminal.id, { createdAt: Fixtures.baseTime + 10_000 })
        assert.deepStrictEqual(ids((yield* repo.list(filter, { limit: 2, offset: 1, after: listed[2]! })).items), order.slice(4, 6))
        // A position of no payment (a made-up id) pages from its time.
        const between = { createdAt: Fixtures.baseTime + 2500, id: Fixtures.uuid() }
        assert.deepStrictEqual(ids((yield* repo.list(filter, { limit: 10, offset: 0, after: between })).items), order.slice(2))
        assert.deepStrictEqual(yield* repo.list({ ...filter, environment: "sandbox" }, { limit: 10, offset: 0, after: listed[0]! }), { items: [], total: 0 })
      }))

    it.effect("listAfter pages from a keyset cursor in list's order, without repeating or skipping as payments come in", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const seeded: Array<Payment.Payment> = []
        // Seven payments, three of them created in the same millisecond (their order is by id).
        for (const offset of [0, 1000, 1000, 1000, 2000, 3000, 4000]) {
          seeded.push(yield* Fixtures.seedPayment(terminal.id, { createdAt: Fixtures.baseTime + offset }))
        }
        const filter: PaymentFilter = { terminalId: terminal.id, environment: "all", recurring: null }
        const order = ids((yield* repo.list(filter, { limit: 100, offset: 0 })).items)
        assert.strictEqual(order.length, 7)
        // Pages of two: the second and third split the three payments of one millisecond.
        const first = yield* repo.listAfter(filter, null, 2)
        assert.deepStrictEqual(ids(first), order.slice(0, 2))
        // A payment newer than every listed one arrives between two pages: it is not in the later ones.
        yield* Fixtures.seedPayment(terminal.id, { createdAt: Fixtures.baseTime + 10_000 })
        const pages = [first]
        // Then four more pages, each from the last payment of the one before; the last is empty.
        for (let i = 0; i < 4; i++) pages.push(yield* repo.listAfter(filter, pages.at(-1)!.at(-1)!, 2))
        assert.deepStrictEqual(pages.map(ids), [order.slice(0, 2), order.slice(2, 4), order.slice(4, 6), order.slice(6), []])
        // The filter still applies, and the pages hold the payments as stored.
        assert.deepStrictEqual(yield* repo.listAfter({ ...filter, environment: "sandbox" }, null, 10), [])
        assert.deepStrictEqual(first[0], seeded.find((p) => p.id === order[0]))
      }))

    it.effect("list breaks createdAt ties by id, descending", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const same: Array<Payment.Payment> = []
        for (let i = 0; i < 4; i++) same.push(yield* Fixtures.seedPayment(terminal.id))
        const listed = yield* repo.list({ terminalId: terminal.id, environment: "all", recurring: null }, {
          limit: 10,
          offset: 0
        })
        assert.deepStrictEqual(ids(listed.items), ids(same).sort().reverse())
      }))

    it.effect("list filters by environment and recurring", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const subscription = yield* Fixtures.seedSubscription(terminal.id)
        const live = yield* Fixtures.seedPayment(terminal.id, { createdAt: Fixtures.baseTime + 1 })
        const sandbox = yield* Fixtures.seedPayment(terminal.id, { environment: "sandbox", createdAt: Fixtures.baseTime + 2 })
        const recurring = yield* Fixtures.seedPayment(terminal.id, {
          subscriptionId: subscription.id,
          status: "paid",
          createdAt: Fixtures.baseTime + 3
        })
        const page = { limit: 50, offset: 0 }
        const list = (environment: PaymentFilter["environment"], isRecurring: boolean | null) =>
          repo.list({ terminalId: terminal.id, environment, recurring: isRecurring }, page)
        const all = yield* list("all", null)
        assert.deepStrictEqual(ids(all.items), ids([recurring, sandbox, live]))
        assert.strictEqual(all.total, 3)
        assert.deepStrictEqual(ids((yield* list("prod", null)).items), ids([recurring, live]))
        assert.deepStrictEqual(ids((yield* list("sandbox", null)).items), ids([sandbox]))
        assert.deepStrictEqual(ids((yield* list("all", true)).items), ids([recurring]))
        assert.deepStrictEqual(ids((yield* list("all", false)).items), ids([sandbox, live]))
        assert.deepStrictEqual(yield* list("sandbox", true), { items: [], total: 0 })
      }))

    it.effect("stats count and sum per status under the filter", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const subscription = yield* Fixtures.seedSubscription(terminal.id)
        yield* Fixtures.seedPayment(terminal.id, { status: "paid", amount: 100_000n })
        yield* Fixtures.seedPayment(terminal.id, { status: "paid", amount: 250_050n })
        yield* Fixtures.seedPayment(terminal.id, { status: "created", amount: 7n })
        yield* Fixtures.seedPayment(terminal.id, { status: "paid", amount: 1_000n, environment: "sandbox" })
        yield* Fixtures.seedPayment(terminal.id, { status: "paid", amount: 30_000n, subscriptionId: subscription.id })
        const stats = (environment: PaymentFilter["environment"], recurring: boolean | null) =>
          repo.stats({ terminalId: terminal.id, environment, recurring })
        const prod = yield* stats("prod", null)
        assert.deepStrictEqual(statsOf(prod, "paid"), { count: 3, amount: 380_050n })
        assert.deepStrictEqual(statsOf(prod, "created"), { count: 1, amount: 7n })
        assert.deepStrictEqual(statsOf(prod, "expired"), { count: 0, amount: 0n })
        assert.isTrue(prod.every((s) => s.count > 0 || s.amount === 0n))
        assert.deepStrictEqual(statsOf(yield* stats("all", null), "paid"), { count: 4, amount: 381_050n })
        assert.deepStrictEqual(statsOf(yield* stats("sandbox", null), "paid"), { count: 1, amount: 1_000n })
        assert.deepStrictEqual(statsOf(yield* stats("prod", false), "paid"), { count: 2, amount: 350_050n })
        assert.deepStrictEqual(statsOf(yield* stats("all", true), "paid"), { count: 1, amount: 30_000n })
        const { terminal: empty } = yield* Fixtures.seedTerminal()
        const nothing = yield* repo.stats({ terminalId: empty.id, environment: "all", recurring: null })
        assert.isTrue(nothing.every((s) => s.count === 0 && s.amount === 0n))
      }))

    it.effect("list and stats narrow by status, order id and a created range (from inclusive, before exclusive)", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const at = (iso: string) => Date.parse(iso)
        const first = yield* Fixtures.seedPayment(terminal.id, { status: "paid", amount: 100n, createdAt: at("2026-03-09T20:30:00Z") })
        const second = yield* Fixtures.seedPayment(terminal.id, { status: "created", amount: 20n, createdAt: at("2026-03-09T21:30:00Z") })
        const third = yield* Fixtures.seedPayment(terminal.id, { status: "paid", amount: 3n, createdAt: at("2026-03-10T12:00:00Z") })
        yield* Fixtures.seedPayment(terminal.id, { status: "paid", amount: 4n, environment: "sandbox", createdAt: at("2026-03-10T12:00:00Z") })
        const base: PaymentFilter = { terminalId: terminal.id, environment: "prod", recurring: null }
        const listed = (filter: Partial<PaymentFilter>) => repo.list({ ...base, ...filter }, { limit: 50, offset: 0 })
        assert.deepStrictEqual(ids((yield* listed({ status: "paid" })).items), ids([third, first]))
        assert.strictEqual((yield* listed({ status: "paid" })).total, 2)
        assert.deepStrictEqual(ids((yield* listed({ orderId: second.orderId })).items), ids([second]))
        assert.deepStrictEqual(yield* listed({ orderId: "no-such-order" }), { items: [], total: 0 })
        // The bounds: from is inclusive, before exclusive.
        assert.deepStrictEqual(ids((yield* listed({ createdFrom: second.createdAt })).items), ids([third, second]))
        assert.deepStrictEqual(ids((yield* listed({ createdBefore: second.createdAt })).items), ids([first]))
        assert.deepStrictEqual(ids((yield* listed({ createdFrom: first.createdAt, createdBefore: third.createdAt, status: "paid" })).items), ids([first]))
        const stats = yield* repo.stats({ ...base, createdFrom: second.createdAt })
        assert.deepStrictEqual(statsOf(stats, "paid"), { count: 1, amount: 3n })
        assert.deepStrictEqual(statsOf(stats, "created"), { count: 1, amount: 20n })
        assert.deepStrictEqual(statsOf(yield* repo.stats({ ...base, status: "created" }), "paid"), { count: 0, amount: 0n })
      }))

    it.effect("daily counts and sums per calendar day of the time zone and status, days ascending", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const at = (iso: string) => Date.parse(iso)
        // 20:30 and 21:30 UTC on 9 March are 23:30 on the 9th and 00:30 on the 10th in Moscow (UTC+3).
        yield* Fixtures.seedPayment(terminal.id, { status: "paid", amount: 100n, createdAt: at("2026-03-09T20:30:00Z") })
        yield* Fixtures.seedPayment(terminal.id, { status: "paid", amount: 20n, createdAt: at("2026-03-09T21:30:00Z") })
        yield* Fixtures.seedPayment(terminal.id, { status: "expired", amount: 3n, createdAt: at("2026-03-10T12:00:00Z") })
        yield* Fixtures.seedPayment(terminal.id, { status: "paid", amount: 4n, environment: "sandbox", createdAt: at("2026-03-10T12:00:00Z") })
        const filter: PaymentFilter = { terminalId: terminal.id, environment: "prod", recurring: null }
        const rows = (timeZone: string, narrowed: Partial<PaymentFilter> = {}) =>
          repo.daily({ ...filter, ...narrowed }, timeZone).pipe(Effect.map((all) => all.map((r) => [r.day, r.status, r.count, r.amount])))
        assert.deepStrictEqual(yield* rows("UTC"), [
          ["2026-03-09", "paid", 2, 120n],
          ["2026-03-10", "expired", 1, 3n]
        ])
        assert.deepStrictEqual(yield* rows("Europe/Moscow"), [
          ["2026-03-09", "paid", 1, 100n],
          ["2026-03-10", "paid", 1, 20n],
          ["2026-03-10", "expired", 1, 3n]
        ])
        assert.deepStrictEqual(yield* rows("America/New_York", { environment: "sandbox" }), [["2026-03-10", "paid", 1, 4n]])
        assert.deepStrictEqual(yield* rows("UTC", { createdFrom: at("2026-03-10T00:00:00Z") }), [["2026-03-10", "expired", 1, 3n]])
      }))

    it.effect("claimExpired returns open payments whose expiry has come, and only those", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        // Tiny timestamps keep rows of other tests (created around baseTime) out of the way.
        const at = (ms: number, overrides: Partial<Payment.Payment> = {}) =>
          Fixtures.seedPayment(terminal.id, { expiresAt: ms, createdAt: 0, updatedAt: 0, ...overrides })
        const due = [yield* at(1_000), yield* at(2_000, { status: "processing" }), yield* at(5_000)]
        const notDue = [
          yield* at(5_001),
          yield* at(1_000, { status: "paid" }),
          yield* at(1_000, { status: "expired" }),
          yield* at(1_000, { status: "canceled" }),
          yield* Fixtures.seedPayment(terminal.id, { expiresAt: null })
        ]
        const claimed = yield* repo.claimExpired(5_000, 10_000)
        assert.deepStrictEqual(new Set(ids(only(claimed, due))), new Set(ids(due)))
        assert.deepStrictEqual(only(claimed, notDue), [])
        assert.strictEqual((yield* repo.claimExpired(5_000, 1)).length, 1)
        // Claiming changes nothing by itself.
        assert.deepStrictEqual(some(yield* repo.get(due[0]!.id)), due[0])
      }))

    it.effect("claimUnconverted returns a terminal's live paid payments without USDT", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const { terminal: other } = yield* Fixtures.seedTerminal()
        const waiting = { merchantAmount: 95_000n, usdt: null, rate: null, convertedAt: null }
        const wanted = [
          yield* Fixtures.seedPayment(terminal.id, { status: "paid", settlement: waiting }),
          yield* Fixtures.seedPayment(terminal.id, { status: "paid", settlement: { ...waiting, merchantAmount: 1n } })
        ]
        yield* Fixtures.seedPayment(terminal.id, {
          status: "paid",
          settlement: { merchantAmount: 95_000n, usdt: 1_000_000n, rate: 95_000_000n, convertedAt: 1 }
        })
        yield* Fixtures.seedPayment(terminal.id, { status: "paid", settlement: waiting, environment: "sandbox" })
        yield* Fixtures.seedPayment(terminal.id, { status: "refunded", settlement: waiting })
        yield* Fixtures.seedPayment(terminal.id, { status: "paid", settlement: null })
        yield* Fixtures.seedPayment(other.id, { status: "paid", settlement: waiting })
        const claimed = yield* repo.claimUnconverted(terminal.id, 100)
        assert.deepStrictEqual(new Set(ids(claimed)), new Set(ids(wanted)))
        assert.strictEqual((yield* repo.claimUnconverted(terminal.id, 1)).length, 1)
      }))

    /** A new payment of the terminal with its `payment.created` and (unless `withDelivery` is false) its delivery. */
    const created = (terminalId: string, overrides: Partial<Payment.Payment> = {}, withDelivery = true) => {
      const payment = Fixtures.payment(terminalId, overrides)
      const event = Fixtures.outboxEvent(terminalId, { paymentId: payment.id, createdAt: payment.createdAt })
      return { payment, event, delivery: withDelivery ? Fixtures.delivery(event) : undefined }
    }
    const stored = (c: ReturnType<typeof created>) =>
      Effect.gen(function*() {
        const outbox = yield* OutboxRepository
        return {
          payment: yield* (yield* PaymentRepository).get(c.payment.id),
          event: yield* outbox.getEvent(c.event.id),
          delivery: c.delivery === undefined ? Option.none() : yield* outbox.getDelivery(c.delivery.id)
        }
      })

    it.effect("insertCreated stores a payment with its event and delivery; a taken order id stores none of them", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const first = created(terminal.id, { description: "Кофе", metadata: { cart: [1, 2], note: "привет" } })
        yield* repo.insertCreated(first.payment, first.event, first.delivery)
        const found = yield* stored(first)
        assert.deepStrictEqual(found.payment, Option.some(first.payment))
        assert.deepStrictEqual(found.event, Option.some(first.event))
        assert.deepStrictEqual(found.delivery, Option.some(first.delivery!))

        const noCallback = created(terminal.id, {}, false)
        yield* repo.insertCreated(noCallback.payment, noCallback.event, undefined)
        assert.deepStrictEqual((yield* stored(noCallback)).event, Option.some(noCallback.event))

        const taken = created(terminal.id, { orderId: first.payment.orderId })
        yield* expectWriteConflict(repo.insertCreated(taken.payment, taken.event, taken.delivery))
        const left = yield* stored(taken)
        assert.isTrue(Option.isNone(left.payment) && Option.isNone(left.event) && Option.isNone(left.delivery))
      }))

    it.effect("insertCreated in a transaction that fails leaves nothing", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const c = created(terminal.id)
        const exit = yield* Effect.exit((yield* Transactions).run(
          Effect.andThen(repo.insertCreated(c.payment, c.event, c.delivery), Effect.fail("refused" as const))
        ))
        assert.isTrue(Exit.isFailure(exit))
        const left = yield* stored(c)
        assert.isTrue(Option.isNone(left.payment) && Option.isNone(left.event) && Option.isNone(left.delivery))
      }))

    it.effect("concurrent insertCreated calls: a taken order id fails only its own call", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        // 24 creations at once; the last 6 repeat the order ids of the first 6 (so 6 of those 12 lose).
        const orderIds = Array.from({ length: 18 }, (_, i) => `order-${i}-${Fixtures.unique()}`)
        const all = [...orderIds, ...orderIds.slice(0, 6)].map((orderId, i) => created(terminal.id, { orderId }, i % 2 === 0))
        const exits = yield* Effect.forEach(all, (c) => Effect.exit(repo.insertCreated(c.payment, c.event, c.delivery)), {
          concurrency: "unbounded"
        })
        assert.isTrue(exits.every((exit) => Exit.isSuccess(exit) || exit.cause.reasons.some((r) => r._tag === "Fail" && r.error._tag === "WriteConflict")))
        assert.strictEqual(exits.filter(Exit.isSuccess).length, 18)
        for (const [i, c] of all.entries()) {
          const found = yield* stored(c)
          const won = Exit.isSuccess(exits[i]!)
          assert.strictEqual(Option.isSome(found.payment), won)
          assert.strictEqual(Option.isSome(found.event), won)
          assert.strictEqual(Option.isSome(found.delivery), won && c.delivery !== undefined)
        }
        // Of each repeated order id exactly one payment was stored.
        for (const orderId of orderIds) {
          const listed = yield* repo.list({ terminalId: terminal.id, environment: "all", recurring: null, orderId }, { limit: 5, offset: 0 })
          assert.strictEqual(listed.total, 1)
        }
      }))

    it.effect("concurrent inserts of one order id: exactly one wins", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const orderId = `order-${Fixtures.unique()}`
        const tx = yield* Transactions
        const results = yield* Effect.forEach(
          Array.from({ length: 10 }, () => Fixtures.payment(terminal.id, { orderId })),
          (p) => Effect.exit(tx.run(repo.insert(p))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter((r) => r._tag === "Success").length, 1)
        const listed = yield* repo.list({ terminalId: terminal.id, environment: "all", recurring: null }, {
          limit: 20,
          offset: 0
        })
        assert.strictEqual(listed.total, 1)
      }))
  })
