/**
 * `Atomic.atomicEach` on the memory store: items run side by side in one transaction and are
 * answered each; when that transaction fails, every item runs again alone, so only the one at fault
 * fails and nothing is written twice. Inside an open transaction, each item is a savepoint. The
 * charge runner builds on it: one subscription whose booking fails is left leased for a later pass,
 * and the others of its pass are booked.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import {
  Atomic,
  ChargeRepository,
  LedgerRepository,
  OperationNotAllowed,
  Subscriptions,
  Transactions,
  type Wakeup,
  Wakeups,
  WriteConflict
} from "@paydesk/core"
import { AcquirerEmulator, Fixtures, Kit } from "@paydesk/testkit"
import { activeMerchant, monthlyDates, reload } from "./SubscriptionSupport.js"

/** The kit with its transactions counted and its wakeups recorded. */
const counted = Effect.gen(function*() {
  const inner = yield* Transactions
  const state = { runs: 0, notified: [] as Array<ReadonlyArray<Wakeup>> }
  const layer = Layer.mergeAll(
    Layer.succeed(Transactions)(Transactions.of({
      run: (effect) => Effect.suspend(() => {
        state.runs++
        return inner.run(effect)
      })
    })),
    Layer.succeed(Wakeups)(Wakeups.of({ notify: (items) => Effect.sync(() => void state.notified.push(items)) }))
  )
  return { state, layer }
})

/** A ledger entry of item `i` (its ref names it), appended, with a wakeup. */
const write = (terminalId: string, i: number) =>
  Effect.gen(function*() {
    yield* (yield* LedgerRepository).append([Fixtures.ledgerEntry(terminalId, { refId: `item-${i}` })])
    yield* Atomic.wakeup({ kind: "charge", subscriptionId: `sub-${i}`, at: i })
    return i * 10
  })

const entriesOf = (i: number) => Effect.flatMap(LedgerRepository, (ledger) => ledger.entriesFor(`item-${i}`))

