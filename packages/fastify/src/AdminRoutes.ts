/**
 * The operator API under `/admin/v1`: provisioning (accounts, terminals, API keys, plans), reads
 * (accounts, terminals, payments, subscriptions and payouts: lists and single records), terminal
 * settings, credential
 * lifecycle (list and revoke API keys, rotate a signing secret, end a user's sessions), the
 * acquirer's and the operator's moves (payment outcomes, refunds, chargebacks, payouts,
 * subscription resume and stop), deployment hooks (rate, clock, emulator programming, due work)
 * and the callback delivery log. Every route needs `Authorization: Bearer <admin token>`,
 * compared in constant time. Every route is declared in `OperatorOperations` and decoded by
 * `Contract` like the merchant API's; each runs one use case (or one hook) and encodes the core's view.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify"
import { createHash, timingSafeEqual } from "node:crypto"
import { Effect, Option } from "effect"
import {
  Amount,
  Auth,
  Callbacks,
  Credentials,
  Id,
  Instant,
  InvalidRequest,
  NotFound,
  OperationNotAllowed,
  Operator,
  OperatorReads,
  Payments,
  Payouts,
  SubscriptionLifecycle,
  Subscriptions,
  Terminals,
  TestClock,
  Views,
  Work
} from "@paydesk/core"
import type { DeliveryFilter } from "@paydesk/core"
import type { OperatorHooks } from "./App.js"
import { route } from "./Contract.js"
import { type Context, jsonBodiesOnly, run, sendError } from "./Http.js"
import { rotationView } from "./MerchantCredentials.js"
import * as MerchantSettings from "./MerchantTerminals.js"
import * as Ops from "./OperatorOperations.js"

const notFound = (resource: "terminal" | "subscription" | "delivery") => Effect.fail(NotFound.of(resource))

/** A UUID path parameter, or 404 for the resource (a non-UUID names nothing). */
const uuidOf = (value: string | undefined, resource: "terminal" | "subscription" | "delivery") =>
  Option.match(Id.parseUuid(value ?? ""), { onNone: () => notFound(resource), onSome: Effect.succeed })

/** 501: a deployment hook this server lacks. */
const hookMissing = (request: FastifyRequest, reply: FastifyReply, what: string) =>
  sendError(request, reply, 501, "not_implemented", `${what} is not available in this deployment`)

const sha256 = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest()

/**
 * An `onRequest` hook that answers 401 unless the request carries `Authorization: Bearer <token>`
 * (compared in constant time; an empty token admits nobody).
 */
export const operatorAuth = (token: string) => {
  const expected = sha256(token)
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers.authorization
    const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header)
    // Hashing both sides makes the comparison constant-time whatever the lengths.
    if (token.length === 0 || match === null || !timingSafeEqual(sha256(match[1]!), expected)) {
      reply.header("www-authenticate", "Bearer realm=\"paydesk-admin\"")
      return sendError(request, reply, 401, "unauthenticated", "operator bearer token required")
    }
  }
}

