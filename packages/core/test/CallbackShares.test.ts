import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { CallbackShares } from "../src/index.js"

const { failingAfter, failingPerTerminal, busyDeferMs, perTerminal, slowMs } = CallbackShares

/** A send held until `release` answers it (`ok` or not). */
const held = () => Effect.map(Deferred.make<boolean>(), (answer) => ({ answer, send: Deferred.await(answer) }))

/** Fresh shares with terminal "a"'s perTerminal slots taken by held sends (each answered on its own). */
const fullTerminal = Effect.gen(function*() {
  const shares = CallbackShares.make()
  const sends = yield* Effect.forEach(Array.from({ length: perTerminal }), () => held())
  const sending = yield* Effect.forEach(sends, ({ send }) => Effect.forkChild(shares.run("a", send, (ok) => ok)))
  return { shares, sends, sending }
})

describe("CallbackShares", () => {
  it.effect("a terminal sends perTerminal at once; one more waits for a slot of its own while its sends are quick; another terminal is not held", () =>
    Effect.gen(function*() {
      const shares = CallbackShares.make()
      const { answer, send } = yield* held()
      const fibers = yield* Effect.forEach(Array.from({ length: perTerminal + 1 }), () => Effect.forkChild(shares.run("a", send, (ok) => ok)))
      yield* Effect.yieldNow
      assert.deepStrictEqual(shares.of("a"), { inFlight: perTerminal, failures: 0 })
      assert.isUndefined(fibers[perTerminal]!.pollUnsafe(), "the one beyond its slots waits")
      // Another terminal goes at once.
      assert.deepStrictEqual(yield* shares.run("b", Effect.succeed("sent"), () => true), { _tag: "Sent", value: "sent", nowFailing: false })
      yield* Deferred.succeed(answer, true)
      const ran = yield* Effect.forEach(fibers, Fiber.join)
      assert.isTrue(ran.every((r) => r._tag === "Sent"))
      assert.deepStrictEqual(shares.of("a"), { inFlight: 0, failures: 0 })
    }))

  it.effect("once its oldest send in flight is slowMs old, one beyond its slots is deferred busyDeferMs (more as that send runs longer), also one already waiting", () =>
    Effect.gen(function*() {
      const shares = CallbackShares.make()
      const { answer, send } = yield* held()
      const sending = yield* Effect.forEach(Array.from({ length: perTerminal }), () => Effect.forkChild(shares.run("a", send, (ok) => ok)))
      const waiting = yield* Effect.forkChild(shares.run("a", send, (ok) => ok))
      yield* Effect.yieldNow
      yield* TestClock.adjust(slowMs)
      assert.deepStrictEqual(yield* Fiber.join(waiting), { _tag: "Defer", forMs: busyDeferMs })
      assert.deepStrictEqual(yield* shares.run("a", send, (ok) => ok), { _tag: "Defer", forMs: busyDeferMs })
      // The longer its oldest send runs, the further: as long as it has run, at most busyDeferMaxMs.
      yield* TestClock.adjust(4 * slowMs)
      assert.deepStrictEqual(yield* shares.run("a", send, (ok) => ok), { _tag: "Defer", forMs: 5 * slowMs })
      yield* TestClock.adjust(CallbackShares.busyDeferMaxMs)
      assert.deepStrictEqual(yield* shares.run("a", send, (ok) => ok), { _tag: "Defer", forMs: CallbackShares.busyDeferMaxMs })
      yield* Deferred.succeed(answer, true)
      yield* Effect.forEach(sending, Fiber.join)
      assert.strictEqual(shares.of("a").inFlight, 0)
    }))

  it.effect("after failingAfter slow failures in a row it sends failingPerTerminal at once and answers the rest Unsent (failed attempts, not deferred), until one succeeds", () =>
    Effect.gen(function*() {
      const shares = CallbackShares.make()
      const failed = yield* Effect.forEach(Array.from({ length: failingAfter }), () => shares.run("a", Effect.succeed(false), (ok) => ok))
      assert.deepStrictEqual(failed.map((r) => r._tag === "Sent" && r.nowFailing), [...Array.from({ length: failingAfter - 1 }, () => false), true])
      const { answer, send } = yield* held()
      const sending = yield* Effect.forEach(Array.from({ length: failingPerTerminal }), () => Effect.forkChild(shares.run("a", send, (ok) => ok)))
      yield* Effect.yieldNow
      assert.strictEqual(shares.of("a").inFlight, failingPerTerminal)
      assert.deepStrictEqual(yield* shares.run("a", send, (ok) => ok), { _tag: "Unsent", failures: failingAfter })
      yield* Deferred.succeed(answer, true)
      yield* Effect.forEach(sending, Fiber.join)
      // A success ends it: perTerminal again.
      assert.deepStrictEqual(shares.of("a"), { inFlight: 0, failures: 0 })
      const { answer: again, send: sendAgain } = yield* held()
      const more = yield* Effect.forEach(Array.from({ length: perTerminal }), () => Effect.forkChild(shares.run("a", sendAgain, (ok) => ok)))
      yield* Effect.yieldNow
      assert.strictEqual(shares.of("a").inFlight, perTerminal)
      yield* Deferred.succeed(again, true)
      yield* Effect.forEach(more, Fiber.join)
    }))

  it.effect("a failing mark no slow failure renews for failingForgetMs is forgotten: the terminal sends as any again, and fails again if its endpoint still does not answer", () =>
    Effect.gen(function*() {
      const shares = CallbackShares.make()
      for (let i = 0; i < failingAfter; i++) yield* shares.run("a", Effect.succeed(false), (ok) => ok)
      const { answer, send } = yield* held()
      const sending = yield* Effect.forEach(Array.from({ length: failingPerTerminal }), () => Effect.forkChild(shares.run("a", send, (ok) => ok)))
      yield* Effect.yieldNow
      assert.deepStrictEqual(yield* shares.run("a", send, (ok) => ok), { _tag: "Unsent", failures: failingAfter })
      yield* TestClock.adjust(CallbackShares.failingForgetMs - 1)
      assert.strictEqual((yield* shares.run("a", send, (ok) => ok))._tag, "Unsent")
      yield* TestClock.adjust(1)
      // Forgotten: a third one is sent beside the two still in flight.
      const third = yield* Effect.forkChild(shares.run("a", send, (ok) => ok))
      yield* Effect.yieldNow
      assert.deepStrictEqual(shares.of("a"), { inFlight: failingPerTerminal + 1, failures: 0 })
      yield* Deferred.succeed(answer, false)
      yield* Effect.forEach([...sending, third], Fiber.join)
      // Their slow failures mark it failing again at once.
      assert.deepStrictEqual(shares.of("a"), { inFlight: 0, failures: failingAfter })
      const { send: again } = yield* held()
      yield* Effect.forEach(Array.from({ length: failingPerTerminal }), () => Effect.forkChild(shares.run("a", again, (ok) => ok)))
      yield* Effect.yieldNow
      assert.strictEqual((yield* shares.run("a", again, (ok) => ok))._tag, "Unsent")
    }))

  it.effect("each slot given back goes to the first run waiting, first come first served; one interrupted while it waits leaves the queue", () =>
    Effect.gen(function*() {
      const { shares, sends, sending } = yield* fullTerminal
      const started: Array<number> = []
      const { answer: later, send: sendLater } = yield* held()
      const waiting = yield* Effect.forEach([1, 2, 3, 4], (n) =>
        Effect.forkChild(shares.run("a", Effect.andThen(Effect.sync(() => void started.push(n)), sendLater), (ok) => ok)))
      yield* Effect.yieldNow
      assert.deepStrictEqual(started, [])
      yield* Deferred.succeed(sends[0]!.answer, true)
      yield* Fiber.join(sending[0]!)
      yield* Effect.yieldNow
      assert.deepStrictEqual(started, [1], "the first waiting, and only it")
      // The second leaves the queue: the next slot goes to the third at once (no wait for slowMs).
      yield* Fiber.interrupt(waiting[1]!)
      yield* Deferred.succeed(sends[1]!.answer, true)
      yield* Fiber.join(sending[1]!)
      yield* Effect.yieldNow
      assert.deepStrictEqual(started, [1, 3])
      assert.deepStrictEqual(shares.of("a"), { inFlight: perTerminal, failures: 0 })
      yield* Deferred.succeed(sends[2]!.answer, true)
      yield* Fiber.join(sending[2]!)
      yield* Effect.yieldNow
      assert.deepStrictEqual(started, [1, 3, 4])
      yield* Effect.forEach(sends.slice(3), ({ answer }) => Deferred.succeed(answer, true))
      yield* Deferred.succeed(later, true)
      yield* Effect.forEach([...sending, waiting[0]!, ...waiting.slice(2)], Fiber.join)
      assert.deepStrictEqual(shares.of("a"), { inFlight: 0, failures: 0 })
    }))

  it.effect("a slot given back makes only the first run waiting look again, not every one", () =>
    Effect.gen(function*() {
      const { shares, sends, sending } = yield* fullTerminal
      yield* Effect.yieldNow
      // The waiting runs read the clock once each time they look: counted.
      const clock = yield* Clock.Clock
      let looks = 0
      const counting: Clock.Clock = { ...clock, currentTimeMillis: Effect.suspend(() => (looks++, clock.currentTimeMillis)) }
      const { answer: later, send: sendLater } = yield* held()
      const waiting = yield* Effect.forEach(Array.from({ length: 10 }), () =>
        Effect.forkChild(Effect.provideService(shares.run("a", sendLater, (ok) => ok), Clock.Clock, counting)))
      yield* Effect.yieldNow
      assert.strictEqual(looks, 10)
      yield* Deferred.succeed(sends[0]!.answer, true)
      yield* Fiber.join(sending[0]!)
      yield* Effect.yieldNow
      assert.strictEqual(looks, 11, "one look for one slot")
      assert.deepStrictEqual(shares.of("a"), { inFlight: perTerminal, failures: 0 })
      yield* Effect.forEach(sends.slice(1), ({ answer }) => Deferred.succeed(answer, true))
      yield* Deferred.succeed(later, true)
      yield* Effect.forEach([...sending, ...waiting], Fiber.join)
      assert.deepStrictEqual(shares.of("a"), { inFlight: 0, failures: 0 })
    }))

  it.effect("thousands waiting whose sends end at once (a synchronous transport) all go through one slot given back", () =>
    Effect.gen(function*() {
      const { shares, sends, sending } = yield* fullTerminal
      const waiting = yield* Effect.forEach(Array.from({ length: 3000 }), () => Effect.forkChild(shares.run("a", Effect.sync(() => true), (ok) => ok)))
      yield* Effect.yieldNow
      yield* Deferred.succeed(sends[0]!.answer, true)
      const ran = yield* Effect.forEach(waiting, Fiber.join)
      assert.strictEqual(ran.filter((r) => r._tag === "Sent").length, 3000)
      assert.deepStrictEqual(shares.of("a"), { inFlight: perTerminal - 1, failures: 0 })
      yield* Effect.forEach(sends.slice(1), ({ answer }) => Deferred.succeed(answer, true))
      yield* Effect.forEach(sending, Fiber.join)
      assert.deepStrictEqual(shares.of("a"), { inFlight: 0, failures: 0 })
    }))

  it.effect("thousands waiting when the terminal becomes failing are all answered Unsent at once", () =>
    Effect.gen(function*() {
      const { shares, sends, sending } = yield* fullTerminal
      const { answer: later, send: sendLater } = yield* held()
      const waiting = yield* Effect.forEach(Array.from({ length: 3000 }), () => Effect.forkChild(shares.run("a", sendLater, (ok) => ok)))
      yield* Effect.yieldNow
      for (let i = 0; i < failingAfter; i++) {
        yield* Deferred.succeed(sends[i]!.answer, false)
        yield* Fiber.join(sending[i]!)
      }
      const answered = yield* Effect.forEach(waiting.slice(failingAfter - 1), Fiber.join)
      assert.strictEqual(answered.filter((r) => r._tag === "Unsent").length, 3000 - (failingAfter - 1))
      yield* Effect.forEach(sends.slice(failingAfter), ({ answer }) => Deferred.succeed(answer, true))
      yield* Deferred.succeed(later, true)
      yield* Effect.forEach([...sending, ...waiting.slice(0, failingAfter - 1)], Fiber.join)
    }))

  it.effect("runs waiting when the terminal becomes failing are answered Unsent in turn as a slot is given back, without waiting for slowMs", () =>
    Effect.gen(function*() {
      const { shares, sends, sending } = yield* fullTerminal
      const { answer: later, send: sendLater } = yield* held()
      const waiting = yield* Effect.forEach(Array.from({ length: failingAfter + 2 }), () => Effect.forkChild(shares.run("a", sendLater, (ok) => ok)))
      yield* Effect.yieldNow
      // failingAfter slow failures: each but the last gives its slot to the next waiting; the last
      // makes the terminal failing, and the next waiting finds more in flight than
      // failingPerTerminal: it is answered Unsent and wakes every other waiting, answered too, the
      // clock unmoved.
      for (let i = 0; i < failingAfter; i++) {
        yield* Deferred.succeed(sends[i]!.answer, false)
        yield* Fiber.join(sending[i]!)
      }
      const answered = yield* Effect.forEach(waiting.slice(failingAfter - 1), Fiber.join)
      assert.deepStrictEqual(answered, waiting.slice(failingAfter - 1).map(() => ({ _tag: "Unsent" as const, failures: failingAfter })))
      assert.deepStrictEqual(shares.of("a"), { inFlight: perTerminal - 1, failures: failingAfter })
      yield* Effect.forEach(sends.slice(failingAfter), ({ answer }) => Deferred.succeed(answer, true))
      yield* Deferred.succeed(later, true)
      yield* Effect.forEach([...sending, ...waiting.slice(0, failingAfter - 1)], Fiber.join)
    }))

  it.effect("a send interrupted in flight, or a run interrupted while it waits, gives its slot back", () =>
    Effect.gen(function*() {
      const shares = CallbackShares.make()
      const { send } = yield* held()
      const fibers = yield* Effect.forEach(Array.from({ length: perTerminal + 2 }), () => Effect.forkChild(shares.run("a", send, (ok) => ok)))
      yield* Effect.yieldNow
      assert.strictEqual(shares.of("a").inFlight, perTerminal)
      yield* Effect.forEach(fibers, Fiber.interrupt)
      assert.deepStrictEqual(shares.of("a"), { inFlight: 0, failures: 0 })
      assert.deepStrictEqual(yield* shares.run("a", Effect.succeed(1), () => true), { _tag: "Sent", value: 1, nowFailing: false })
    }))
})
