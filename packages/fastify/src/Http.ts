/**
 * The bridge between Fastify and the core: run one use case per request on the host's
 * `ManagedRuntime`, answer its value or its error (one error body for all), and authenticate
 * merchant requests (API key + nonce, or a dashboard Bearer token).
 */
import type { FastifyReply, FastifyRequest } from "fastify"
import { Effect, type ManagedRuntime } from "effect"
import { Auth } from "@paydesk/core"
import type { Access, Services } from "@paydesk/core"
import { errorResponse, fromExit } from "./HttpErrors.js"

/** What route modules share. */
export interface Context {
  readonly runtime: ManagedRuntime.ManagedRuntime<Services, never>
  /** Origin of the payer pages, without trailing slash. */
  readonly publicUrl: string
}

/** Sends the spec's error body with the request id. */
export const sendError = (request: FastifyRequest, reply: FastifyReply, status: number, code: string, message: string, field?: string) => {
  const response = errorResponse(status, code, message, request.id, field)
  return reply.code(response.status).send(response.body)
}

/** Runs `effect`; on success calls `ok`, on failure sends the mapped error. */
export const run = async <A, E>(
  ctx: Context,
  request: FastifyRequest,
  reply: FastifyReply,
  effect: Effect.Effect<A, E, Services>,
  ok: (value: A) => unknown
) => {
  const exit = await ctx.runtime.runPromiseExit(effect)
  const failed = fromExit(exit, request.id)
  if (failed !== null) {
    if (failed.status >= 500) request.log.error({ cause: exit._tag === "Failure" ? String(exit.cause) : undefined }, "use case failed")
    return reply.code(failed.status).send(failed.body)
  }
  return ok((exit as { value: A }).value)
}

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

/** The merchant principal: `Authorization: Bearer` (dashboard) or `X-API-Key` + `X-Nonce`. */
export const principal = (request: FastifyRequest): Effect.Effect<Access.Principal, import("@paydesk/core").PaydeskError, Services> => {
  const authorization = header(request, "authorization")
  if (authorization !== undefined && /^Bearer\s+/i.test(authorization)) {
    return Auth.bearer(authorization.replace(/^Bearer\s+/i, "").trim())
  }
  return Auth.apiKey(header(request, "x-api-key"), header(request, "x-nonce"))
}

/** Authenticates the merchant (`principal`), then runs the route's use case as that principal. */
export const runAs = <A, E>(
  ctx: Context,
  request: FastifyRequest,
  reply: FastifyReply,
  use: (who: Access.Principal) => Effect.Effect<A, E, Services>,
  ok: (value: A) => unknown
) => run(ctx, request, reply, Effect.flatMap(principal(request), use), ok)

/** The value of a header, first one if repeated. */
export const headerOf = header