/** Registers the operator API (mounted under `/admin/v1`). */
export const register = async (
  app: FastifyInstance,
  ctx: Context,
  options: { readonly token: string; readonly hooks: OperatorHooks }
): Promise<void> => {
  const { hooks } = options

  app.addHook("onRequest", operatorAuth(options.token))
  // Bodies of the operator API are JSON only, as the merchant API's (a form was 400 "invalid_request").
  app.addHook("preHandler", jsonBodiesOnly)

  const subscriptionView = (s: Parameters<typeof Views.subscription>[0]) => Views.subscription(s, { publicUrl: ctx.publicUrl, withPayUrl: false })

  // Provisioning

  route(app, Ops.createAccount, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ body }) =>
      Operator.createAccount({ name: body.name, ownerEmail: body.owner_email, ownerPassword: body.owner_password })), (created) =>
      reply.code(201).send({ account_id: created.accountId, user_id: created.userId })))

  route(app, Ops.createTerminal, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ body }) =>
      Operator.createTerminal({
        accountId: body.account_id,
        name: body.name,
        ...(body.h2h === undefined || body.h2h === null ? {} : { h2h: body.h2h }),
        ...(body.callback_url === undefined || body.callback_url === null ? {} : { callbackUrl: body.callback_url })
      })), (created) =>
      reply.code(201).send({
        terminal_id: created.terminal.id,
        api_key: created.apiKey,
        signing_secret: created.signingSecret,
        terminal: Views.terminal(created.terminal)
      })))

  route(app, Ops.createApiKey, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.gen(function*() {
      const { body, params } = yield* decoded
      const terminalId = yield* uuidOf(params["id"], "terminal")
      const subscriptionWrite = body.subscription_write ?? true
      return yield* Credentials.createApiKey(Credentials.operator, terminalId, { subscriptionWrite })
    }), ({ key, record }) =>
      // The key's id and prefix too, as the key list shows them: what revoking it needs.
      reply.code(201).send({ id: record.id, terminal_id: record.terminalId, api_key: key, prefix: record.prefix, subscription_write: record.subscriptionWrite })))

  route(app, Ops.listApiKeys, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ params }) => Credentials.listApiKeys(Credentials.operator, params["id"]!)), (keys) =>
      reply.send({ items: keys.map(Views.apiKey) })))

  route(app, Ops.revokeApiKey, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ params }) =>
      Credentials.revokeApiKey(Credentials.operator, params["id"]!, params["keyId"]!)), (key) => reply.send(Views.apiKey(key))))

  route(app, Ops.rotateSigningSecret, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ params, headers }) =>
      Credentials.rotateSigningSecret(Credentials.operator, params["id"]!, { idempotencyKey: headers["Idempotency-Key"] })), (rotated) =>
      reply.send(rotationView(rotated))))

  route(app, Ops.logoutUser, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ params }) => Auth.logoutUser(params["id"]!)), (done) => reply.send(done)))

  route(app, Ops.resetPassword, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ params, body }) => Auth.resetPassword(params["id"]!, body.password)), (done) => reply.send(done)))

  route(app, Ops.setTerminalStatus, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.gen(function*() {
      const { body, params } = yield* decoded
      return yield* Operator.setTerminalStatus(yield* uuidOf(params["id"], "terminal"), body.status)
    }), (terminal) => reply.send(Views.terminal(terminal))))

  route(app, Ops.createPlan, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ body }) =>
      Operator.createPlan({
        terminalIds: body.terminal_ids,
        code: body.code,
        name: body.name,
        interval: body.interval,
        schedule: body.schedule ?? null,
        capAmountRub: body.cap_amount_rub ?? null,
        payerAmountRub: body.payer_amount_rub ?? null,
        merchantAmountRub: body.merchant_amount_rub ?? null,
        maxCycles: body.max_cycles ?? null,
        consentText: body.consent_text,
        policyVersion: body.policy_version
      })), (plan) => reply.code(201).send({ ...Views.plan(plan), active: plan.active, terminal_ids: plan.terminalIds })))

  // Reads: lists (newest first, `page` from 1, 50 per page) and single records

  const pageView = <A, V>(result: { readonly items: ReadonlyArray<A>; readonly total: number; readonly page: number }, view: (a: A) => V) =>
    ({ items: result.items.map(view), total: result.total, page: result.page, per_page: OperatorReads.pageSize, next_cursor: null })

  route(app, Ops.listAccounts, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ query }) => OperatorReads.listAccounts(query.page)), (result) =>
      reply.send(pageView(result, Views.account))))

  route(app, Ops.getAccount, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ params }) => OperatorReads.getAccount(params["id"]!)), ({ account, terminals, users }) =>
      reply.send({
        ...Views.account(account),
        terminals: terminals.map(Views.terminal),
        users: users.map((user) => ({ ...Views.user(user), created_at: Instant.formatIso(user.createdAt) }))
      })))

  route(app, Ops.listAccountTerminals, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ params }) => OperatorReads.listTerminals(params["id"]!)), (terminals) =>
      reply.send({ items: terminals.map(Views.terminal) })))

  route(app, Ops.getTerminal, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ params }) => Effect.flatMap(OperatorReads.getTerminal(params["id"]!), Terminals.details)), (details) =>
      reply.send(Views.terminalDetails(details))))

  route(app, Ops.updateTerminal, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ body, params }) =>
      Terminals.updateSettingsAsOperator(params["id"]!, MerchantSettings.settingsOf(body))), (terminal) => reply.send(Views.terminal(terminal))))

  route(app, Ops.listTerminalPayments, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ params, query }) =>
      OperatorReads.listPayments(params["id"]!, { page: query.page, environment: query.environment })), (result) =>
      reply.send(pageView(result, (p) => Views.payment(p, ctx.publicUrl)))))

  route(app, Ops.getPayment, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ params }) => OperatorReads.getPayment(params["id"]!)), (payment) =>
      reply.send(Views.payment(payment, ctx.publicUrl))))

  route(app, Ops.listTerminalSubscriptions, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ params, query }) =>
      OperatorReads.listSubscriptions(params["id"]!, { page: query.page, providerState: query.state })), (result) =>
      reply.send(pageView(result, subscriptionView))))

  route(app, Ops.getSubscription, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ params }) => OperatorReads.getSubscription(params["id"]!)), (subscription) =>
      reply.send(subscriptionView(subscription))))

  route(app, Ops.listTerminalPayouts, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ params, query }) => OperatorReads.listPayouts(params["id"]!, { page: query.page })), (result) =>
      reply.send(pageView(result, Views.payout))))

  route(app, Ops.getPayout, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ params }) => OperatorReads.getPayout(params["id"]!)), (payout) =>
      reply.send(Views.payout(payout))))

  // The acquirer's answers (emulated deployments and manual operations)

  route(app, Ops.acquirerOutcome, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ body, params }) => Payments.settle(params["paymentId"]!, body.outcome)), (payment) =>
      reply.send(Views.payment(payment, ctx.publicUrl))))

  route(app, Ops.chargeOutcomes, (request, reply, decoded) => {
    const program = hooks.programCharges
    if (program === undefined) return hookMissing(request, reply, "programming charge outcomes")
    return run(ctx, request, reply, Effect.gen(function*() {
      const { body, params } = yield* decoded
      const outcomes = body.outcomes.map((o) => typeof o === "string" ? { outcome: o, delayMs: 0 } : { outcome: o.outcome, delayMs: o.delay_ms ?? 0 })
      const subscription = yield* SubscriptionLifecycle.load(yield* uuidOf(params["subscriptionId"], "subscription"))
      yield* Effect.promise(() => program(subscription.id, outcomes))
      return {
        subscription_id: subscription.id,
        outcomes: outcomes.map((o) => o.delayMs === 0 ? o.outcome : { outcome: o.outcome, delay_ms: o.delayMs })
      }
    }), (answer) => reply.send(answer))
  })

  route(app, Ops.resolveCharge, (request, reply, decoded) => {
    const resolve = hooks.resolveCharge
    if (resolve === undefined) return hookMissing(request, reply, "settling unknown charges")
    return run(ctx, request, reply, Effect.gen(function*() {
      const { body, params } = yield* decoded
      const id = yield* uuidOf(params["subscriptionId"], "subscription")
      const open = yield* Subscriptions.openCharge(id)
      if (Option.isNone(open) || !(yield* Effect.promise(() => resolve(open.value.idempotencyKey, body.outcome)))) {
        return yield* new OperationNotAllowed({ message: "the subscription has no open charge the bank answered unknown" })
      }
      return { subscription_id: id, charge_id: open.value.id, idempotency_key: open.value.idempotencyKey, outcome: body.outcome }
    }), (answer) => reply.send(answer))
  })

  // Operator moves

  route(app, Ops.approvePayout, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ params, headers }) => Payouts.approve(params["id"]!, { idempotencyKey: headers["Idempotency-Key"] })), (payout) =>
      reply.send(Views.payout(payout))))

  route(app, Ops.rejectPayout, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ body, params, headers }) => Payouts.reject(params["id"]!, body.reason ?? null, { idempotencyKey: headers["Idempotency-Key"] })), (payout) =>
      reply.send(Views.payout(payout))))

  route(app, Ops.refundPayment, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ params, headers }) => Payments.refund(params["id"]!, { idempotencyKey: headers["Idempotency-Key"] })), (payment) =>
      reply.send(Views.payment(payment, ctx.publicUrl))))

  route(app, Ops.chargebackPayment, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.flatMap(decoded, ({ params, headers }) => Payments.chargeback(params["id"]!, { idempotencyKey: headers["Idempotency-Key"] })), (payment) =>
      reply.send(Views.payment(payment, ctx.publicUrl))))

  route(app, Ops.resumeSubscription, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.gen(function*() {
      const { params } = yield* decoded
      return yield* Subscriptions.resume(yield* uuidOf(params["id"], "subscription"))
    }), (subscription) => reply.send(subscriptionView(subscription))))

  route(app, Ops.stopSubscription, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.gen(function*() {
      const { params } = yield* decoded
      return yield* Subscriptions.stopById(yield* uuidOf(params["id"], "subscription"))
    }), (subscription) => reply.send(subscriptionView(subscription))))

  // Deployment hooks

  route(app, Ops.setRate, (request, reply, decoded) => {
    const setRate = hooks.setRate
    if (setRate === undefined) return hookMissing(request, reply, "setting the rate")
    return run(ctx, request, reply, Effect.gen(function*() {
      const { body } = yield* decoded
      const parsed = Amount.parseRate(body.rate)
      if (parsed._tag === "Failure") {
        return yield* new InvalidRequest({ field: "rate", message: `rate must be ${Amount.rateRule}` })
      }
      yield* Effect.promise(() => setRate(parsed.success))
      return { rate: Amount.formatRate(parsed.success) }
    }), (rate) => reply.send(rate))
  })

  route(app, Ops.setClock, (request, reply, decoded) => {
    const setClock = hooks.setClock
    if (setClock === undefined) return sendError(request, reply, 409, "clock_not_manual", "clock is not manual")
    return run(ctx, request, reply, Effect.gen(function*() {
      const { body } = yield* decoded
      const parsed = Instant.parseIso(body.now)
      if (Option.isNone(parsed)) return yield* new InvalidRequest({ field: "now", message: "now must be an ISO 8601 date-time with an offset" })
      // The test clocks' years: at 9999-12-31 a payment's expiry fell in year 10000, which PostgreSQL
      // does not read (every creation 500: an outside probe).
      if (!TestClock.inRange(parsed.value)) return yield* new InvalidRequest({ field: "now", message: `now must be ${TestClock.rangeText}` })
      yield* Effect.promise(() => setClock(parsed.value))
      return { now: Instant.formatIso(parsed.value) }
    }), (now) => reply.send(now))
  })

  route(app, Ops.runWork, (request, reply, decoded) => {
    const runWork = hooks.runWork
    // Decoded first: a stray query parameter runs nothing.
    return runWork !== undefined
      ? run(ctx, request, reply, Effect.andThen(decoded, Effect.promise(() => runWork())), (report) => reply.send(report))
      : run(ctx, request, reply, Effect.andThen(decoded, Work.runDue()), (report) => reply.send(Views.workReport(report)))
  })

  // Callback deliveries

  route(app, Ops.listDeliveries, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.gen(function*() {
      const { query: q } = yield* decoded
      const terminalId = q.terminal_id === undefined ? undefined : Option.getOrUndefined(Id.parseUuid(q.terminal_id))
      if (q.terminal_id !== undefined && terminalId === undefined) return yield* new InvalidRequest({ field: "terminal_id", message: "terminal_id must be a UUID" })
      const paymentId = q.payment_id === undefined ? undefined : Option.getOrUndefined(Id.parsePaymentId(q.payment_id))
      if (q.payment_id !== undefined && paymentId === undefined) {
        return yield* new InvalidRequest({ field: "payment_id", message: "payment_id must be pay_<uuid> or a UUID" })
      }
      const filter: DeliveryFilter = {
        limit: q.limit ?? 50,
        ...(terminalId === undefined ? {} : { terminalId }),
        ...(paymentId === undefined ? {} : { paymentId }),
        ...(q.status === undefined ? {} : { status: q.status }),
        ...(q.environment === undefined || q.environment === "all" ? {} : { test: q.environment === "sandbox" })
      }
      return yield* Callbacks.listDeliveries(filter)
    }), (items) => reply.send({ items: items.map(Views.delivery) })))

  route(app, Ops.getDelivery, (request, reply, decoded) =>
    run(ctx, request, reply, Effect.gen(function*() {
      const { params } = yield* decoded
      return yield* Callbacks.getDelivery(yield* uuidOf(params["id"], "delivery"))
    }), ({ delivery, event, attempts }) =>
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
      })))
}
