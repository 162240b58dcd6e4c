/**
 * Merchant routes of one-off payments: create (201, or 200 when the `order_id` or the
 * `Idempotency-Key` replays the same payment), read (by id or `order_id`), list (JSON page or CSV
 * export), statistics, and the sandbox simulation by API key.
 */
import type { FastifyInstance, FastifyReply } from "fastify"
import { Effect, Semaphore } from "effect"
import { Amount, Instant, Payment, Payments, Views } from "@paydesk/core"
import type { DailyStats, PaymentFilter, StatusStats } from "@paydesk/core"
import { route } from "./Contract.js"
import { instantOf, limitScope, runAs, sandboxRequested, sendError, type Context } from "./Http.js"
import * as Ops from "./MerchantOperations.js"

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

const recurringOf = (value: "true" | "false" | undefined): boolean | undefined => value === undefined ? undefined : value === "true"

/** The core's query from the filters of a list, stats or export query string. */
const filtersOf = (q: {
  readonly terminal_id?: string
  readonly environment?: "sandbox" | "all" | "prod"
  readonly recurring?: "true" | "false"
  readonly status?: Payment.Status
  readonly order_id?: string
  readonly created_from?: string
  readonly created_to?: string
}) =>
  Effect.gen(function*() {
    const query: Payments.ListQuery = {
      terminalId: q.terminal_id,
      environment: q.environment,
      recurring: recurringOf(q.recurring),
      status: q.status,
      orderId: q.order_id,
      createdFrom: yield* instantOf("created_from", q.created_from),
      createdTo: yield* instantOf("created_to", q.created_to)
    }
    return query
  })

/** The daily stats response: for each day with payments, per status count and amount, plus totals. */
const dailyView = (filter: PaymentFilter, timeZone: string, rows: ReadonlyArray<DailyStats>) => {
  const days = [...new Set(rows.map((r) => r.day))]
  const { by_status: _, total: __, ...scope } = statsView(filter, [])
  return {
    ...scope,
    time_zone: timeZone,
    created_from: Instant.formatIso(filter.createdFrom ?? 0),
    created_to: Instant.formatIso(filter.createdBefore ?? 0),
    items: days.map((day) => {
      const { by_status, total } = statsView(filter, rows.filter((r) => r.day === day))
      return { date: day, by_status, total }
    })
  }
}

/**
 * CSV exports built at once by one app; the others wait their turn. An export holds one page of
 * `Payments.exportPageSize` payments and the CSV lines of up to `Payments.exportLimit` rows (a few
 * MB), so the server's peak memory stays bounded whatever the number of merchants exporting at once
 * (the reference server runs with a heap limit).
 */
export const exportsAtOnce = 1

/**
 * CSV exports of one terminal (an API key's) or one account (a dashboard user's) waiting or being
 * built at once in this app (a process), at most; one more is answered 429 `too_many_requests` with
 * `Retry-After`. With the exports built one at a time, an outside probe held up every other
 * merchant's export for seconds with a few hundred exports it gave up on at once.
 */
export const exportsPerScope = 2

/** Answers when the client of `reply` leaves (its connection closes before the answer is sent), never otherwise. */
const clientLeft = (reply: FastifyReply): Effect.Effect<void> =>
  Effect.callback<void>((resume) => {
    const response = reply.raw
    if (response.destroyed && !response.writableEnded) return resume(Effect.void)
    const left = () => {
      if (!response.writableEnded) resume(Effect.void)
    }
    response.once("close", left)
    return Effect.sync(() => void response.off("close", left))
  })

