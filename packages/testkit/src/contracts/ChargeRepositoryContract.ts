/**
 * Contract suite of `ChargeRepository`: round trip, the unique `(subscription, cycle, attempt)`
 * that keeps two workers from starting one attempt, whole-record updates, both listings and the
 * claim of open attempts of stopped subscriptions.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import {
  AccountRepository,
  Charge,
  ChargeRepository,
  PaymentRepository,
  PlanRepository,
  SubscriptionRepository,
  TerminalRepository,
  Transactions
} from "@paydesk/core"
import * as Fixtures from "../Fixtures.js"
import { expectWriteConflict, ids, none, some } from "./Support.js"

/** What the suite needs. */
export type Requirements =
  | ChargeRepository
  | SubscriptionRepository
  | PlanRepository
  | PaymentRepository
  | AccountRepository
  | TerminalRepository
  | Transactions

/** Registers the `ChargeRepository` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`ChargeRepository contract (${name})`, (it) => {
    const setup = Effect.gen(function*() {
      const { terminal } = yield* Fixtures.seedTerminal()
      const subscription = yield* Fixtures.seedSubscription(terminal.id)
      const repo = yield* ChargeRepository
      const seed = (overrides: Partial<Charge.Charge> = {}) =>
        Effect.gen(function*() {
          const c = Fixtures.charge(subscription, overrides)
          yield* repo.insert(c)
          return c
        })
      return { terminal, subscription, repo, seed }
    })

    it.effect("insert and get round-trip every field", () =>
      Effect.gen(function*() {
        const { terminal, subscription, repo, seed } = yield* setup
        const pending = yield* seed()
        const payment = yield* Fixtures.seedPayment(terminal.id, { subscriptionId: subscription.id, status: "paid" })
        const paid = yield* seed({
          cycleNumber: 2,
          attempt: 3,
          kind: "first",
          status: "payed",
          validationStatus: "review",
          validationReason: "amount differs",
          paymentId: payment.id,
          amount: 9_007_199_254_740_993n,
          expectedAmount: 9_007_199_254_740_991n,
          message: "ok",
          scheduledAt: Fixtures.baseTime + 1,
          actualAt: Fixtures.baseTime + 2,
          createdAt: Fixtures.baseTime + 3,
          updatedAt: Fixtures.baseTime + 4
        })
        assert.deepStrictEqual(some(yield* repo.get(pending.id)), pending)
        assert.deepStrictEqual(some(yield* repo.get(paid.id)), paid)
        none(yield* repo.get(Fixtures.uuid()))
      }))

    it.effect("one row per (subscription, cycle, attempt)", () =>
      Effect.gen(function*() {
        const { subscription, repo, seed } = yield* setup
        const first = yield* seed({ cycleNumber: 1, attempt: 1 })
        const clash = Fixtures.charge(subscription, { cycleNumber: 1, attempt: 1 })
        yield* expectWriteConflict(repo.insert(clash))
        none(yield* repo.get(clash.id))
        yield* seed({ cycleNumber: 1, attempt: 2 })
        yield* seed({ cycleNumber: 2, attempt: 1 })
        const { terminal: other } = yield* Fixtures.seedTerminal()
        const otherSubscription = yield* Fixtures.seedSubscription(other.id)
        yield* repo.insert(Fixtures.charge(otherSubscription, { cycleNumber: 1, attempt: 1 }))
        assert.strictEqual((yield* repo.listForCycle(subscription.id, 1)).length, 2)
        assert.deepStrictEqual(some(yield* repo.get(first.id)), first)
      }))

    it.effect("concurrent inserts of one attempt: exactly one wins", () =>
      Effect.gen(function*() {
        const { subscription, repo } = yield* setup
        const tx = yield* Transactions
        const exits = yield* Effect.forEach(
          Array.from({ length: 8 }, () => Fixtures.charge(subscription, { cycleNumber: 5, attempt: 1 })),
          (c) => Effect.exit(tx.run(repo.insert(c))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(exits.filter((e) => e._tag === "Success").length, 1)
        assert.strictEqual((yield* repo.listForCycle(subscription.id, 5)).length, 1)
      }))

    it.effect("update stores the whole record", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const pending = yield* seed()
        const failed: Charge.Charge = {
          ...pending,
          status: "fail",
          message: "declined",
          actualAt: Fixtures.baseTime + 100,
          updatedAt: Fixtures.baseTime + 100
        }
        yield* repo.update(failed)
        assert.deepStrictEqual(some(yield* repo.get(pending.id)), failed)
      }))

    it.effect("listForCycle returns one cycle's attempts, lowest attempt first", () =>
      Effect.gen(function*() {
        const { subscription, repo, seed } = yield* setup
        const third = yield* seed({ cycleNumber: 4, attempt: 3 })
        const first = yield* seed({ cycleNumber: 4, attempt: 1 })
        const second = yield* seed({ cycleNumber: 4, attempt: 2 })
        yield* seed({ cycleNumber: 5, attempt: 1 })
        assert.deepStrictEqual(yield* repo.listForCycle(subscription.id, 4), [first, second, third])
        assert.deepStrictEqual(yield* repo.listForCycle(subscription.id, 6), [])
      }))

    it.effect("listBySubscription is newest first (createdAt, then cycle and attempt) up to limit", () =>
      Effect.gen(function*() {
        const { subscription, repo, seed } = yield* setup
        const t = Fixtures.baseTime
        const c1a1 = yield* seed({ cycleNumber: 1, attempt: 1, createdAt: t })
        const c1a2 = yield* seed({ cycleNumber: 1, attempt: 2, createdAt: t + 10 })
        const c2a1 = yield* seed({ cycleNumber: 2, attempt: 1, createdAt: t + 20 })
        const c2a2 = yield* seed({ cycleNumber: 2, attempt: 2, createdAt: t + 20 })
        const c3a1 = yield* seed({ cycleNumber: 3, attempt: 1, createdAt: t + 20 })
        const all = yield* repo.listBySubscription(subscription.id, 10)
        assert.deepStrictEqual(ids(all), ids([c3a1, c2a2, c2a1, c1a2, c1a1]))
        assert.deepStrictEqual(ids(yield* repo.listBySubscription(subscription.id, 2)), ids([c3a1, c2a2]))
        assert.deepStrictEqual(yield* repo.listBySubscription(Fixtures.uuid(), 10), [])
      }))

    it.effect("listBySubscription with bookedOnly leaves pending attempts out before the limit", () =>
      Effect.gen(function*() {
        const { subscription, repo, seed } = yield* setup
        const t = Fixtures.baseTime
        const booked = yield* seed({ cycleNumber: 1, attempt: 1, status: "payed", createdAt: t })
        const unconfirmed = yield* seed({ cycleNumber: 2, attempt: 1, status: "unconfirmed", createdAt: t + 10 })
        yield* seed({ cycleNumber: 3, attempt: 1, status: "pending", createdAt: t + 20 })
        yield* seed({ cycleNumber: 4, attempt: 1, status: "pending", createdAt: t + 30 })
        assert.deepStrictEqual(ids(yield* repo.listBySubscription(subscription.id, 2, { bookedOnly: true })), ids([unconfirmed, booked]))
        assert.strictEqual((yield* repo.listBySubscription(subscription.id, 2)).length, 2)
        assert.strictEqual((yield* repo.listBySubscription(subscription.id, 10)).length, 4)
      }))

    it.effect("claimOpenOfStopped takes stale open attempts of stopping or stopped subscriptions once", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const t = Fixtures.baseTime
        const stopped = yield* Fixtures.seedSubscription(terminal.id, { providerState: "stop", billingStatus: "stopped", nextChargeAt: null })
        const stopping = yield* Fixtures.seedSubscription(terminal.id, { providerState: "active", billingStatus: "stop_pending", nextChargeAt: null })
        const enabled = yield* Fixtures.seedSubscription(terminal.id, { providerState: "active", billingStatus: "enabled" })
        const review = yield* Fixtures.seedSubscription(terminal.id, { providerState: "active", billingStatus: "review", nextChargeAt: null })
        const insert = (sub: typeof stopped, overrides: Partial<Charge.Charge>) =>
          Effect.gen(function*() {
            const c = Fixtures.charge(sub, overrides)
            yield* repo.insert(c)
            return c
          })
        const oldPending = yield* insert(stopped, { cycleNumber: 1, status: "pending", updatedAt: t })
        const oldUnconfirmed = yield* insert(stopping, { cycleNumber: 1, status: "unconfirmed", updatedAt: t + 5 })
        yield* insert(stopped, { cycleNumber: 2, status: "pending", updatedAt: t + 1_000 })
        yield* insert(stopped, { cycleNumber: 3, status: "payed", updatedAt: t })
        yield* insert(stopped, { cycleNumber: 4, status: "stop", updatedAt: t })
        yield* insert(enabled, { cycleNumber: 1, status: "pending", updatedAt: t })
        yield* insert(review, { cycleNumber: 1, status: "unconfirmed", updatedAt: t })
        const tx = yield* Transactions
        const now = t + 2_000
        // A fixed rest (min = max): untouched for 1.5 s, then for 1 s.
        const claimed = yield* tx.run(repo.claimOpenOfStopped(now, { minMs: 1_500, maxMs: 1_500 }, 10))
        assert.sameMembers(ids(claimed), ids([oldPending, oldUnconfirmed]))
        for (const c of claimed) assert.strictEqual(c.updatedAt, now)
        assert.strictEqual(some(yield* repo.get(oldPending.id)).updatedAt, now)
        assert.deepStrictEqual(yield* tx.run(repo.claimOpenOfStopped(now, { minMs: 1_500, maxMs: 1_500 }, 10)), [])
        assert.strictEqual((yield* tx.run(repo.claimOpenOfStopped(now, { minMs: 1_000, maxMs: 1_000 }, 1))).length, 1)
      }))

    it.effect("claimOpenOfStopped rests an unconfirmed attempt as long as it has been open, within the backoff's bounds, a pending one the minimum (Charge.nextVoidAt)", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const t = Fixtures.baseTime
        const stopped = yield* Fixtures.seedSubscription(terminal.id, { providerState: "stop", billingStatus: "stopped", nextChargeAt: null })
        const insert = (cycleNumber: number, createdAt: number, updatedAt: number) =>
          Effect.tap(Effect.succeed(Fixtures.charge(stopped, { cycleNumber, status: "unconfirmed", createdAt, updatedAt })), (c) => repo.insert(c))
        const backoff = { minMs: 1_000, maxMs: 60_000 }
        const young = yield* insert(1, t, t + 200) // open 0.2 s at its last ask: rests the minimum, 1 s
        const middle = yield* insert(2, t, t + 10_000) // open 10 s: rests 10 s
        const old = yield* insert(3, t, t + 100_000) // open 100 s: rests the maximum, 60 s
        // Never answered (asks that failed, or a crash after the call): the minimum, however old.
        const unanswered = yield* Effect.tap(
          Effect.succeed(Fixtures.charge(stopped, { cycleNumber: 4, status: "pending", createdAt: t, updatedAt: t + 100_000 })),
          (c) => repo.insert(c)
        )
        const tx = yield* Transactions
        // (Other attempts of the store, the other tests' and those already asked, are claimed too: only `of` is looked at.)
        const claim = (now: number, of: ReadonlyArray<Charge.Charge>) =>
          Effect.map(tx.run(repo.claimOpenOfStopped(now, backoff, 100)), (claimed) => ids(claimed).filter((id) => of.some((c) => c.id === id)))
        assert.deepStrictEqual(
          [young, middle, old, unanswered].map((c) => Charge.nextVoidAt(c, backoff)),
          [t + 1_200, t + 20_000, t + 160_000, t + 101_000]
        )
        assert.deepStrictEqual(yield* claim(t + 1_199, [young]), [])
        assert.deepStrictEqual(yield* claim(t + 1_200, [young]), [young.id])
        // Asked at t + 1.2 s, it rests 1.2 s more: it has been open that long.
        assert.deepStrictEqual(yield* claim(t + 2_399, [young]), [])
        assert.deepStrictEqual(yield* claim(t + 2_400, [young]), [young.id])
        assert.deepStrictEqual(yield* claim(t + 19_999, [middle, old]), [])
        assert.deepStrictEqual(yield* claim(t + 20_000, [middle, old]), [middle.id])
        assert.deepStrictEqual(yield* claim(t + 100_999, [unanswered]), [])
        assert.deepStrictEqual(yield* claim(t + 101_000, [unanswered]), [unanswered.id])
        assert.deepStrictEqual(yield* claim(t + 159_999, [old]), [])
        assert.deepStrictEqual(yield* claim(t + 160_000, [old]), [old.id])
      }))
  })
