/**
 * The local worker's test-clock loop: a run that fails (a database error is a defect in the
 * adapters) is logged and the loop goes on; the check says so while the worker stays ready, since
 * live work does not depend on test clocks. A review found the first version's loop ending for good
 * on one defect, with the check still saying ok.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { TestClock } from "effect/testing"
import { TestClockRepository } from "@paydesk/core"
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
            claimPending: (...args) => ++claims === 1 ? Effect.die(new Error("connection lost")) : repo.claimPending(...args)
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
      assert.match(failed.detail, /; the last test-clock run failed: Error: connection lost$/)

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
})
