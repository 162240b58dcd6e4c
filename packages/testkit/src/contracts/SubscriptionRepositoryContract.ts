/**
 * Contract suite of `SubscriptionRepository`: round trip, unique pay tokens, optimistic updates,
 * listing by terminals and provider state, and the leasing claims `claimDue` and
 * `claimStopPending` (due rows only, lease and version set, skipped while leased, disjoint under
 * concurrency).
 *
 * Claimed rows use timestamps near zero so rows of other tests (around `Fixtures.baseTime`) are
 * rarely due; assertions look only at the suite's own rows.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import {
  AccountRepository,
  PaymentRepository,
  PlanRepository,
  SubscriptionRepository,
  TerminalRepository,
  Transactions
} from "@paydesk/core"
import type { Subscription } from "@paydesk/core"
import * as Fixtures from "../Fixtures.js"
import { expectWriteConflict, ids, none, only, some } from "./Support.js"

/** What the suite needs. */
export type Requirements =
  | SubscriptionRepository
  | PlanRepository
  | PaymentRepository
  | AccountRepository
  | TerminalRepository
  | Transactions

const enabled = (overrides: Partial<Subscription.Subscription> = {}): Partial<Subscription.Subscription> => ({
  providerState: "active",
  billingStatus: "enabled",
  createdAt: 0,
  updatedAt: 0,
  ...overrides
})