describe("Atomic.atomicEach", () => {
  it.effect("items run side by side in one transaction, each answered; their wakeups follow the commit", () =>
    Effect.gen(function*() {
      const { terminal } = yield* Fixtures.seedTerminal()
      const { state, layer } = yield* counted
      const exits = yield* Atomic.atomicEach([1, 2, 3, 4], (i) => write(terminal.id, i)).pipe(Effect.provide(layer))
      assert.deepStrictEqual(exits, [1, 2, 3, 4].map((i) => Exit.succeed(i * 10)))
      assert.strictEqual(state.runs, 1)
      assert.deepStrictEqual(state.notified.map((items) => items.map((w) => w.at).sort()), [[1, 2, 3, 4]])
      for (const i of [1, 2, 3, 4]) assert.strictEqual((yield* entriesOf(i)).length, 1)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("when one item fails, each runs alone: only that one fails, its writes and wakeups undone, the others' written once", () =>
    Effect.gen(function*() {
      const { terminal } = yield* Fixtures.seedTerminal()
      const { state, layer } = yield* counted
      const refused = new OperationNotAllowed({ message: "item 2 is refused" })
      const exits = yield* Atomic.atomicEach([1, 2, 3, 4], (i) =>
        Effect.flatMap(write(terminal.id, i), (value) => i === 2 ? Effect.fail(refused) : Effect.succeed(value))).pipe(Effect.provide(layer))
      assert.deepStrictEqual(exits, [Exit.succeed(10), Exit.fail(refused), Exit.succeed(30), Exit.succeed(40)])
      // The batch, then each alone.
      assert.strictEqual(state.runs, 5)
      assert.deepStrictEqual(state.notified.map((items) => items.map((w) => w.at)), [[1], [3], [4]])
      assert.deepStrictEqual(yield* Effect.forEach([1, 2, 3, 4], (i) => Effect.map(entriesOf(i), (e) => e.length)), [1, 0, 1, 1])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a defect of one item fails only that item", () =>
    Effect.gen(function*() {
      const { terminal } = yield* Fixtures.seedTerminal()
      const exits = yield* Atomic.atomicEach([1, 2, 3], (i) => i === 3 ? Effect.die(new Error("boom")) : write(terminal.id, i))
      assert.deepStrictEqual(exits.map((e) => e._tag), ["Success", "Success", "Failure"])
      assert.deepStrictEqual(yield* Effect.forEach([1, 2, 3], (i) => Effect.map(entriesOf(i), (e) => e.length)), [1, 1, 0])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a nested atomic of an item that fails and retries never undoes a sibling's writes", () =>
    Effect.gen(function*() {
      const { terminal } = yield* Fixtures.seedTerminal()
      let tries = 0
      const exits = yield* Atomic.atomicEach([1, 2], (i) =>
        i === 1
          // Writes, lets the sibling write, then conflicts on its first try.
          ? Atomic.atomic(Effect.gen(function*() {
            yield* write(terminal.id, 1)
            yield* Effect.yieldNow
            yield* Effect.yieldNow
            if (++tries === 1) return yield* new WriteConflict({ constraint: "test", message: "first try" })
            return 10
          }))
          : write(terminal.id, 2))
      assert.deepStrictEqual(exits, [Exit.succeed(10), Exit.succeed(20)])
      assert.deepStrictEqual(yield* Effect.forEach([1, 2], (i) => Effect.map(entriesOf(i), (e) => e.length)), [1, 1])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("inside an open transaction each item is a savepoint: a failing one is undone, the others commit with the outer one", () =>
    Effect.gen(function*() {
      const { terminal } = yield* Fixtures.seedTerminal()
      const { state, layer } = yield* counted
      const exits = yield* Atomic.atomic(
        Atomic.atomicEach([1, 2, 3], (i) => Effect.flatMap(write(terminal.id, i), (value) => i === 1 ? Effect.fail(new OperationNotAllowed({ message: "no" })) : Effect.succeed(value)))
      ).pipe(Effect.provide(layer))
      assert.deepStrictEqual(exits.map((e) => e._tag), ["Failure", "Success", "Success"])
      // The outer transaction and one savepoint per item.
      assert.strictEqual(state.runs, 4)
      assert.deepStrictEqual(state.notified.map((items) => items.map((w) => w.at)), [[2, 3]])
      assert.deepStrictEqual(yield* Effect.forEach([1, 2, 3], (i) => Effect.map(entriesOf(i), (e) => e.length)), [0, 1, 1])
    }).pipe(Effect.provide(Kit.layer)))
})

describe("Charges in batches (memory)", () => {
  it.effect("a subscription whose booking fails stays leased and is charged again with its key later; the others of the pass are booked", () =>
    Effect.gen(function*() {
      const { ids } = yield* activeMerchant(6)
      const faulty = ids[3]!
      const charges = yield* ChargeRepository
      // Booking the faulty subscription's answer fails (its attempt cannot be updated).
      const failing = ChargeRepository.of({
        ...charges,
        update: (charge) => charge.subscriptionId === faulty ? Effect.die(new Error("charges unreachable")) : charges.update(charge)
      })
      yield* TestClock.setTime(monthlyDates[0]!)
      assert.strictEqual(yield* Subscriptions.runDueCharges().pipe(Effect.provideService(ChargeRepository, failing)), 5)
      for (const id of ids) {
        const sub = yield* reload(id)
        assert.strictEqual(sub.successfulCycles, id === faulty ? 1 : 2, id)
      }
      const open = yield* charges.listForCycle(faulty, 1)
      assert.deepStrictEqual(open.map((c) => c.status), ["pending"])
      assert.isNotNull((yield* reload(faulty)).chargeLeaseUntil)
      // Within its lease no pass takes it; after, the pass sends the same key and the bank replays.
      assert.strictEqual(yield* Subscriptions.runDueCharges(), 0)
      yield* TestClock.adjust("61 seconds")
      assert.strictEqual(yield* Subscriptions.runDueCharges(), 1)
      assert.strictEqual((yield* reload(faulty)).successfulCycles, 2)
      const bank = yield* AcquirerEmulator.AcquirerEmulator
      assert.deepStrictEqual(bank.charges.filter((c) => c.idempotencyKey === open[0]!.idempotencyKey).length, 1)
      assert.strictEqual(bank.charges.length, 6)
      assert.isTrue(Option.isSome(Option.fromUndefinedOr((yield* charges.listForCycle(faulty, 1))[0]?.paymentId ?? undefined)))
    }).pipe(Effect.provide(Kit.layer)))
})
