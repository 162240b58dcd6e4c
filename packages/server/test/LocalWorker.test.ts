/**
 * The local worker's test-clock loop: a run that fails (a database error is a defect in the
 * adapters) is logged and the loop goes on; the check says so while the worker stays ready, since
 * live work does not depend on test clocks. A review found the first version's loop ending for good
 * on one defect, with the check still saying ok.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Logger, Scope } from "effect"
import { TestClock } from "effect/testing"
import { Payments, PaymentRepository, TestClockRepository } from "@paydesk/core"
import { Kit } from "@paydesk/testkit"
import { WakeSignal } from "../src/LocalWakeups.js"
import * as LocalWorker from "../src/LocalWorker.js"
import { Metrics } from "../src/Metrics.js"
import { fakeMetrics } from "./FakeMetrics.js"

describe("LocalWorker", () => {
  it.effect("the test-clock loop goes on after a failed run; the check says so and stays ok", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-06-01T12:00:00.000Z"))
      let claims = 0
      // The first claim dies, as the PostgreSQL adapter's does when its connection is lost.
      const failingOnce = Layer.effect(
        TestClockRepository,
        Effect.gen(function*() {
          const repo = yield* TestClockRepository
          return TestClockRepository.of({
            ...repo,
            claimPending: (...args) => ++claims === 1 ? Effect.die(new Error("connection lost to db.internal:5432")) : repo.claimPending(...args)
          })
        })
      )
      const observed: Array<number | null> = []
      const metrics = fakeMetrics({ observeTestClocks: (worked) => void observed.push(worked) })
      const scope = yield* Scope.make()
      const built = yield* Layer.buildWithScope(
        LocalWorker.layer({ intervalMs: 100 }).pipe(Layer.provide(failingOnce), Layer.provide(WakeSignal.layer)),
        scope
      ).pipe(Effect.provideService(Metrics, metrics))
      const worker = Context.get(built, LocalWorker.LocalWorker)

      yield* TestClock.adjust(150)
      assert.strictEqual(claims, 1)
      assert.deepStrictEqual(observed, [null])
      const failed = yield* worker.check
      assert.isTrue(failed.ok, failed.detail)
      // The error's code at most (the check answers anyone), its text in the log.
      assert.match(failed.detail, /; the last test-clock run failed: an error; the cause is in the server's log$/)

      // The next runs come at each interval, and a run that works clears the note.
      yield* TestClock.adjust(100)
      yield* TestClock.adjust(100)
      assert.strictEqual(claims, 3)
      assert.deepStrictEqual(observed, [null, 0, 0])
      const after = yield* worker.check
      assert.isTrue(after.ok)
      assert.notMatch(after.detail, /test-clock/)
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a pass one of whose jobs fails (the others still run) is a failed pass: the check is not ok and the metrics count it failed, until a pass without one", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-06-01T12:00:00.000Z"))
      let down = true
      // The expiry job's claim dies while the database is "down", as the PostgreSQL adapter's does.
      const failing = Layer.effect(
        PaymentRepository,
        Effect.gen(function*() {
          const repo = yield* PaymentRepository
          return PaymentRepository.of({ ...repo, claimExpired: (...args) => down ? Effect.die(new Error("connection refused")) : repo.claimExpired(...args) })
        })
      )
      const passes: Array<{ readonly failed: boolean; readonly callbacks: number | null }> = []
      const metrics = fakeMetrics({ observePass: (report, failed) => void passes.push({ failed, callbacks: report?.callbacks ?? null }) })
      // Work for a later job of the pass: a payment's callback.
      const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/cb" })
      const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
      yield* Payments.create(principal, { amount: "1", orderId: "o-job-failed", test: true })
      const errors: Array<string> = []
      const logger = Logger.make<unknown, void>(({ logLevel, message }) => {
        if (logLevel === "Error") errors.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
      })
      const scope = yield* Scope.make()
      const built = yield* Layer.buildWithScope(
        LocalWorker.layer({ intervalMs: 100 }).pipe(Layer.provide(failing), Layer.provide(WakeSignal.layer)),
        scope
      ).pipe(Effect.provideService(Metrics, metrics), Effect.provide(Logger.layer([logger])))
      const worker = Context.get(built, LocalWorker.LocalWorker)

      // (A pass waits up to a second for the callbacks it started.)
      for (let i = 0; i < 40 && passes.length < 3; i++) yield* TestClock.adjust(150)
      assert.isAtLeast(passes.length, 3)
      assert.isTrue(passes.every((p) => p.failed))
      // Logged once, not at every pass (a database down wrote about nine lines a second: an outside probe).
      assert.deepStrictEqual(errors.filter((line) => line.includes("background job expire payments failed")), ["background job expire payments failed"])
      // The callbacks job after the failed one ran all the same.
      assert.strictEqual(passes.reduce((n, p) => n + (p.callbacks ?? 0), 0), 1)
      const failed = yield* worker.check
      assert.isFalse(failed.ok)
      assert.match(failed.detail, /the last pass failed: its jobs failed: expire payments/)

      down = false
      const seen = passes.length
      for (let i = 0; i < 20 && passes.length === seen; i++) yield* TestClock.adjust(150)
      assert.isFalse(passes.at(-1)!.failed)
      const after = yield* worker.check
      assert.isTrue(after.ok, after.detail)
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(Kit.layer)))
})
