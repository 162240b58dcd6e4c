/**
 * Routes of the deployment around the APIs: liveness and readiness for orchestrators
 * (`GET /health/live`, `GET /health/ready`, no credentials, not logged at info level) and the
 * Prometheus scrape (`GET /metrics`, behind the operator token; 501 when the host exports no
 * metrics). Declared in `HostOperations`. While the app closes, readiness is 503 `not_ready` (see
 * `whileClosing`) and liveness still 200.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify"
import { Effect } from "effect"
import { operatorAuth } from "./AdminRoutes.js"
import { route } from "./Contract.js"
import * as Ops from "./HostOperations.js"
import { sendError } from "./Http.js"
import { fromExit } from "./HttpErrors.js"

/** One readiness check: whether it passed and what it saw. */
export interface Check {
  readonly ok: boolean
  readonly detail: string
}

/** What the host's readiness probe found. */
export interface Readiness {
  readonly checks: Readonly<Record<string, Check>>
}

/** Hooks of the host for these routes. */
export interface Hooks {
  /** Checks the server's dependencies (database, migrations, worker...); absent: ready once listening. */
  readonly ready?: () => Promise<Readiness>
  /** Metrics in the Prometheus text format; absent: `/metrics` answers 501. */
  readonly metrics?: { readonly contentType: string; render(): Promise<string> }
  /**
   * Why the process cannot serve again until it is restarted (its embedded database died), or null;
   * absent: alive while it answers. Liveness answers 503 with it, so an orchestrator restarts it.
   */
  readonly broken?: () => string | null
}

/**
 * Answers a probe that arrives while the app closes, which the app answers otherwise with its 503
 * `service_unavailable` (Fastify has set `Connection: close`): readiness 503 in its own body, `not_ready`
 * with the `server` check failing, so that an orchestrator or load balancer takes the instance out of
 * rotation; liveness as at any time (`handle`: 200), since a drain is no reason to restart the process.
 * False for any other request.
 */
export const whileClosing = (request: FastifyRequest, reply: FastifyReply, handle: () => void): boolean => {
  const id = request.routeOptions.config?.operationId
  if (id === Ops.liveness.id) {
    handle()
    return true
  }
  if (id !== Ops.readiness.id) return false
  // The host's checks are not asked: whatever they say, the server is leaving.
  reply.code(503).header("cache-control", "no-store").send({ status: "not_ready", checks: { server: { ok: false, detail: "the server is shutting down" } } })
  return true
}

/** A failed decode of a host route (unknown query parameters): its error answer; null when it decoded. */
const refused = async <A, E>(input: Effect.Effect<A, E>, requestId: string) => fromExit(await Effect.runPromiseExit(input), requestId)

/** Registers the routes at the root of `app`; `/metrics` needs `adminToken`. */
export const register = async (app: FastifyInstance, hooks: Hooks, adminToken: string | undefined): Promise<void> => {
  route(app, Ops.liveness, async (request, reply, decoded) => {
    const bad = await refused(decoded, request.id)
    if (bad !== null) return reply.code(bad.status).send(bad.body)
    const broken = hooks.broken?.() ?? null
    if (broken !== null) return reply.code(503).header("cache-control", "no-store").send({ status: "failing", detail: broken })
    return reply.header("cache-control", "no-store").send({ status: "ok" })
  }, { logLevel: "warn" })

  route(app, Ops.readiness, async (request, reply, decoded) => {
    const bad = await refused(decoded, request.id)
    if (bad !== null) return reply.code(bad.status).send(bad.body)
    let readiness: Readiness
    try {
      readiness = hooks.ready === undefined ? { checks: {} } : await hooks.ready()
    } catch (error) {
      request.log.warn({ err: error }, "readiness check failed")
      readiness = { checks: { probe: { ok: false, detail: String((error as Error)?.message ?? error) } } }
    }
    const ready = Object.values(readiness.checks).every((check) => check.ok)
    return reply.code(ready ? 200 : 503).header("cache-control", "no-store").send({ status: ready ? "ready" : "not_ready", checks: readiness.checks })
  }, { logLevel: "warn" })

  const metrics = hooks.metrics
  route(app, Ops.metrics, async (request, reply, decoded) => {
    const bad = await refused(decoded, request.id)
    if (bad !== null) return reply.code(bad.status).send(bad.body)
    if (metrics === undefined) return sendError(request, reply, 501, "not_implemented", "metrics are not available in this deployment")
    return reply.header("cache-control", "no-store").type(metrics.contentType).send(await metrics.render())
  }, { logLevel: "warn", onRequest: operatorAuth(adminToken ?? "") })
}
