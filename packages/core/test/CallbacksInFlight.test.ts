import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { CallbacksInFlight } from "@paydesk/core"

/** A group that notes its name once the group before it (if any) is done, after `ms`, and defers nothing. */
const group = (ran: Array<string>, name: string, ms = 0) => (before: Deferred.Deferred<CallbacksInFlight.DeferredUntil> | undefined) =>
  Effect.gen(function*() {
    if (before !== undefined) yield* Deferred.await(before)
    if (ms > 0) yield* Effect.sleep(ms)
    ran.push(name)
    return null
  })

describe("CallbacksInFlight", () => {
  it.live("a slow group goes on in the background; one of the same payment runs after it; the state is cleared", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const inFlight = CallbacksInFlight.make((effect) => Effect.forkIn(effect, scope), { waitMs: 20 })
      const ran: Array<string> = []
      yield* inFlight.run("P", ["d1"], group(ran, "d1", 200))
      expect([ran, inFlight.running(), [...inFlight.sending()]]).toEqual([[], 1, ["d1"]])
      yield* inFlight.waiting().run("P", ["d2"], group(ran, "d2"))
      expect([ran, inFlight.running(), inFlight.sending().size]).toEqual([["d1", "d2"], 0, 0])
      yield* Scope.close(scope, Exit.void)
    }))

  it.live("a group that deferred the payment's deliveries passes the time on to the next group of the payment", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const inFlight = CallbacksInFlight.make((effect) => Effect.forkIn(effect, scope), { waitMs: 10 })
      yield* inFlight.run("P", ["d1"], () => Effect.as(Effect.sleep(50), 123_456))
      const seen = yield* Deferred.make<CallbacksInFlight.DeferredUntil>()
      yield* inFlight.waiting().run("P", ["d2"], (before) => Effect.flatMap(Deferred.await(before!), (until) => Effect.as(Deferred.succeed(seen, until), null)))
      expect(yield* Deferred.await(seen)).toBe(123_456)
    }))

  it.live("a group whose fork never started (its scope had closed) or that died leaves nothing behind and blocks no later group", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const inFlight = CallbacksInFlight.make((effect) => Effect.forkIn(effect, scope), { waitMs: 20 })
      const ran: Array<string> = []
      yield* inFlight.run("P", ["d0"], () => Effect.die("boom"))
      yield* Effect.sleep(30)
      expect([inFlight.running(), inFlight.sending().size]).toEqual([0, 0])
      yield* Scope.close(scope, Exit.void)
      yield* inFlight.run("P", ["d1"], group(ran, "d1"))
      expect([inFlight.running(), inFlight.sending().size]).toEqual([0, 0])
      const inline = yield* inFlight.waiting().run("P", ["d2"], group(ran, "d2")).pipe(Effect.timeoutOption(1_000))
      expect([inline._tag, ran]).toEqual(["Some", ["d2"]])
    }))
})
