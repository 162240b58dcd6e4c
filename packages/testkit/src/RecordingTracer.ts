/**
 * A tracer that keeps every span it makes, in order, for tests of what is traced: `make()` gives
 * the spans array and the layer that installs the tracer.
 */
import { Layer, Tracer } from "effect"

export const make = (): { readonly spans: Array<Tracer.NativeSpan>; readonly layer: Layer.Layer<never> } => {
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
