/**
 * Merchant routes of a terminal's credentials, for the account owner's dashboard token (an API key
 * gets 403 `account owner access required`): list, create and revoke API keys, and rotate the
 * callback signing secret (and end its overlap early). New keys and secrets are shown once, in the
 * answer that creates them.
 */
import type { FastifyInstance } from "fastify"
import { Effect } from "effect"
import { Credentials, Instant, Terminals, Views } from "@paydesk/core"
import { route } from "./Contract.js"
import { runAs, type Context } from "./Http.js"
import * as Ops from "./MerchantOperations.js"

/** The answer of a rotation: the new secret, shown once. */
export const rotationView = (rotated: Effect.Success<ReturnType<typeof Credentials.rotateSigningSecret>>) => ({
  terminal_id: rotated.terminal.id,
  signing_secret: rotated.signingSecret,
  signing_secret_whsec: rotated.signingSecretWhsec,
  rotated_at: Instant.formatIso(rotated.rotatedAt),
  previous_secret_expires_at: rotated.previousSecretExpiresAt > rotated.rotatedAt ? Instant.formatIso(rotated.previousSecretExpiresAt) : null
})

/** The answer of a key creation: the key, shown once, and its listing. */
export const createdKeyView = (created: Effect.Success<ReturnType<typeof Credentials.createApiKey>>) => ({
  ...Views.apiKey(created.record),
  api_key: created.key
})

/** Registers the credential routes. */
export const register = (app: FastifyInstance, ctx: Context): void => {
  route(app, Ops.listApiKeys, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, ({ params }) => Credentials.listApiKeys(who, params["terminalID"]!)), (keys) =>
      reply.send({ items: keys.map(Views.apiKey) })))

  route(app, Ops.createApiKey, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ params, body }) =>
        Credentials.createApiKey(who, params["terminalID"]!, { subscriptionWrite: body.subscription_write ?? true })),
      (created) => reply.code(201).send(createdKeyView(created))))

  route(app, Ops.revokeApiKey, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ params }) => Credentials.revokeApiKey(who, params["terminalID"]!, params["keyID"]!)), (key) =>
      reply.send(Views.apiKey(key))))

  route(app, Ops.rotateSigningSecret, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ params, headers }) => Credentials.rotateSigningSecret(who, params["terminalID"]!, { idempotencyKey: headers["Idempotency-Key"] })), (rotated) =>
      reply.send(rotationView(rotated))))

  route(app, Ops.retirePreviousSecret, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ params }) => Effect.flatMap(Credentials.retirePreviousSecret(who, params["terminalID"]!), Terminals.details)),
      (details) => reply.send(Views.terminalDetails(details))))
}
