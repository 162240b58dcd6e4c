/**
 * The shop against the reference server in sandbox: checkout creates a payment with the SDK, the
 * sandbox simulation pays it, the server's signed callback reaches the shop's webhook route, which
 * verifies it and marks the order paid; a forged or repeated callback changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Paydesk, webhooks } from "@paydesk/client"
import { startServer } from "../../../packages/server/test/ServerHarness.js"
import { buildShop } from "../src/Shop.js"

let srv: Awaited<ReturnType<typeof startServer>>
let shop: Awaited<ReturnType<typeof buildShop>>
let merchant: Awaited<ReturnType<typeof srv.merchant>>
let paydesk: Paydesk
let shopUrl = ""

beforeAll(async () => {
  srv = await startServer()
  merchant = await srv.merchant("https://shop.example/webhooks")
  paydesk = new Paydesk({ apiKey: merchant.apiKey, baseUrl: srv.base, sandbox: true })
  shop = await buildShop({ paydesk, signingSecret: merchant.signingSecret })
  shopUrl = await shop.app.listen({ port: 0, host: "127.0.0.1" })
  // Callbacks go to the shop's webhook route.
  await paydesk.terminals.update(merchant.terminalId, { callback_url: `${shopUrl}/webhooks` })
}, 120_000)

afterAll(async () => {
  await shop?.app.close()
  await srv?.stop()
})

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${shopUrl}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body })

describe("shop-fastify", () => {
  it("checkout -> sandbox payment -> simulate paid -> verified callback -> order paid", async () => {
    const checkout = await post("/checkout", JSON.stringify({ sku: "beans-1kg" }))
    expect(checkout.status).toBe(201)
    const { order_id, pay_url } = await checkout.json() as { order_id: string; pay_url: string }
    expect(pay_url).toContain("/public/payments/")
    const order = shop.orders.get(order_id)!
    expect(order.status).toBe("awaiting_payment")
    await paydesk.payments.simulate(order.paymentId!, "paid")
    // The reference server delivers callbacks in its background pass (run on demand in tests).
    await srv.work()
    expect((await (await fetch(`${shopUrl}/orders/${order_id}`)).json()).status).toBe("paid")
    const deliveries = (await srv.admin("GET", `/deliveries?payment_id=${order.paymentId}`)).json.items as Array<{ status: string; last_status_code: number }>
    expect(deliveries.map((d) => [d.status, d.last_status_code])).toEqual([["delivered", 200], ["delivered", 200]])
  })

  it("refuses a forged callback (400) and answers a repeated one 200 without processing it twice", async () => {
    const { order_id } = await (await post("/checkout", JSON.stringify({ sku: "grinder" }))).json() as { order_id: string }
    const order = shop.orders.get(order_id)!
    const forged = JSON.stringify({ event_type: "payment.paid", payment_id: order.paymentId, order_id, status: "paid", amount: "3200.50", currency: "RUB", test: true })
    const wrongSecret = await post("/webhooks", forged, await webhooks.testHeaders(forged, "not-the-secret"))
    expect(wrongSecret.status).toBe(400)
    expect(await wrongSecret.json()).toEqual({ error: "signature_mismatch" })
    expect((await post("/webhooks", forged)).status).toBe(400)
    // Correctly signed but the payment is not paid: the shop re-reads it and grants nothing.
    const signed = await post("/webhooks", forged, await webhooks.testHeaders(forged, merchant.signingSecret))
    expect(signed.status).toBe(200)
    expect(order.status).toBe("awaiting_payment")
    await paydesk.payments.simulate(order.paymentId!, "paid")
    await srv.work()
    expect(order.status).toBe("paid")
    const repeat = await post("/webhooks", forged, await webhooks.testHeaders(forged, merchant.signingSecret))
    expect(repeat.status).toBe(200)
    expect(order.status).toBe("paid")
  })

  it("answers an unknown sku with 400 and creates no payment", async () => {
    const before = (await paydesk.payments.list({ limit: 100 })).total
    expect((await post("/checkout", JSON.stringify({ sku: "tea" }))).status).toBe(400)
    expect((await paydesk.payments.list({ limit: 100 })).total).toBe(before)
  })
})
