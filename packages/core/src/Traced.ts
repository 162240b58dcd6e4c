/**
 * `Traced.fn(name)`: a function that is `Effect.fn(name)` (a span, with its call site in the
 * cause of a failure) when the fiber calling it records spans (Effect's `TracerEnabled`), and
 * `Effect.fnUntraced` when it does not.
 *
 * A host without a span exporter turns `TracerEnabled` off (the reference server does). An
 * `Effect.fn` call still costs about 3.5 µs then: two captured stacks, a no-op span, and two
 * copies of the fiber's context for the span and the call frame. The use cases and repositories
 * make several such calls per request, delivery and charge. Same signature as `Effect.fn`.
 */
import { Effect, References } from "effect"
import type * as Tracer from "effect/Tracer"

export const fn = (name: string, options?: Tracer.SpanOptionsNoTrace): Effect.fn.Traced =>
  ((body: unknown, ...pipeables: Array<unknown>) => {
    const traced = (Effect.fn(name, options) as (...parts: Array<unknown>) => (...args: Array<unknown>) => unknown)(body, ...pipeables)
    const untraced = (Effect.fnUntraced as (...parts: Array<unknown>) => (...args: Array<unknown>) => unknown)(body, ...pipeables)
    const either = function(this: unknown, ...args: Array<unknown>) {
      return Effect.withFiber((fiber) => (fiber.getRef(References.TracerEnabled) ? traced : untraced).apply(this, args) as Effect.Effect<unknown, unknown>)
    }
    return Object.defineProperty(either, "length", { value: traced.length, configurable: true })
  }) as Effect.fn.Traced
