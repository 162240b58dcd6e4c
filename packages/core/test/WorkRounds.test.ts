import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Work } from "../src/index.js"

const report = (counts: Partial<Work.Report>): Work.Report => ({ ...Work.emptyReport, ...counts })
const names = (only: ReadonlySet<Work.Job> | undefined | null) => only === undefined || only === null ? only : [...only].sort()

describe("Work rounds", () => {
  it("after a busy round only the busy live jobs and the callbacks run (test clocks only in whole rounds); test clocks alone are no work", () => {
    assert.deepStrictEqual(names(Work.nextRound(report({ charges: 100 }), undefined)), ["callbacks", "charges"])
    assert.deepStrictEqual(names(Work.nextRound(report({ callbacks: 3, expiredPayments: 1, testClocks: 2 }), new Set(["callbacks"]))), [
      "callbacks",
      "expiredPayments"
    ])
    // A restricted round that found nothing is followed by a whole one; a whole one that found nothing ends the pass.
    assert.strictEqual(Work.nextRound(report({ testClocks: 1 }), new Set(["charges", "callbacks"])), undefined)
    assert.strictEqual(Work.nextRound(report({ testClocks: 1 }), undefined), null)
  })

  it.effect("rounds run whole, then restricted while busy, and end with a whole round that found nothing", () =>
    Effect.gen(function*() {
      // Charges are busy for two rounds; the whole round after them finds callbacks left; the next whole round finds nothing.
      const script = [report({ charges: 100, callbacks: 5 }), report({ charges: 40, callbacks: 100 }), report({}), report({ callbacks: 2 }), report({}), report({})]
      const ran: Array<ReadonlyArray<Work.Job> | undefined> = []
      const total = yield* Work.rounds(20, (only) =>
        Effect.sync(() => {
          ran.push(only === undefined ? undefined : [...only].sort())
          return script[ran.length - 1]!
        }))
      assert.deepStrictEqual(ran, [undefined, ["callbacks", "charges"], ["callbacks", "charges"], undefined, ["callbacks"], undefined])
      assert.deepStrictEqual(total, report({ charges: 140, callbacks: 107 }))
    }))

  it.effect("rounds stop at the bound even while there is work", () =>
    Effect.gen(function*() {
      let n = 0
      const total = yield* Work.rounds(3, () => Effect.sync(() => (n++, report({ callbacks: 1 }))))
      assert.strictEqual(n, 3)
      assert.strictEqual(total.callbacks, 3)
    }))
})
