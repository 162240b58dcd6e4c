/**
 * "Run what is due now": every background job of the service over the idempotent use cases,
 * in the order that lets one pass finish what the previous produced (callbacks last).
 * Both engines (the local worker and Inngest) call these; running them twice, or on two
 * machines at once, does nothing twice. The jobs take objects on no test clock only; the objects of
 * a clock are worked at the clock's time by its own work (`TestClockWork`).
 */
import { Clock, Effect } from "effect"
import { PaydeskConfig } from "../Config.js"
import { IdempotencyStore } from "../ports/IdempotencyStore.js"
import { NonceStore } from "../ports/NonceStore.js"
import { OutboxRepository } from "../ports/OutboxRepository.js"
import { SessionRepository } from "../ports/SessionRepository.js"
import * as Callbacks from "./Callbacks.js"
import { job } from "./Jobs.js"
import * as Payments from "./Payments.js"
import * as Payouts from "./Payouts.js"
import * as Lifecycle from "./SubscriptionLifecycle.js"
import * as Subscriptions from "./Subscriptions.js"
import * as Terminals from "./Terminals.js"
import * as TestClocks from "./TestClocks.js"
import * as TestClockWork from "./TestClockWork.js"
import * as Traced from "../Traced.js"

/** What one pass did. */
export interface Report {
  readonly expiredPayments: number
  readonly charges: number
  /** Open attempts of stopped subscriptions booked (paid, or `stop`). */
  readonly settledCharges: number
  readonly stops: number
  readonly conversions: number
  readonly payouts: number
  readonly callbacks: number
  /** Test clocks worked on: advances continued (after a crash or a spent budget), and work due at a clock's time. */
  readonly testClocks: number
}

/** A report of a pass that did nothing. */
export const emptyReport: Report = { expiredPayments: 0, charges: 0, settledCharges: 0, stops: 0, conversions: 0, payouts: 0, callbacks: 0, testClocks: 0 }

/** The sum of two reports. */
export const combine = (a: Report, b: Report): Report => ({
  expiredPayments: a.expiredPayments + b.expiredPayments,
  charges: a.charges + b.charges,
  settledCharges: a.settledCharges + b.settledCharges,
  stops: a.stops + b.stops,
  conversions: a.conversions + b.conversions,
  payouts: a.payouts + b.payouts,
  callbacks: a.callbacks + b.callbacks,
  testClocks: a.testClocks + b.testClocks
})

/**
 * Whether a report did live work. Test clocks alone do not count: an advance continued in the
 * background goes on at the next pass, so live work never waits behind a long advance.
 */
export const didWork = (report: Report): boolean =>
  Object.entries(report).some(([key, n]) => key !== "testClocks" && n > 0)

/**
 * How long a dashboard session is kept after its refresh token expired (a week): an expired token is
 * refused either way; the row is kept a little for the operator's questions about a sign-in.
 */
export const sessionRetentionMs = 7 * 86_400_000

/**
 * Deletes expired nonces (their 10-minute window is over), idempotency records and events past their
 * retention, dashboard sessions a week after their refresh token expired (an outside probe found
 * none ever deleted: a row per sign-in and per refresh, for ever), and test clocks past their
 * `deletesAfter` or deleted by the merchant, with their objects, a batch at a time (`TestClocks.purge`:
 * an outside probe found a clock's events never deleted).
 */
export const housekeeping = Traced.fn("Work.housekeeping")(function*() {
  const config = yield* PaydeskConfig
  const now = yield* Clock.currentTimeMillis
  const nonces = yield* (yield* NonceStore).purge(now)
  const store = yield* IdempotencyStore
  const records = (yield* store.purge(now - config.idempotencyRetentionMs, ["subscription", "payout"])) +
    (yield* store.purge(now - config.moneyIdempotencyRetentionMs, ["payment", "rotation", "operator"]))
  const events = yield* (yield* OutboxRepository).purge(now - config.eventRetentionMs)
  const sessions = yield* (yield* SessionRepository).purge(now - sessionRetentionMs)
  const testClocks = yield* TestClocks.purge()
  return { nonces, records, events, sessions, testClocks }
})

