/**
 * The payer pages under `/public`, reached with the page token alone (no API key): the payment
 * page with its status endpoint and sandbox simulation, and the subscription consent page with
 * its confirmation. Forms post either JSON (the pages' script) or `application/x-www-form-urlencoded`
 * (plain browser forms, answered with a 303 back to a page). Each route is declared in
 * `MerchantOperations` and runs one use case.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify"
import { randomBytes } from "node:crypto"
import { Effect } from "effect"
import { Payments, Subscriptions, Views } from "@paydesk/core"
import type { Services } from "@paydesk/core"
import { route } from "./Contract.js"
import { type Context, exitOf, run } from "./Http.js"
import { fromExit } from "./HttpErrors.js"
import * as Ops from "./MerchantOperations.js"
import * as PublicPages from "./PublicPages.js"

interface TokenParams {
  readonly token: string
}

/** Path of a page URL (keeps a path prefix of `publicUrl`; "/public/..." when it has none). */
const pathOf = (url: string): string => {
  try {
    return new URL(url).pathname
  } catch {
    return url.slice(url.indexOf("/public/"))
  }
}

const paymentPath = (ctx: Context, token: string) => pathOf(Views.paymentPageUrl(ctx.publicUrl, token))
const subscriptionPath = (ctx: Context, token: string) => pathOf(Views.subscriptionPageUrl(ctx.publicUrl, token))

/**
 * The link back from a refused form's error page: only for a token that looks like one (page tokens
 * are base64url), so that no crafted path turns the link into one to another site.
 */
const backLink = (path: (token: string) => string, token: string, label: string) =>
  /^[A-Za-z0-9_-]{1,128}$/.test(token) ? { path: path(token), label } : undefined

const isForm = (request: FastifyRequest): boolean =>
  (request.headers["content-type"] ?? "").toLowerCase().startsWith("application/x-www-form-urlencoded")

/** A refused plain form post is shown as a page to a browser, as the error body to anyone else. */
const wantsHtml = (request: FastifyRequest): boolean => isForm(request) && (request.headers.accept ?? "").includes("text/html")

const noStore = (reply: FastifyReply) => reply.header("cache-control", "no-store").header("referrer-policy", "no-referrer")

const sendHtml = (reply: FastifyReply, status: number, nonce: string, html: string) =>
  noStore(reply)
    .code(status)
    .header("content-type", "text/html; charset=utf-8")
    .header("content-security-policy", PublicPages.contentSecurityPolicy(nonce))
    .header("x-content-type-options", "nosniff")
    .header("x-frame-options", "DENY")
    .send(html)

const newNonce = () => randomBytes(16).toString("base64")

/** The QR encoder, loaded with the first payer page that shows a code (it is not small). */
let qrModule: Promise<typeof import("qrcode")> | undefined
const qrCode = () => (qrModule ??= import("qrcode"))

/** Runs a page's use case; a failure becomes an HTML error page with the mapped status. */
const page = async <A, E>(
  ctx: Context,
  request: FastifyRequest,
  reply: FastifyReply,
  effect: Effect.Effect<A, E, Services>,
  render: (value: A, nonce: string) => Promise<string> | string
) => {
  const nonce = newNonce()
  const exit = await exitOf(ctx, request, effect)
  const failed = fromExit(exit, request.id)
  if (failed !== null) {
    if (failed.status >= 500) request.log.error({ cause: exit._tag === "Failure" ? String(exit.cause) : undefined }, "use case failed")
    return sendHtml(reply, failed.status, nonce, PublicPages.errorPage({ status: failed.status, code: failed.body.error.code, nonce }))
  }
  return sendHtml(reply, 200, nonce, await render((exit as { value: A }).value, nonce))
}

/**
 * Runs a form action: JSON in and out, or a plain form answered with a 303 (or an error page in
 * the payer's words, linking `back` to the page the form is on).
 */
