/**
 * `Traced.fn(name)`: a function that is what `Effect.fn(name)` makes (a span of that name, and its
 * definition and call sites in the cause of a failure) when the fiber running it records spans
 * (Effect's `TracerEnabled`), and what `Effect.fnUntraced` makes when it does not.
 *
 * A host without a span exporter turns `TracerEnabled` off (the reference server does). An
 * `Effect.fn` call still costs about 4 µs then: two captured stacks, a no-op span, and two
 * copies of the fiber's context for the span and the call frame. The use cases and repositories
 * make several such calls per request, delivery and charge.
 *
 * A call site can only be captured where the function is called, before the fiber is known, and
 * capturing one costs about as much as the rest of an `Effect.fn` call. So call sites are captured
 * once a fiber of the process has recorded a `Traced.fn` span (the first such call shows only its
 * definition site); a process that never records spans never pays for them. Same signature as
 * `Effect.fn`; its pipeables must give effects (as every caller's do).
 */
import { Effect, References, Tracer } from "effect"

/** An `Error` whose stack holds the caller of the function calling this one, or none when stacks are off. */
const captureCaller = (): Error | undefined => {
  const limit = Error.stackTraceLimit
  if (limit === 0) return undefined
  Error.stackTraceLimit = 3
  const error = new Error()
  Error.stackTraceLimit = limit
  return error
}

/** The caller's line of `error`'s stack (`at … (file:line:column)`), read when a cause is rendered. */
const callerLine = (error: Error | undefined): () => string | undefined => {
  let line: string | undefined
  return () => (line ??= error?.stack?.split("\n")[3]?.trim())
}

const noCallSite = (): string | undefined => undefined

/** Whether a fiber of this process has recorded a `Traced.fn` span: from then on call sites are captured. */
let recording = false

type AnyFunction = (...args: Array<unknown>) => unknown

export const fn = (name: string, options?: Tracer.SpanOptionsNoTrace): Effect.fn.Traced =>
  ((body: unknown, ...pipeables: Array<unknown>) => {
    const definition = { name: `${name} (definition)`, stack: callerLine(captureCaller()) }
    const untraced = (Effect.fnUntraced as (...parts: Array<unknown>) => AnyFunction)(body, ...pipeables)
    const either = function(this: unknown, ...args: Array<unknown>) {
      const call = recording ? callerLine(captureCaller()) : noCallSite
      const effect = untraced.apply(this, args) as Effect.Effect<unknown, unknown>
      return Effect.withFiber((fiber) => {
        if (!fiber.getRef(References.TracerEnabled)) return effect
        recording = true
        return Effect.updateService(
          Effect.useSpan(name, options ?? {}, (span) => Effect.provideService(effect, Tracer.ParentSpan, span)),
          References.CurrentStackFrame,
          (parent) => ({ name, stack: call, parent: { ...definition, parent } })
        )
      })
    }
    return Object.defineProperty(either, "length", { value: untraced.length, configurable: true })
  }) as Effect.fn.Traced
