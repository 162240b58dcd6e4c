/**
 * Merchant routes of a terminal's settings and money: settings change, balance, exchange rate,
 * USDT payouts (create and list).
 */
import type { FastifyInstance } from "fastify"
import { Effect } from "effect"
import { InvalidRequest, Payouts, Terminals, Views } from "@paydesk/core"
import type { Terminal } from "@paydesk/core"
import { route } from "./Contract.js"
import { runAs, type Context } from "./Http.js"
import * as Ops from "./MerchantOperations.js"
import * as Schemas from "./Schemas.js"

/** The core's settings change from a decoded `TerminalSettings` body (only the fields sent). */
export const settingsOf = (b: typeof Schemas.TerminalSettings.Type): Terminal.Settings => {
  const out: { -readonly [K in keyof Terminal.Settings]: Terminal.Settings[K] } = {}
  if (b.callback_url !== undefined) out.callbackUrl = b.callback_url
  if (b.success_redirect_url !== undefined) out.successRedirectUrl = b.success_redirect_url
  if (b.fail_redirect_url !== undefined) out.failRedirectUrl = b.fail_redirect_url
  if (b.conversion_mode !== undefined) out.conversionMode = b.conversion_mode
  if (b.conversion_time !== undefined) out.conversionTime = b.conversion_time
  if (b.show_platform_branding !== undefined) out.showPlatformBranding = b.show_platform_branding
  return out
}

/** One key in the header and the body: either, or both equal. */
const payoutKey = (header: string | undefined, body: string | null | undefined) =>
  header !== undefined && body !== undefined && body !== null && header !== body
    ? Effect.fail(new InvalidRequest({ field: "idempotency_key", message: "idempotency_key must equal the Idempotency-Key header when both are sent" }))
    : Effect.succeed(header ?? body)

/** Registers the terminal, balance, rate and payout routes. */
export const register = (app: FastifyInstance, ctx: Context): void => {
  route(app, Ops.updateTerminal, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ params, body }) => Terminals.updateSettings(who, params["terminalID"]!, settingsOf(body))),
      (terminal) => reply.send(Views.terminal(terminal))
    ))

  route(app, Ops.listTerminals, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, () => Terminals.list(who)),
      (terminals) => reply.send({ items: terminals.map(Views.terminal) })
    ))

  route(app, Ops.getTerminal, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, ({ params }) => Terminals.get(who, params["terminalID"]!)),
      (details) => reply.send(Views.terminalDetails(details))
    ))

  route(app, Ops.getBalance, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, ({ query }) => Terminals.balance(who, query.terminal_id)),
      ({ terminal, balance }) => reply.send(Views.balance(terminal.id, balance))
    ))

  route(app, Ops.getRate, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, ({ query }) => Terminals.rate(who, query.terminal_id)),
      (rate) => reply.send(Views.rate(rate))
    ))

  route(app, Ops.createPayout, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.gen(function*() {
        const { query, body, headers } = yield* decoded
        // A client that says it works in the sandbox must not move live money thinking it is a test:
        // payouts exist only live (an outside probe's sandbox client made one). (The dashboard makes
        // payouts live in either mode, saying so, and sends no X-Test-Mode.)
        if (headers["X-Test-Mode"] === "true") {
          return yield* new InvalidRequest({
            field: "X-Test-Mode",
            message: "payouts have no sandbox: a payout sends real USDT from the live balance; send it without X-Test-Mode: true"
          })
        }
        return yield* Payouts.create(who, {
          terminalId: query.terminal_id,
          amountUsdt: body.amount_usdt,
          walletAddress: body.wallet_address,
          network: body.network,
          idempotencyKey: yield* payoutKey(headers["Idempotency-Key"], body.idempotency_key)
        })
      }),
      // The spec answers 200 for a new payout and for a replay of its idempotency key alike.
      ({ payout }) => reply.code(200).send(Views.payout(payout))
    ))

  route(app, Ops.listPayouts, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ query: q }) => Payouts.list(who, { terminalId: q.terminal_id, page: q.page, limit: q.limit, cursor: q.cursor })),
      ({ items, total, page, pageSize, nextCursor }) =>
        reply.send({ items: items.map(Views.payout), total, page, per_page: pageSize, next_cursor: nextCursor })
    ))
}
