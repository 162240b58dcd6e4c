/**
 * The operator API under `/admin/v1`: provisioning (accounts, terminals, API keys, plans), the
 * acquirer's and the operator's moves (payment outcomes, refunds, chargebacks, payouts,
 * subscription resume and stop), deployment hooks (rate, clock, emulator programming, due work)
 * and the callback delivery log. Every route needs `Authorization: Bearer <admin token>`,
 * compared in constant time. Bodies are JSON objects whose unknown fields are refused; each
 * route decodes, runs one use case (or one hook) and encodes the core's view.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify"
import { createHash, timingSafeEqual } from "node:crypto"
import { Option } from "effect"
import { Amount, Callbacks, Id, Instant, Operator, Payments, Payouts, SubscriptionLifecycle, Subscriptions, Views, Work } from "@paydesk/core"
import type { Callback, DeliveryFilter } from "@paydesk/core"
import type { OperatorHooks } from "./App.js"
import { type Context, run, sendError } from "./Http.js"

/** A body or query that cannot be decoded; answered 400. */
class Invalid {
  constructor(readonly message: string, readonly field?: string, readonly code = "invalid_request") {}
}

/** Reads fields of a JSON object body, refusing unknown ones; throws `Invalid` (caught by `decode`). */
const fields = (body: unknown, allowed: ReadonlyArray<string>) => {
  const object = body === undefined || body === null ? {} : body
  if (typeof object !== "object" || Array.isArray(object)) throw new Invalid("invalid json body", undefined, "invalid_json_body")
  const record = object as Record<string, unknown>
  for (const key of Object.keys(record)) {
    if (!allowed.includes(key)) throw new Invalid(`unknown field ${key}`, key)
  }
  const optional = <A>(name: string, is: (value: unknown) => value is A, what: string): A | undefined => {
    const value = record[name]
    if (value === undefined || value === null) return undefined
    if (!is(value)) throw new Invalid(`${name} must be ${what}`, name)
    return value
  }
  const required = <A>(name: string, is: (value: unknown) => value is A, what: string): A => {
    const value = optional(name, is, what)
    if (value === undefined) throw new Invalid(`${name} is required`, name)
    return value
  }
  return {
    string: (name: string) => required(name, isString, "a string"),
    optionalString: (name: string) => optional(name, isString, "a string"),
    optionalBoolean: (name: string) => optional(name, isBoolean, "a boolean"),
    optionalNumber: (name: string) => optional(name, isNumber, "a number"),
    oneOf: <const L extends string>(name: string, values: ReadonlyArray<L>): L =>
      required(name, (value): value is L => typeof value === "string" && (values as ReadonlyArray<string>).includes(value), `one of: ${values.join(", ")}`),
    strings: (name: string) => required(name, isStrings, "an array of strings"),
    array: (name: string) => required(name, Array.isArray, "an array") as ReadonlyArray<unknown>
  }
}

const isString = (value: unknown): value is string => typeof value === "string"
const isBoolean = (value: unknown): value is boolean => typeof value === "boolean"
const isNumber = (value: unknown): value is number => typeof value === "number"
const isStrings = (value: unknown): value is ReadonlyArray<string> => Array.isArray(value) && value.every(isString)

/** Runs a decoder; on `Invalid` answers 400 and returns undefined. */
const decode = <A>(request: FastifyRequest, reply: FastifyReply, decoder: () => A): A | undefined => {
  try {
    return decoder()
  } catch (error) {
    if (!(error instanceof Invalid)) throw error
    sendError(request, reply, 400, error.code, error.message, error.field)
    return undefined
  }
}

/** A query parameter given once, or undefined. */
const queryValue = (request: FastifyRequest, name: string): string | undefined => {
  const value = (request.query as Record<string, unknown> | undefined)?.[name]
  if (value === undefined) return undefined
  if (typeof value !== "string") throw new Invalid(`${name} must be given once`, name)
  return value
}

const notFound = (request: FastifyRequest, reply: FastifyReply, resource: string) =>
  sendError(request, reply, 404, "not_found", `${resource} not found`)

const hookMissing = (request: FastifyRequest, reply: FastifyReply, what: string) =>
  sendError(request, reply, 501, "not_implemented", `${what} is not available in this deployment`)

