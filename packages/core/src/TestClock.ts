/**
 * Test clocks (after Stripe's): a sandbox clock of a terminal, frozen at a time the merchant
 * chooses, to which sandbox payments and subscriptions are attached at creation. Everything that
 * happens to an object on a clock (creation, consent, simulate, stop, its due charges, expiries and
 * callback attempts) happens at the clock's frozen time; the merchant moves the clock forward
 * (`advance`) and the service runs the clock's due work moment by moment up to the new time.
 *
 * A clock is `ready`, or `advancing` towards `targetTime` while an advance runs (held by a lease on
 * the wall clock, so a crashed advance is taken over by the background worker). `workDue` asks the
 * background worker to run the work due at the clock's current time (set after an action on one of
 * its objects, such as the `payment.created` callback of a new payment).
 *
 * A clock is deleted by the merchant (`TestClocks.remove`) or by the retention once `deletesAfter` has
 * passed (`TestClocks.purge`): from `deletedAt` on it is absent for every read and action, and a
 * lease later its objects (payments, subscriptions, charges, events, deliveries, attempts) and the
 * clock itself are deleted from the store.
 *
 * While a use case works on a clock's objects, `Scope` names the clock and `Clock` is frozen at its
 * time (`frozen`); `WallClock` keeps the real clock for what must stay on real time (leases of the
 * clock itself, idempotency records, the signing-secret rotation window).
 */
import { Clock, Context, Effect } from "effect"
import { formatIso } from "./Instant.js"

/** Status of a clock. */
export type Status = "ready" | "advancing"

/** A test clock. Times are epoch milliseconds; `frozenTime` and `targetTime` are on the clock, the rest on the wall clock. */
export interface TestClock {
  readonly id: string
  readonly terminalId: string
  readonly name: string | null
  readonly frozenTime: number
  readonly status: Status
  /** The time an advance in progress moves to; `null` when ready. */
  readonly targetTime: number | null
  /** Wall time until which a worker holds the clock (an advance, or the work due at its time). */
  readonly leaseUntil: number | null
  /** Work may be due at the clock's current time: the background worker runs it. */
  readonly workDue: boolean
  readonly createdAt: number
  readonly updatedAt: number
  /** Wall time the clock was deleted (`null`: it was not): it is gone for reads, its objects are purged later. */
  readonly deletedAt: number | null
  /** Wall time from which the retention deletes the clock with its objects. */
  readonly deletesAfter: number
  readonly version: number
}

/**
 * Whether a ready clock is held (wall time `now`): a worker runs the work due at its time, or an
 * action sends one of its callbacks (a resend). Its deliveries in flight are leased on the clock's
 * time, so an advance must wait: stepping past their lease it would claim and send them again.
 */
export const isHeld = (clock: TestClock, now: number): boolean =>
  clock.status === "ready" && clock.leaseUntil !== null && clock.leaseUntil > now

/**
 * How long an advance, or an action that holds the clock, waits at most for its holder (then 409
 * `test clock is advancing`): with the advance's own 20 s and a callback's 10 s, a request stays
 * within the SDK's 30 s timeout.
 */
export const heldWaitMs = 10_000

/** How often a call waiting for a clock's holder looks again (wall time). */
export const heldRetryMs = 25

/** Earliest and latest frozen time a clock accepts (years 2000 to 2099, UTC); the operator's manual clock keeps to them too. */
export const earliestTime = Date.UTC(2000, 0, 1)
export const latestTime = Date.UTC(2100, 0, 1) - 1

/** Whether `time` is one a clock accepts. */
export const inRange = (time: number): boolean => time >= earliestTime && time <= latestTime

/** The accepted times, for messages: `from 2000-01-01T00:00:00.000Z to 2099-12-31T23:59:59.999Z`. */
export const rangeText = `from ${formatIso(earliestTime)} to ${formatIso(latestTime)}`

/** The longest single advance: two years (731 days), so one request cannot ask for unbounded work. */
export const maxAdvanceMs = 731 * 86_400_000

/** Longest clock name. */
export const maxNameLength = 128

/** A new ready clock, made at wall time `now` and kept `keepMs` (then the retention deletes it). */
export const make = (
  input: { readonly id: string; readonly terminalId: string; readonly name: string | null; readonly frozenTime: number },
  now: number,
  keepMs: number
): TestClock => ({
  ...input,
  status: "ready",
  targetTime: null,
  leaseUntil: null,
  workDue: false,
  createdAt: now,
  updatedAt: now,
  deletedAt: null,
  deletesAfter: now + keepMs,
  version: 1
})

/** The clock whose objects the current fiber works on; `null` outside (the global scope: objects on no clock). */
export const Scope = Context.Reference<string | null>("@paydesk/core/TestClock/Scope", { defaultValue: () => null })

/** The real clock while `Clock` is frozen at a test clock's time; `null` outside. */
export const WallClock = Context.Reference<Clock.Clock | null>("@paydesk/core/TestClock/WallClock", { defaultValue: () => null })

/** A `Clock` that always reads `time` and sleeps on `live` (sleeps stay real). */
export const frozen = (time: number, live: Clock.Clock): Clock.Clock => ({
  currentTimeMillisUnsafe: () => time,
  currentTimeMillis: Effect.succeed(time),
  currentTimeNanosUnsafe: () => BigInt(time) * 1_000_000n,
  currentTimeNanos: Effect.succeed(BigInt(time) * 1_000_000n),
  monotonicTimeNanosUnsafe: () => live.monotonicTimeNanosUnsafe(),
  monotonicTimeNanos: live.monotonicTimeNanos,
  sleep: (duration) => live.sleep(duration)
})

/** Real time, also while `Clock` is frozen at a test clock's time. */
export const wallTime: Effect.Effect<number> = Effect.flatMap(WallClock, (wall) => wall === null ? Clock.currentTimeMillis : wall.currentTimeMillis)

/** Runs `effect` on the objects of clock `id` as of `time`: `Scope` names the clock, `Clock` reads `time`. */
export const at = <A, E, R>(id: string, time: number, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.all([Clock.Clock, WallClock]), ([current, wall]) => {
    const live = wall ?? current
    return effect.pipe(
      Effect.provideService(Clock.Clock, frozen(time, live)),
      Effect.provideService(WallClock, live),
      Effect.provideService(Scope, id)
    )
  })
