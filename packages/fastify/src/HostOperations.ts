/**
 * The declarations of the host's routes at the root of the server: liveness and readiness for
 * orchestrators (no credentials) and the Prometheus scrape (behind the operator token).
 */
import { operation } from "./Contract.js"
import type { Operation } from "./Contract.js"
import { responses as R } from "./ResponseSchemas.js"
import * as S from "./Schemas.js"

const tag = "Health"

export const liveness = operation({
  id: "healthLive", surface: "host", method: "GET", path: "/health/live", tag, auth: "none",
  summary: "Liveness: the process serves HTTP",
  query: S.NoQuery,
  queryExample: {},
  responses: [
    { status: 200, description: "alive (also while the server shuts down: a drain is no reason to restart it)", schema: R.Liveness, example: { status: "ok" } },
    {
      status: 503,
      description: "alive but unable to serve again until restarted (its embedded PostgreSQL has exited): restart it",
      schema: R.Liveness,
      example: { status: "failing", detail: "the embedded PostgreSQL (process 4242) has exited" }
    }
  ],
  errors: [[400, "`invalid_request`: `unknown query parameter …` (it takes none)"]]
})

export const readiness = operation({
  id: "healthReady", surface: "host", method: "GET", path: "/health/ready", tag, auth: "none",
  summary: "Readiness: database reachable, migrations applied, worker alive",
  query: S.NoQuery,
  queryExample: {},
  responses: [
    {
      status: 200,
      description: "ready",
      schema: R.Readiness,
      example: { status: "ready", checks: { database: { ok: true, detail: "answered in 2 ms" }, migrations: { ok: true, detail: "all applied" }, worker: { ok: true, detail: "last pass 0.4 s ago" } } }
    },
    {
      status: 503,
      description: "not ready: the body names the failing check (`server` while the server shuts down)",
      schema: R.Readiness,
      example: { status: "not_ready", checks: { database: { ok: false, detail: "no answer within 3000 ms" } } }
    }
  ],
  errors: [[400, "`invalid_request`: `unknown query parameter …` (it takes none)"]]
})

export const metrics = operation({
  id: "metrics", surface: "host", method: "GET", path: "/metrics", tag, auth: "operator",
  summary: "Prometheus metrics (text exposition format)",
  query: S.NoQuery,
  queryExample: {},
  responses: [{ status: 200, description: "the metrics", contentType: "text/plain" }],
  errors: [
    [400, "`invalid_request`: `unknown query parameter …` (it takes none)"],
    [401, "`operator bearer token required`"],
    [501, "`not_implemented`: the deployment exports no metrics"]
  ]
})

/** The host's operations. */
export const all: ReadonlyArray<Operation<any, any>> = [liveness, readiness, metrics]
