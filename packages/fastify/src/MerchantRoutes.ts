/**
 * The merchant API under `/api/v1`: the dashboard's login, refresh and logout (no API key), and the
 * payment, terminal, credential, payout and subscription routes (`MerchantPayments`,
 * `MerchantTerminals`, `MerchantCredentials`, `MerchantSubscriptions`), each authenticated with
 * `X-API-Key` + `X-Nonce` or a Bearer token.
 *
 * Login is rate limited per client address and per e-mail (fixed one-minute windows, so a flood
 * aimed at someone's e-mail locks them out for at most a minute after it stops): past a limit the
 * answer is 429 `too_many_requests` with `Retry-After`, before any password is hashed. A user's own
 * password change (`POST /auth/password`) is limited likewise per session, once its token is checked.
 *
 * Every route is declared in `MerchantOperations`: it decodes its request, runs one use case and encodes the answer with `Views`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify"
import { Effect } from "effect"
import { Auth, Instant, Unauthenticated, Views } from "@paydesk/core"
import { bearerOf, headerOf, jsonBodiesOnly, keyedLimit, limiterOptions, run, runAs, sendError, type Context } from "./Http.js"
import * as MerchantCredentials from "./MerchantCredentials.js"
import * as MerchantPayments from "./MerchantPayments.js"
import * as MerchantSubscriptions from "./MerchantSubscriptions.js"
import * as MerchantTerminals from "./MerchantTerminals.js"
import { route } from "./Contract.js"
import * as Ops from "./MerchantOperations.js"
import * as MerchantEvents from "./MerchantEvents.js"
import * as MerchantTestClocks from "./MerchantTestClocks.js"

/** The login and refresh response. */
export const tokenPairView = (pair: Auth.TokenPair) => ({
  access_token: pair.accessToken,
  refresh_token: pair.refreshToken,
  expires_at: Instant.toUnixSeconds(pair.expiresAt),
  user: Views.user(pair.user)
})

/** Login attempts allowed per window (one minute unless `windowMs` says otherwise). */
export interface LoginLimits {
  readonly perEmail: number
  readonly perAddress: number
  readonly windowMs?: number
}

/** Ten a minute per e-mail, thirty per client address. */
export const defaultLoginLimits: LoginLimits = { perEmail: 10, perAddress: 30 }

const emailOf = (body: unknown): string | null => {
  const email = typeof body === "object" && body !== null ? (body as { email?: unknown }).email : undefined
  return typeof email === "string" ? email.trim().toLowerCase() : null
}

/** Registers the merchant API on `app` (mounted under `/api/v1`). */
export const register = async (app: FastifyInstance, ctx: Context, limits: LoginLimits = defaultLoginLimits, eventSendsPerMinute?: number): Promise<void> => {
  // Bodies of the merchant API are JSON only; a form body is refused before any route.
  app.addHook("preHandler", jsonBodiesOnly)

  const window = limits.windowMs ?? 60_000
  const perAddress = app.createRateLimit(limiterOptions({ max: limits.perAddress, timeWindow: window, keyGenerator: (request) => `login-address:${request.ip}` }))
  const perEmail = app.createRateLimit(limiterOptions({ max: limits.perEmail, timeWindow: window, keyGenerator: (request) => `login-email:${emailOf(request.body)}` }))
  const loginLimit = async (request: FastifyRequest, reply: FastifyReply) => {
    const limited = [await perAddress(request), ...(emailOf(request.body) === null ? [] : [await perEmail(request)])]
      .find((result) => !result.isAllowed && result.isExceeded)
    if (limited === undefined || limited.isAllowed) return
    const seconds = Math.max(1, limited.ttlInSeconds)
    reply.header("retry-after", String(seconds))
    return sendError(request, reply, 429, "too_many_requests", `too many login attempts, retry in ${seconds} s`)
  }

  route(app, Ops.login, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ body }) => Auth.login(body.email, body.password)), (pair) => reply.send(tokenPairView(pair))),
    { preHandler: loginLimit })

  route(app, Ops.refresh, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ body }) => Auth.refresh(body.refresh_token)), (pair) => reply.send(tokenPairView(pair))))

  route(app, Ops.logout, (request, reply, decoded) => {
    const authorization = headerOf(request, "authorization")
    const bearer = authorization !== undefined && /^Bearer\s+/i.test(authorization) ? authorization.replace(/^Bearer\s+/i, "").trim() : undefined
    return run(
      ctx,
      request,
      reply,
      Effect.flatMap(decoded, ({ body }) => Auth.logout({ refreshToken: body.refresh_token, accessToken: bearer })),
      (done) => reply.send(done)
    )
  })

  // A password change checks the current password: counted per session (the access token's refresh
  // family, which its refreshes keep) once the request is authenticated, so a stolen session tries
  // passwords no faster than the login's per-e-mail count, and cannot use up the owner's own sessions'.
  const bearerRequired = new Unauthenticated({ message: "Authorization: Bearer <access token> is required" })
  const perSession = keyedLimit(app, { prefix: "password-session", max: limits.perEmail, timeWindow: window })
  route(app, Ops.changePassword, (request, reply, decoded) =>
    // Without any credential the 401 names the one this route takes (not the merchant routes' API key).
    bearerOf(request) === undefined && (headerOf(request, "x-api-key") ?? "").trim() === ""
      ? run(ctx, request, reply, Effect.fail(bearerRequired), () => undefined)
      : runAs(ctx, request, reply, (who) =>
      Effect.gen(function*() {
        const { body } = yield* decoded
        if (who._tag === "User") {
          const seconds = yield* perSession(request, who.sessionId ?? who.userId)
          if (seconds !== null) return { _tag: "Limited", seconds } as const
        }
        return { _tag: "Changed", pair: yield* Auth.changePassword(who, { currentPassword: body.current_password, newPassword: body.new_password }) } as const
      }),
      (changed) =>
        changed._tag === "Limited"
          ? sendError(request, reply.header("retry-after", String(changed.seconds)), 429, "too_many_requests", `too many password changes, retry in ${changed.seconds} s`)
          : reply.send(tokenPairView(changed.pair))))

  MerchantPayments.register(app, ctx)
  MerchantTerminals.register(app, ctx)
  MerchantCredentials.register(app, ctx)
  MerchantSubscriptions.register(app, ctx)
  MerchantTestClocks.register(app, ctx)
  MerchantEvents.register(app, ctx, eventSendsPerMinute)
}
