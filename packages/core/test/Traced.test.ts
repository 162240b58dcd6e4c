import { describe, expect, it } from "vitest"
import { Cause, Effect, Exit, Layer, Option, References, Tracer } from "effect"
import { Traced } from "../src/index.js"

/** A tracer that keeps the spans it makes. */
const recording = () => {
  const spans: Array<Tracer.NativeSpan> = []
  const tracer = Tracer.make({
    span(options) {
      const span = new Tracer.NativeSpan(options)
      spans.push(span)
      return span
    }
  })
  return { spans, layer: Layer.succeed(Tracer.Tracer)(tracer) }
}

const add = Traced.fn("Sample.add")(function*(a: number, b: number) {
  const span = yield* Effect.option(Effect.currentSpan)
  return { sum: a + b, span: Option.map(span, (s) => s.name) }
})

const refuse = Traced.fn("Sample.refuse")(function*(reason: string) {
  return yield* Effect.fail(reason)
}, Effect.mapError((reason) => `refused: ${reason}`))

describe("Traced.fn", () => {
  it("is a span of its name, current in its body, when the fiber records spans", () => {
    const { spans, layer } = recording()
    const answer = Effect.runSync(add(2, 3).pipe(Effect.provide(layer)))
    expect(answer).toEqual({ sum: 5, span: Option.some("Sample.add") })
    expect(spans.map((s) => s.name)).toEqual(["Sample.add"])
    expect(spans[0]!.status._tag).toBe("Ended")
  })

  it("makes no span at all, not even a no-op one, when the fiber records none; the answer is the same", () => {
    const { spans, layer } = recording()
    const answer = Effect.runSync(add(2, 3).pipe(Effect.provide(layer), Effect.provideService(References.TracerEnabled, false)))
    // No span is current in the body: Effect.fn would have made a no-op one (the tracer sees neither).
    expect(answer).toEqual({ sum: 5, span: Option.none() })
    expect(spans).toEqual([])
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
