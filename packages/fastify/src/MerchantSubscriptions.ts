/**
 * Merchant routes of recurring payments: the terminal's plans, subscription creation (201, or
 * 200 when the `Idempotency-Key` replays it), list, read, charge history and stop.
 *
 * Creation hands the raw parsed body to the core, which owns the spec's body rules (unknown
 * fields and non-string values are `invalid json body`).
 */
import type { FastifyInstance } from "fastify"
import { Effect } from "effect"
import { Subscriptions, Views } from "@paydesk/core"
import type { Subscription } from "@paydesk/core"
import { headerOf, runAs, type Context } from "./Http.js"
import * as Schemas from "./Schemas.js"

type ById = { Params: { subscriptionID: string } }

/** Registers the plan and subscription routes. */
export const register = (app: FastifyInstance, ctx: Context): void => {
  const view = (withPayUrl: boolean) => (s: Subscription.Subscription) => Views.subscription(s, { publicUrl: ctx.publicUrl, withPayUrl })

  app.get("/subscription-plans", (request, reply) =>
    runAs(ctx, request, reply, (who) =>
      Effect.gen(function*() {
        return yield* Subscriptions.listPlans(who, yield* Schemas.terminalQuery(request.query))
      }),
      (plans) => reply.send({ items: plans.map(Views.plan) })
    ))

  app.post("/subscriptions", (request, reply) =>
    runAs(ctx, request, reply, (who) =>
        Subscriptions.create(who, { idempotencyKey: headerOf(request, "idempotency-key"), body: request.body }),
      ({ subscription, created }) => reply.code(created ? 201 : 200).send(view(true)(subscription))
    ))

  app.get("/subscriptions", (request, reply) =>
    runAs(ctx, request, reply, (who) =>
      Effect.gen(function*() {
        return yield* Subscriptions.list(who, yield* Schemas.subscriptionList(request.query))
      }),
      ({ items, total, page }) => reply.send({ items: items.map(view(false)), total, page, per_page: Subscriptions.pageSize })
    ))

  app.get<ById>("/subscriptions/:subscriptionID", (request, reply) =>
    runAs(ctx, request, reply, (who) => Subscriptions.get(who, request.params.subscriptionID),
      (subscription) => reply.send(view(false)(subscription))
    ))

  app.get<ById>("/subscriptions/:subscriptionID/charges", (request, reply) =>
    runAs(ctx, request, reply, (who) => Subscriptions.charges(who, request.params.subscriptionID),
      (charges) => reply.send(charges.map(Views.charge))
    ))

  app.post<ById>("/subscriptions/:subscriptionID/stop", (request, reply) =>
    runAs(ctx, request, reply, (who) => Subscriptions.stop(who, request.params.subscriptionID),
      () => reply.send({ ok: true })
    ))
}
