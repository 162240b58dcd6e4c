/**
 * Contract suite of `OutboxRepository`: events and deliveries round-trip, `claimDue` leases due
 * pending deliveries with their events (oldest first, disjoint under concurrency), the delivery
 * and attempt listings filter and order as documented, and the events API's queries: pages of
 * events with their latest delivery, an event's deliveries, sequences, attempt facts and purge.
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

    it.effect("insertEvent with a delivery stores both, as two inserts would", () =>
      Effect.gen(function*() {
        const { terminal, payment, repo } = yield* setup
        const event = Fixtures.outboxEvent(terminal.id, { paymentId: payment.id })
        const delivery = Fixtures.delivery(event)
        yield* repo.insertEvent(event, delivery)
        assert.deepStrictEqual(some(yield* repo.getEvent(event.id)), event)
        assert.deepStrictEqual(some(yield* repo.getDelivery(delivery.id)), delivery)
        assert.deepStrictEqual(ids(yield* repo.deliveriesOf(event.id)), [delivery.id])
      }))

    it.effect("recordAttempt stores the attempt and the delivery's next state only while it is pending with the expected attempts", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const { delivery } = yield* seed()
        const attemptOf = (n: number) => ({
          id: Fixtures.uuid(), deliveryId: delivery.id, attemptNumber: n, at: Fixtures.baseTime + n, url: "https://shop.example/cb",
          statusCode: 503, latencyMs: 12, error: "HTTP 503", responseBody: "busy"
        })
        const first = attemptOf(1)
        const retrying = { ...delivery, attempts: 1, nextAttemptAt: Fixtures.baseTime + 30_000, lastStatusCode: 503, lastError: "HTTP 503", updatedAt: Fixtures.baseTime + 1 }
        assert.isTrue(yield* repo.recordAttempt(first, retrying, 0))
        assert.deepStrictEqual(some(yield* repo.getDelivery(delivery.id)), retrying)
        assert.deepStrictEqual(yield* repo.listAttempts(delivery.id), [first])
        // The same attempt recorded by a second worker: nothing changes.
        assert.isFalse(yield* repo.recordAttempt({ ...attemptOf(1), error: "late" }, { ...retrying, lastError: "late" }, 0))
        assert.deepStrictEqual(some(yield* repo.getDelivery(delivery.id)), retrying)
        assert.deepStrictEqual(yield* repo.listAttempts(delivery.id), [first])
        const second = { ...attemptOf(2), statusCode: 200, error: null }
        const delivered = { ...retrying, attempts: 2, status: "delivered" as const, nextAttemptAt: null, lastStatusCode: 200, lastError: null, deliveredAt: Fixtures.baseTime + 2 }
        assert.isTrue(yield* repo.recordAttempt(second, delivered, 1))
        // A finished delivery takes no more attempts.
        assert.isFalse(yield* repo.recordAttempt(attemptOf(3), { ...delivered, attempts: 3 }, 2))
        assert.deepStrictEqual(some(yield* repo.getDelivery(delivery.id)), delivered)
        assert.deepStrictEqual(ids(yield* repo.listAttempts(delivery.id)), [first.id, second.id])
      }))

    it.effect("recordAttempts records a batch as recordAttempt would one after the other, each with its own guard", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const { delivery: a } = yield* seed()
        const { delivery: b } = yield* seed()
        const { delivery: c } = yield* seed()
        const { delivery: done } = yield* seed({}, { status: "delivered", attempts: 1, nextAttemptAt: null })
        const attemptOf = (delivery: Callback.Delivery, n: number, error: string | null) =>
          Fixtures.attempt(delivery.id, { attemptNumber: n, at: Fixtures.baseTime + n, statusCode: error === null ? 200 : 503, error })
        const retrying = (delivery: Callback.Delivery, n: number) => ({
          ...delivery, attempts: n, nextAttemptAt: Fixtures.baseTime + 30_000 * n, lastStatusCode: 503, lastError: "HTTP 503", updatedAt: Fixtures.baseTime + n
        })
        const delivered = (delivery: Callback.Delivery, n: number) => ({
          ...delivery, attempts: n, status: "delivered" as const, nextAttemptAt: null, lastStatusCode: 200, lastError: null, deliveredAt: Fixtures.baseTime + n
        })
        const a1 = attemptOf(a, 1, "HTTP 503")
        const a2 = attemptOf(a, 2, null)
        const c1 = attemptOf(c, 1, null)
        const results = yield* repo.recordAttempts([
          { attempt: a1, delivery: retrying(a, 1), expectedAttempts: 0 },
          // Claimed with other attempts than it has: refused.
          { attempt: attemptOf(b, 2, null), delivery: delivered(b, 2), expectedAttempts: 1 },
          // A second worker's record of a's first attempt, after the first one's: refused.
          { attempt: attemptOf(a, 1, "late"), delivery: { ...retrying(a, 1), lastError: "late" }, expectedAttempts: 0 },
          // a's next attempt, recorded after its first one in the same batch.
          { attempt: a2, delivery: delivered(a, 2), expectedAttempts: 1 },
          { attempt: c1, delivery: delivered(c, 1), expectedAttempts: 0 },
          // A finished delivery takes no more attempts.
          { attempt: attemptOf(done, 2, null), delivery: delivered(done, 2), expectedAttempts: 1 }
        ])
        assert.deepStrictEqual(results, [true, false, false, true, true, false])
        assert.deepStrictEqual(some(yield* repo.getDelivery(a.id)), delivered(a, 2))
        assert.deepStrictEqual(yield* repo.listAttempts(a.id), [a1, a2])
        assert.deepStrictEqual(some(yield* repo.getDelivery(b.id)), b)
        assert.deepStrictEqual(yield* repo.listAttempts(b.id), [])
        assert.deepStrictEqual(some(yield* repo.getDelivery(c.id)), delivered(c, 1))
        assert.deepStrictEqual(yield* repo.listAttempts(c.id), [c1])
        assert.deepStrictEqual(yield* repo.listAttempts(done.id), [])
        assert.deepStrictEqual(yield* repo.recordAttempts([]), [])
      }))

    it.effect("concurrent recordAttempt calls each answer their own result; of two workers' records of one attempt exactly one is stored", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const seeded: Array<Callback.Delivery> = []
        for (let i = 0; i < 12; i++) seeded.push((yield* seed()).delivery)
        const record = (delivery: Callback.Delivery, worker: string) => {
          const attempt = Fixtures.attempt(delivery.id, { attemptNumber: 1, statusCode: 200, error: null, responseBody: worker })
          const after = { ...delivery, attempts: 1, status: "delivered" as const, nextAttemptAt: null, lastStatusCode: 200, deliveredAt: Fixtures.baseTime }
          return Effect.map(repo.recordAttempt(attempt, after, 0), (stored) => ({ delivery: delivery.id, worker, stored }))
        }
        // Every delivery recorded by one worker; the first four also by a second one, at the same moment.
        const results = yield* Effect.all(
          [...seeded.map((d) => record(d, "first")), ...seeded.slice(0, 4).map((d) => record(d, "second"))],
          { concurrency: "unbounded" }
        )
        for (const delivery of seeded) {
          const own = results.filter((r) => r.delivery === delivery.id)
          assert.strictEqual(own.filter((r) => r.stored).length, 1)
          const attempts = yield* repo.listAttempts(delivery.id)
          assert.strictEqual(attempts.length, 1)
          // The stored attempt is the one whose call answered true.
          assert.strictEqual(attempts[0]!.responseBody, own.find((r) => r.stored)!.worker)
          assert.deepStrictEqual([some(yield* repo.getDelivery(delivery.id)).status, some(yield* repo.getDelivery(delivery.id)).attempts], ["delivered", 1])
        }
      }))

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

    it.effect("feedEvents reads a terminal's events after a position, in insertion order, by test flag, limited; positions outlive deletions", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const start = yield* repo.feedPositions(terminal.id)
        assert.strictEqual(start.newest, 0)
        // Timestamps against insertion order: a feed follows insertion alone.
        const made = [3, 1, 2, 0].map((n, i) =>
          Fixtures.outboxEvent(terminal.id, { createdAt: Fixtures.baseTime + n, test: i % 2 === 0 }))
        for (const event of made) yield* repo.insertEvent(event)
        const all = yield* repo.feedEvents({ terminalId: terminal.id, afterPosition: 0, limit: 100 })
        assert.deepStrictEqual(all.map((e) => e.event.id), ids(made))
        const positions = all.map((e) => e.position)
        assert.isTrue(positions.every((p, i) => i === 0 || p > positions[i - 1]!), `positions grow: ${positions.join(", ")}`)
        assert.isTrue(positions[0]! > start.issued)
        assert.deepStrictEqual(
          (yield* repo.feedEvents({ terminalId: terminal.id, afterPosition: positions[0]!, limit: 100 })).map((e) => e.event.id),
          ids(made.slice(1))
        )
        assert.deepStrictEqual(
          (yield* repo.feedEvents({ terminalId: terminal.id, afterPosition: positions[1]!, limit: 1 })).map((e) => e.event.id),
          [made[2]!.id]
        )
        assert.deepStrictEqual(yield* repo.feedEvents({ terminalId: terminal.id, afterPosition: positions[3]!, limit: 100 }), [])
        assert.deepStrictEqual(
          (yield* repo.feedEvents({ terminalId: terminal.id, test: true, afterPosition: positions[0]!, limit: 100 })).map((e) => e.event.id),
          [made[2]!.id]
        )
        assert.deepStrictEqual(yield* repo.feedEvents({ terminalId: Fixtures.uuid(), afterPosition: 0, limit: 100 }), [])
        assert.deepStrictEqual(some(yield* repo.eventPosition(made[2]!.id)), { terminalId: terminal.id, position: positions[2]! })
        none(yield* repo.eventPosition(Fixtures.uuid()))
        const after = yield* repo.feedPositions(terminal.id)
        assert.strictEqual(after.newest, positions[3]!)
        assert.isTrue(after.issued >= positions[3]!)
        // A deleted event keeps its place: the cursor after it reads on, the positions issued stay.
        // (The suite's other tests share the store: their old finished events go too.)
        assert.isAtLeast(yield* repo.purge(Fixtures.baseTime + 10), 4)
        none(yield* repo.eventPosition(made[2]!.id))
        assert.deepStrictEqual(yield* repo.feedEvents({ terminalId: terminal.id, afterPosition: positions[1]!, limit: 100 }), [])
        assert.deepStrictEqual(yield* repo.feedPositions(terminal.id), { newest: 0, issued: after.issued })
        const next = Fixtures.outboxEvent(terminal.id, { createdAt: Fixtures.baseTime + 20 })
        yield* repo.insertEvent(next)
        const read = yield* repo.feedEvents({ terminalId: terminal.id, afterPosition: positions[1]!, limit: 100 })
        assert.deepStrictEqual(read.map((e) => e.event.id), [next.id])
        assert.isTrue(read[0]!.position > after.issued)
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

    it.effect("renewLease moves a lease only while the delivery still holds it", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const { delivery } = yield* seed({}, { nextAttemptAt: 61_000 })
        assert.isFalse(yield* repo.renewLease(delivery.id, 60_000, 120_000))
        assert.strictEqual(some(yield* repo.getDelivery(delivery.id)).nextAttemptAt, 61_000)
        assert.isTrue(yield* repo.renewLease(delivery.id, 61_000, 121_000))
        assert.strictEqual(some(yield* repo.getDelivery(delivery.id)).nextAttemptAt, 121_000)
        // A claim after the lease took it: the old lease is no longer held.
        assert.strictEqual((yield* repo.claimDue(121_000, 181_000, 10_000)).filter((x) => x.delivery.id === delivery.id).length, 1)
        assert.isFalse(yield* repo.renewLease(delivery.id, 121_000, 200_000))
        assert.strictEqual(some(yield* repo.getDelivery(delivery.id)).nextAttemptAt, 181_000)
        // A recorded delivery is no longer pending.
        yield* repo.updateDelivery({ ...some(yield* repo.getDelivery(delivery.id)), status: "delivered", nextAttemptAt: null })
        assert.isFalse(yield* repo.renewLease(delivery.id, 181_000, 300_000))
        assert.isFalse(yield* repo.renewLease(crypto.randomUUID(), 181_000, 300_000))
      }))

    it.effect("claimDue with stamp stamps what it takes as stampSending would each, and returns the stamps in force", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const { delivery: fresh } = yield* seed({}, { nextAttemptAt: 1_000 })
        const { delivery: cutShort } = yield* seed({}, { nextAttemptAt: 1_000, sendingAt: 5_000 })
        const { delivery: stale } = yield* seed({}, { nextAttemptAt: 1_000, sendingAt: 4_000 })
        const { delivery: notDue } = yield* seed({}, { nextAttemptAt: 65_001 })
        const mine = [fresh, cutShort, stale]
        const claimed = only((yield* repo.claimDue(65_000, 125_000, 10_000, null, { keepFrom: 5_000 })).map((c) => c.delivery), [...mine, notDue])
        assert.deepStrictEqual(
          claimed.map((d) => [d.id, d.sendingAt, d.nextAttemptAt]),
          [[fresh.id, 65_000, 125_000], [cutShort.id, 5_000, 125_000], [stale.id, 65_000, 125_000]]
        )
        for (const d of claimed) assert.deepStrictEqual(some(yield* repo.getDelivery(d.id)), d)
        // What the claim did not take keeps its stamp.
        assert.strictEqual(some(yield* repo.getDelivery(notDue.id)).sendingAt, null)
        // A claim without `stamp` leaves stamps alone.
        const again = only((yield* repo.claimDue(125_000, 185_000, 10_000)).map((c) => c.delivery), mine)
        assert.deepStrictEqual(again.map((d) => d.sendingAt), [65_000, 5_000, 65_000])
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

    it.effect("listDeliveries lists the newest written first, whatever their createdAt (a test clock's time), and filters by environment", () =>
      Effect.gen(function*() {
        const { terminal, repo, seed } = yield* setup
        // Written in this order; the first carries a clock's time far ahead, the last one long before.
        const ahead = (yield* seed({ test: true }, { createdAt: Date.UTC(2099, 0, 1) })).delivery
        const live = (yield* seed({ test: false }, { createdAt: Fixtures.baseTime })).delivery
        const behind = (yield* seed({ test: true }, { createdAt: Date.UTC(2001, 0, 1) })).delivery
        assert.deepStrictEqual(ids(yield* repo.listDeliveries({ terminalId: terminal.id, limit: 10 })), ids([behind, live, ahead]))
        assert.deepStrictEqual(ids(yield* repo.listDeliveries({ terminalId: terminal.id, test: true, limit: 10 })), ids([behind, ahead]))
        assert.deepStrictEqual(ids(yield* repo.listDeliveries({ terminalId: terminal.id, test: false, limit: 10 })), ids([live]))
        assert.deepStrictEqual(ids(yield* repo.listDeliveries({ terminalId: terminal.id, test: true, limit: 1 })), ids([behind]))
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

    it.effect("endPending ends an event's pending deliveries as delivered, leaving its resends, its others and other events' alone", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const { event, delivery: scheduled } = yield* seed({}, { attempts: 1, nextAttemptAt: 90_000, lastStatusCode: 500, lastError: "HTTP 500" })
        const resend = Fixtures.delivery(event, { kind: "resend", status: "delivered", attempts: 1, nextAttemptAt: null, deliveredAt: 70_000 })
        yield* repo.insertDelivery(resend)
        // Another resend, its attempt in flight within its lease (its request records it): left pending.
        const resending = Fixtures.delivery(event, { kind: "resend", status: "pending", attempts: 0, nextAttemptAt: 100_000 })
        yield* repo.insertDelivery(resending)
        // A resend whose lease ran out (its request died; a worker would send it): ended with the others.
        const lapsed = Fixtures.delivery(event, { kind: "resend", status: "pending", attempts: 0, nextAttemptAt: 75_000 })
        yield* repo.insertDelivery(lapsed)
        const { delivery: other } = yield* seed({}, { nextAttemptAt: 90_000 })
        assert.strictEqual(yield* repo.endPending(event.id, 75_000), 2)
        assert.deepStrictEqual(some(yield* repo.getDelivery(resending.id)), resending)
        assert.deepStrictEqual(some(yield* repo.getDelivery(lapsed.id)), {
          ...lapsed, status: "delivered", deliveredAt: 75_000, nextAttemptAt: null, sendingAt: null, updatedAt: 75_000
        })
        assert.deepStrictEqual(some(yield* repo.getDelivery(scheduled.id)), {
          ...scheduled, status: "delivered", deliveredAt: 75_000, nextAttemptAt: null, sendingAt: null, updatedAt: 75_000
        })
        assert.deepStrictEqual(some(yield* repo.getDelivery(resend.id)), resend)
        assert.deepStrictEqual(some(yield* repo.getDelivery(other.id)), other)
        // An attempt of the ended one, in flight meanwhile, is no longer recorded; repeating ends nothing more.
        const late = Fixtures.attempt(scheduled.id, { attemptNumber: 2 })
        assert.isFalse(yield* repo.recordAttempt(late, { ...scheduled, attempts: 2 }, 1))
        assert.strictEqual(yield* repo.endPending(event.id, 80_000), 0)
        assert.strictEqual(yield* repo.endPending("not-a-uuid", 80_000), 0)
      }))

    it.effect("pageEvents lists newest first with the latest delivery, filters, and continues after a cursor", () =>
      Effect.gen(function*() {
        const { terminal, payment, repo } = yield* setup
        const t = Fixtures.baseTime
        const payout = Fixtures.payout(terminal.id)
        yield* (yield* PayoutRepository).insert(payout)
        const e1 = Fixtures.outboxEvent(terminal.id, { paymentId: payment.id, eventType: "payment.created", createdAt: t + 1, sequence: 1 })
        const e2 = Fixtures.outboxEvent(terminal.id, { paymentId: payment.id, eventType: "payment.paid", createdAt: t + 2, sequence: 2 })
        const e3 = Fixtures.outboxEvent(terminal.id, { payoutId: payout.id, eventType: "payout.completed", createdAt: t + 3 })
        const e4 = Fixtures.outboxEvent(terminal.id, { eventType: "ping", createdAt: t + 4, test: true })
        for (const e of [e1, e2, e3, e4]) yield* repo.insertEvent(e)
        const d1 = Fixtures.delivery(e1, { status: "failed", attempts: 8, createdAt: t + 1 })
        const d1b = Fixtures.delivery(e1, { kind: "recover", status: "delivered", attempts: 1, createdAt: t + 10 })
        const d2 = Fixtures.delivery(e2, { status: "failed", attempts: 8, createdAt: t + 2 })
        for (const d of [d1, d1b, d2]) yield* repo.insertDelivery(d)
        const all = { terminalIds: [terminal.id], test: null, limit: 10 }
        const page = yield* repo.pageEvents(all)
        assert.deepStrictEqual(page.map((p) => p.event.id), [e4.id, e3.id, e2.id, e1.id])
        assert.deepStrictEqual(page.map((p) => p.delivery?.id ?? null), [null, null, d2.id, d1b.id])
        assert.deepStrictEqual(page[3]!.event, e1)
        assert.deepStrictEqual(page[3]!.delivery, d1b)
        const ids = (filter: Partial<Parameters<typeof repo.pageEvents>[0]>) =>
          Effect.map(repo.pageEvents({ ...all, ...filter }), (rows) => rows.map((r) => r.event.id))
        assert.deepStrictEqual(yield* ids({ test: true }), [e4.id])
        assert.deepStrictEqual(yield* ids({ test: false }), [e3.id, e2.id, e1.id])
        assert.deepStrictEqual(yield* ids({ eventType: "payment.paid" }), [e2.id])
        assert.deepStrictEqual(yield* ids({ objectId: payment.id }), [e2.id, e1.id])
        assert.deepStrictEqual(yield* ids({ objectId: payout.id }), [e3.id])
        assert.deepStrictEqual(yield* ids({ objectId: Fixtures.uuid() }), [])
        // `createdFrom` inclusive, `createdBefore` exclusive.
        assert.deepStrictEqual(yield* ids({ createdFrom: t + 2, createdBefore: t + 4 }), [e3.id, e2.id])
        assert.deepStrictEqual(yield* ids({ createdFrom: t + 2, createdBefore: t + 3 }), [e2.id])
        assert.deepStrictEqual(yield* ids({ deliveryStatus: "failed" }), [e2.id])
        assert.deepStrictEqual(yield* ids({ deliveryStatus: "delivered" }), [e1.id])
        assert.deepStrictEqual(yield* ids({ deliveryStatus: "none" }), [e4.id, e3.id])
        assert.deepStrictEqual(yield* ids({ before: { createdAt: e3.createdAt, sequence: e3.sequence, id: e3.id }, limit: 1 }), [e2.id])
        // One payment's events written in the same millisecond keep their order (sequence).
        const same = Fixtures.outboxEvent(terminal.id, { paymentId: payment.id, createdAt: t + 50, sequence: 3 })
        const sameLater = Fixtures.outboxEvent(terminal.id, { paymentId: payment.id, createdAt: t + 50, sequence: 4 })
        yield* repo.insertEvent(sameLater)
        yield* repo.insertEvent(same)
        assert.deepStrictEqual(yield* ids({ createdFrom: t + 50 }), [sameLater.id, same.id])
        assert.deepStrictEqual(yield* ids({ createdFrom: t + 50, before: { createdAt: t + 50, sequence: 4, id: sameLater.id } }), [same.id])
        assert.deepStrictEqual(yield* ids({ terminalIds: [Fixtures.uuid()] }), [])
        assert.deepStrictEqual(yield* repo.deliveriesOf(e1.id), [d1, d1b])
        assert.deepStrictEqual(yield* repo.deliveriesOf(Fixtures.uuid()), [])
        // A delivered event stays delivered when a later resend fails: the delivery that delivered it is its listing's.
        const d1c = Fixtures.delivery(e1, { kind: "resend", status: "failed", attempts: 1, createdAt: t + 20 })
        yield* repo.insertDelivery(d1c)
        assert.deepStrictEqual((yield* repo.pageEvents({ ...all, objectId: payment.id })).map((p) => p.delivery?.id), [sameLater, same, e2, e1].map((e) =>
          e === e2 ? d2.id : e === e1 ? d1b.id : undefined))
        assert.deepStrictEqual(yield* ids({ deliveryStatus: "failed" }), [e2.id])
        assert.deepStrictEqual(yield* ids({ deliveryStatus: "delivered" }), [e1.id])
      }))

    it.effect("lastSequence is the highest sequence of a payment's or payout's events", () =>
      Effect.gen(function*() {
        const { terminal, payment, repo } = yield* setup
        assert.strictEqual(yield* repo.lastSequence(payment.id), 0)
        yield* repo.insertEvent(Fixtures.outboxEvent(terminal.id, { paymentId: payment.id, sequence: 1 }))
        yield* repo.insertEvent(Fixtures.outboxEvent(terminal.id, { paymentId: payment.id, sequence: 3 }))
        const payout = Fixtures.payout(terminal.id)
        yield* (yield* PayoutRepository).insert(payout)
        yield* repo.insertEvent(Fixtures.outboxEvent(terminal.id, { payoutId: payout.id, sequence: 2 }))
        assert.strictEqual(yield* repo.lastSequence(payment.id), 3)
        assert.strictEqual(yield* repo.lastSequence(payout.id), 2)
        assert.strictEqual(yield* repo.lastSequence(Fixtures.uuid()), 0)
      }))

    it.effect("attemptFacts: the latest attempt, the latest success and the first failure after it", () =>
      Effect.gen(function*() {
        const { terminal, repo, seed } = yield* setup
        assert.deepStrictEqual(yield* repo.attemptFacts(terminal.id), { last: null, lastSuccessAt: null, firstFailureAfterSuccess: null })
        const { delivery } = yield* seed()
        const t = Fixtures.baseTime
        const attempt = (n: number, at: number, error: string | null): Callback.Attempt => ({
          id: Fixtures.uuid(),
          deliveryId: delivery.id,
          attemptNumber: n,
          at,
          url: "https://shop.example/cb",
          statusCode: error === null ? 200 : 500,
          latencyMs: 5,
          error,
          responseBody: null
        })
        yield* repo.insertAttempt(attempt(1, t + 100, "HTTP 500"))
        yield* repo.insertAttempt(attempt(2, t + 200, null))
        yield* repo.insertAttempt(attempt(3, t + 300, "HTTP 500"))
        const last = attempt(4, t + 400, "connection refused")
        yield* repo.insertAttempt(last)
        assert.deepStrictEqual(yield* repo.attemptFacts(terminal.id), { last, lastSuccessAt: t + 200, firstFailureAfterSuccess: t + 300 })
      }))

    it.effect("purge deletes old finished events with their deliveries and attempts, keeps pending and recent ones", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const t = Fixtures.baseTime
        const old = yield* seed({ createdAt: t }, { status: "delivered", attempts: 1, createdAt: t })
        yield* repo.insertAttempt({
          id: Fixtures.uuid(), deliveryId: old.delivery.id, attemptNumber: 1, at: t, url: "u", statusCode: 200, latencyMs: 1, error: null, responseBody: null
        })
        const oldPending = yield* seed({ createdAt: t }, { status: "pending", createdAt: t })
        const recent = yield* seed({ createdAt: t + 10_000 }, { status: "delivered", attempts: 1, createdAt: t + 10_000 })
        // The suite's other tests share the store: their old finished events go too.
        assert.isAtLeast(yield* repo.purge(t + 5_000), 1)
        none(yield* repo.getEvent(old.event.id))
        none(yield* repo.getDelivery(old.delivery.id))
        assert.deepStrictEqual(yield* repo.listAttempts(old.delivery.id), [])
        some(yield* repo.getEvent(oldPending.event.id))
        some(yield* repo.getEvent(recent.event.id))
        assert.strictEqual(yield* repo.purge(t + 5_000), 0)
      }))
  })
