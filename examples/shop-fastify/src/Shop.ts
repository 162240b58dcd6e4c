/**
 * A small shop on Fastify that takes payments with Paydesk:
 *
 *   POST /checkout        { "sku": "beans-1kg" } -> an order and the payment page (`pay_url`)
 *   POST /webhooks        Paydesk callbacks: verified over the raw body, then the order is marked paid
 *   GET  /orders/:id      the order
 *
 * The order id is the payment's `order_id`, so a retried checkout never creates a second payment.
 * A callback is trusted only after `webhooks.verify`; each `payment_id` is processed once, and a
 * repeated delivery is answered 200 like the first.
 */
import Fastify, { type FastifyInstance } from "fastify"
import { type Paydesk, type WebhookEvent, WebhookVerificationError, webhooks } from "@paydesk/client"

/** What the shop sells (prices in roubles, as the API wants them: decimal strings). */
export const catalog: Readonly<Record<string, { readonly name: string; readonly price: string }>> = {
  "beans-1kg": { name: "Coffee beans, 1 kg", price: "1490.00" },
  "grinder": { name: "Hand grinder", price: "3200.50" }
}

/** An order of the shop. */
export interface Order {
  readonly id: string
  readonly sku: string
  readonly amount: string
  status: "awaiting_payment" | "paid"
  paymentId: string | null
  payUrl: string | null
}

/** Options of the shop. */
export interface ShopOptions {
  /** The Paydesk client (API key of the shop's terminal; `sandbox: true` while testing). */
  readonly paydesk: Paydesk
  /** The terminal's `signing_secret`, to verify callbacks. */
  readonly signingSecret: string
  readonly logger?: boolean
}

/** A built shop: the app (call `listen` or `inject`) and its orders. */
export interface Shop {
  readonly app: FastifyInstance
  readonly orders: ReadonlyMap<string, Order>
}

/** Builds the shop. */
export const buildShop = async (options: ShopOptions): Promise<Shop> => {
  const app = Fastify({ logger: options.logger ?? false })
  const orders = new Map<string, Order>()
  const processed = new Set<string>()

  // Callbacks are verified over the exact bytes received: keep the body as a string.
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => done(null, body))

  app.post<{ Body: string }>("/checkout", async (request, reply) => {
    const { sku } = JSON.parse(request.body) as { sku?: string }
    const item = sku === undefined ? undefined : catalog[sku]
    if (item === undefined) return reply.code(400).send({ error: `unknown sku; one of ${Object.keys(catalog).join(", ")}` })
    const order: Order = { id: `order-${crypto.randomUUID()}`, sku: sku!, amount: item.price, status: "awaiting_payment", paymentId: null, payUrl: null }
    orders.set(order.id, order)
    const payment = await options.paydesk.payments.create({ amount: item.price, order_id: order.id, description: item.name })
    order.paymentId = payment.id
    order.payUrl = payment.pay_url
    return reply.code(201).send({ order_id: order.id, pay_url: payment.pay_url })
  })

  app.post<{ Body: string }>("/webhooks", async (request, reply) => {
    let event: WebhookEvent
    try {
      event = await webhooks.verify(request.body, request.headers, options.signingSecret)
    } catch (error) {
      if (error instanceof WebhookVerificationError) return reply.code(400).send({ error: error.reason })
      throw error
    }
    // Answer 2xx for repeats too; grant goods once per payment.
    if (event.event_type === "payment.paid" && !processed.has(event.payment_id)) {
      const order = orders.get(event.order_id)
      // Trust the API over the callback alone: re-read the payment.
      const payment = await options.paydesk.payments.get(event.payment_id)
      if (order !== undefined && payment.status === "paid" && payment.amount === order.amount) {
        order.status = "paid"
        processed.add(event.payment_id)
      }
    }
    return reply.code(200).send({ received: true })
  })

  app.get<{ Params: { id: string } }>("/orders/:id", async (request, reply) => {
    const order = orders.get(request.params.id)
    return order === undefined ? reply.code(404).send({ error: "no such order" }) : reply.send(order)
  })

  return { app, orders }
}
