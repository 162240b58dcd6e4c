/**
 * Contract suite of test clocks in the store: `TestClockRepository` (round trip, optimistic
 * updates, listing, `markWorkDue`, the leasing claim `claimPending`, deleted clocks, `expire`,
 * `purgeDeleted` of a deleted clock's objects), and the clock scope of the
 * other repositories' claims — the global scope (no clock) never takes a clock's rows, a clock's
 * scope takes only its own — with their "earliest due moment of a clock" queries.
 *
 * Every clock is the test's own, so the earliest-moment queries see only the test's rows; claims in
 * the global scope use timestamps near zero and look only at the test's rows.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import {
  AccountRepository,
  ChargeRepository,
  OutboxRepository,
  PaymentRepository,
  PlanRepository,
  SubscriptionRepository,
  TerminalRepository,
  TestClockRepository,
  Transactions
} from "@paydesk/core"
import type { Callback, Subscription } from "@paydesk/core"
import * as Fixtures from "../Fixtures.js"
import { concurrently, expectWriteConflict, ids, none, only, some } from "./Support.js"

/** What the suite needs. */
export type Requirements =
  | TestClockRepository
  | PaymentRepository
  | SubscriptionRepository
  | ChargeRepository
  | OutboxRepository
  | PlanRepository
  | AccountRepository
  | TerminalRepository
  | Transactions

