/**
 * The work of a test clock's objects, at the clock's time: expiries, due charges, pending stops,
 * open attempts of stopped subscriptions and callback attempts, each taking only the clock's
 * objects (the claims' scope) with `Clock` frozen at the clock's time.
 *
 * An advance steps through the due moments in order: it asks for the earliest moment at which any
 * of the clock's objects is due (`earliestDue`), moves the clock there (written, so a crash resumes
 * from it), runs the work due then, and repeats until nothing is due before the target, which it
 * reaches last. So a charge due on 28 February is booked on 28 February, and the callback retries
 * it causes follow at their own moments. One call runs a bounded number of steps; what is left
 * continues in the background worker (`runPending`), which also takes over an advance whose
 * process died (its lease on the wall clock ran out) and runs the work due at a ready clock's time
 * after an action on one of its objects.
 */
import { Cause, Effect, Exit, Fiber, Option, Result, Semaphore } from "effect"
import { PaydeskConfig } from "../Config.js"
import * as TestClock from "../TestClock.js"
import { ChargeRepository } from "../ports/ChargeRepository.js"
import { OutboxRepository } from "../ports/OutboxRepository.js"
import { PaymentRepository } from "../ports/PaymentRepository.js"
import { SubscriptionRepository } from "../ports/SubscriptionRepository.js"
import { TestClockRepository } from "../ports/TestClockRepository.js"
import { atomic } from "./Atomic.js"
import * as Callbacks from "./Callbacks.js"
import { job } from "./Jobs.js"
import * as Payments from "./Payments.js"
import { runDueCharges, settleStoppedCharges, voidBackoff } from "./SubscriptionCharges.js"
import * as Lifecycle from "./SubscriptionLifecycle.js"
import * as Traced from "../Traced.js"

/** Steps one advance call runs at most before the rest continues in the background. */
export const maxStepsPerCall = 1_000
/** Wall time an advance request spends at most (the rest continues in the background). */
export const requestBudgetMs = 20_000
/**
 * Wall time the background worker spends on an advancing test clock per pass; the clocks it takes
 * run side by side (a pass that runs them waits about this, plus the step each is in, however many
 * clocks wait).
 */
export const backgroundBudgetMs = 1_000
/** Clocks the background worker takes per pass at most; the others wait for later passes, least recently worked first. */
export const clocksPerPass = 4
/** Passes of the clock's jobs at one moment at most (each pass finishes what the previous produced). */
export const maxPassesPerMoment = 20

/** Each job of the clock in scope once; the number of records worked. */
const pass = Effect.gen(function*() {
  const counts = [
    yield* job("test clock: expire payments", Payments.expireDue()),
    yield* job("test clock: due charges", runDueCharges()),
    yield* job("test clock: pending stops", Lifecycle.finishPendingStops()),
    yield* job("test clock: settle stopped charges", settleStoppedCharges()),
    yield* job("test clock: callbacks", Callbacks.runDue())
  ]
  return counts.reduce((a, b) => a + b, 0)
})

/**
 * Runs the clock's due work at `time` until a pass finds nothing; the number of records worked.
 * `renew`, after each pass that worked, renews the caller's hold on the clock (false: it lost it, and
 * the run stops): a run of many passes, each waiting for its callbacks (up to 10 s each), could
 * outlast a lease taken once, and an advance would then step past the callbacks still in flight.
 */
export const runAt = Traced.fn("TestClocks.runAt")(function*(
  clockId: string,
  time: number,
  renew: Effect.Effect<boolean, never, TestClockRepository> = Effect.succeed(true)
) {
  return yield* TestClock.at(clockId, time, Effect.gen(function*() {
    let worked = 0
    for (let i = 0; i < maxPassesPerMoment; i++) {
      const done = yield* pass
      worked += done
      if (done === 0 || !(yield* renew)) break
    }
    return worked
  }))
})

/** The earliest moment at which some object of the clock is due (`null`: none is). */
export const earliestDue = Traced.fn("TestClocks.earliestDue")(function*(clockId: string) {
  const { leaseMs } = yield* PaydeskConfig
  const moments = [
    yield* (yield* PaymentRepository).earliestExpiry(clockId),
    yield* (yield* SubscriptionRepository).earliestDue(clockId),
    // An open attempt of a stopped subscription is asked about again after its rest.
    yield* (yield* ChargeRepository).earliestOpenOfStopped(clockId, voidBackoff(leaseMs)),
    yield* (yield* OutboxRepository).earliestDelivery(clockId)
  ].filter((m): m is number => m !== null)
  return moments.length === 0 ? null : Math.min(...moments)
})

