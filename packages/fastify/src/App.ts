/**
 * The Fastify app factory: `build(options)` returns an app with the merchant API (`/api/v1`),
 * the public payer pages (`/public`), the operator API (`/admin/v1`) and the OpenAPI document,
 * without listening. JSON bodies are parsed strictly (valid UTF-8, valid JSON, size limit) and
 * every response carries `x-request-id`.
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify"
import formbody from "@fastify/formbody"
import { randomUUID } from "node:crypto"
import type { ManagedRuntime } from "effect"
import type { Services } from "@paydesk/core"
import * as AdminRoutes from "./AdminRoutes.js"
import type { Context } from "./Http.js"
import { sendError } from "./Http.js"
import * as MerchantRoutes from "./MerchantRoutes.js"
import * as OpenApi from "./OpenApi.js"
import * as PublicRoutes from "./PublicRoutes.js"

/** Hooks of the operator API that depend on the deployment (emulators, clock, rate store). */
export interface OperatorHooks {
  /** Sets the exchange rate (micro-RUB per USDT). */
  readonly setRate?: (rate: bigint) => Promise<void>
  /** Sets the manual clock; absent when the clock is the system clock. */
  readonly setClock?: (now: number) => Promise<void>
  /** Programs the acquirer emulator's answers for a subscription's next charges. */
  readonly programCharges?: (subscriptionId: string, outcomes: ReadonlyArray<"paid" | "failed" | "unknown">) => Promise<void>
  /** Runs all background work due now and reports it. */
  readonly runWork?: () => Promise<unknown>
}

/** Options of `build`. */
export interface Options {
  readonly runtime: ManagedRuntime.ManagedRuntime<Services, never>
  readonly publicUrl: string
  /** Bearer token of the operator API; the operator API is not mounted without one. */
  readonly adminToken?: string
  readonly operator?: OperatorHooks
  /** Largest accepted body in bytes (default 64 KiB). */
  readonly bodyLimit?: number
  readonly logger?: FastifyServerOptions["logger"]
}


/** Builds the app (call `listen` or `inject` on it). */
export const build = async (options: Options): Promise<FastifyInstance> => {
  const bodyLimit = options.bodyLimit ?? 64 * 1024
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit,
    genReqId: () => `req_${randomUUID().replaceAll("-", "")}`,
    return503OnClosing: true
  })
  const ctx: Context = { runtime: options.runtime, publicUrl: options.publicUrl.replace(/\/+$/, "") }

  app.addHook("onSend", async (request, reply) => {
    reply.header("x-request-id", request.id)
  })

  app.removeContentTypeParser("application/json")
  const utf8 = new TextDecoder("utf-8", { fatal: true })
  app.addContentTypeParser("application/json", { parseAs: "buffer", bodyLimit }, (_request, body, done) => {
    let text: string
    try {
      text = utf8.decode(body as Buffer)
    } catch {
      return done(Object.assign(new Error("request body is not valid UTF-8"), { statusCode: 400, code: "invalid_json_body" }))
    }
    if (text.trim().length === 0) return done(null, undefined)
    try {
      done(null, JSON.parse(text))
    } catch {
      done(Object.assign(new Error("invalid json body"), { statusCode: 400, code: "invalid_json_body" }))
    }
  })
  await app.register(formbody, { bodyLimit })

  app.setErrorHandler((error: Error & { statusCode?: number; code?: string; validation?: unknown }, request, reply) => {
    if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") return sendError(request, reply, 400, "body_too_large", `request body larger than ${bodyLimit} bytes`)
    if (error.code === "invalid_json_body") return sendError(request, reply, 400, "invalid_json_body", error.message)
    if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") return sendError(request, reply, 415, "unsupported_media_type", "Content-Type must be application/json")
    if (error.validation !== undefined) return sendError(request, reply, 400, "invalid_request", error.message)
    if (error.statusCode !== undefined && error.statusCode < 500) return sendError(request, reply, error.statusCode, "invalid_request", error.message)
    request.log.error({ err: error }, "unhandled error")
    return sendError(request, reply, 500, "internal_error", "internal error")
  })
  app.setNotFoundHandler((request, reply) => sendError(request, reply, 404, "route_not_found", `no route ${request.method} ${request.url.split("?")[0]}`))

  await OpenApi.registerDocs(app)
  await app.register(async (api) => MerchantRoutes.register(api, ctx), { prefix: "/api/v1" })
  await app.register(async (pages) => PublicRoutes.register(pages, ctx), { prefix: "/public" })
  if (options.adminToken !== undefined) {
    const adminToken = options.adminToken
    await app.register(async (admin) => AdminRoutes.register(admin, ctx, { token: adminToken, hooks: options.operator ?? {} }), { prefix: "/admin/v1" })
  }
  return app
}
