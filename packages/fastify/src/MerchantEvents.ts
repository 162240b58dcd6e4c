/**
 * Merchant routes of callback events: the events API (list, one event with its deliveries and
 * attempts, resend, recovery), the terminal's `ping` test event, and the events feed of
 * `paydesk listen`.
 */
import type { FastifyInstance } from "fastify"
import { Effect } from "effect"
import { Callback, Callbacks, Events, Instant, Views } from "@paydesk/core"
import { route } from "./Contract.js"
import { instantOf, runAs, type Context } from "./Http.js"
import * as Ops from "./MerchantOperations.js"

/** The answer of a resend or a test event: the event, the delivery made for it, and its attempt. */
const sentView = (sent: { readonly event: Callback.OutboxEvent; readonly delivery: Callback.Delivery; readonly attempt: Callback.Attempt | null }) => ({
  event: Views.event(sent.event, sent.delivery),
  delivery: Views.eventDelivery(sent.delivery, sent.attempt === null ? [] : [sent.attempt]),
  attempt: sent.attempt === null ? null : Views.eventAttempt(sent.attempt)
})

/** Registers the events routes. */
export const register = (app: FastifyInstance, ctx: Context): void => {
  route(app, Ops.listEvents, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.gen(function*() {
        const { query: q } = yield* decoded
        return yield* Events.list(who, {
          terminalId: q.terminal_id,
          environment: q.environment,
          type: q.type,
          objectId: q.object_id,
          createdFrom: yield* instantOf("created_from", q.created_from),
          createdTo: yield* instantOf("created_to", q.created_to),
          deliveryStatus: q.delivery_status,
          limit: q.limit,
          cursor: q.cursor
        })
      }),
      ({ items, nextCursor }) => reply.send({ items: items.map(({ event, delivery }) => Views.event(event, delivery)), next_cursor: nextCursor })
    ))

  route(app, Ops.getEvent, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, ({ params }) => Events.get(who, params["eventID"]!)),
      ({ event, deliveries }) =>
        reply.send({
          ...Views.event(event, deliveries.at(-1)?.delivery ?? null),
          deliveries: deliveries.map(({ delivery, attempts }) => Views.eventDelivery(delivery, attempts))
        })
    ))

  route(app, Ops.resendEvent, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, ({ params }) => Events.resend(who, params["eventID"]!)),
      (sent) => reply.send(sentView(sent))
    ))

  route(app, Ops.recoverEvents, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.gen(function*() {
        const { body } = yield* decoded
        const since = (yield* instantOf("since", body.since))!
        return yield* Events.recover(who, { terminalId: body.terminal_id, since, environment: body.environment })
      }),
      ({ requeued }) => reply.send({ requeued })
    ))

  route(app, Ops.sendTestEvent, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, ({ params }) => Events.ping(who, params["terminalID"]!)),
      (sent) => reply.send(sentView(sent))
    ))

  route(app, Ops.eventFeed, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ query: q }) =>
        Callbacks.feed(who, { terminalId: q.terminal_id, after: q.after, limit: q.limit, environment: q.environment })),
      ({ items, nextAfter }) =>
        reply.send({
          items: items.map(({ event, headers, cursor }) => ({
            id: Callback.eventId(event.id),
            event_type: event.eventType,
            created_at: Instant.formatIso(event.createdAt),
            test: event.test,
            body: event.body,
            headers,
            cursor
          })),
          next_after: nextAfter
        })
    ))
}