/** Registers the `SubscriptionRepository` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`SubscriptionRepository contract (${name})`, (it) => {
    const setup = Effect.gen(function*() {
      const { terminal } = yield* Fixtures.seedTerminal()
      const plan = yield* Fixtures.seedPlan([terminal.id])
      const repo = yield* SubscriptionRepository
      const seed = (overrides: Partial<Subscription.Subscription> = {}) =>
        Effect.gen(function*() {
          const s = Fixtures.subscription(terminal.id, plan.id, overrides)
          yield* repo.insert(s)
          return s
        })
      return { terminal, plan, repo, seed }
    })

    it.effect("insert and get round-trip every field", () =>
      Effect.gen(function*() {
        const { terminal, plan, repo, seed } = yield* setup
        const plain = yield* seed()
        const firstPayment = yield* Fixtures.seedPayment(terminal.id)
        const full = Fixtures.subscription(terminal.id, plan.id, {
          payerId: "payer-77",
          merchantSubscriptionRef: "ref-1",
          description: "Премиум",
          providerState: "active",
          billingStatus: "review",
          terms: Fixtures.terms({
            mode: "ceiling",
            interval: "quarter",
            schedule: "calendar",
            merchantAmount: 9_007_199_254_740_993n,
            payerAmount: 9_007_199_254_740_995n,
            maxCycles: 12
          }),
          h2h: true,
          successfulCycles: 3,
          consecutiveFailures: 1,
          nextCycleIndex: 4,
          nextChargeAt: Fixtures.baseTime + 1,
          chargeLeaseUntil: Fixtures.baseTime + 2,
          firstPaymentId: firstPayment.id,
          reviewReason: "charge failed",
          reviewSince: Fixtures.baseTime + 5,
          redirectUrl: "https://acquirer.example/bind/x",
          activatedAt: Fixtures.baseTime + 3,
          stoppedAt: Fixtures.baseTime + 4,
          version: 9
        })
        yield* repo.insert(full)
        for (const s of [plain, full]) {
          assert.deepStrictEqual(some(yield* repo.get(s.id)), s)
          assert.deepStrictEqual(some(yield* repo.getForUpdate(s.id)), s)
          assert.deepStrictEqual(some(yield* repo.findByPayToken(s.payToken)), s)
        }
        none(yield* repo.get(Fixtures.uuid()))
        none(yield* repo.findByPayToken(Fixtures.token()))
      }))

    it.effect("pay tokens and ids are unique", () =>
      Effect.gen(function*() {
        const { terminal, plan, repo, seed } = yield* setup
        const first = yield* seed()
        const clash = Fixtures.subscription(terminal.id, plan.id, { payToken: first.payToken })
        yield* expectWriteConflict(repo.insert(clash))
        none(yield* repo.get(clash.id))
        yield* expectWriteConflict(repo.insert({ ...first, payToken: Fixtures.token() }))
      }))

    it.effect("update stores a record one version above and rejects any other version", () =>
      Effect.gen(function*() {
        const { terminal, plan, repo, seed } = yield* setup
        const created = yield* seed()
        const consented: Subscription.Subscription = {
          ...created,
          billingStatus: "pending",
          reviewSince: Fixtures.baseTime + 7,
          updatedAt: Fixtures.baseTime + 10,
          version: created.version + 1
        }
        yield* repo.update(consented)
        assert.deepStrictEqual(some(yield* repo.get(created.id)), consented)
        yield* expectWriteConflict(repo.update({ ...consented, billingStatus: "stop_pending" }))
        yield* expectWriteConflict(repo.update({ ...consented, version: consented.version + 2 }))
        assert.deepStrictEqual(some(yield* repo.get(created.id)), consented)
        yield* expectWriteConflict(repo.update(Fixtures.subscription(terminal.id, plan.id, { version: 2 })))
        // A time set back to none is stored so.
        const cleared = { ...consented, reviewSince: null, version: consented.version + 1 }
        yield* repo.update(cleared)
        assert.deepStrictEqual(some(yield* repo.get(created.id)), cleared)
      }))

    it.effect("list filters by any of the terminals and by provider state, newest first, with totals", () =>
      Effect.gen(function*() {
        const { terminal, repo, seed } = yield* setup
        const second = yield* Fixtures.seedTerminal()
        const third = yield* Fixtures.seedTerminal()
        const secondPlan = yield* Fixtures.seedPlan([second.terminal.id, third.terminal.id])
        const a = yield* seed({ createdAt: Fixtures.baseTime + 1 })
        const b = yield* seed({ createdAt: Fixtures.baseTime + 2, providerState: "active", billingStatus: "enabled" })
        const c = Fixtures.subscription(second.terminal.id, secondPlan.id, { createdAt: Fixtures.baseTime + 3 })
        const d = Fixtures.subscription(third.terminal.id, secondPlan.id, { createdAt: Fixtures.baseTime + 4 })
        yield* repo.insert(c)
        yield* repo.insert(d)
        const page = { limit: 10, offset: 0 }
        const both = yield* repo.list({ terminalIds: [terminal.id, second.terminal.id], providerState: null }, page)
        assert.deepStrictEqual(ids(both.items), ids([c, b, a]))
        assert.strictEqual(both.total, 3)
        assert.deepStrictEqual(both.items[0], c)
        const paged = yield* repo.list({ terminalIds: [terminal.id, second.terminal.id], providerState: null }, {
          limit: 1,
          offset: 1
        })
        assert.deepStrictEqual(paged, { items: [b], total: 3 })
        const active = yield* repo.list({ terminalIds: [terminal.id, second.terminal.id], providerState: "active" }, page)
        assert.deepStrictEqual(active, { items: [b], total: 1 })
        assert.deepStrictEqual(yield* repo.list({ terminalIds: [terminal.id], providerState: "stop" }, page), {
          items: [],
          total: 0
        })
        assert.deepStrictEqual(yield* repo.list({ terminalIds: [], providerState: null }, page), { items: [], total: 0 })
      }))

    it.effect("list after a position: the filter's subscriptions after it newest first, offset from there, the total of the whole filter", () =>
      Effect.gen(function*() {
        const { terminal, repo, seed } = yield* setup
        const second = yield* Fixtures.seedTerminal()
        const secondPlan = yield* Fixtures.seedPlan([second.terminal.id])
        // Six new subscriptions of two terminals, three of them created in the same millisecond (their order is by id).
        for (const offset of [0, 1, 1, 2, 3]) yield* seed({ createdAt: Fixtures.baseTime + offset })
        yield* repo.insert(Fixtures.subscription(second.terminal.id, secondPlan.id, { createdAt: Fixtures.baseTime + 1 }))
        const filter = { terminalIds: [terminal.id, second.terminal.id], providerState: "new" as const }
        const listed = (yield* repo.list(filter, { limit: 10, offset: 0 })).items
        const order = ids(listed)
        assert.strictEqual(order.length, 6)
        // The two newest are stopped (they leave the filter): the pages after them hold the rest.
        for (const s of listed.slice(0, 2)) {
          yield* repo.update({ ...s, providerState: "stop", billingStatus: "stopped", nextChargeAt: null, version: s.version + 1 })
        }
        const next = yield* repo.list(filter, { limit: 2, offset: 0, after: listed[1]! })
        assert.deepStrictEqual(ids(next.items), order.slice(2, 4))
        assert.strictEqual(next.total, 4)
        const last = yield* repo.list(filter, { limit: 2, offset: 0, after: next.items.at(-1)! })
        assert.deepStrictEqual(last, { items: listed.slice(4), total: 4 })
        assert.deepStrictEqual(ids((yield* repo.list(filter, { limit: 10, offset: 1, after: listed[1]! })).items), order.slice(3))
        // The filter still applies: one terminal, or another state.
        assert.deepStrictEqual(
          ids((yield* repo.list({ ...filter, terminalIds: [terminal.id] }, { limit: 10, offset: 0, after: listed[1]! })).items),
          order.slice(2).filter((id) => listed.find((s) => s.id === id)!.terminalId === terminal.id)
        )
        assert.deepStrictEqual(yield* repo.list({ ...filter, providerState: "active" }, { limit: 10, offset: 0, after: listed[0]! }), {
          items: [],
          total: 0
        })
      }))

    it.effect("claimDue leases due active/enabled subscriptions and returns them as stored", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const due = [
          yield* seed(enabled({ nextChargeAt: 1_000 })),
          yield* seed(enabled({ nextChargeAt: 5_000 })),
          yield* seed(enabled({ nextChargeAt: 2_000, chargeLeaseUntil: 5_000 }))
        ]
        const notDue = [
          yield* seed(enabled({ nextChargeAt: 5_001 })),
          yield* seed(enabled({ nextChargeAt: null })),
          yield* seed(enabled({ nextChargeAt: 1_000, chargeLeaseUntil: 5_001 })),
          yield* seed(enabled({ nextChargeAt: 1_000, billingStatus: "review" })),
          yield* seed(enabled({ nextChargeAt: 1_000, providerState: "new", billingStatus: "pending" })),
          yield* seed(enabled({ nextChargeAt: 1_000, billingStatus: "stop_pending" })),
          yield* seed(enabled({ nextChargeAt: null, providerState: "stop", billingStatus: "stopped" }))
        ]
        const claimed = only(yield* repo.claimDue(5_000, 65_000, 10_000), [...due, ...notDue])
        assert.deepStrictEqual(new Set(ids(claimed)), new Set(ids(due)))
        for (const s of claimed) {
          const before = due.find((d) => d.id === s.id)!
          assert.deepStrictEqual(s, { ...before, chargeLeaseUntil: 65_000, version: before.version + 1 })
          assert.deepStrictEqual(some(yield* repo.get(s.id)), s)
        }
        for (const s of notDue) assert.deepStrictEqual(some(yield* repo.get(s.id)), s)
        // Leased rows are skipped until the lease ends.
        assert.deepStrictEqual(only(yield* repo.claimDue(64_999, 70_000, 10_000), due), [])
        const again = only(yield* repo.claimDue(65_000, 70_000, 10_000), due)
        assert.deepStrictEqual(new Set(ids(again)), new Set(ids(due)))
        assert.isTrue(again.every((s) => s.chargeLeaseUntil === 70_000))
      }))

    it.effect("claimDue takes at most limit rows, and concurrent claims never share a row", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const tx = yield* Transactions
        const due: Array<Subscription.Subscription> = []
        for (let i = 0; i < 6; i++) due.push(yield* seed(enabled({ nextChargeAt: 100 + i })))
        assert.strictEqual((yield* repo.claimDue(200, 300, 1)).length, 1)
        const [first, second] = yield* Effect.all([
          tx.run(repo.claimDue(400, 10_000, 10_000)),
          tx.run(repo.claimDue(400, 10_000, 10_000))
        ], { concurrency: "unbounded" })
        const mine = [...only(first, due), ...only(second, due)]
        assert.strictEqual(mine.length, due.length)
        assert.strictEqual(new Set(ids(mine)).size, due.length)
      }))

    it.effect("claimStopPending leases stop_pending subscriptions only", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const wanted = [
          yield* seed({ providerState: "new", billingStatus: "stop_pending", createdAt: 0, updatedAt: 0 }),
          yield* seed({ providerState: "active", billingStatus: "stop_pending", createdAt: 0, updatedAt: 0 }),
          yield* seed({ providerState: "active", billingStatus: "stop_pending", chargeLeaseUntil: 1_000, updatedAt: 0 })
        ]
        const others = [
          yield* seed(enabled({ nextChargeAt: 1_000 })),
          yield* seed({ providerState: "active", billingStatus: "stop_pending", chargeLeaseUntil: 1_001, updatedAt: 0 }),
          yield* seed({ providerState: "stop", billingStatus: "stopped", updatedAt: 0 })
        ]
        const claimed = only(yield* repo.claimStopPending(1_000, 61_000, 10_000), [...wanted, ...others])
        assert.deepStrictEqual(new Set(ids(claimed)), new Set(ids(wanted)))
        for (const s of claimed) {
          const before = wanted.find((w) => w.id === s.id)!
          assert.deepStrictEqual(s, { ...before, chargeLeaseUntil: 61_000, version: before.version + 1 })
          assert.deepStrictEqual(some(yield* repo.get(s.id)), s)
        }
        assert.deepStrictEqual(only(yield* repo.claimStopPending(1_000, 61_000, 10_000), wanted), [])
      }))
  })
