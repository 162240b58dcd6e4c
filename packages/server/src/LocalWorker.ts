/**
 * The local background engine: a fiber in the server's scope that runs every due job on an
 * interval and as soon as it is woken (the `WakeSignal`: a commit wrote due work, see
 * LocalWakeups, or the operator set the manual clock). A pass runs `Work.runDue` until it finds
 * nothing more (at most `maxRounds` rounds); each round is uninterruptible, so a shutdown waits for
 * the round in progress and never cuts a charge or a delivery in half. Passes never overlap in one
 * process (`runNow` waits for the pass in progress); several processes on one database share the
 * work safely because the use cases claim rows with `SKIP LOCKED` and leases. Callbacks still being
 * sent a second after a pass started them go on in the background (`CallbacksInFlight`, in a scope
 * of the layer's, which waits for them when it closes), so a slow receiver holds up neither the
 * next pass's callbacks nor the other work. Test clocks run in a loop of their own (every interval,
 * `TestClocks.runPendingFor`), so live work never waits behind a clock's, whose advance waits for
 * its callbacks; the operator's `runNow` works them too.
 *
 * A pass that did work logs one summary line; a failed pass logs its cause and the loop goes on.
 */
import { Cause, Context, Duration, Effect, Layer, Schedule, Scope, Semaphore } from "effect"
import { Callback, CallbacksInFlight, Jobs, TestClocks, Work } from "@paydesk/core"
import type { HostRoutes } from "@paydesk/fastify"
import { WakeSignal } from "./LocalWakeups.js"
import { Metrics } from "./Metrics.js"
import * as FailureLog from "./FailureLog.js"
import * as Logging from "./Logging.js"
import * as PublicDetail from "./PublicDetail.js"

/** What a pass needs: the services of the core's due-work use cases. */
export type WorkServices = Effect.Services<ReturnType<typeof Work.runDue>>

/** The local worker. */
export class LocalWorker extends Context.Service<LocalWorker, {
  /** Runs a pass now (after the one in progress) and answers what it did. */
  readonly runNow: Effect.Effect<Work.Report, Effect.Error<ReturnType<typeof Work.runDue>>>
  /** Whether the loop runs and how its last pass ended. */
  readonly check: Effect.Effect<HostRoutes.Check>
}>()("@paydesk/server/LocalWorker") {}

/** Options of `layer`. */
export interface Options {
  /** Pause between passes when nothing wakes the worker. */
  readonly intervalMs: number
  /** Rounds of `Work.runDue` per pass at most (default 20). */
  readonly maxRounds?: number
}

/** "3 callbacks, 1 charges" */
const summary = (report: Work.Report) =>
  Object.entries(report).filter(([, n]) => n > 0).map(([kind, n]) => `${n} ${kind}`).join(", ")