/** Writes `next` over `clock` (version checked); none when another worker changed the clock meanwhile. */
const write = Traced.fn("TestClocks.write")(function*(clock: TestClock.TestClock, change: Partial<TestClock.TestClock>) {
  const wall = yield* TestClock.wallTime
  const next: TestClock.TestClock = { ...clock, ...change, updatedAt: wall, version: clock.version + 1 }
  const written = yield* Effect.result((yield* TestClockRepository).update(next))
  return Result.isSuccess(written) ? Option.some(next) : Option.none<TestClock.TestClock>()
})

/**
 * How long a clock whose holder's run failed stays held before any worker takes it again: shorter
 * than an advance's wait for a holder (`TestClock.heldWaitMs`), so a merchant's advance still gets it.
 */
export const failedHoldMs = 5_000

/** A clock this worker holds: its writes, one at a time, and whether the hold is still its own. */
interface Held {
  /** The clock as this worker last wrote it. */
  readonly current: () => TestClock.TestClock
  /** Writes `change` over the clock (version checked); none once another worker has it. */
  readonly write: (change: Partial<TestClock.TestClock>) => Effect.Effect<Option.Option<TestClock.TestClock>, never, TestClockRepository>
  /** Renews the hold for a lease from now; false once another worker has it, or it was let go. */
  readonly renew: Effect.Effect<boolean, never, TestClockRepository>
}

/**
 * Runs `body` holding `clock` (as claimed or started, its lease taken). First the clock's deliveries
 * a dead worker claimed and never recorded are made due at its time (no other worker sends them
 * while this one holds the clock): their lease is on the clock's time, which a ready clock never
 * reaches by itself, so after a crash they waited for the merchant's next advance (an outside probe:
 * a `payment.paid` never re-sent on a frozen clock). Then every write of the clock goes
 * through `Held.write`, one at a time, and a timer renews the hold every third of a lease while
 * `body` runs, until it lets the clock go (`leaseUntil: null`). A worker still sending (a pass of a
 * clock's callbacks can outlast a lease: one payment's events, in order, 10 s each) so never loses
 * its hold to another, which would take its deliveries for a dead worker's and send them again (a
 * review); a worker that died loses it a lease later.
 */
const holding = <A, E, R>(clock: TestClock.TestClock, body: (held: Held) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const { leaseMs } = yield* PaydeskConfig
    yield* (yield* OutboxRepository).releaseLeases(clock.id, clock.frozenTime)
    const permit = yield* Semaphore.make(1)
    let current = clock
    let mine = true
    const held: Held = {
      current: () => current,
      write: (change) =>
        Semaphore.withPermit(permit)(Effect.gen(function*() {
          if (!mine) return Option.none<TestClock.TestClock>()
          const next = yield* write(current, change)
          if (Option.isNone(next)) mine = false
          else {
            current = next.value
            if ("leaseUntil" in change && change.leaseUntil === null) mine = false
          }
          return next
        })),
      renew: Effect.flatMap(TestClock.wallTime, (wall) => Effect.map(held.write({ leaseUntil: wall + leaseMs }), Option.isSome))
    }
    // A renewal that fails (the store unreachable for a moment) is tried again at the next tick, two
    // more before the lease runs out: ending the timer there would let a long pass lose its hold after
    // all (a review). It ends when the hold is another's or let go.
    const renewing = yield* Effect.forkChild(Effect.gen(function*() {
      for (;;) {
        yield* Effect.sleep(Math.max(1, Math.floor(leaseMs / 3)))
        const renewed = yield* held.renew.pipe(
          Effect.catchCause((cause) =>
            Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.as(Effect.logWarning(`test clock ${clock.id}: its hold not renewed, tried again in ${Math.floor(leaseMs / 3)} ms`, cause), true))
        )
        if (!renewed) return
      }
    }))
    // A body that failed lets the clock go after `failedHoldMs` (the next holder releases what it
    // left), not a lease later, when merchants' advances were refused meanwhile; nor at once, when a
    // clock whose run fails every time (a row it cannot read) was taken again at every pass of every
    // process (a review). One interrupted (the host stopping) leaves it to its lease, as a worker that died does.
    const letGo = (cause: Cause.Cause<unknown>) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.void
        : Effect.flatMap(TestClock.wallTime, (wall) => Effect.asVoid(held.write({ leaseUntil: wall + Math.min(leaseMs, failedHoldMs) })))
    // The timer is stopped before the clock is let go: a renewal waiting for the permit meanwhile
    // would hold it for a lease after the short one (a review).
    return yield* body(held).pipe(
      Effect.onExit((exit) =>
        Effect.andThen(Fiber.interrupt(renewing), Exit.isFailure(exit) ? letGo(exit.cause) : Effect.void)
      )
    )
  })

