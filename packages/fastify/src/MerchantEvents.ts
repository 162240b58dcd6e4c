/**
 * Merchant routes of callback events: the events API (list, one event with its deliveries and
 * attempts, resend, recovery), the terminal's `ping` test event, and the events feed of
 * `paydesk listen`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify"
import { Effect } from "effect"
import { type Access, Callback, Callbacks, Events, Instant, Views } from "@paydesk/core"
import { route } from "./Contract.js"
import { instantOf, keyedLimit, limitScope, runAs, sendError, type Context } from "./Http.js"
import * as Ops from "./MerchantOperations.js"

/**
 * Resends and test events of one terminal (an API key's) or one account (a dashboard user's) in a
 * minute, together, at most (default): each is a POST to the merchant's endpoint made while the
 * request waits (up to the 10 s timeout), so a loop of them kept this server's connections and the
 * endpoint busy without bound. Past it: 429 `too_many_requests` with `Retry-After`; nothing is sent.
 */
export const defaultSendsPerMinute = 30

/** The answer of a resend or a test event: the event, the delivery made for it, and its attempt. */
const sentView = (sent: { readonly event: Callback.OutboxEvent; readonly delivery: Callback.Delivery; readonly attempt: Callback.Attempt | null }) => ({
  event: Views.event(sent.event, sent.delivery),
  delivery: Views.eventDelivery(sent.delivery, sent.attempt === null ? [] : [sent.attempt]),
  attempt: sent.attempt === null ? null : Views.eventAttempt(sent.attempt)
})

/** A resend's or test event's answer: what was sent, or the limit's seconds to wait. */
type Limited<A> = { readonly _tag: "Sent"; readonly sent: A } | { readonly _tag: "Limited"; readonly of: "terminal" | "account"; readonly seconds: number }

/** Registers the events routes; `sendsPerMinute`: resends and test events a minute per terminal or account. */
export const register = (app: FastifyInstance, ctx: Context, sendsPerMinute: number = defaultSendsPerMinute): void => {
  // Counted per process in fixed one-minute windows (@fastify/rate-limit's store), once the request
  // is authenticated: keyed by whose they are, not by the request's address.
  const sends = keyedLimit(app, { prefix: "event-sends", max: sendsPerMinute, timeWindow: 60_000 })
  const limited = <A, E, R>(request: FastifyRequest, who: Access.Principal, send: Effect.Effect<A, E, R>): Effect.Effect<Limited<A>, E, R> => {
    const scope = limitScope(who)
    return Effect.flatMap(sends(request, scope.key), (seconds): Effect.Effect<Limited<A>, E, R> =>
      seconds !== null ? Effect.succeed({ _tag: "Limited", of: scope.of, seconds }) : Effect.map(send, (sent) => ({ _tag: "Sent", sent })))
  }
  const answer = (request: FastifyRequest, reply: FastifyReply, result: Limited<Parameters<typeof sentView>[0]>) =>
    result._tag === "Limited"
      ? sendError(request, reply.header("retry-after", String(result.seconds)), 429, "too_many_requests",
        `${sendsPerMinute} resends and test events a minute for this ${result.of}; retry in ${result.seconds} s`)
      : reply.send(sentView(result.sent))

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
          ...Views.event(event, Callback.standing(deliveries.map(({ delivery }) => delivery))),
          deliveries: deliveries.map(({ delivery, attempts }) => Views.eventDelivery(delivery, attempts))
        })
    ))

  route(app, Ops.resendEvent, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, ({ params }) => limited(request, who, Events.resend(who, params["eventID"]!))),
      (result) => answer(request, reply, result)
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
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, ({ params }) => limited(request, who, Events.ping(who, params["terminalID"]!))),
      (result) => answer(request, reply, result)
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