const action = async <A, E>(
  ctx: Context,
  request: FastifyRequest,
  reply: FastifyReply,
  effect: Effect.Effect<A, E, Services>,
  ok: { readonly json: (value: A) => unknown; readonly location: (value: A) => string },
  back: { readonly path: string; readonly label: string } | undefined
) => {
  noStore(reply)
  if (!isForm(request)) return run(ctx, request, reply, effect, (value) => reply.code(200).send(ok.json(value)))
  if (!wantsHtml(request)) return run(ctx, request, reply, effect, (value) => reply.code(303).header("location", ok.location(value)).send())
  const exit = await exitOf(ctx, request, effect)
  const failed = fromExit(exit, request.id)
  if (failed !== null) {
    const nonce = newNonce()
    return sendHtml(reply, failed.status, nonce, PublicPages.errorPage({ status: failed.status, code: failed.body.error.code, nonce, ...(back === undefined ? {} : { back }) }))
  }
  return reply.code(303).header("location", ok.location((exit as { value: A }).value)).send()
}

/** Registers the payer pages (mounted under `/public`). */
export const register = async (app: FastifyInstance, ctx: Context): Promise<void> => {
  route(app, Ops.paymentPage, (request, reply) => {
    const { token } = request.params as TokenParams
    return page(ctx, request, reply, Payments.findPublic(token), async ({ payment, terminal }, nonce) =>
      PublicPages.paymentPage({
        payment,
        terminal,
        qrDataUrl: PublicPages.isOpen(payment.status) && payment.qrPayload !== null
          ? await (await qrCode()).toDataURL(payment.qrPayload, { margin: 1, width: 240, errorCorrectionLevel: "M" })
          : null,
        pagePath: paymentPath(ctx, payment.payToken),
        nonce
      }))
  })

  route(app, Ops.paymentPageStatus, (request, reply) =>
    run(ctx, request, noStore(reply), Payments.findPublic((request.params as TokenParams).token), ({ payment, terminal }) =>
      reply.send(PublicPages.statusBody(payment, terminal))))

  route(app, Ops.pageSimulate, (request, reply, decoded) => {
    const { token } = request.params as TokenParams
    return action(
      ctx,
      request,
      reply,
      // The simulation, then the page's own read for the terminal's redirect pages.
      Effect.flatMap(decoded, ({ body }) =>
        Effect.andThen(
          Payments.simulate(token, { outcome: body.outcome, csrfToken: body.csrf_token ?? "" }),
          Payments.findPublic(token)
        )),
      {
        json: ({ payment, terminal }) => PublicPages.statusBody(payment, terminal),
        location: ({ payment }) => paymentPath(ctx, payment.payToken)
      },
      backLink((t) => paymentPath(ctx, t), token, "Вернуться к оплате")
    )
  })

  route(app, Ops.subscriptionPage, (request, reply) =>
    page(ctx, request, reply, Subscriptions.findPublic((request.params as TokenParams).token), ({ subscription, terminal, firstPayment }, nonce) =>
      PublicPages.subscriptionPage({
        subscription,
        terminal,
        firstPayment,
        pagePath: subscriptionPath(ctx, subscription.payToken),
        paymentPath: (payToken) => paymentPath(ctx, payToken),
        nonce
      })))

  route(app, Ops.pageConfirm, (request, reply, decoded) => {
    const { token } = request.params as TokenParams
    return action(ctx, request, reply, Effect.flatMap(decoded, ({ body }) => Subscriptions.confirm(token, body.csrf_token ?? "")), {
      json: ({ subscription, firstPayment }) => ({
        billing_status: subscription.billingStatus,
        first_payment_url: firstPayment._tag === "Some" ? Views.paymentPageUrl(ctx.publicUrl, firstPayment.value.payToken) : null
      }),
      location: ({ subscription, firstPayment }) =>
        firstPayment._tag === "Some" ? paymentPath(ctx, firstPayment.value.payToken) : subscriptionPath(ctx, subscription.payToken)
    }, backLink((t) => subscriptionPath(ctx, t), token, "Вернуться к подписке"))
  })
}
