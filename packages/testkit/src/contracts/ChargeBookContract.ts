/**
 * Contract suite of the acquirer emulator's `ChargeBook`: a new key records the subscription's
 * next programmed outcome (`paid` when none), a known key replays without consuming the queue,
 * `resolve` replaces an outcome, and the book is atomic per key — also across two handles on one
 * storage (two server processes, or one process before and after a restart).
 */
import { assert, layer } from "@effect/vitest"
import { Context, Effect, type Layer } from "effect"
import type { ChargeBook, ChargeRequest } from "../AcquirerEmulator.js"
import * as Fixtures from "../Fixtures.js"

/** Two handles on the same book storage (the same instance for a memory book). */
export class ChargeBooks extends Context.Service<ChargeBooks, {
  readonly first: ChargeBook
  readonly second: ChargeBook
}>()("@paydesk/testkit/ChargeBookContract/ChargeBooks") {}

const request = (subscriptionId: string, cycleNumber: number, attempt = 1): ChargeRequest => ({
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
        yield* second.resolve(request(sub, 1).idempotencyKey, "paid")
        assert.deepStrictEqual(yield* first.take(request(sub, 1)), { program: "paid", serial: taken.serial, fresh: false })
        // A key the bank never saw stays unknown: the first charge under it is a real one.
        yield* second.resolve(request(sub, 2).idempotencyKey, "failed")
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
  })