/** Registers the test clock contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`TestClockRepository contract (${name})`, (it) => {
    const setup = Effect.gen(function*() {
      const { terminal } = yield* Fixtures.seedTerminal()
      const plan = yield* Fixtures.seedPlan([terminal.id])
      const repo = yield* TestClockRepository
      const clock = yield* Fixtures.seedTestClock(terminal.id)
      const other = yield* Fixtures.seedTestClock(terminal.id)
      const subscription = (overrides: Partial<Subscription.Subscription>) =>
        Effect.gen(function*() {
          const s = Fixtures.subscription(terminal.id, plan.id, {
            providerState: "active", billingStatus: "enabled", environment: "sandbox", createdAt: 0, updatedAt: 0, ...overrides
          })
          yield* (yield* SubscriptionRepository).insert(s)
          return s
        })
      const payment = (overrides: Parameters<typeof Fixtures.payment>[1]) =>
        Fixtures.seedPayment(terminal.id, { environment: "sandbox", createdAt: 0, updatedAt: 0, ...overrides })
      return { terminal, repo, clock, other, subscription, payment }
    })

    it.effect("insert and get round-trip every field; updates are optimistic", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const full = yield* Fixtures.seedTestClock(terminal.id, {
          name: "Январь", frozenTime: Date.parse("2026-01-31T07:00:00.000Z"), status: "advancing",
          targetTime: Date.parse("2026-05-01T00:00:00.000Z"), leaseUntil: Fixtures.baseTime + 60_000, workDue: true
        })
        assert.deepStrictEqual(some(yield* repo.get(full.id)), full)
        assert.deepStrictEqual(some(yield* repo.getForUpdate(full.id)), full)
        const moved = { ...full, frozenTime: full.frozenTime + 1, status: "ready" as const, targetTime: null, leaseUntil: null, version: 2 }
        yield* repo.update({ ...moved, workDue: false })
        // Every field but workDue, which only markWorkDue sets and claimPending clears.
        assert.deepStrictEqual(some(yield* repo.get(full.id)), moved)
        yield* expectWriteConflict(repo.update({ ...moved, version: 2 }))
        yield* expectWriteConflict(repo.insert(full))
        assert.isTrue((yield* repo.get(Fixtures.uuid()))._tag === "None")
        assert.isTrue((yield* repo.get("not-a-uuid"))._tag === "None")
      }))

    it.effect("list returns the terminals' clocks newest first with the total", () =>
      Effect.gen(function*() {
        const { terminal, repo, clock, other } = yield* setup
        const newer = yield* Fixtures.seedTestClock(terminal.id, { createdAt: Fixtures.baseTime + 1 })
        const { terminal: foreign } = yield* Fixtures.seedTerminal()
        yield* Fixtures.seedTestClock(foreign.id)
        const page = yield* repo.list([terminal.id], { limit: 2, offset: 0 })
        assert.strictEqual(page.total, 3)
        assert.deepStrictEqual(page.items[0], newer)
        assert.strictEqual(page.items.length, 2)
        const rest = yield* repo.list([terminal.id], { limit: 2, offset: 2 })
        assert.deepStrictEqual(new Set(ids([...page.items, ...rest.items])), new Set(ids([newer, clock, other])))
        assert.deepStrictEqual(yield* repo.list([], { limit: 10, offset: 0 }), { items: [], total: 0 })
      }))

    it.effect("claimPending leases advancing clocks and ready ones with work due or a lease that ran out, once per lease", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const now = Fixtures.baseTime + 1_000_000
        const waiting = [
          yield* Fixtures.seedTestClock(terminal.id, { status: "advancing", targetTime: 5, leaseUntil: null }),
          yield* Fixtures.seedTestClock(terminal.id, { status: "advancing", targetTime: 5, leaseUntil: now }),
          yield* Fixtures.seedTestClock(terminal.id, { workDue: true }),
          // Ready, its holder gone (a lease that ran out: a worker that died running its due work).
          yield* Fixtures.seedTestClock(terminal.id, { leaseUntil: now })
        ]
        const notWaiting = [
          yield* Fixtures.seedTestClock(terminal.id, { status: "advancing", targetTime: 5, leaseUntil: now + 1 }),
          yield* Fixtures.seedTestClock(terminal.id, { workDue: true, leaseUntil: now + 1 }),
          yield* Fixtures.seedTestClock(terminal.id)
        ]
        const marked = yield* Fixtures.seedTestClock(terminal.id)
        yield* repo.markWorkDue(marked.id)
        assert.strictEqual(some(yield* repo.get(marked.id)).version, 1, "markWorkDue keeps the version")
        const claimed = yield* repo.claimPending(now, now + 60_000, 1_000)
        const mine = [...waiting, marked]
        assert.deepStrictEqual(new Set(ids(only(claimed, [...mine, ...notWaiting]))), new Set(ids(mine)))
        for (const c of only(claimed, mine)) {
          const before = mine.find((m) => m.id === c.id)!
          assert.deepStrictEqual(c, { ...before, leaseUntil: now + 60_000, workDue: false, version: before.version + 1 })
          assert.deepStrictEqual(some(yield* repo.get(c.id)), c)
        }
        assert.deepStrictEqual(only(yield* repo.claimPending(now, now + 60_000, 1_000), mine), [])
        // Concurrent claims never share a clock.
        const racing = yield* Effect.forEach([1, 2, 3, 4], () => Fixtures.seedTestClock(terminal.id, { workDue: true }))
        const exits = yield* concurrently(4, () =>
          Effect.flatMap(Transactions, (tx) => tx.run(repo.claimPending(now, now + 60_000, 1_000))))
        const taken = exits.flatMap((exit) => exit._tag === "Success" ? only(exit.value, racing) : [])
        assert.strictEqual(taken.length, racing.length)
        assert.strictEqual(new Set(ids(taken)).size, racing.length)
      }))

    it.effect("claimPending takes each terminal's least recently worked clock first, then each one's second: a terminal with many waiting takes one place while others wait", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const { terminal: other } = yield* Fixtures.seedTerminal()
        const now = Fixtures.baseTime + 2_000_000
        // Whatever else waits is taken first (its lease then runs past `now`).
        yield* repo.claimPending(now, now + 60_000, 1_000)
        const at = (n: number) => Fixtures.baseTime + n
        const many = yield* Effect.forEach([1, 2, 3, 4, 5], (n) => Fixtures.seedTestClock(terminal.id, { workDue: true, updatedAt: at(n) }))
        const late = yield* Fixtures.seedTestClock(other.id, { workDue: true, updatedAt: at(10) })
        // Before, the 4 places went to the busy terminal's 4 oldest clocks; the other waited for them.
        assert.deepStrictEqual(ids(yield* repo.claimPending(now, now + 60_000, 2)), [many[0]!.id, late.id])
        assert.deepStrictEqual(ids(yield* repo.claimPending(now, now + 60_000, 2)), [many[1]!.id, many[2]!.id])
      }))

    it.effect("a deleted clock is absent for every read and claim; expire deletes ready clocks past deletesAfter", () =>
      Effect.gen(function*() {
        const { terminal, repo, clock } = yield* setup
        const now = Fixtures.baseTime + 1_000_000
        const gone = yield* Fixtures.seedTestClock(terminal.id, { workDue: true })
        const deleted = { ...gone, deletedAt: now, updatedAt: now, version: 2 }
        yield* repo.update(deleted)
        none(yield* repo.get(gone.id), "deleted clock")
        none(yield* repo.getForUpdate(gone.id), "deleted clock")
        assert.notInclude(ids((yield* repo.list([terminal.id], { limit: 100, offset: 0 })).items), gone.id)
        assert.deepStrictEqual(only(yield* repo.claimPending(now, now + 60_000, 1_000), [gone]), [])
        yield* repo.markWorkDue(gone.id)
        yield* expectWriteConflict(repo.update({ ...deleted, deletedAt: null, version: 3 }))
        // expire: ready clocks whose deletesAfter has passed, not an advancing one, not one deleted already.
        const due = yield* Fixtures.seedTestClock(terminal.id, { deletesAfter: now })
        const later = yield* Fixtures.seedTestClock(terminal.id, { deletesAfter: now + 1 })
        const advancing = yield* Fixtures.seedTestClock(terminal.id, { deletesAfter: now, status: "advancing", targetTime: 5 })
        const before = new Set(ids((yield* repo.list([terminal.id], { limit: 100, offset: 0 })).items))
        assert.isTrue(before.has(due.id) && before.has(later.id) && before.has(advancing.id) && before.has(clock.id))
        const expired = yield* repo.expire(now, 1_000)
        assert.isAtLeast(expired, 1)
        none(yield* repo.get(due.id), "expired clock")
        assert.deepStrictEqual(some(yield* repo.get(later.id)), later)
        assert.deepStrictEqual(some(yield* repo.get(advancing.id)), advancing)
        assert.strictEqual(yield* repo.expire(now, 1_000), 0)
        // The expired clock carries its deletion time: a purge at that time takes it (and the one deleted above).
        let purged = 0
        for (let n = yield* repo.purgeDeleted(now, now, 1_000); n > 0; n = yield* repo.purgeDeleted(now, now, 1_000)) purged += n
        assert.isAtLeast(purged, 2)
      }))

    it.effect("purgeDeleted deletes a deleted clock's objects children first, then the clock, and nothing else", () =>
      Effect.gen(function*() {
        const { terminal, repo, clock, other, subscription, payment } = yield* setup
        const outbox = yield* OutboxRepository
        const charges = yield* ChargeRepository
        const objects = (testClockId: string | null) =>
          Effect.gen(function*() {
            const sub = yield* subscription({ testClockId, ...(testClockId === null ? { environment: "prod" as const } : {}) })
            const paid = yield* payment({ testClockId, subscriptionId: sub.id, status: "paid", ...(testClockId === null ? { environment: "prod" as const } : {}) })
            const open = yield* payment({ testClockId, ...(testClockId === null ? { environment: "prod" as const } : {}) })
            const charge = Fixtures.charge(sub, { status: "payed", paymentId: paid.id, createdAt: 0, updatedAt: 0 })
            yield* charges.insert(charge)
            const events = [] as Array<Callback.OutboxEvent>
            const deliveries = [] as Array<Callback.Delivery>
            for (const p of [paid, open]) {
              const event = Fixtures.outboxEvent(terminal.id, { testClockId, test: testClockId !== null, paymentId: p.id, createdAt: 0 })
              yield* outbox.insertEvent(event)
              const delivery = Fixtures.delivery(event, { createdAt: 0 })
              yield* outbox.insertDelivery(delivery)
              const resend = Fixtures.delivery(event, { kind: "resend", createdAt: 0 })
              yield* outbox.insertDelivery(resend)
              const attempt = Fixtures.attempt(delivery.id)
              assert.isTrue(yield* outbox.recordAttempt(attempt, { ...delivery, attempts: 1, lastStatusCode: 500 }, 0))
              events.push(event)
              deliveries.push(delivery, resend)
            }
            return { sub, payments: [paid, open], charge, events, deliveries }
          })
        const mine = yield* objects(clock.id)
        const theirs = yield* objects(other.id)
        const live = yield* objects(null)
        const deletedAt = Fixtures.baseTime + 5_000
        yield* repo.update({ ...clock, deletedAt, updatedAt: deletedAt, version: clock.version + 1 })
        // Not before `before` reaches the deletion, nor while a lease holds the clock.
        assert.strictEqual(yield* repo.purgeDeleted(deletedAt - 1, deletedAt, 1), 0)
        const held = yield* Fixtures.seedTestClock(terminal.id, { leaseUntil: deletedAt + 10, deletedAt })
        // One row at a time: everything of the clock goes, in an order every foreign key allows.
        let rows = 0
        for (let i = 0; i < 100; i++) {
          // A limit below 1 is taken as 1 (it once deleted the clock and left its objects behind).
          const n = yield* repo.purgeDeleted(deletedAt, deletedAt, i === 0 ? 0 : 1)
          if (n === 0) break
          rows += n
        }
        // 2 events, 4 deliveries, 2 attempts (an event's deliveries and attempts go with it), 1 charge,
        // 2 payments, 1 subscription, the clock.
        assert.strictEqual(rows, 2 + 4 + 2 + 1 + 2 + 1 + 1)
        for (const p of mine.payments) none(yield* (yield* PaymentRepository).get(p.id), "purged payment")
        none(yield* (yield* SubscriptionRepository).get(mine.sub.id), "purged subscription")
        none(yield* charges.get(mine.charge.id), "purged charge")
        for (const e of mine.events) none(yield* outbox.getEvent(e.id), "purged event")
        for (const d of mine.deliveries) none(yield* outbox.getDelivery(d.id), "purged delivery")
        // The other clock's objects and the live ones stay, as does the clock still leased.
        for (const kept of [theirs, live]) {
          for (const p of kept.payments) some(yield* (yield* PaymentRepository).get(p.id), "kept payment")
          some(yield* (yield* SubscriptionRepository).get(kept.sub.id), "kept subscription")
          some(yield* charges.get(kept.charge.id), "kept charge")
          for (const e of kept.events) some(yield* outbox.getEvent(e.id), "kept event")
          for (const d of kept.deliveries) some(yield* outbox.getDelivery(d.id), "kept delivery")
          assert.strictEqual((yield* outbox.listAttempts(kept.deliveries[0]!.id)).length, 1)
        }
        some(yield* repo.get(other.id), "other clock")
        // The held clock goes once its lease has ended.
        assert.strictEqual(yield* repo.purgeDeleted(deletedAt, deletedAt + 9, 1_000), 0)
        assert.strictEqual(yield* repo.purgeDeleted(deletedAt, deletedAt + 10, 1_000), 1)
        assert.strictEqual(yield* repo.purgeDeleted(deletedAt, deletedAt + 10, 1_000), 0)
        none(yield* repo.get(held.id), "deleted clock")
      }))

    it.effect("pageEvents: the retention's window leaves out old events on no clock, never a clock's (they carry its time)", () =>
      Effect.gen(function*() {
        const { terminal, clock } = yield* setup
        const outbox = yield* OutboxRepository
        const t = Fixtures.baseTime
        const oldLive = Fixtures.outboxEvent(terminal.id, { test: true, createdAt: t - 2_000 })
        const newLive = Fixtures.outboxEvent(terminal.id, { test: true, createdAt: t })
        const oldClock = Fixtures.outboxEvent(terminal.id, { test: true, testClockId: clock.id, createdAt: t - 3_000 })
        const liveOnly = Fixtures.outboxEvent(terminal.id, { test: false, createdAt: t - 1_000 })
        for (const e of [oldLive, newLive, oldClock, liveOnly]) yield* outbox.insertEvent(e)
        const ids = (filter: { readonly test: boolean | null; readonly createdFrom?: number }) =>
          Effect.map(outbox.pageEvents({ terminalIds: [terminal.id], limit: 10, retainedFrom: t - 1_500, ...filter }), (rows) => rows.map((r) => r.event.id))
        assert.deepStrictEqual(yield* ids({ test: true }), [newLive.id, oldClock.id])
        assert.deepStrictEqual(yield* ids({ test: null }), [newLive.id, liveOnly.id, oldClock.id])
        assert.deepStrictEqual(yield* ids({ test: false }), [liveOnly.id])
        // An explicit createdFrom applies to every event, a clock's included.
        assert.deepStrictEqual(yield* ids({ test: true, createdFrom: t - 2_500 }), [newLive.id])
      }))

    it.effect("payments: claimExpired takes a clock's rows in its scope only; earliestExpiry", () =>
      Effect.gen(function*() {
        const { terminal, clock, other, payment } = yield* setup
        const live = yield* Fixtures.seedPayment(terminal.id, { expiresAt: 1_000, createdAt: 0, updatedAt: 0 })
        const mine = [yield* payment({ testClockId: clock.id, expiresAt: 2_000 }), yield* payment({ testClockId: clock.id, expiresAt: 3_000, status: "processing" })]
        yield* payment({ testClockId: clock.id, expiresAt: 500, status: "paid" })
        const theirs = yield* payment({ testClockId: other.id, expiresAt: 1_000 })
        const all = [live, ...mine, theirs]
        const global = only(yield* (yield* PaymentRepository).claimExpired(10_000, 10_000), all)
        assert.deepStrictEqual(ids(global), [live.id])
        const scoped = yield* (yield* PaymentRepository).claimExpired(10_000, 10_000, clock.id)
        assert.deepStrictEqual(new Set(ids(scoped)), new Set(ids(mine)))
        assert.strictEqual(yield* (yield* PaymentRepository).earliestExpiry(clock.id), 2_000)
        assert.strictEqual(yield* (yield* PaymentRepository).earliestExpiry(other.id), 1_000)
        assert.strictEqual(yield* (yield* PaymentRepository).earliestExpiry(Fixtures.uuid()), null)
      }))

    it.effect("attemptFacts leave out a test clock's attempts: the endpoint's health is on real time", () =>
      Effect.gen(function*() {
        const { terminal, clock, payment } = yield* setup
        const outbox = yield* OutboxRepository
        const attempted = (testClockId: string | null, at: number, error: string | null) =>
          Effect.gen(function*() {
            const p = yield* payment({ testClockId, ...(testClockId === null ? { environment: "prod" as const } : {}) })
            const event = Fixtures.outboxEvent(terminal.id, { testClockId, test: testClockId !== null, paymentId: p.id, createdAt: 0 })
            yield* outbox.insertEvent(event)
            const delivery = Fixtures.delivery(event, { createdAt: 0 })
            yield* outbox.insertDelivery(delivery)
            const attempt = Fixtures.attempt(delivery.id, { at, error, statusCode: error === null ? 200 : 500 })
            yield* outbox.insertAttempt(attempt)
            return attempt
          })
        const live = yield* attempted(null, Fixtures.baseTime + 100, null)
        // A clock advanced years ahead: its failed attempt is later than any real one.
        yield* attempted(clock.id, Fixtures.baseTime + 10 * 365 * 86_400_000, "HTTP 500")
        assert.deepStrictEqual(yield* outbox.attemptFacts(terminal.id), { last: live, lastSuccessAt: live.at, firstFailureAfterSuccess: null })
      }))

    it.effect("subscriptions: both claims keep to their scope; earliestDue counts leases and pending stops; anyOngoing", () =>
      Effect.gen(function*() {
        const { terminal, clock, other, subscription } = yield* setup
        const subs = yield* SubscriptionRepository
        const live = yield* subscription({ environment: "prod", nextChargeAt: 1_000 })
        const mine = yield* subscription({ testClockId: clock.id, nextChargeAt: 2_000 })
        const theirs = yield* subscription({ testClockId: other.id, nextChargeAt: 1_000 })
        const all = [live, mine, theirs]
        assert.deepStrictEqual(ids(only(yield* subs.claimDue(10_000, 70_000, 10_000), all)), [live.id])
        assert.deepStrictEqual(ids(yield* subs.claimDue(10_000, 70_000, 10_000, clock.id)), [mine.id])
        // Leased until 70 000: the clock's earliest moment is the lease's end.
        assert.strictEqual(yield* subs.earliestDue(clock.id), 70_000)
        const stopping = yield* subscription({ testClockId: clock.id, billingStatus: "stop_pending", updatedAt: 40_000 })
        assert.strictEqual(yield* subs.earliestDue(clock.id), 40_000)
        const liveStop = yield* subscription({ environment: "prod", billingStatus: "stop_pending" })
        assert.deepStrictEqual(ids(only(yield* subs.claimStopPending(50_000, 110_000, 10_000), [liveStop, stopping])), [liveStop.id])
        assert.deepStrictEqual(ids(yield* subs.claimStopPending(50_000, 110_000, 10_000, clock.id)), [stopping.id])
        assert.strictEqual(yield* subs.earliestDue(clock.id), 70_000)
        // Subscriptions not in charge (review, stopped) are never due.
        yield* subscription({ testClockId: other.id, billingStatus: "review", nextChargeAt: null })
        assert.strictEqual(yield* subs.earliestDue(other.id), 1_000)
        assert.strictEqual(yield* subs.earliestDue(Fixtures.uuid()), null)
        // anyOngoing: a clock holding a subscription that is not stopped, whether or not anything is due.
        const third = yield* Fixtures.seedTestClock(terminal.id)
        assert.isFalse(yield* subs.anyOngoing(third.id))
        yield* subscription({ testClockId: third.id, billingStatus: "stopped", nextChargeAt: null })
        assert.isFalse(yield* subs.anyOngoing(third.id))
        yield* subscription({ testClockId: third.id, billingStatus: "consent_pending", nextChargeAt: null })
        assert.isTrue(yield* subs.anyOngoing(third.id))
        assert.isTrue(yield* subs.anyOngoing(clock.id))
        assert.isFalse(yield* subs.anyOngoing(Fixtures.uuid()))
        assert.isFalse(yield* subs.anyOngoing("not-a-uuid"))
      }))

    it.effect("charges: open attempts of stopped subscriptions are claimed in their clock's scope; earliestOpenOfStopped", () =>
      Effect.gen(function*() {
        const { clock, other, subscription } = yield* setup
        const charges = yield* ChargeRepository
        const stopped = { providerState: "stop", billingStatus: "stopped", nextChargeAt: null } as const
        const liveSub = yield* subscription({ ...stopped, environment: "prod" })
        const mineSub = yield* subscription({ ...stopped, testClockId: clock.id })
        const theirsSub = yield* subscription({ ...stopped, testClockId: other.id })
        const seed = (sub: Subscription.Subscription, updatedAt: number, status: "pending" | "unconfirmed" | "payed" = "pending", cycleNumber = 1) =>
          Effect.tap(Effect.succeed(Fixtures.charge(sub, { status, updatedAt, createdAt: 0, cycleNumber })), (c) => charges.insert(c))
        const live = yield* seed(liveSub, 1_000)
        const mine = yield* seed(mineSub, 3_000, "unconfirmed")
        yield* seed(mineSub, 2_000, "payed", 2)
        const theirs = yield* seed(theirsSub, 1_000)
        // Each rests as long as it has been open (all opened at 0), from 1 s to 5 s.
        const backoff = { minMs: 1_000, maxMs: 5_000 }
        assert.strictEqual(yield* charges.earliestOpenOfStopped(clock.id, backoff), 6_000)
        assert.strictEqual(yield* charges.earliestOpenOfStopped(other.id, backoff), 2_000)
        const all = [live, mine, theirs]
        assert.deepStrictEqual(ids(only(yield* charges.claimOpenOfStopped(10_000, backoff, 10_000), all)), [live.id])
        assert.deepStrictEqual(ids(yield* charges.claimOpenOfStopped(10_000, backoff, 10_000, clock.id)), [mine.id])
        // Claiming touches the attempt: open 10 s, it rests the maximum, 5 s.
        assert.strictEqual(yield* charges.earliestOpenOfStopped(clock.id, backoff), 15_000)
        assert.strictEqual(yield* charges.earliestOpenOfStopped(Fixtures.uuid(), backoff), null)
      }))

    it.effect("deliveries: claimDue keeps to its scope; earliestDelivery; purge keeps a clock's events", () =>
      Effect.gen(function*() {
        const { terminal, clock, other } = yield* setup
        const outbox = yield* OutboxRepository
        const seed = (testClockId: string | null, nextAttemptAt: number, status: Callback.DeliveryStatus = "pending") =>
          Effect.gen(function*() {
            const event = Fixtures.outboxEvent(terminal.id, { testClockId, test: testClockId !== null, createdAt: 0 })
            yield* outbox.insertEvent(event)
            const delivery = Fixtures.delivery(event, { nextAttemptAt, status, createdAt: 0 })
            yield* outbox.insertDelivery(delivery)
            return { event, delivery }
          })
        const live = yield* seed(null, 1_000)
        const mine = [yield* seed(clock.id, 3_000), yield* seed(clock.id, 2_000)]
        yield* seed(clock.id, 500, "delivered")
        const theirs = yield* seed(other.id, 1_000)
        assert.strictEqual(some(yield* outbox.getEvent(mine[0]!.event.id)).testClockId, clock.id)
        assert.strictEqual(some(yield* outbox.getDelivery(mine[0]!.delivery.id)).testClockId, clock.id)
        assert.strictEqual(yield* outbox.earliestDelivery(clock.id), 2_000)
        const everyone = [live, ...mine, theirs].map((d) => d.delivery)
        const global = (yield* outbox.claimDue(10_000, 70_000, 10_000)).map((c) => c.delivery)
        assert.deepStrictEqual(ids(only(global, everyone)), [live.delivery.id])
        // Stamped, as a pass claims them.
        const scoped = yield* outbox.claimDue(10_000, 70_000, 10_000, clock.id, { keepFrom: 10_000 })
        assert.deepStrictEqual(scoped.map((c) => c.delivery.id), [mine[1]!.delivery.id, mine[0]!.delivery.id])
        assert.deepStrictEqual(scoped.map((c) => c.event.testClockId), [clock.id, clock.id])
        assert.strictEqual(yield* outbox.earliestDelivery(clock.id), 70_000)
        assert.strictEqual(yield* outbox.earliestDelivery(Fixtures.uuid()), null)
        // The clock's claimed deliveries (a dead worker's) are due again at the clock's time; a scheduled
        // retry (no claim: no stamp), another clock's and a live one keep their time.
        const retry = yield* seed(clock.id, 90_000)
        const theirsClaimed = (yield* outbox.claimDue(10_000, 70_000, 10_000, other.id, { keepFrom: 10_000 })).map((c) => c.delivery.id)
        assert.deepStrictEqual(theirsClaimed, [theirs.delivery.id])
        assert.strictEqual(yield* outbox.releaseLeases(clock.id, 12_000), 2)
        assert.strictEqual(yield* outbox.releaseLeases(clock.id, 12_000), 0)
        assert.strictEqual(yield* outbox.releaseLeases(Fixtures.uuid(), 12_000), 0)
        const next = (id: string) => Effect.map(outbox.getDelivery(id), (d) => some(d).nextAttemptAt)
        assert.deepStrictEqual(yield* Effect.forEach([...mine.map((d) => d.delivery.id), retry.delivery.id, theirs.delivery.id], next), [12_000, 12_000, 90_000, 70_000])
        assert.strictEqual(yield* outbox.earliestDelivery(clock.id), 12_000)
        // A clock's finished events are not purged by the wall clock's retention.
        const old = yield* seed(clock.id, 0, "delivered")
        yield* outbox.purge(Fixtures.baseTime * 2)
        some(yield* outbox.getEvent(old.event.id))
      }))
  })
