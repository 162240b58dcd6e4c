/**
 * Merchant routes of test clocks: create a clock frozen at a time (201), list, read, and advance it
 * to a later time. The advance answers 200 with the clock `ready` at the new time once the due work
 * of its objects is done, or 202 with the clock still `advancing` when the request's budget ran out
 * (the background worker finishes; poll `GET /test-clocks/{id}`); 409 while another advance runs.
 * `DELETE` deletes a clock with its objects (200 `{ id, deleted: true }`, after Stripe's answer
 * without its `object`): the clock is gone at once, its objects are purged by the housekeeping.
 */
import type { FastifyInstance } from "fastify"
import { Effect } from "effect"
import { TestClocks, Views } from "@paydesk/core"
import { route } from "./Contract.js"
import { runAs, type Context } from "./Http.js"
import * as Ops from "./MerchantOperations.js"

/** Registers the test clock routes. */
export const register = (app: FastifyInstance, ctx: Context): void => {
  route(app, Ops.createTestClock, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ body: b }) => TestClocks.create(who, { terminalId: b.terminal_id, frozenTime: b.frozen_time, name: b.name })),
      (clock) => reply.code(201).send(Views.testClock(clock))
    ))

  route(app, Ops.listTestClocks, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, ({ query: q }) => TestClocks.list(who, { terminalId: q.terminal_id, page: q.page })),
      ({ items, total, page }) => reply.send({ items: items.map(Views.testClock), total, page, per_page: TestClocks.pageSize })
    ))

  route(app, Ops.getTestClock, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, ({ params }) => TestClocks.get(who, params["testClockID"]!)),
      (clock) => reply.send(Views.testClock(clock))
    ))

  route(app, Ops.advanceTestClock, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ params, body }) => TestClocks.advance(who, params["testClockID"]!, body.frozen_time)),
      (clock) => reply.code(clock.status === "ready" ? 200 : 202).send(Views.testClock(clock))
    ))

  route(app, Ops.deleteTestClock, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, ({ params }) => TestClocks.remove(who, params["testClockID"]!)),
      (clock) => reply.send({ id: clock.id, deleted: true })
    ))
}
