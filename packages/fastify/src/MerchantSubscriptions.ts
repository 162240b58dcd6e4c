/**
 * Merchant routes of recurring payments: the terminal's plans, subscription creation (201, or
 * 200 when the `Idempotency-Key` replays it), list, read, charge history, the upcoming charges,
 * the sandbox acquirer's outcomes of a sandbox subscription's next charges, and stop.
 *
 * Creation decodes the body by the spec's rule (unknown fields and wrong types are `invalid json
 * body`) after authentication, and hands the core a typed command.
 */
import type { FastifyInstance } from "fastify"
import { Effect } from "effect"
import { Subscriptions, Views } from "@paydesk/core"
import type { Subscription } from "@paydesk/core"
import { route } from "./Contract.js"
import { runAs, sandboxRequested, type Context } from "./Http.js"
import * as Ops from "./MerchantOperations.js"

const present = <A>(value: A | null | undefined): A | undefined => value === null ? undefined : value

/** Registers the plan and subscription routes. */
export const register = (app: FastifyInstance, ctx: Context): void => {
  const view = (withPayUrl: boolean) => (s: Subscription.Subscription) => Views.subscription(s, { publicUrl: ctx.publicUrl, withPayUrl })

  route(app, Ops.listPlans, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, ({ query }) => Subscriptions.listPlans(who, query.terminal_id)),
      (plans) => reply.send({ items: plans.map(Views.plan) })
    ))

  route(app, Ops.createSubscription, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ body: b, headers }) =>
        Effect.flatMap(sandboxRequested(headers["X-Test-Mode"], b.test), (test) => Subscriptions.create(who, {
          idempotencyKey: headers["Idempotency-Key"],
          terminalId: present(b.terminal_id),
          planId: present(b.plan_id),
          amount: present(b.amount),
          payerId: present(b.payer_id),
          merchantSubscriptionRef: present(b.merchant_subscription_ref),
          description: present(b.description),
          test,
          testClock: present(b.test_clock)
        }))),
      ({ subscription, created }) => reply.code(created ? 201 : 200).send(view(true)(subscription))
    ))

  route(app, Ops.listSubscriptions, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ query: q }) =>
        Subscriptions.list(who, { terminalId: q.terminal_id, state: q.state, environment: q.environment, page: q.page, limit: q.limit, cursor: q.cursor })),
      ({ items, total, page, pageSize, nextCursor }) =>
        reply.send({ items: items.map(view(false)), total, page, per_page: pageSize, next_cursor: nextCursor })
    ))

  route(app, Ops.getSubscription, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, ({ params }) => Subscriptions.get(who, params["subscriptionID"]!)),
      (subscription) => reply.send(view(false)(subscription))
    ))

  route(app, Ops.listCharges, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, ({ params }) => Subscriptions.charges(who, params["subscriptionID"]!)),
      (charges) => reply.send(charges.map(Views.charge))
    ))

  route(app, Ops.upcomingCharges, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ params, query }) =>
        Effect.map(Subscriptions.upcoming(who, params["subscriptionID"]!, query.count), (items) => ({ id: params["subscriptionID"]!.toLowerCase(), items }))),
      ({ id, items }) => reply.send({ subscription_id: id, items: items.map(Views.upcomingCharge) })
    ))

  route(app, Ops.programSandboxCharges, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ params, body }) => Subscriptions.programSandboxCharges(who, params["subscriptionID"]!, body.outcomes)),
      ({ subscription, outcomes }) => reply.send({ subscription_id: subscription.id, outcomes })
    ))

  route(app, Ops.stopSubscription, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, ({ params }) => Subscriptions.stop(who, params["subscriptionID"]!)),
      () => reply.send({ ok: true })
    ))
}