/** Forks the loop into the layer's scope (interrupted when the server stops). */
export const layer = (options: Options): Layer.Layer<LocalWorker, never, WakeSignal | Metrics | WorkServices> =>
  Layer.effect(
    LocalWorker,
    Effect.gen(function*() {
      const signal = yield* WakeSignal
      const metrics = yield* Metrics
      const services = yield* Effect.context<WorkServices>()
      const lock = yield* Semaphore.make(1)
      const maxRounds = options.maxRounds ?? 20
      // The background's sends run in a scope of their own, made before the loop is forked into the
      // layer's: closing (in reverse order) interrupts the loop first, which lets its round end, and
      // only then waits for the background, so no round forks a send into a scope already closing
      // (that send would never start: a review found it). They run uninterruptibly.
      // A stop says what it waits for, and when the worker is done (an outside probe's stop was silent
      // for 16 s while a round and slow callbacks ended). Registered first, so it runs last.
      const stopping = { at: 0 }
      yield* Effect.addFinalizer(() => Effect.suspend(() => stopping.at === 0 ? Effect.void : Logging.lifecycle(`worker stopped (${Date.now() - stopping.at} ms)`)))
      const background = yield* Scope.fork(yield* Effect.scope, "parallel")
      const inFlight = CallbacksInFlight.make((effect) => Effect.forkIn(effect, background, { uninterruptible: true }))
      // Closed after the loop (registered later, so run earlier) and before the background is
      // waited for: its groups finish the attempts they are making and start no new one.
      yield* Effect.addFinalizer(() =>
        Effect.suspend(() => {
          inFlight.close()
          const left = inFlight.running()
          return left === 0 ? Effect.void : Logging.lifecycle(`worker: waiting for ${left} payments' callbacks still in flight (each attempt ends within ${Callback.timeoutMs / 1000} s)`)
        }))
      const state = { running: false, lastPassAt: null as number | null, lastError: null as string | null }

      // The loop's passes leave slow callbacks in the background; a pass asked for (`runNow`: the
      // operator's `work run`) waits for all it sent, so its report means done (after the
      // background's callbacks of the same payments).
      // The loop's passes leave test clocks to a loop of their own (below); a pass asked for runs
      // them too.
      const rounds = (leaveSlow: boolean) =>
        Effect.gen(function*() {
          // A wake from now on asks for another pass.
          signal.closeUnsafe()
          return yield* Work.rounds(maxRounds, (only) => Effect.uninterruptible(Work.runDue(only, { testClocks: !leaveSlow }))).pipe(
            Effect.provideService(CallbacksInFlight.InFlight, leaveSlow ? inFlight : inFlight.waiting())
          )
        })

      // A job that fails is logged and the pass goes on to the next (`Jobs.job`): the pass notes its
      // name, and a pass with one is a failed pass for the health check and the metrics. Its failures
      // are logged as failed callback attempts are: the first, then at most one a minute per job.
      const jobFailures = FailureLog.make()
      const pass = (leaveSlow: boolean) => Effect.suspend(() => {
        const failed: Array<string> = []
        const sink: Jobs.FailureSink = {
          failed: (name, cause) => {
            failed.push(name)
            return FailureLog.logNoted(jobFailures, name, `background job ${name} failed`, (line) => Effect.logError(line, cause), { component: "worker" }, "failures of it")
          }
        }
        return passNoting(leaveSlow, failed, sink)
      })
      const passNoting = (leaveSlow: boolean, failed: Array<string>, sink: Jobs.FailureSink) => lock.withPermits(1)(rounds(leaveSlow)).pipe(
        Effect.provideService(Jobs.Failed, sink),
        Effect.timed,
        Effect.tap(([elapsed, report]) =>
          Effect.gen(function*() {
            state.lastPassAt = Date.now()
            state.lastError = failed.length === 0 ? null : `its jobs failed: ${[...new Set(failed)].join(", ")} (their errors are in the log)`
            metrics.observePass(report, failed.length > 0)
            if (Work.didWork(report)) {
              yield* Effect.logInfo(`work: ${summary(report)} (${Math.round(Duration.toMillis(elapsed))} ms)`).pipe(
                Effect.annotateLogs({ component: "worker", ...report })
              )
            }
          })),
        Effect.tapCause((cause) =>
          Effect.gen(function*() {
            if (Cause.hasInterruptsOnly(cause)) return
            state.lastPassAt = Date.now()
            state.lastError = PublicDetail.failure("an error", Cause.pretty(cause))
            metrics.observePass(null, true)
            yield* Effect.logError(`work pass failed: ${Cause.pretty(cause).split("\n")[0] ?? "failed"}`).pipe(Effect.annotateLogs({ component: "worker", cause: Cause.pretty(cause) }))
          })),
        Effect.map(([, report]) => report)
      )

      const cycle = Effect.raceFirst(signal.await, Effect.sleep(Duration.millis(options.intervalMs))).pipe(
        Effect.andThen(pass(true)),
        // A failed pass is logged above; the loop goes on.
        Effect.ignore
      )

      // Test clocks in a loop of their own, every interval: an advance waits for its clock's callbacks
      // (up to their timeout each, so that retries follow at the clock's moments), and in the live
      // loop 8 clocks of one sandbox whose endpoint did not answer held up every merchant's live work
      // (retries due 30–50 s late; found by an outside probe). Each run is uninterruptible, as a
      // round is: a stop waits for it (its budget, then the step in progress). Not on the wake
      // signal: the live loop closes it, and an open one would spin this loop. A failed run (a
      // database error is a defect here) is logged and the loop goes on.
      const clocks = { running: false, lastError: null as string | null }
      const clockRun = TestClocks.runPendingFor(TestClocks.backgroundBudgetMs).pipe(
        Effect.uninterruptible,
        Effect.matchCauseEffect({
          onSuccess: (worked) =>
            Effect.sync(() => {
              clocks.lastError = null
              metrics.observeTestClocks(worked)
            }),
          onFailure: (cause) =>
            Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.gen(function*() {
              clocks.lastError = PublicDetail.failure("an error", Cause.pretty(cause))
              metrics.observeTestClocks(null)
              yield* Effect.logError(`test clock work failed: ${Cause.pretty(cause).split("\n")[0] ?? "failed"}`).pipe(Effect.annotateLogs({ component: "worker", cause: Cause.pretty(cause) }))
            })
        })
      )

      // Both loops in a scope of their own, closed (both interrupted at once, each after the round or
      // run it is in) where the loop alone was.
      const loops = yield* Scope.fork(yield* Effect.scope, "parallel")
      yield* Effect.repeat(Effect.andThen(Effect.sleep(Duration.millis(options.intervalMs)), clockRun), Schedule.forever).pipe(
        Effect.onExit(() => Effect.sync(() => void (clocks.running = false))),
        Effect.forkIn(loops),
        Effect.tap(() => Effect.sync(() => void (clocks.running = true)))
      )
      yield* Effect.repeat(cycle, Schedule.forever).pipe(
        Effect.onExit(() => Effect.sync(() => void (state.running = false))),
        Effect.forkIn(loops),
        Effect.tap(() => Effect.sync(() => void (state.running = true)))
      )

      // Registered last, so it runs first: the loops are interrupted next, after the round or run each is in.
      yield* Effect.addFinalizer(() =>
        Effect.suspend(() => {
          stopping.at = Date.now()
          return Logging.lifecycle("worker stopping: ending its round and its test-clock step (their callbacks' attempts end within their timeout, 10 s each)")
        }))

      return LocalWorker.of({
        runNow: Effect.provideContext(pass(false), services),
        check: Effect.sync((): HostRoutes.Check => {
          if (!state.running) return { ok: false, detail: "the local worker is not running" }
          if (!clocks.running) return { ok: false, detail: "the local worker's test-clock loop is not running" }
          if (state.lastError !== null) return { ok: false, detail: `the last pass failed: ${state.lastError}` }
          // A failed test-clock run is said, but keeps the server ready: live work does not depend on it.
          const clockNote = clocks.lastError === null ? "" : `; the last test-clock run failed: ${clocks.lastError}`
          return { ok: true, detail: `${state.lastPassAt === null ? "running (no pass yet)" : `running (last pass ${new Date(state.lastPassAt).toISOString()})`}${clockNote}` }
        })
      })
    })
  )
