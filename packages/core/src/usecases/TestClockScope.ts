/**
 * How use cases act on objects of a test clock: a merchant's or payer's action on such an object
 * (creation, consent, simulate, stop, resume, resend) runs at the clock's frozen time, is refused
 * while the clock advances, and afterwards asks the background worker to run what became due at
 * the clock's time (the new payment's `payment.created` callback, say). Objects on no clock are
 * left as they are.
 */
import { Clock, Effect, Option } from "effect"
import { NotFound, TestClockAdvancing } from "../Errors.js"
import * as TestClock from "../TestClock.js"
import { TestClockRepository } from "../ports/TestClockRepository.js"

/** Whether the fiber works on the objects of clock `testClockId` already. */
const inside = (testClockId: string) => Effect.map(TestClock.Scope, (scope) => scope === testClockId)

/** The current time for an object on clock `testClockId` (or on none): the clock's frozen time. */
export const nowOf = Effect.fnUntraced(function*(testClockId: string | null) {
  if (testClockId === null || (yield* inside(testClockId))) return yield* Clock.currentTimeMillis
  const clock = yield* (yield* TestClockRepository).get(testClockId)
  return Option.isSome(clock) ? clock.value.frozenTime : yield* Clock.currentTimeMillis
})

/**
 * Runs a merchant's or payer's action on an object of clock `testClockId` at the clock's frozen
 * time (as it is; `null`: no clock). 409 `test clock is advancing` during an advance. Once it
 * succeeded, the clock is marked for the background worker, which runs the work due at its time.
 */
export const forObject = <A, E, R>(
  testClockId: string | null,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | TestClockAdvancing | NotFound, R | TestClockRepository> =>
  testClockId === null
    ? effect
    : Effect.gen(function*() {
      if (yield* inside(testClockId)) return yield* effect
      const repo = yield* TestClockRepository
      const clock = yield* repo.get(testClockId)
      if (Option.isNone(clock)) return yield* NotFound.of("test clock")
      if (clock.value.status === "advancing") return yield* TestClockAdvancing.of()
      const result = yield* TestClock.at(testClockId, clock.value.frozenTime, effect)
      yield* repo.markWorkDue(testClockId)
      return result
    })