interface IdParams {
  readonly id: string
}

const chargePrograms = ["paid", "failed", "unknown"] as const
const deliveryStatuses: ReadonlyArray<Callback.DeliveryStatus> = ["pending", "delivered", "failed"]

const sha256 = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest()

/** Registers the operator API (mounted under `/admin/v1`). */
export const register = async (
  app: FastifyInstance,
  ctx: Context,
  options: { readonly token: string; readonly hooks: OperatorHooks }
): Promise<void> => {
  const { hooks } = options
  const expected = sha256(options.token)

  app.addHook("onRequest", async (request, reply) => {
    const header = request.headers.authorization
    const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header)
    // Hashing both sides makes the comparison constant-time whatever the lengths.
    if (options.token.length === 0 || match === null || !timingSafeEqual(sha256(match[1]!), expected)) {
      reply.header("www-authenticate", "Bearer realm=\"paydesk-admin\"")
      return sendError(request, reply, 401, "unauthenticated", "operator bearer token required")
    }
  })

  const subscriptionView = (s: Parameters<typeof Views.subscription>[0]) => Views.subscription(s, { publicUrl: ctx.publicUrl, withPayUrl: false })

  // Provisioning

  app.post("/accounts", (request, reply) => {
    const input = decode(request, reply, () => {
      const body = fields(request.body, ["name", "owner_email", "owner_password"])
      return { name: body.string("name"), ownerEmail: body.string("owner_email"), ownerPassword: body.string("owner_password") }
    })
    if (input === undefined) return reply
    return run(ctx, request, reply, Operator.createAccount(input), (created) =>
      reply.code(201).send({ account_id: created.accountId, user_id: created.userId }))
  })

  app.post("/terminals", (request, reply) => {
    const input = decode(request, reply, () => {
      const body = fields(request.body, ["account_id", "name", "h2h", "callback_url"])
      const h2h = body.optionalBoolean("h2h")
      const callbackUrl = body.optionalString("callback_url")
      return {
        accountId: body.string("account_id"),
        name: body.string("name"),
        ...(h2h === undefined ? {} : { h2h }),
        ...(callbackUrl === undefined ? {} : { callbackUrl })
      }
    })
    if (input === undefined) return reply
    return run(ctx, request, reply, Operator.createTerminal(input), (created) =>
      reply.code(201).send({
        terminal_id: created.terminal.id,
        api_key: created.apiKey,
        signing_secret: created.signingSecret,
        terminal: Views.terminal(created.terminal)
      }))
  })

  app.post<{ Params: IdParams }>("/terminals/:id/api-keys", (request, reply) => {
    const input = decode(request, reply, () => fields(request.body, ["subscription_write"]).optionalBoolean("subscription_write"))
    if (reply.sent) return reply
    const terminalId = Id.parseUuid(request.params.id)
    if (Option.isNone(terminalId)) return notFound(request, reply, "terminal")
    return run(ctx, request, reply, Operator.createApiKey(terminalId.value, { subscriptionWrite: input ?? true }), (apiKey) =>
      reply.code(201).send({ terminal_id: terminalId.value, api_key: apiKey, subscription_write: input ?? true }))
  })

  app.post<{ Params: IdParams }>("/terminals/:id/status", (request, reply) => {
    const status = decode(request, reply, () => fields(request.body, ["status"]).oneOf("status", ["active", "disabled"]))
    if (status === undefined) return reply
    const terminalId = Id.parseUuid(request.params.id)
    if (Option.isNone(terminalId)) return notFound(request, reply, "terminal")
    return run(ctx, request, reply, Operator.setTerminalStatus(terminalId.value, status), (terminal) =>
      reply.send(Views.terminal(terminal)))
  })

  app.post("/plans", (request, reply) => {
    const input = decode(request, reply, () => {
      const body = fields(request.body, [
        "terminal_ids",
        "code",
        "name",
        "interval",
        "schedule",
        "cap_amount_rub",
        "payer_amount_rub",
        "merchant_amount_rub",
        "max_cycles",
        "consent_text",
        "policy_version"
      ])
      const input: Operator.PlanInput = {
        terminalIds: body.strings("terminal_ids"),
        code: body.string("code"),
        name: body.string("name"),
        interval: body.string("interval"),
        schedule: body.string("schedule"),
        capAmountRub: body.optionalString("cap_amount_rub") ?? null,
        payerAmountRub: body.optionalString("payer_amount_rub") ?? null,
        merchantAmountRub: body.optionalString("merchant_amount_rub") ?? null,
        maxCycles: body.optionalNumber("max_cycles") ?? null,
        consentText: body.string("consent_text"),
        policyVersion: body.string("policy_version")
      }
      return input
    })
    if (input === undefined) return reply
    return run(ctx, request, reply, Operator.createPlan(input), (plan) =>
      reply.code(201).send({ ...Views.plan(plan), active: plan.active, terminal_ids: plan.terminalIds }))
  })

  // The acquirer's answers (emulated deployments and manual operations)

  app.post<{ Params: { readonly paymentId: string } }>("/acquirer/payments/:paymentId/outcome", (request, reply) => {
    const outcome = decode(request, reply, () => fields(request.body, ["outcome"]).oneOf("outcome", ["paid", "failed"]))
    if (outcome === undefined) return reply
    return run(ctx, request, reply, Payments.settle(request.params.paymentId, outcome), (payment) =>
      reply.send(Views.payment(payment, ctx.publicUrl)))
  })

  app.post<{ Params: { readonly subscriptionId: string } }>("/acquirer/subscriptions/:subscriptionId/charge-outcomes", (request, reply) => {
    const program = hooks.programCharges
    if (program === undefined) return hookMissing(request, reply, "programming charge outcomes")
    const outcomes = decode(request, reply, () => {
      const list = fields(request.body, ["outcomes"]).array("outcomes")
      if (list.length > 100) throw new Invalid("outcomes must have at most 100 entries", "outcomes")
      return list.map((value) => {
        if (typeof value !== "string" || !(chargePrograms as ReadonlyArray<string>).includes(value)) {
          throw new Invalid(`outcomes must contain only ${chargePrograms.join(", ")}`, "outcomes")
        }
        return value as (typeof chargePrograms)[number]
      })
    })
    if (outcomes === undefined) return reply
    const subscriptionId = Id.parseUuid(request.params.subscriptionId)
    if (Option.isNone(subscriptionId)) return notFound(request, reply, "subscription")
    return run(ctx, request, reply, SubscriptionLifecycle.load(subscriptionId.value), async (subscription) => {
      await program(subscription.id, outcomes)
      return reply.send({ subscription_id: subscription.id, outcomes })
    })
  })

  // Operator moves

  app.post<{ Params: IdParams }>("/payouts/:id/approve", (request, reply) =>
    run(ctx, request, reply, Payouts.approve(request.params.id), (payout) => reply.send(Views.payout(payout))))

  app.post<{ Params: IdParams }>("/payouts/:id/reject", (request, reply) => {
    const reason = decode(request, reply, () => {
      const value = fields(request.body, ["reason"]).optionalString("reason")
      if (value !== undefined && (value.trim().length === 0 || value.length > 512)) {
        throw new Invalid("reason must be 1 to 512 characters", "reason")
      }
      return value ?? null
    })
    if (reason === undefined) return reply
    return run(ctx, request, reply, Payouts.reject(request.params.id, reason), (payout) => reply.send(Views.payout(payout)))
  })

  app.post<{ Params: IdParams }>("/payments/:id/refund", (request, reply) =>
    run(ctx, request, reply, Payments.refund(request.params.id), (payment) => reply.send(Views.payment(payment, ctx.publicUrl))))

  app.post<{ Params: IdParams }>("/payments/:id/chargeback", (request, reply) =>
    run(ctx, request, reply, Payments.chargeback(request.params.id), (payment) => reply.send(Views.payment(payment, ctx.publicUrl))))

  app.post<{ Params: IdParams }>("/subscriptions/:id/resume", (request, reply) => {
    const id = Id.parseUuid(request.params.id)
    if (Option.isNone(id)) return notFound(request, reply, "subscription")
    return run(ctx, request, reply, Subscriptions.resume(id.value), (subscription) => reply.send(subscriptionView(subscription)))
  })

  app.post<{ Params: IdParams }>("/subscriptions/:id/stop", (request, reply) => {
    const id = Id.parseUuid(request.params.id)
    if (Option.isNone(id)) return notFound(request, reply, "subscription")
    return run(ctx, request, reply, Subscriptions.stopById(id.value), (subscription) => reply.send(subscriptionView(subscription)))
  })

  // Deployment hooks

  app.put("/rate", async (request, reply) => {
    const setRate = hooks.setRate
    if (setRate === undefined) return hookMissing(request, reply, "setting the rate")
    const rate = decode(request, reply, () => {
      const parsed = Amount.parseRate(fields(request.body, ["rate"]).string("rate"))
      if (parsed._tag === "Failure") throw new Invalid("rate must be a decimal greater than zero with at most six decimals", "rate")
      return parsed.success
    })
    if (rate === undefined) return reply
    await setRate(rate)
    return reply.send({ rate: Amount.formatRate(rate) })
  })

  app.post("/clock", async (request, reply) => {
    const setClock = hooks.setClock
    if (setClock === undefined) return sendError(request, reply, 409, "clock_not_manual", "clock is not manual")
    const now = decode(request, reply, () => {
      const parsed = Instant.parseIso(fields(request.body, ["now"]).string("now"))
      if (Option.isNone(parsed)) throw new Invalid("now must be an ISO 8601 date-time with an offset", "now")
      return parsed.value
    })
    if (now === undefined) return reply
    await setClock(now)
    return reply.send({ now: Instant.formatIso(now) })
  })

  app.post("/work/run", async (request, reply) => {
    if (hooks.runWork !== undefined) return reply.send((await hooks.runWork()) ?? { ok: true })
    return run(ctx, request, reply, Work.runDue(), (report) => reply.send(report))
  })

  // Callback deliveries

  app.get("/deliveries", (request, reply) => {
    const filter = decode(request, reply, () => {
      const terminal = queryValue(request, "terminal_id")
      const payment = queryValue(request, "payment_id")
      const status = queryValue(request, "status")
      const limit = queryValue(request, "limit")
      const terminalId = terminal === undefined ? undefined : Option.getOrUndefined(Id.parseUuid(terminal))
      if (terminal !== undefined && terminalId === undefined) throw new Invalid("terminal_id must be a UUID", "terminal_id")
      const paymentId = payment === undefined ? undefined : Option.getOrUndefined(Id.parsePaymentId(payment))
      if (payment !== undefined && paymentId === undefined) throw new Invalid("payment_id must be pay_<uuid> or a UUID", "payment_id")
      if (status !== undefined && !(deliveryStatuses as ReadonlyArray<string>).includes(status)) {
        throw new Invalid(`status must be one of: ${deliveryStatuses.join(", ")}`, "status")
      }
      if (limit !== undefined && !/^[1-9]\d{0,2}$/.test(limit)) throw new Invalid("limit must be an integer from 1 to 500", "limit")
      const count = limit === undefined ? 50 : Number(limit)
      if (count > 500) throw new Invalid("limit must be an integer from 1 to 500", "limit")
      const result: DeliveryFilter = {
        limit: count,
        ...(terminalId === undefined ? {} : { terminalId }),
        ...(paymentId === undefined ? {} : { paymentId }),
        ...(status === undefined ? {} : { status: status as Callback.DeliveryStatus })
      }
      return result
    })
    if (filter === undefined) return reply
    return run(ctx, request, reply, Callbacks.listDeliveries(filter), (items) => reply.send({ items: items.map(Views.delivery) }))
  })

  app.get<{ Params: IdParams }>("/deliveries/:id", (request, reply) => {
    const id = Id.parseUuid(request.params.id)
    if (Option.isNone(id)) return notFound(request, reply, "delivery")
    return run(ctx, request, reply, Callbacks.getDelivery(id.value), ({ delivery, event, attempts }) =>
      reply.send({
        delivery: Views.delivery(delivery),
        event: event === null ? null : {
          id: event.id,
          event_type: event.eventType,
          payment_id: event.paymentId === null ? null : Id.paymentId(event.paymentId),
          payout_id: event.payoutId === null ? null : Id.payoutId(event.payoutId),
          test: event.test,
          created_at: Instant.formatIso(event.createdAt),
          // The exact body that was signed and sent.
          body: event.body
        },
        attempts: attempts.map(Views.attempt)
      }))
  })
}
