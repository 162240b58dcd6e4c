/**
 * The merchant API under `/api/v1`: the dashboard's login and refresh (no API key), and the
 * payment, terminal, payout and subscription routes (`MerchantPayments`, `MerchantTerminals`,
 * `MerchantSubscriptions`), each authenticated with `X-API-Key` + `X-Nonce` or a Bearer token.
 *
 * Every route decodes its request, runs one use case and encodes the answer with `Views`.
 */
import type { FastifyInstance } from "fastify"
import { Effect } from "effect"
import { Auth, Instant, Views } from "@paydesk/core"
import { run, sendError, type Context } from "./Http.js"
import * as MerchantPayments from "./MerchantPayments.js"
import * as MerchantSubscriptions from "./MerchantSubscriptions.js"
import * as MerchantTerminals from "./MerchantTerminals.js"
import * as Schemas from "./Schemas.js"

/** The login and refresh response. */
export const tokenPairView = (pair: Auth.TokenPair) => ({
  access_token: pair.accessToken,
  refresh_token: pair.refreshToken,
  expires_at: Instant.toUnixSeconds(pair.expiresAt),
  user: Views.user(pair.user)
})

const isJson = (contentType: string | undefined): boolean =>
  contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType.trim())

/** Registers the merchant API on `app` (mounted under `/api/v1`). */
export const register = async (app: FastifyInstance, ctx: Context): Promise<void> => {
  // Bodies of the merchant API are JSON only; a form or text body is refused before any route.
  app.addHook("preHandler", async (request, reply) => {
    if (request.body !== undefined && !isJson(request.headers["content-type"])) {
      return sendError(request, reply, 415, "unsupported_media_type", "Content-Type must be application/json")
    }
  })

  app.post("/auth/login", (request, reply) =>
    run(
      ctx,
      request,
      reply,
      Effect.flatMap(Schemas.login(request.body), ({ email, password }) => Auth.login(email, password)),
      (pair) => reply.send(tokenPairView(pair))
    ))

  app.post("/auth/refresh", (request, reply) =>
    run(
      ctx,
      request,
      reply,
      Effect.flatMap(Schemas.refresh(request.body), (token) => Auth.refresh(token)),
      (pair) => reply.send(tokenPairView(pair))
    ))

  MerchantPayments.register(app, ctx)
  MerchantTerminals.register(app, ctx)
  MerchantSubscriptions.register(app, ctx)
}