/** The clock as stored now. */
const reload = Traced.fn("TestClocks.reload")(function*(clock: TestClock.TestClock) {
  return Option.getOrElse(yield* (yield* TestClockRepository).get(clock.id), () => clock)
})

/**
 * Continues an advance held by the caller (`clock` as last written, `advancing`): steps through the
 * due moments up to the target within `budgetMs` of wall time and `maxStepsPerCall` steps. Returns
 * the clock: `ready` at the target when done, else still `advancing` with its lease released, so
 * the background worker continues at once.
 */
export const steps = Traced.fn("TestClocks.steps")(function*(clock: TestClock.TestClock, budgetMs: number) {
  const { leaseMs } = yield* PaydeskConfig
  const started = yield* TestClock.wallTime
  return yield* holding(clock, (held) =>
    Effect.gen(function*() {
      let last: number | null = null
      for (let step = 0; step < maxStepsPerCall; step++) {
        const clock = held.current()
        const target = clock.targetTime
        if (clock.status !== "advancing" || target === null) return clock
        const earliest = yield* earliestDue(clock.id)
        const moment = earliest === null || earliest > target ? target : Math.max(earliest, clock.frozenTime)
        const moved = yield* held.write({ frozenTime: moment, leaseUntil: (yield* TestClock.wallTime) + leaseMs })
        // Another worker took the advance over (after our lease ran out): it goes on from here.
        if (Option.isNone(moved)) return yield* reload(clock)
        const worked = yield* runAt(clock.id, moment)
        const stuck = worked === 0 && moment === last
        if (moment === target) {
          const left = yield* earliestDue(clock.id)
          // Work still due at the target that no claim could take is left to the background (workDue).
          if (left === null || left > target || worked === 0) {
            const done = yield* held.write({ status: "ready", targetTime: null, leaseUntil: null })
            if (Option.isNone(done)) return yield* reload(held.current())
            if (left !== null && left <= target) yield* (yield* TestClockRepository).markWorkDue(clock.id)
            return done.value
          }
        } else if (stuck) {
          // Something is due that no claim could take (another transaction holds it): retry in the background.
          break
        }
        last = moment
        if ((yield* TestClock.wallTime) - started >= budgetMs) break
      }
      const released = yield* held.write({ leaseUntil: null })
      return Option.isSome(released) ? released.value : yield* reload(held.current())
    }))
})

/**
 * `runPending` again while it takes a full `clocksPerPass` and `budgetMs` of wall time is not spent:
 * for a host that gives test clocks a run of their own (the Inngest sweep, once a minute), where
 * no live work waits behind them. Returns how many clocks it worked on.
 */
export const runPendingFor = Traced.fn("TestClocks.runPendingFor")(function*(budgetMs: number) {
  const started = yield* TestClock.wallTime
  let total = 0
  for (;;) {
    const worked = yield* runPending()
    total += worked
    if (worked < clocksPerPass || (yield* TestClock.wallTime) - started >= budgetMs) return total
  }
})

/**
 * Background work of test clocks: continues advances that wait (a spent request budget, or a
 * process that died: its lease ran out) and runs the work due at the time of ready clocks that
 * asked for it (`workDue`) or whose holder died (a lease that ran out). At most `clocksPerPass` clocks, side by side, each advance within
 * `backgroundBudgetMs`, so that many clocks (a sandbox merchant's) hold up a pass that runs them for
 * about as long as one would. Returns how many clocks it worked on.
 */
export const runPending = Traced.fn("TestClocks.runPending")(function*() {
  const config = yield* PaydeskConfig
  const repo = yield* TestClockRepository
  const now = yield* TestClock.wallTime
  const claimed = yield* atomic(repo.claimPending(now, now + config.leaseMs, Math.min(config.batchSize, clocksPerPass)))
  // Side by side, each within the budget: a clock whose callbacks hang (10 s each) holds up the
  // run, not the other clocks' work (one sandbox's stuck clocks delayed another merchant's clock
  // behind theirs, one after another: an outside probe).
  yield* Effect.forEach(claimed, (clock) =>
    job(
      `test clock ${clock.id}`,
      clock.status === "advancing"
        ? Effect.as(steps(clock, backgroundBudgetMs), 1)
        : Effect.gen(function*() {
          // The hold renewed on a timer and after each pass (`runAt`), so it lasts as long as the run.
          yield* holding(clock, (held) =>
            Effect.gen(function*() {
              yield* runAt(clock.id, clock.frozenTime, held.renew)
              // Let go of the clock unless an advance took it meanwhile.
              yield* held.write({ leaseUntil: null })
            }))
          return 1
        })
    ), { concurrency: "unbounded", discard: true })
  return claimed.length
})
