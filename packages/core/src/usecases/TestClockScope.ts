/**
 * How use cases act on objects of a test clock: a merchant's or payer's action on such an object
 * (creation, consent, simulate, stop, resume, resend) runs at the clock's frozen time, is refused
 * while the clock advances, and afterwards asks the background worker to run what became due at
 * the clock's time (the new payment's `payment.created` callback, say). Objects on no clock are
 * left as they are.
 */
import { Clock, Effect, Option } from "effect"
import { PaydeskConfig } from "../Config.js"
import { NotFound, TestClockAdvancing } from "../Errors.js"
import * as TestClock from "../TestClock.js"
import { TestClockRepository } from "../ports/TestClockRepository.js"

/** Whether the fiber works on the objects of clock `testClockId` already. */
const inside = (testClockId: string) => Effect.map(TestClock.Scope, (scope) => scope === testClockId)

/**
 * `effect` as it is for an object on no clock, or when the fiber works on that clock's objects already
 * (its advance, its worker's run); else `onClock`, which runs it on the clock.
 */
const atClock = <A, E, R, E2, R2>(
  testClockId: string | null,
  effect: Effect.Effect<A, E, R>,
  onClock: (testClockId: string) => Effect.Effect<A, E | E2, R | R2>
): Effect.Effect<A, E | E2, R | R2> =>
  testClockId === null ? effect : Effect.flatMap(inside(testClockId), (already) => already ? effect : onClock(testClockId))

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
  atClock(testClockId, effect, (testClockId) =>
    Effect.gen(function*() {
      const clock = yield* actionable(testClockId)
      const result = yield* TestClock.at(testClockId, clock.frozenTime, effect)
      yield* (yield* TestClockRepository).markWorkDue(testClockId)
      return result
    }))

/** The clock for an action on one of its objects: 404 `test clock not found` once deleted, 409 while it advances. */
const actionable = Effect.fnUntraced(function*(testClockId: string) {
  const clock = yield* (yield* TestClockRepository).get(testClockId)
  if (Option.isNone(clock)) return yield* NotFound.of("test clock")
  if (clock.value.status === "advancing") return yield* TestClockAdvancing.of()
  return clock.value
})

/**
 * Runs `attempt` until it answers a value (`none`: the clock is held, look again), every
 * `TestClock.heldRetryMs`, for about `TestClock.heldWaitMs`: then 409 `test clock is advancing` (a
 * holder that died keeps its lease until it runs out). Counted in tries, not read from the clock:
 * under the operator's manual clock (`PAYDESK_CLOCK=manual`) the wall time stands still, while the
 * sleeps are real (a review found the wait unbounded there). Answers the value and how long it
 * waited (the tries' sleeps), which an advance takes from its request's budget. Interruptible
 * between tries.
 */
export const whenFree = <A, E, R>(
  attempt: Effect.Effect<Option.Option<A>, E, R>
): Effect.Effect<{ readonly value: A; readonly waitedMs: number }, E | TestClockAdvancing, R> =>
  Effect.gen(function*() {
    const tries = Math.max(1, Math.ceil(TestClock.heldWaitMs / TestClock.heldRetryMs))
    for (let tried = 0;; tried++) {
      const answer = yield* attempt
      if (Option.isSome(answer)) return { value: answer.value, waitedMs: tried * TestClock.heldRetryMs }
      if (tried >= tries) return yield* TestClockAdvancing.of()
      yield* Effect.sleep(TestClock.heldRetryMs)
    }
  })

/**
 * Runs an action that sends one of the clock's callbacks itself (a resend) holding the clock, as the
 * background worker holds it while it runs the work due at its time: a lease on the wall clock,
 * taken once no one else holds it (`whenFree`). An advance waits for it meanwhile, since stepping
 * past the lease of the delivery in flight (on the clock's time) would send it again. Otherwise as
 * `forObject`: at the clock's frozen time, 409 during an advance, the clock marked for the worker after.
 */
export const holding = <A, E, R>(
  testClockId: string | null,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | TestClockAdvancing | NotFound, R | TestClockRepository> =>
  atClock(testClockId, effect, (testClockId) =>
    Effect.gen(function*() {
      const repo = yield* TestClockRepository
      const { leaseMs } = yield* PaydeskConfig
      const take = Effect.gen(function*() {
        const clock = yield* actionable(testClockId)
        const wall = yield* TestClock.wallTime
        if (TestClock.isHeld(clock, wall)) return Option.none<TestClock.TestClock>()
        const held: TestClock.TestClock = { ...clock, leaseUntil: wall + leaseMs, updatedAt: wall, version: clock.version + 1 }
        // Another took it meanwhile (a worker, an advance): look again.
        return yield* Effect.match(repo.update(held), { onFailure: () => Option.none(), onSuccess: () => Option.some(held) })
      })
      // Each try takes the lease in an uninterruptible acquire (so a taken lease is always let go),
      // and the waiting between tries stays interruptible (a shutdown does not wait for it).
      const tryOnce = Effect.acquireUseRelease(
        take,
        (held) => Option.isNone(held)
          ? Effect.succeed(Option.none<A>())
          : Effect.map(Effect.tap(TestClock.at(testClockId, held.value.frozenTime, effect), () => repo.markWorkDue(testClockId)), Option.some),
        // Let go unless another changed the clock meanwhile (its lease then runs out by itself).
        (held) => Option.isNone(held) ? Effect.void : Effect.ignore(Effect.flatMap(TestClock.wallTime, (wall) =>
          repo.update({ ...held.value, leaseUntil: null, updatedAt: wall, version: held.value.version + 1 })))
      )
      return (yield* whenFree(tryOnce)).value
    }))
