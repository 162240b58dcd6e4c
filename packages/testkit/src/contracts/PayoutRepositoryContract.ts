/**
 * Contract suite of `PayoutRepository`: round trip, optimistic updates, listing, the count of
 * active payouts and the leasing `claimDue`.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { AccountRepository, PayoutRepository, TerminalRepository, Transactions } from "@paydesk/core"
import type { Payout } from "@paydesk/core"
import * as Fixtures from "../Fixtures.js"
import { expectWriteConflict, ids, none, only, some } from "./Support.js"

/** What the suite needs. */
export type Requirements = PayoutRepository | AccountRepository | TerminalRepository | Transactions

/** Registers the `PayoutRepository` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`PayoutRepository contract (${name})`, (it) => {
    const setup = Effect.gen(function*() {
      const { terminal } = yield* Fixtures.seedTerminal()
      const repo = yield* PayoutRepository
      const seed = (overrides: Partial<Payout.Payout> = {}) =>
        Effect.gen(function*() {
          const p = Fixtures.payout(terminal.id, overrides)
          yield* repo.insert(p)
          return p
        })
      return { terminal, repo, seed }
    })

    it.effect("insert and get round-trip every field", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const plain = yield* seed()
        const full = yield* seed({
          amountUsdt: 9_007_199_254_740_993n,
          status: "rejected",
          idempotencyKey: `key-${Fixtures.unique()}`,
          networkTxId: "tx_1",
          rejectReason: "wallet blocked",
          leaseUntil: Fixtures.baseTime + 60_000,
          createdAt: Fixtures.baseTime + 1,
          updatedAt: Fixtures.baseTime + 2,
          version: 4
        })
        for (const p of [plain, full]) {
          assert.deepStrictEqual(some(yield* repo.get(p.id)), p)
          assert.deepStrictEqual(some(yield* repo.getForUpdate(p.id)), p)
        }
        none(yield* repo.get(Fixtures.uuid()))
        yield* expectWriteConflict(repo.insert(plain))
      }))

    it.effect("update stores a record one version above and rejects any other version", () =>
      Effect.gen(function*() {
        const { terminal, repo, seed } = yield* setup
        const created = yield* seed()
        const pending: Payout.Payout = { ...created, status: "pending", updatedAt: Fixtures.baseTime + 1, version: created.version + 1 }
        yield* repo.update(pending)
        assert.deepStrictEqual(some(yield* repo.get(created.id)), pending)
        yield* expectWriteConflict(repo.update({ ...pending, status: "processing" }))
        yield* expectWriteConflict(repo.update({ ...pending, status: "processing", version: pending.version + 2 }))
        assert.deepStrictEqual(some(yield* repo.get(created.id)), pending)
        yield* expectWriteConflict(repo.update(Fixtures.payout(terminal.id, { version: 2 })))
      }))

    it.effect("list is the terminal's payouts newest first, paged, with the total", () =>
      Effect.gen(function*() {
        const { terminal, repo, seed } = yield* setup
        const made: Array<Payout.Payout> = []
        for (let i = 0; i < 3; i++) made.push(yield* seed({ createdAt: Fixtures.baseTime + i }))
        const { terminal: other } = yield* Fixtures.seedTerminal()
        yield* repo.insert(Fixtures.payout(other.id))
        const first = yield* repo.list(terminal.id, { limit: 2, offset: 0 })
        assert.deepStrictEqual(first, { items: [made[2]!, made[1]!], total: 3 })
        assert.deepStrictEqual(yield* repo.list(terminal.id, { limit: 2, offset: 2 }), { items: [made[0]!], total: 3 })
        assert.deepStrictEqual(yield* repo.list(Fixtures.uuid(), { limit: 2, offset: 0 }), { items: [], total: 0 })
      }))

    it.effect("list after a position: the terminal's payouts after it newest first, offset from there, the whole total", () =>
      Effect.gen(function*() {
        const { terminal, repo, seed } = yield* setup
        // Five payouts, three of them created in the same millisecond (their order is by id).
        for (const offset of [0, 1, 1, 1, 2]) yield* seed({ createdAt: Fixtures.baseTime + offset })
        const listed = (yield* repo.list(terminal.id, { limit: 10, offset: 0 })).items
        const order = ids(listed)
        assert.strictEqual(order.length, 5)
        const first = yield* repo.list(terminal.id, { limit: 2, offset: 0, after: null })
        assert.deepStrictEqual(ids(first.items), order.slice(0, 2))
        // A payout newer than every listed one comes in: the pages after the position are as before.
        yield* seed({ createdAt: Fixtures.baseTime + 100 })
        const second = yield* repo.list(terminal.id, { limit: 2, offset: 0, after: first.items.at(-1)! })
        assert.deepStrictEqual(second, { items: listed.slice(2, 4), total: 6 })
        const third = yield* repo.list(terminal.id, { limit: 2, offset: 0, after: second.items.at(-1)! })
        assert.deepStrictEqual(ids(third.items), order.slice(4))
        assert.deepStrictEqual(ids((yield* repo.list(terminal.id, { limit: 2, offset: 1, after: listed[0]! })).items), order.slice(2, 4))
        // A position of no payout (a made-up id) pages from its time, then its id: above or below all three of the millisecond.
        const at = (id: string) => repo.list(terminal.id, { limit: 10, offset: 0, after: { createdAt: Fixtures.baseTime + 1, id } })
        assert.deepStrictEqual(ids((yield* at("ffffffff-ffff-4fff-bfff-ffffffffffff")).items), order.slice(1))
        assert.deepStrictEqual(ids((yield* at("00000000-0000-4000-8000-000000000000")).items), order.slice(4))
      }))

    it.effect("countActive counts created, pending and processing payouts of the terminal", () =>
      Effect.gen(function*() {
        const { terminal, seed } = yield* setup
        const repo = yield* PayoutRepository
        assert.strictEqual(yield* repo.countActive(terminal.id), 0)
        for (const status of ["created", "pending", "processing", "completed", "rejected", "created"] as const) {
          yield* seed({ status })
        }
        assert.strictEqual(yield* repo.countActive(terminal.id), 4)
      }))

    it.effect("claimDue leases payouts of one status without a current lease", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const wanted = [
          yield* seed({ status: "processing" }),
          yield* seed({ status: "processing", leaseUntil: 1_000 })
        ]
        const others = [
          yield* seed({ status: "processing", leaseUntil: 1_001 }),
          yield* seed({ status: "pending" }),
          yield* seed({ status: "completed" })
        ]
        const claimed = only(yield* repo.claimDue("processing", 1_000, 61_000, 10_000), [...wanted, ...others])
        assert.deepStrictEqual(new Set(ids(claimed)), new Set(ids(wanted)))
        for (const p of claimed) {
          const before = wanted.find((w) => w.id === p.id)!
          assert.deepStrictEqual(p, { ...before, leaseUntil: 61_000, version: before.version + 1 })
          assert.deepStrictEqual(some(yield* repo.get(p.id)), p)
        }
        for (const p of others) assert.deepStrictEqual(some(yield* repo.get(p.id)), p)
        assert.deepStrictEqual(only(yield* repo.claimDue("processing", 60_999, 70_000, 10_000), wanted), [])
        const again = only(yield* repo.claimDue("processing", 61_000, 70_000, 10_000), wanted)
        assert.deepStrictEqual(new Set(ids(again)), new Set(ids(wanted)))
      }))

    it.effect("claimDue respects the limit, and concurrent claims never share a payout", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const tx = yield* Transactions
        const made: Array<Payout.Payout> = []
        for (let i = 0; i < 6; i++) made.push(yield* seed({ status: "pending", leaseUntil: 0 }))
        assert.strictEqual((yield* repo.claimDue("pending", 0, 1, 1)).length, 1)
        const [a, b] = yield* Effect.all([
          tx.run(repo.claimDue("pending", 10, 100_000, 10_000)),
          tx.run(repo.claimDue("pending", 10, 100_000, 10_000))
        ], { concurrency: "unbounded" })
        const mine = [...only(a, made), ...only(b, made)]
        assert.strictEqual(mine.length, made.length)
        assert.strictEqual(new Set(ids(mine)).size, made.length)
      }))
  })
