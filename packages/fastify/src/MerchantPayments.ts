/**
 * Merchant routes of one-off payments: create (201, or 200 when the `order_id` replays the same
 * payment), read, list (JSON page or CSV export) and statistics.
 */
import type { FastifyInstance } from "fastify"
import { Effect } from "effect"
import { Amount, Instant, Payment, Payments, Views } from "@paydesk/core"
import type { PaymentFilter, StatusStats } from "@paydesk/core"
import { headerOf, runAs, type Context } from "./Http.js"
import * as Schemas from "./Schemas.js"

/** The stats response: per status count and amount (decimal roubles), plus totals. */
export const statsView = (filter: PaymentFilter, rows: ReadonlyArray<StatusStats>) => {
  const byStatus = Object.fromEntries(
    Payment.statuses.map((status) => {
      const row = rows.find((r) => r.status === status)
      return [status, { count: row?.count ?? 0, amount: Amount.formatRub(row?.amount ?? 0n) }]
    })
  ) as Record<Payment.Status, { count: number; amount: string }>
  return {
    terminal_id: filter.terminalId,
    environment: filter.environment,
    recurring: filter.recurring,
    currency: "RUB",
    by_status: byStatus,
    total: {
      count: rows.reduce((n, r) => n + r.count, 0),
      amount: Amount.formatRub(Amount.sum(rows.map((r) => r.amount)))
    }
  }
}

/** Registers the payment routes. */
export const register = (app: FastifyInstance, ctx: Context): void => {
  app.post("/payments", (request, reply) =>
    runAs(ctx, request, reply, (who) =>
      Effect.gen(function*() {
        const input = yield* Schemas.paymentCreate(request.body, headerOf(request, "x-test-mode"))
        return yield* Payments.create(who, input)
      }),
      ({ payment, created }) => reply.code(created ? 201 : 200).send(Views.payment(payment, ctx.publicUrl))
    ))

  app.get("/payments", (request, reply) =>
    runAs(ctx, request, reply, (who) =>
      Effect.gen(function*() {
        const { query, csv } = yield* Schemas.paymentList(request.query)
        if (csv) return { _tag: "Csv" as const, csv: yield* Payments.exportCsv(who, query, Instant.formatIso) }
        return { _tag: "Page" as const, page: yield* Payments.list(who, query) }
      }),
      (result) =>
        result._tag === "Csv"
          ? reply
            .type("text/csv; charset=utf-8")
            .header("content-disposition", "attachment; filename=\"payments.csv\"")
            .send(result.csv)
          : reply.send({
            items: result.page.items.map((p) => Views.payment(p, ctx.publicUrl)),
            total: result.page.total,
            page: result.page.page,
            per_page: result.page.pageSize
          })
    ))

  app.get("/payments/stats", (request, reply) =>
    runAs(ctx, request, reply, (who) =>
      Effect.gen(function*() {
        return yield* Payments.stats(who, yield* Schemas.paymentStats(request.query))
      }),
      ({ filter, rows }) => reply.send(statsView(filter, rows))
    ))

  app.get<{ Params: { paymentID: string } }>("/payments/:paymentID", (request, reply) =>
    runAs(ctx, request, reply, (who) => Payments.get(who, request.params.paymentID),
      (payment) => reply.send(Views.payment(payment, ctx.publicUrl))
    ))
}
