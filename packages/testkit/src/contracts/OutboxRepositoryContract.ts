/**
 * Contract suite of `OutboxRepository`: events and deliveries round-trip, `claimDue` leases due
 * pending deliveries with their events (oldest first, disjoint under concurrency), and the
 * delivery and attempt listings filter and order as documented.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import {
  AccountRepository,
  OutboxRepository,
  PaymentRepository,
  PayoutRepository,
  TerminalRepository,
  Transactions
} from "@paydesk/core"
import type { Callback } from "@paydesk/core"
import * as Fixtures from "../Fixtures.js"
import { ids, none, only, some } from "./Support.js"

/** What the suite needs. */
export type Requirements =
  | OutboxRepository
  | PaymentRepository
  | PayoutRepository
  | AccountRepository
  | TerminalRepository
  | Transactions

/** Registers the `OutboxRepository` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`OutboxRepository contract (${name})`, (it) => {
    const setup = Effect.gen(function*() {
      const { terminal } = yield* Fixtures.seedTerminal({ callbackUrl: "https://shop.example/cb" })
      const repo = yield* OutboxRepository
      const payment = yield* Fixtures.seedPayment(terminal.id)
      /** Stores an event and a delivery of it. */
      const seed = (
        eventOverrides: Partial<Callback.OutboxEvent> = {},
        deliveryOverrides: Partial<Callback.Delivery> = {}
      ) =>
        Effect.gen(function*() {
          const event = Fixtures.outboxEvent(terminal.id, { paymentId: payment.id, ...eventOverrides })
          yield* repo.insertEvent(event)
          const delivery = Fixtures.delivery(event, deliveryOverrides)
          yield* repo.insertDelivery(delivery)
          return { event, delivery }
        })
      return { terminal, payment, repo, seed }
    })

    it.effect("events round-trip with their exact body and are listed by payment and terminal", () =>
      Effect.gen(function*() {
        const { terminal, payment, repo } = yield* setup
        const payout = Fixtures.payout(terminal.id)
        yield* (yield* PayoutRepository).insert(payout)
        const body = "{\"event_type\":\"payment.paid\",\"amount\":\"1000.50\",  \"note\":\"привет\"}"
        const first = Fixtures.outboxEvent(terminal.id, { paymentId: payment.id, eventType: "payment.paid", body, test: true })
        const second = Fixtures.outboxEvent(terminal.id, {
          eventType: "payout.completed",
          payoutId: payout.id,
          createdAt: Fixtures.baseTime + 1
        })
        yield* repo.insertEvent(second)
        yield* repo.insertEvent(first)
        assert.deepStrictEqual(some(yield* repo.getEvent(first.id)), first)
        assert.deepStrictEqual(some(yield* repo.getEvent(second.id)), second)
        none(yield* repo.getEvent(Fixtures.uuid()))
        assert.deepStrictEqual(yield* repo.listEvents({ paymentId: payment.id }), [first])
        assert.deepStrictEqual(yield* repo.listEvents({ terminalId: terminal.id }), [first, second])
        assert.deepStrictEqual(yield* repo.listEvents({ paymentId: payment.id, terminalId: Fixtures.uuid() }), [])
      }))

    it.effect("listEvents keeps the insertion order of events with one timestamp", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const made = Array.from({ length: 5 }, () => Fixtures.outboxEvent(terminal.id, { createdAt: Fixtures.baseTime + 7 }))
        for (const event of made) yield* repo.insertEvent(event)
        assert.deepStrictEqual(ids(yield* repo.listEvents({ terminalId: terminal.id })), ids(made))
      }))

    it.effect("deliveries round-trip and updates store the whole record", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const { delivery } = yield* seed()
        assert.deepStrictEqual(some(yield* repo.getDelivery(delivery.id)), delivery)
        const delivered: Callback.Delivery = {
          ...delivery,
          status: "delivered",
          attempts: 2,
          nextAttemptAt: null,
          sendingAt: Fixtures.baseTime + 29_000,
          lastStatusCode: 200,
          lastError: "earlier: timeout",
          updatedAt: Fixtures.baseTime + 30_000,
          deliveredAt: Fixtures.baseTime + 30_000
        }
        yield* repo.updateDelivery(delivered)
        assert.deepStrictEqual(some(yield* repo.getDelivery(delivery.id)), delivered)
        yield* repo.updateDelivery({ ...delivered, sendingAt: null })
        assert.strictEqual(some(yield* repo.getDelivery(delivery.id)).sendingAt, null)
        none(yield* repo.getDelivery(Fixtures.uuid()))
      }))

    it.effect("claimDue leases due pending deliveries, oldest first, with their events", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const a = yield* seed({}, { nextAttemptAt: 1_000, createdAt: 0 })
        const b = yield* seed({}, { nextAttemptAt: 3_000, createdAt: 0 })
        const c = yield* seed({}, { nextAttemptAt: 2_000, createdAt: 0 })
        const others = [
          yield* seed({}, { nextAttemptAt: 3_001 }),
          yield* seed({}, { nextAttemptAt: null }),
          yield* seed({}, { nextAttemptAt: 1_000, status: "delivered" }),
          yield* seed({}, { nextAttemptAt: 1_000, status: "failed" })
        ]
        const wanted = [a, c, b]
        const claimed = yield* repo.claimDue(3_000, 63_000, 10_000)
        const mine = claimed.filter((x) => wanted.some((w) => w.delivery.id === x.delivery.id))
        assert.deepStrictEqual(mine.map((x) => x.delivery.id), wanted.map((w) => w.delivery.id))
        assert.deepStrictEqual(
          mine,
          wanted.map((w) => ({ delivery: { ...w.delivery, nextAttemptAt: 63_000 }, event: w.event }))
        )
        assert.deepStrictEqual(claimed.filter((x) => others.some((o) => o.delivery.id === x.delivery.id)), [])
        assert.strictEqual(some(yield* repo.getDelivery(a.delivery.id)).nextAttemptAt, 63_000)
        // Leased until 63 000: skipped before, claimable again at the lease end.
        assert.deepStrictEqual(only((yield* repo.claimDue(62_999, 70_000, 10_000)).map((x) => x.delivery), wanted.map((w) => w.delivery)), [])
        const again = only((yield* repo.claimDue(63_000, 70_000, 10_000)).map((x) => x.delivery), wanted.map((w) => w.delivery))
        assert.strictEqual(again.length, 3)
        assert.strictEqual((yield* repo.claimDue(70_000, 80_000, 1)).length, 1)
      }))

    it.effect("stampSending stamps once, keeps a stamp at or after keepFrom, replaces an older one", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const { delivery } = yield* seed({}, { nextAttemptAt: 1_000 })
        assert.strictEqual(yield* repo.stampSending(delivery.id, 5_000, 0), 5_000)
        assert.strictEqual(some(yield* repo.getDelivery(delivery.id)).sendingAt, 5_000)
        // The re-send of a cut-short attempt keeps its fresh stamp...
        assert.strictEqual(yield* repo.stampSending(delivery.id, 65_000, 5_000), 5_000)
        assert.strictEqual(some(yield* repo.getDelivery(delivery.id)).sendingAt, 5_000)
        // ...but not a stale one.
        assert.strictEqual(yield* repo.stampSending(delivery.id, 400_000, 160_000), 400_000)
        assert.strictEqual(some(yield* repo.getDelivery(delivery.id)).sendingAt, 400_000)
        // Claims leave stamps alone.
        yield* repo.claimDue(2_000_000, 2_060_000, 10_000)
        assert.strictEqual(some(yield* repo.getDelivery(delivery.id)).sendingAt, 400_000)
      }))

    it.effect("claimDue breaks ties of nextAttemptAt in the order the events were inserted", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const made: Array<Callback.Delivery> = []
        for (let i = 0; i < 5; i++) made.push((yield* seed({ createdAt: 600 }, { nextAttemptAt: 700 })).delivery)
        const claimed = only((yield* repo.claimDue(700, 90_000, 10_000)).map((c) => c.delivery), made)
        assert.deepStrictEqual(ids(claimed), ids(made))
      }))

    it.effect("concurrent claims never return the same delivery", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const tx = yield* Transactions
        const made: Array<Callback.Delivery> = []
        for (let i = 0; i < 6; i++) made.push((yield* seed({}, { nextAttemptAt: 500 + i, createdAt: 0 })).delivery)
        const [x, y] = yield* Effect.all([
          tx.run(repo.claimDue(1_000, 1_000_000, 10_000)),
          tx.run(repo.claimDue(1_000, 1_000_000, 10_000))
        ], { concurrency: "unbounded" })
        const mine = [...only(x.map((c) => c.delivery), made), ...only(y.map((c) => c.delivery), made)]
        assert.strictEqual(mine.length, made.length)
        assert.strictEqual(new Set(ids(mine)).size, made.length)
      }))

    it.effect("listDeliveries filters by terminal, payment and status, newest first, up to limit", () =>
      Effect.gen(function*() {
        const { terminal, payment, repo, seed } = yield* setup
        const otherPayment = yield* Fixtures.seedPayment(terminal.id)
        const d1 = (yield* seed({}, { createdAt: Fixtures.baseTime + 1 })).delivery
        const d2 = (yield* seed({}, { createdAt: Fixtures.baseTime + 2, status: "delivered" })).delivery
        const d3 = (yield* seed({ paymentId: otherPayment.id }, { createdAt: Fixtures.baseTime + 3 })).delivery
        assert.deepStrictEqual(yield* repo.listDeliveries({ terminalId: terminal.id, limit: 10 }), [d3, d2, d1])
        assert.deepStrictEqual(ids(yield* repo.listDeliveries({ terminalId: terminal.id, limit: 2 })), ids([d3, d2]))
        assert.deepStrictEqual(yield* repo.listDeliveries({ paymentId: payment.id, limit: 10 }), [d2, d1])
        assert.deepStrictEqual(yield* repo.listDeliveries({ paymentId: Fixtures.uuid(), limit: 10 }), [])
        assert.deepStrictEqual(yield* repo.listDeliveries({ paymentId: otherPayment.id, limit: 10 }), [d3])
        assert.deepStrictEqual(
          ids(yield* repo.listDeliveries({ terminalId: terminal.id, status: "pending", limit: 10 })),
          ids([d3, d1])
        )
        assert.deepStrictEqual(
          yield* repo.listDeliveries({ terminalId: terminal.id, status: "failed", limit: 10 }),
          []
        )
      }))

    it.effect("listAttempts returns one delivery's attempts, oldest first", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const { delivery } = yield* seed()
        const { delivery: other } = yield* seed()
        const second = Fixtures.attempt(delivery.id, { attemptNumber: 2, at: Fixtures.baseTime + 30_000, statusCode: null, error: "timeout", latencyMs: 10_000 })
        const first = Fixtures.attempt(delivery.id, { attemptNumber: 1, at: Fixtures.baseTime })
        yield* repo.insertAttempt(second)
        yield* repo.insertAttempt(first)
        yield* repo.insertAttempt(Fixtures.attempt(other.id))
        assert.deepStrictEqual(yield* repo.listAttempts(delivery.id), [first, second])
        assert.deepStrictEqual(yield* repo.listAttempts(Fixtures.uuid()), [])
      }))
  })