/** A job of a pass (named as its count in the report). */
export type Job = keyof Report

/** Options of `runDue`. */
export interface RunOptions {
  /**
   * `false`: test clocks are left to a run of their own (`TestClocks.runPendingFor`), as the local
   * engine and the Inngest sweep give them, so that live work never waits behind a clock's work
   * (whose callbacks an advance waits for). Default `true`.
   */
  readonly testClocks?: boolean
}

/**
 * Runs every due job once, or only the jobs of `only` (then without housekeeping); one job failing
 * does not keep the others from running.
 */
export const runDue = Traced.fn("Work.runDue")(function*(only?: ReadonlySet<Job>, options?: RunOptions) {
  const runs = (name: Job) => (only === undefined || only.has(name)) && (name !== "testClocks" || options?.testClocks !== false)
  const expiredPayments = runs("expiredPayments") ? yield* job("expire payments", Payments.expireDue()) : 0
  const charges = runs("charges") ? yield* job("due charges", Subscriptions.runDueCharges()) : 0
  const stops = runs("stops") ? yield* job("pending stops", Lifecycle.finishPendingStops()) : 0
  const settledCharges = runs("settledCharges") ? yield* job("settle stopped charges", Subscriptions.settleStoppedCharges()) : 0
  const conversions = runs("conversions") ? yield* job("conversions", Terminals.runDueConversions()) : 0
  const payouts = runs("payouts") ? yield* job("payouts", Payouts.runDue()) : 0
  const callbacks = runs("callbacks") ? yield* job("callbacks", Callbacks.runDue()) : 0
  const testClocks = runs("testClocks") ? yield* job("test clocks", TestClockWork.runPending()) : 0
  if (only === undefined) yield* job("housekeeping", Effect.map(housekeeping(), ({ events, nonces, records, sessions, testClocks }) => nonces + records + events + sessions + testClocks))
  const report: Report = { expiredPayments, charges, settledCharges, stops, conversions, payouts, callbacks, testClocks }
  return report
})

/**
 * The jobs the round after `report` runs: after a round that did live work, only the live jobs that
 * did and the callbacks (which every other job feeds), so a busy job's next batch does not wait
 * behind the queries of idle ones; test clocks (when the round runs them at all, see
 * `RunOptions.testClocks`) only in whole rounds; after a round restricted so that found nothing, every job again
 * (`undefined`), which finds what came in meanwhile; after a whole round that found nothing, none
 * (`null`: the pass is over).
 */
export const nextRound = (report: Report, ran: ReadonlySet<Job> | undefined): ReadonlySet<Job> | undefined | null => {
  if (didWork(report)) {
    const busy = new Set<Job>(["callbacks"])
    for (const [name, n] of Object.entries(report) as Array<[Job, number]>) if (n > 0 && name !== "testClocks") busy.add(name)
    return busy
  }
  return ran === undefined ? null : undefined
}

/**
 * Rounds of `runDue` until a whole round finds nothing to do (at most `maxRounds`; test clocks alone
 * do not count, see `didWork`), the rounds after busy ones restricted as `nextRound` says; `round`
 * runs each round (`runDue`, or `runDue` made uninterruptible by an engine).
 */
export const rounds = <E, R>(
  maxRounds: number,
  round: (only: ReadonlySet<Job> | undefined) => Effect.Effect<Report, E, R>
) =>
  Effect.gen(function*() {
    let total = emptyReport
    let only: ReadonlySet<Job> | undefined = undefined
    for (let n = 0; n < maxRounds; n++) {
      const report = yield* round(only)
      total = combine(total, report)
      const next = nextRound(report, only)
      if (next === null) break
      only = next
    }
    return total
  })

/** Runs passes until a whole one finds nothing to do (at most `maxPasses`; see `rounds`). */
export const drain = Traced.fn("Work.drain")(function*(maxPasses: number = 20) {
  return yield* rounds(maxPasses, runDue)
})
