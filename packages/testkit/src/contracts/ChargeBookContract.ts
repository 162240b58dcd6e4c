/**
 * Contract suite of the acquirer emulator's `ChargeBook`: a new key records the subscription's
 * next programmed outcome (`paid` when none), a known key replays without consuming the queue,
 * `resolve` replaces an outcome, programmed delays come back with a fresh key only, `void` records
 * an unseen key as void (and answers a seen one), a stopped binding declines new keys, and the book
 * is atomic per key — also across two handles on one storage (two server processes, or one process
 * before and after a restart).
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, type Layer } from "effect"
import type { AcquirerEmulator } from "@paydesk/emulators"
import * as Fixtures from "../Fixtures.js"

/** Two handles on the same book storage (the same instance for a memory book). */
export class ChargeBooks extends Context.Service<ChargeBooks, {
  readonly first: AcquirerEmulator.ChargeBook
  readonly second: AcquirerEmulator.ChargeBook
}>()("@paydesk/testkit/ChargeBookContract/ChargeBooks") {}

const request = (subscriptionId: string, cycleNumber: number, attempt = 1): AcquirerEmulator.ChargeRequest => ({
  subscriptionId,
  cycleNumber,
  idempotencyKey: `sub:${subscriptionId}:cycle:${cycleNumber}:attempt:${attempt}`,
  amount: 150_000n
})

/** Registers the `ChargeBook` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<ChargeBooks, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`ChargeBook contract (${name})`, (it) => {
    it.effect("a new key takes the next programmed outcome, then paid; a known key replays", () =>
      Effect.gen(function*() {
        const { first, second } = yield* ChargeBooks
        const sub = Fixtures.uuid()
        yield* first.program(sub, ["failed", "unknown"])
        const one = yield* first.take(request(sub, 1))
        assert.deepStrictEqual([one.program, one.fresh], ["failed", true])
        const replay = yield* second.take(request(sub, 1))
        assert.deepStrictEqual(replay, { ...one, fresh: false })
        assert.strictEqual((yield* second.take(request(sub, 2))).program, "unknown")
        const third = yield* first.take(request(sub, 3))
        assert.deepStrictEqual([third.program, third.fresh], ["paid", true])
        assert.isTrue(third.serial > one.serial)
      }))

    it.effect("resolve replaces the recorded outcome of a key", () =>
      Effect.gen(function*() {
        const { first, second } = yield* ChargeBooks
        const sub = Fixtures.uuid()
        yield* first.program(sub, ["unknown"])
        const taken = yield* first.take(request(sub, 1))
        assert.isTrue(yield* second.resolve(request(sub, 1).idempotencyKey, "paid"))
        assert.deepStrictEqual(yield* first.take(request(sub, 1)), { program: "paid", serial: taken.serial, fresh: false, delayMs: 0 })
        // Only an unknown outcome is settled: an answered key keeps its answer.
        assert.isFalse(yield* second.resolve(request(sub, 1).idempotencyKey, "failed"))
        assert.strictEqual((yield* first.take(request(sub, 1))).program, "paid")
        // A key the bank never saw stays unseen: the first charge under it is a real one.
        assert.isFalse(yield* second.resolve(request(sub, 2).idempotencyKey, "failed"))
        const fresh = yield* first.take(request(sub, 2))
        assert.deepStrictEqual([fresh.program, fresh.fresh], ["paid", true])
      }))

    it.effect("concurrent takes of one key through both handles: exactly one is fresh, all answer alike", () =>
      Effect.gen(function*() {
        const { first, second } = yield* ChargeBooks
        const sub = Fixtures.uuid()
        yield* first.program(sub, ["failed"])
        const answers = yield* Effect.all(
          Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? first : second).take(request(sub, 1))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(answers.filter((a) => a.fresh).length, 1)
        assert.deepStrictEqual(new Set(answers.map((a) => `${a.program}:${a.serial}`)).size, 1)
        assert.strictEqual(answers[0]!.program, "failed")
        // The program was consumed once: the next key is paid.
        assert.strictEqual((yield* second.take(request(sub, 2))).program, "paid")
      }))

    it.effect("concurrent new keys of one subscription consume distinct programs", () =>
      Effect.gen(function*() {
        const { first, second } = yield* ChargeBooks
        const sub = Fixtures.uuid()
        yield* first.program(sub, ["failed", "unknown"])
        const [a, b] = yield* Effect.all([first.take(request(sub, 1)), second.take(request(sub, 2))], { concurrency: 2 })
        assert.deepStrictEqual([a!.program, b!.program].sort(), ["failed", "unknown"])
        assert.notStrictEqual(a!.serial, b!.serial)
      }))

    it.effect("a programmed delay comes back with the fresh take only", () =>
      Effect.gen(function*() {
        const { first, second } = yield* ChargeBooks
        const sub = Fixtures.uuid()
        yield* first.program(sub, [{ outcome: "paid", delayMs: 3_000 }, "failed"])
        const slow = yield* first.take(request(sub, 1))
        assert.deepStrictEqual([slow.program, slow.fresh, slow.delayMs], ["paid", true, 3_000])
        assert.strictEqual((yield* second.take(request(sub, 1))).delayMs, 0)
        const next = yield* second.take(request(sub, 2))
        assert.deepStrictEqual([next.program, next.delayMs], ["failed", 0])
      }))

    it.effect("void records an unseen key as void for every later take, and answers a seen key's outcome", () =>
      Effect.gen(function*() {
        const { first, second } = yield* ChargeBooks
        const sub = Fixtures.uuid()
        const voided = yield* first.void(request(sub, 1))
        assert.deepStrictEqual([voided.program, voided.fresh], ["void", true])
        const later = yield* second.take(request(sub, 1))
        assert.deepStrictEqual([later.program, later.fresh], ["void", false])
        const taken = yield* second.take(request(sub, 2))
        const asked = yield* first.void(request(sub, 2))
        assert.deepStrictEqual([asked.program, asked.serial, asked.fresh], [taken.program, taken.serial, false])
      }))

    it.effect("concurrent take and void of one key agree", () =>
      Effect.gen(function*() {
        const { first, second } = yield* ChargeBooks
        const sub = Fixtures.uuid()
        const [taken, voided] = yield* Effect.all([first.take(request(sub, 1)), second.void(request(sub, 1))], { concurrency: 2 })
        assert.strictEqual(taken!.serial, voided!.serial)
        assert.strictEqual(taken!.program, voided!.program)
        assert.strictEqual([taken!.fresh, voided!.fresh].filter(Boolean).length, 1)
      }))

    it.effect("after a stopped binding, a new key is declined and a known key still replays", () =>
      Effect.gen(function*() {
        const { first, second } = yield* ChargeBooks
        const sub = Fixtures.uuid()
        const before = yield* first.take(request(sub, 1))
        yield* second.stopBinding(sub)
        yield* second.stopBinding(sub)
        assert.deepStrictEqual((yield* first.take(request(sub, 1))).program, before.program)
        const after = yield* first.take(request(sub, 2))
        assert.deepStrictEqual([after.program, after.fresh], ["stopped", true])
        assert.strictEqual((yield* first.take(request(Fixtures.uuid(), 1))).program, "paid")
      }))
  })
