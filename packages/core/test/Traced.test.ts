import { describe, expect, it } from "vitest"
import { Cause, Effect, Exit, Option, References } from "effect"
import { Traced } from "../src/index.js"

const add = Traced.fn("Sample.add")(function*(a: number, b: number) {
  const span = yield* Effect.option(Effect.currentSpan)
  return { sum: a + b, span }
})

const refuse = Traced.fn("Sample.refuse")(function*(reason: string) {
  return yield* Effect.fail(reason)
}, Effect.mapError((reason) => `refused: ${reason}`))

describe("Traced.fn", () => {
  it("is a span of its name, current in its body and ended after it, when the fiber records spans", () => {
    const { sum, span } = Effect.runSync(add(2, 3))
    expect([sum, Option.map(span, (s) => s.name)]).toEqual([5, Option.some("Sample.add")])
    expect(Option.map(span, (s) => s.status._tag)).toEqual(Option.some("Ended"))
  })

  it("makes no span at all, not even a no-op one, when the fiber records none; the answer is the same", () => {
    const { sum, span } = Effect.runSync(add(2, 3).pipe(Effect.provideService(References.TracerEnabled, false)))
    // No span is current in the body: Effect.fn would have made a no-op one.
    expect([sum, span]).toEqual([5, Option.none()])
    const plain = Effect.fn("Sample.plain")(function*() {
      return Option.map(yield* Effect.option(Effect.currentSpan), (s) => s.name)
    })
    expect(Effect.runSync(plain().pipe(Effect.provideService(References.TracerEnabled, false)))).toEqual(Option.some("Sample.plain"))
  })

  it("puts its call and definition sites in a failure's cause when the fiber records spans, as Effect.fn does", () => {
    const outer = Traced.fn("Sample.outer")(function*() {
      return yield* refuse("no")
    })
    // Call sites are captured once the process has recorded a Traced.fn span: one recorded call first.
    Effect.runSyncExit(outer())
    const exit = Effect.runSyncExit(outer())
    const pretty = Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""
    // Each site is a line of this file, not of Traced.ts.
    expect(pretty).toMatch(/at Sample\.refuse \(\S*Traced\.test\.ts:\d+:\d+\)/)
    expect(pretty).toMatch(/at Sample\.refuse \(definition\) \(\S*Traced\.test\.ts:\d+:\d+\)/)
    expect(pretty).toMatch(/at Sample\.outer \(\S*Traced\.test\.ts:\d+:\d+\)/)
    expect(pretty).not.toMatch(/src\/Traced\.ts/)
    // With recording off, none (a defect's own stack trace is unaffected).
    const unrecorded = Effect.runSyncExit(outer().pipe(Effect.provideService(References.TracerEnabled, false)))
    expect(Exit.isFailure(unrecorded) ? Cause.pretty(unrecorded.cause) : "").not.toMatch(/Sample\./)
  })

  it("applies its pipeables and keeps the body's failure, either way, and the body's arity", () => {
    for (const enabled of [true, false]) {
      const exit = Effect.runSyncExit(refuse("no").pipe(Effect.provideService(References.TracerEnabled, enabled)))
      expect(Exit.isFailure(exit) && Cause.findErrorOption(exit.cause)).toEqual(Option.some("refused: no"))
    }
    expect(add.length).toBe(2)
  })
})
