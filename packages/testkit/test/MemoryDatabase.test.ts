import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Option } from "effect"
import { PaymentRepository, TerminalRepository, Transactions } from "@paydesk/core"
import { Fixtures, MemoryDatabase, MemoryStore } from "@paydesk/testkit"

const withStore = <A, E>(effect: Effect.Effect<A, E, MemoryStore.Services>) =>
  Effect.provide(effect, MemoryStore.layer)

const seedCounter = Effect.gen(function*() {
  const { terminal } = yield* Fixtures.seedTerminal()
  return yield* Fixtures.seedPayment(terminal.id, { amount: 0n })
})

describe("MemoryDatabase", () => {
  it.effect("50 forked fibers each running a read-modify-write transaction end with exactly 50", () =>
    withStore(Effect.gen(function*() {
      const tx = yield* Transactions
      const payments = yield* PaymentRepository
      const counter = yield* seedCounter
      const fibers = yield* Effect.forEach(
        Array.from({ length: 50 }, (_, i) => i),
        () =>
          Effect.forkChild(tx.run(Effect.gen(function*() {
            const current = Option.getOrThrow(yield* payments.get(counter.id))
            yield* Effect.yieldNow
            yield* Effect.yieldNow
            yield* payments.update({ ...current, amount: current.amount + 1n, version: current.version + 1 })
          })))
      )
      yield* Fiber.joinAll(fibers)
      const final = Option.getOrThrow(yield* payments.get(counter.id))
      assert.strictEqual(final.amount, 50n)
      assert.strictEqual(final.version, counter.version + 50)
    })))

  it.effect("a transaction failing after two writes leaves no trace and releases the lock", () =>
    withStore(Effect.gen(function*() {
      const db = yield* MemoryDatabase.MemoryDatabase
      const tx = yield* Transactions
      const payments = yield* PaymentRepository
      const counter = yield* seedCounter
      const before = new Map(db.tables.payments)
      const fresh = Fixtures.payment(counter.terminalId)
      const exit = yield* Effect.exit(tx.run(Effect.gen(function*() {
        yield* payments.insert(fresh)
        yield* payments.update({ ...counter, amount: 99n, version: counter.version + 1 })
        return yield* Effect.fail("stop" as const)
      })))
      assert.deepStrictEqual(exit, Exit.fail("stop"))
      assert.deepStrictEqual(db.tables.payments, before)
      // The lock is free again.
      yield* tx.run(payments.insert(fresh))
      assert.isTrue(Option.isSome(yield* payments.get(fresh.id)))
    })))

  it.effect("a reader outside a transaction waits for the commit and never sees uncommitted writes", () =>
    withStore(Effect.gen(function*() {
      const tx = yield* Transactions
      const payments = yield* PaymentRepository
      const counter = yield* seedCounter
      for (const outcome of ["commit", "rollback"] as const) {
        const written = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const writer = yield* Effect.forkChild(Effect.exit(tx.run(Effect.gen(function*() {
          const current = Option.getOrThrow(yield* payments.get(counter.id))
          yield* payments.update({ ...current, amount: current.amount + 1n, version: current.version + 1 })
          yield* Deferred.succeed(written, undefined)
          yield* Deferred.await(release)
          if (outcome === "rollback") return yield* Effect.fail("rollback" as const)
        }))))
        yield* Deferred.await(written)
        const reader = yield* Effect.forkChild(payments.get(counter.id))
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow
        assert.isUndefined(reader.pollUnsafe(), "the reader must wait for the open transaction")
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(writer)
        const seen = Option.getOrThrow(yield* Fiber.join(reader))
        // The first round committed 0 -> 1; the second round's write was rolled back.
        assert.strictEqual(seen.amount, 1n)
        assert.strictEqual(seen.version, counter.version + 1)
      }
    })))

  it.effect("an interrupted transaction rolls back and frees the lock", () =>
    withStore(Effect.gen(function*() {
      const tx = yield* Transactions
      const payments = yield* PaymentRepository
      const counter = yield* seedCounter
      const written = yield* Deferred.make<void>()
      const fiber = yield* Effect.forkChild(tx.run(Effect.gen(function*() {
        yield* payments.update({ ...counter, amount: 7n, version: counter.version + 1 })
        yield* Deferred.succeed(written, undefined)
        return yield* Effect.never
      })))
      yield* Deferred.await(written)
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(Option.getOrThrow(yield* payments.get(counter.id)), counter)
      yield* tx.run(payments.update({ ...counter, amount: 8n, version: counter.version + 1 }))
      assert.strictEqual(Option.getOrThrow(yield* payments.get(counter.id)).amount, 8n)
    })))

  it.effect("nested runs join without deadlock and repositories inside see the open transaction", () =>
    withStore(Effect.gen(function*() {
      const db = yield* MemoryDatabase.MemoryDatabase
      const tx = yield* Transactions
      const terminals = yield* TerminalRepository
      assert.isFalse(yield* db.inTransaction)
      const depth = yield* tx.run(Effect.gen(function*() {
        assert.isTrue(yield* db.inTransaction)
        const { terminal } = yield* tx.run(Fixtures.seedTerminal())
        return yield* tx.run(tx.run(Effect.map(terminals.get(terminal.id), Option.isSome)))
      }))
      assert.isTrue(depth)
      assert.isFalse(yield* db.inTransaction)
    })))

  it.effect("two memory stores are independent: a transaction on one does not join the other", () =>
    Effect.gen(function*() {
      const other = yield* Layer.build(Layer.fresh(MemoryStore.layer))
      const otherDb = Context.get(other, MemoryDatabase.MemoryDatabase)
      const otherPayments = Context.get(other, PaymentRepository)
      yield* withStore(Effect.gen(function*() {
        const tx = yield* Transactions
        const counter = yield* seedCounter
        yield* tx.run(Effect.gen(function*() {
          assert.isFalse(yield* otherDb.inTransaction)
          assert.isTrue(Option.isNone(yield* otherPayments.get(counter.id)))
        }))
      }))
      assert.strictEqual(otherDb.tables.payments.size, 0)
    }))

  it.effect("clear empties every table", () =>
    withStore(Effect.gen(function*() {
      const db = yield* MemoryDatabase.MemoryDatabase
      yield* seedCounter
      assert.strictEqual(db.tables.payments.size, 1)
      yield* db.clear
      for (const table of Object.values(db.tables)) assert.strictEqual(table.size, 0)
    })))

  it.effect("each build of MemoryStore.layer starts empty", () =>
    Effect.gen(function*() {
      const first = yield* withStore(Effect.gen(function*() {
        yield* seedCounter
        return (yield* MemoryDatabase.MemoryDatabase).tables.payments.size
      }))
      const second = yield* withStore(Effect.map(MemoryDatabase.MemoryDatabase, (db) => db.tables.payments.size))
      assert.deepStrictEqual([first, second], [1, 0])
    }))
})
