/**
 * The OpenTelemetry side of `Telemetry`, loaded only when spans are exported.
 *
 * Traces: the Effect spans of the whole server (the HTTP request spans of `@paydesk/fastify`, the
 * core's `Effect.fn` use cases, and every SQL statement of `effect/sql`) become OpenTelemetry spans
 * (`@effect/opentelemetry`) and leave over OTLP/HTTP (JSON) in batches when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set (to `<endpoint>/v1/traces`). Without an endpoint and
 * without extra processors nothing is recorded beyond Effect's own in-process spans.
 *
 * The tracer provider is flushed and shut down when the server stops.
 */
import * as OtelTracer from "@effect/opentelemetry/OtelTracer"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { resourceFromAttributes } from "@opentelemetry/resources"
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer, Option } from "effect"
import { type Options, tracesUrl } from "./Telemetry.js"

/** The OpenTelemetry tracer over the given processors and the OTLP exporter of `endpoint`. */
export const layer = (options: Options): Layer.Layer<OtelTracer.OtelTracer> => {
  const processors: Array<SpanProcessor> = [
    ...(options.processors ?? []),
    ...Option.toArray(Option.map(options.endpoint, (endpoint) => new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl(endpoint) }))))
  ]
  const provider = Layer.effect(
    OtelTracer.OtelTracerProvider,
    Effect.acquireRelease(
      Effect.sync(() =>
        new BasicTracerProvider({
          resource: resourceFromAttributes({ "service.name": options.serviceName }),
          spanProcessors: processors
        })
      ),
      (provider) =>
        Effect.promise(() => provider.forceFlush().finally(() => provider.shutdown())).pipe(
          Effect.ignore,
          Effect.timeoutOption(3_000)
        )
    )
  )
  return OtelTracer.layer.pipe(Layer.provide(provider))
}
