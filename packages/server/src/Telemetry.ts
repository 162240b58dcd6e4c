/**
 * Traces: the Effect spans of the whole server (the HTTP request spans of `@paydesk/fastify`, the
 * core's `Effect.fn` use cases, and every SQL statement of `effect/sql`) become OpenTelemetry spans
 * (`@effect/opentelemetry`) and leave over OTLP/HTTP (JSON) in batches when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set (to `<endpoint>/v1/traces`). Without an endpoint and without
 * extra processors nothing is exported and the OpenTelemetry SDK is not even loaded (TelemetryOtel.ts);
 * spans are then not even recorded (Effect's `TracerEnabled` is off): nobody would read them, and
 * making them costs every request and SQL statement time and garbage.
 */
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer, Option, References } from "effect"

/** Options of `layer`. */
export interface Options {
  /** OTLP/HTTP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT`); `/v1/traces` is appended. */
  readonly endpoint: Option.Option<string>
  /** `service.name` of the spans (`OTEL_SERVICE_NAME`). */
  readonly serviceName: string
  /** More processors (an embedding host's, or a test's in-memory exporter). */
  readonly processors?: ReadonlyArray<SpanProcessor>
}

/** The URL spans are posted to for an OTLP endpoint. */
export const tracesUrl = (endpoint: string): string => `${endpoint.replace(/\/+$/, "")}/v1/traces`

/** Installs the OpenTelemetry tracer when there is somewhere to send spans; else turns span recording off. */
export const layer = (options: Options): Layer.Layer<never> =>
  Option.isNone(options.endpoint) && (options.processors ?? []).length === 0
    ? Layer.succeed(References.TracerEnabled)(false)
    : Layer.unwrap(Effect.map(Effect.promise(() => import("./TelemetryOtel.js")), (otel) => otel.layer(options)))
