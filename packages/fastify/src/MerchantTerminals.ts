/**
 * Merchant routes of a terminal's settings and money: settings change, balance, exchange rate,
 * and USDT payouts (create and list).
 */
import type { FastifyInstance } from "fastify"
import { Effect } from "effect"
import { Payouts, Terminals, Views } from "@paydesk/core"
import { runAs, type Context } from "./Http.js"
import * as Schemas from "./Schemas.js"

/** Registers the terminal, balance, rate and payout routes. */
export const register = (app: FastifyInstance, ctx: Context): void => {
  app.put<{ Params: { terminalID: string } }>("/terminals/:terminalID", (request, reply) =>
    runAs(ctx, request, reply, (who) =>
      Effect.gen(function*() {
        const settings = yield* Schemas.settings(request.body)
        return yield* Terminals.updateSettings(who, request.params.terminalID, settings)
      }),
      (terminal) => reply.send(Views.terminal(terminal))
    ))

  app.get("/balance", (request, reply) =>
    runAs(ctx, request, reply, (who) =>
      Effect.gen(function*() {
        return yield* Terminals.balance(who, yield* Schemas.terminalQuery(request.query))
      }),
      ({ terminal, balance }) => reply.send(Views.balance(terminal.id, balance))
    ))

  app.get("/rate", (request, reply) =>
    runAs(ctx, request, reply, (who) =>
      Effect.gen(function*() {
        return yield* Terminals.rate(who, yield* Schemas.terminalQuery(request.query))
      }),
      (rate) => reply.send(Views.rate(rate))
    ))

  app.post("/payouts", (request, reply) =>
    runAs(ctx, request, reply, (who) =>
      Effect.gen(function*() {
        return yield* Payouts.create(who, yield* Schemas.payoutCreate(request.body, request.query))
      }),
      // The spec answers 200 for a new payout and for a replay of its idempotency key alike.
      ({ payout }) => reply.code(200).send(Views.payout(payout))
    ))

  app.get("/payouts", (request, reply) =>
    runAs(ctx, request, reply, (who) =>
      Effect.gen(function*() {
        return yield* Payouts.list(who, yield* Schemas.payoutList(request.query))
      }),
      ({ items, total, page }) => reply.send({ items: items.map(Views.payout), total, page, per_page: Payouts.pageSize })
    ))
}