/** Registers the payment routes. */
export const register = (app: FastifyInstance, ctx: Context): void => {
  const exporting = Semaphore.makeUnsafe(exportsAtOnce)
  /** Exports waiting or being built, per terminal or account. */
  const inScope = new Map<string, number>()
  const release = (scope: string) =>
    Effect.sync(() => {
      const left = (inScope.get(scope) ?? 1) - 1
      if (left === 0) inScope.delete(scope)
      else inScope.set(scope, left)
    })
  const view = (payment: Payment.Payment) => Views.payment(payment, ctx.publicUrl)

  route(app, Ops.createPayment, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ body: b, headers }) =>
        Effect.flatMap(sandboxRequested(headers["X-Test-Mode"], b.test), (test) => Payments.create(who, {
          terminalId: b.terminal_id,
          amount: b.amount,
          currency: b.payment_currency,
          orderId: b.order_id,
          description: b.description,
          paymentMethod: b.payment_method,
          metadata: b.metadata,
          test,
          testClock: b.test_clock,
          idempotencyKey: headers["Idempotency-Key"]
        }))),
      ({ payment, created }) => reply.code(created ? 201 : 200).send(view(payment))
    ))

  route(app, Ops.listPayments, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.gen(function*() {
        const { query: q } = yield* decoded
        const query: Payments.ListQuery = { ...(yield* filtersOf(q)), page: q.page, limit: q.limit, cursor: q.cursor }
        if (q.format === "csv") {
          // A refused query (paging, terminal, filters) is answered at once, not after the exports ahead of it.
          yield* Payments.checkExport(who, query)
          const { key: scope, of } = limitScope(who)
          const held = inScope.get(scope) ?? 0
          if (held >= exportsPerScope) return { _tag: "Busy" as const, of }
          inScope.set(scope, held + 1)
          // An export whose client left (waiting for its turn or being built) is dropped: it only reads.
          return yield* Effect.raceFirst(
            Effect.map(exporting.withPermits(1)(Payments.exportCsv(who, query, Instant.formatIso)), (csv) => ({ _tag: "Csv" as const, csv })),
            Effect.as(clientLeft(reply), { _tag: "Left" as const })
          ).pipe(Effect.ensuring(release(scope)))
        }
        return { _tag: "Page" as const, page: yield* Payments.list(who, query) }
      }),
      (result) =>
        result._tag === "Busy"
          ? sendError(request, reply.header("retry-after", "1"), 429, "too_many_requests", `${exportsPerScope} CSV exports of this ${result.of} are already waiting or being built; retry once one is done`)
          : result._tag === "Left"
          // No one reads it (the request log names such a request 499 too: App's `abortedStatus`).
          ? reply.code(499).send()
          : result._tag === "Csv"
          ? reply
            .type("text/csv; charset=utf-8")
            .header("content-disposition", "attachment; filename=\"payments.csv\"")
            .send(result.csv)
          : reply.send({
            items: result.page.items.map(view),
            total: result.page.total,
            page: result.page.page,
            per_page: result.page.pageSize,
            next_cursor: result.page.nextCursor
          })
    ))

  route(app, Ops.paymentStats, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ query: q }) => Effect.flatMap(filtersOf(q), (query) => Payments.stats(who, query))),
      ({ filter, rows }) => reply.send(statsView(filter, rows))
    ))

  route(app, Ops.paymentDailyStats, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ query: q }) =>
        Effect.flatMap(filtersOf(q), (query) => Payments.dailyStats(who, query, q.time_zone ?? "UTC"))),
      ({ filter, timeZone, rows }) => reply.send(dailyView(filter, timeZone, rows))
    ))

  route(app, Ops.getPaymentByOrder, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ query }) =>
        Payments.getByOrderId(who, { orderId: query.order_id, terminalId: query.terminal_id, environment: query.environment })),
      (payment) => reply.send(view(payment))
    ))

  route(app, Ops.getPayment, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) => Effect.flatMap(decoded, ({ params }) => Payments.get(who, params["paymentID"]!)),
      (payment) => reply.send(view(payment))
    ))

  route(app, Ops.simulatePayment, (request, reply, decoded) =>
    runAs(ctx, request, reply, (who) =>
      Effect.flatMap(decoded, ({ params, body }) => Payments.simulateAsMerchant(who, params["paymentID"]!, body.outcome)),
      (payment) => reply.send(view(payment))
    ))
}
