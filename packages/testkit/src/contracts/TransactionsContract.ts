/**
 * Contract suite of `Transactions`: atomic commit, rollback on failure, defect and interruption,
 * nested runs joining the outer one, and serialization of concurrent read-modify-write.
 *
 * It writes payments (and their parent account and terminal) with fresh ids, so it runs on a
 * shared database. A nested `run` that fails is expected to undo its own writes even when the outer
 * transaction recovers (a savepoint, as `sql.withTransaction` nests).
 */
import { assert, layer } from "@effect/vitest"
import { Data, Effect, Exit, Layer } from "effect"
import { AccountRepository, PaymentRepository, TerminalRepository, Transactions } from "@paydesk/core"
import * as Fixtures from "../Fixtures.js"
import { none, some } from "./Support.js"

/** What the suite needs. */
export type Requirements = Transactions | PaymentRepository | AccountRepository | TerminalRepository

class Boom extends Data.TaggedError("Boom")<{ readonly step: number }> {}

/** Registers the `Transactions` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`Transactions contract (${name})`, (it) => {
    const setup = Effect.gen(function*() {
      const { terminal } = yield* Fixtures.seedTerminal()
      return {
        terminal,
        tx: yield* Transactions,
        payments: yield* PaymentRepository
      }
    })

    it.effect("commits every write of a successful run together", () =>
      Effect.gen(function*() {
        const { terminal, tx, payments } = yield* setup
        const a = Fixtures.payment(terminal.id)
        const b = Fixtures.payment(terminal.id)
        const result = yield* tx.run(Effect.gen(function*() {
          yield* payments.insert(a)
          yield* payments.insert(b)
          return "done"
        }))
        assert.strictEqual(result, "done")
        assert.deepStrictEqual(some(yield* payments.get(a.id)), a)
        assert.deepStrictEqual(some(yield* payments.get(b.id)), b)
      }))

    it.effect("a failing run leaves no trace of its writes and fails with the same error", () =>
      Effect.gen(function*() {
        const { terminal, tx, payments } = yield* setup
        const existing = yield* Fixtures.seedPayment(terminal.id)
        const fresh = Fixtures.payment(terminal.id)
        const boom = new Boom({ step: 2 })
        const error = yield* Effect.flip(tx.run(Effect.gen(function*() {
          yield* payments.insert(fresh)
          yield* payments.update({ ...existing, status: "processing", version: existing.version + 1 })
          return yield* boom
        })))
        assert.strictEqual(error, boom)
        none(yield* payments.get(fresh.id), "the inserted payment")
        assert.deepStrictEqual(some(yield* payments.get(existing.id)), existing)
        // The rolled-back insert freed its unique keys.
        yield* payments.insert(fresh)
      }))

    it.effect("a defect rolls back like a failure", () =>
      Effect.gen(function*() {
        const { terminal, tx, payments } = yield* setup
        const fresh = Fixtures.payment(terminal.id)
        const exit = yield* Effect.exit(tx.run(Effect.andThen(payments.insert(fresh), Effect.die("kaboom"))))
        assert.isTrue(Exit.isFailure(exit))
        none(yield* payments.get(fresh.id), "the inserted payment")
      }))

    it.effect("an interrupted run rolls back", () =>
      Effect.gen(function*() {
        const { terminal, tx, payments } = yield* setup
        const fresh = Fixtures.payment(terminal.id)
        const exit = yield* Effect.exit(tx.run(Effect.andThen(payments.insert(fresh), Effect.interrupt)))
        assert.isTrue(Exit.isFailure(exit))
        none(yield* payments.get(fresh.id), "the inserted payment")
      }))

    it.effect("a nested run joins the outer one: the outer failure undoes the inner writes", () =>
      Effect.gen(function*() {
        const { terminal, tx, payments } = yield* setup
        const outer = Fixtures.payment(terminal.id)
        const inner = Fixtures.payment(terminal.id)
        const exit = yield* Effect.exit(tx.run(Effect.gen(function*() {
          yield* payments.insert(outer)
          yield* tx.run(payments.insert(inner))
          // The inner write is visible inside the outer transaction.
          assert.deepStrictEqual(some(yield* payments.get(inner.id)), inner)
          return yield* new Boom({ step: 3 })
        })))
        assert.isTrue(Exit.isFailure(exit))
        none(yield* payments.get(outer.id), "the outer payment")
        none(yield* payments.get(inner.id), "the inner payment")
      }))

    it.effect("a failed nested run that the outer one recovers from undoes only its own writes", () =>
      Effect.gen(function*() {
        const { terminal, tx, payments } = yield* setup
        const outer = Fixtures.payment(terminal.id)
        const inner = Fixtures.payment(terminal.id)
        const recovered = yield* tx.run(Effect.gen(function*() {
          yield* payments.insert(outer)
          return yield* tx.run(Effect.andThen(payments.insert(inner), Effect.fail(new Boom({ step: 1 })))).pipe(
            Effect.catchTag("Boom", (e) => Effect.succeed(e.step))
          )
        }))
        assert.strictEqual(recovered, 1)
        assert.deepStrictEqual(some(yield* payments.get(outer.id)), outer)
        none(yield* payments.get(inner.id), "the inner payment")
      }))

    it.effect("50 concurrent read-modify-write transactions all count", () =>
      Effect.gen(function*() {
        const { terminal, tx, payments } = yield* setup
        const counter = yield* Fixtures.seedPayment(terminal.id, { amount: 1n })
        yield* Effect.forEach(
          Array.from({ length: 50 }, (_, i) => i),
          () =>
            tx.run(Effect.gen(function*() {
              const current = some(yield* payments.getForUpdate(counter.id))
              yield* Effect.yieldNow
              yield* payments.update({ ...current, amount: current.amount + 1n, version: current.version + 1 })
            })),
          { concurrency: "unbounded", discard: true }
        )
        const final = some(yield* payments.get(counter.id))
        assert.strictEqual(final.amount, 51n)
        assert.strictEqual(final.version, counter.version + 50)
      }))
  })
