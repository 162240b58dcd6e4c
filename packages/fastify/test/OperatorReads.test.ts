/**
 * The operator API's reads and terminal settings: accounts (newest first, paged), an account with
 * its terminals, a terminal, its payments (live by default, sandbox or all), subscriptions and
 * payouts, each record by id (prefixed or bare), 404 for unknown ids, 400 for bad queries, and
 * `PUT /terminals/:id` for any terminal (disabled ones included).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Payments, Payouts, Subscriptions } from "@paydesk/core"
import { Kit } from "@paydesk/testkit"
import { adminCalls, json, make, shape, type TestApp } from "./TestApp.js"

let t: TestApp
beforeAll(async () => {
  t = await make()
})
afterAll(() => t.close())

const admin = (method: "GET" | "POST" | "PUT", url: string, body?: unknown) => adminCalls(t.app)(method, url, body)

describe("operator reads", () => {
  it("lists accounts newest first and shows an account with its terminals", async () => {
    const first = await t.merchant({ name: "First" })
    const second = await t.merchant({ name: "Second" })
    const listed = json(await admin("GET", "/accounts"))
    expect(listed).toMatchObject({ page: 1, per_page: 50 })
    expect(listed.total).toBeGreaterThanOrEqual(2)
    const ids = listed.items.map((a: { id: string }) => a.id)
    expect(ids.indexOf(second.accountId)).toBeLessThan(ids.indexOf(first.accountId))
    expect(listed.items.find((a: { id: string }) => a.id === first.accountId)).toEqual({ id: first.accountId, name: "First", created_at: expect.any(String) })

    const account = json(await admin("GET", `/accounts/${first.accountId.toUpperCase()}`))
    expect(account).toMatchObject({ id: first.accountId, name: "First" })
    expect(account.terminals.map((x: { id: string }) => x.id)).toEqual([first.terminal.id])
    shape("Terminal", account.terminals[0])
    expect(json(await admin("GET", `/accounts/${first.accountId}/terminals`)).items.map((x: { id: string }) => x.id)).toEqual([first.terminal.id])
    const terminal = await admin("GET", `/terminals/${first.terminal.id}`)
    expect(terminal.statusCode).toBe(200)
    shape("TerminalDetails", json(terminal))
    expect(json(terminal).name).toBe("First shop")

    for (const url of [`/accounts/${crypto.randomUUID()}`, "/accounts/nope", `/accounts/${crypto.randomUUID()}/terminals`, `/terminals/${crypto.randomUUID()}`]) {
      const missing = await admin("GET", url)
      expect([missing.statusCode, json(missing).error.code], url).toEqual([404, "not_found"])
    }
    for (const page of ["0", "x", "1.5"]) {
      const bad = await admin("GET", `/accounts?page=${page}`)
      expect([bad.statusCode, json(bad).error.field]).toEqual([400, "page"])
    }
    expect(json(await admin("GET", "/accounts?page=999")).items).toEqual([])
  })

  it("lists a terminal's payments by environment and reads one by either id", async () => {
    const merchant = await t.merchant()
    const principal = await t.run(Kit.apiKeyPrincipal(merchant, crypto.randomUUID()))
    const { payment: live } = await t.run(Payments.create(principal, { amount: "10", orderId: "live-1" }))
    const { payment: sandbox } = await t.run(Payments.create(principal, { amount: "20", orderId: "test-1", test: true }))
    const ids = async (query: string) => json(await admin("GET", `/terminals/${merchant.terminal.id}/payments${query}`)).items.map((p: { id: string }) => p.id)
    expect(await ids("")).toEqual([`pay_${live.id}`])
    expect(await ids("?environment=sandbox")).toEqual([`pay_${sandbox.id}`])
    expect(await ids("?environment=all")).toEqual([`pay_${sandbox.id}`, `pay_${live.id}`])
    shape("PaymentPage", json(await admin("GET", `/terminals/${merchant.terminal.id}/payments?environment=all`)))
    const bad = await admin("GET", `/terminals/${merchant.terminal.id}/payments?environment=test`)
    expect([bad.statusCode, json(bad).error.field]).toEqual([400, "environment"])
    expect((await admin("GET", `/terminals/${crypto.randomUUID()}/payments`)).statusCode).toBe(404)

    const byPrefixed = json(await admin("GET", `/payments/pay_${live.id}`))
    shape("Payment", byPrefixed)
    expect(byPrefixed.order_id).toBe("live-1")
    expect(json(await admin("GET", `/payments/${sandbox.id}`)).environment).toBe("sandbox")
    expect((await admin("GET", `/payments/pay_${crypto.randomUUID()}`)).statusCode).toBe(404)
  })

  it("lists a terminal's subscriptions and payouts and reads each by id", async () => {
    const merchant = await t.merchant()
    const plans = await t.plans(merchant.terminal.id)
    const principal = await t.run(Kit.apiKeyPrincipal(merchant, crypto.randomUUID()))
    const { subscription } = await t.run(Subscriptions.create(principal, {
      idempotencyKey: "sub-1", terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "100"
    }))
    const subscriptions = json(await admin("GET", `/terminals/${merchant.terminal.id}/subscriptions`))
    expect(subscriptions.items.map((s: { id: string }) => s.id)).toEqual([subscription.id])
    shape("SubscriptionPage", subscriptions)
    expect(json(await admin("GET", `/terminals/${merchant.terminal.id}/subscriptions?state=active`)).items).toEqual([])
    expect((await admin("GET", `/terminals/${merchant.terminal.id}/subscriptions?state=on`)).statusCode).toBe(400)
    const read = json(await admin("GET", `/subscriptions/${subscription.id}`))
    expect(read).toMatchObject({ id: subscription.id, provider_state: "new" })
    expect(read.pay_url).toBeUndefined()
    expect((await admin("GET", `/subscriptions/${crypto.randomUUID()}`)).statusCode).toBe(404)

    const { payment } = await t.run(Payments.create(principal, { amount: "9500.00", orderId: "big" }))
    await t.run(Payments.settle(payment.id, "paid"))
    const { payout } = await t.run(Payouts.create(principal, { amountUsdt: "10", walletAddress: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20", idempotencyKey: "po-1" }))
    const payouts = json(await admin("GET", `/terminals/${merchant.terminal.id}/payouts`))
    expect(payouts.items.map((p: { id: string }) => p.id)).toEqual([`po_${payout.id}`])
    shape("PayoutPage", payouts)
    const one = json(await admin("GET", `/payouts/po_${payout.id}`))
    shape("Payout", one)
    expect(one.amount_usdt).toBe("10.000000")
    expect(json(await admin("GET", `/payouts/${payout.id}`)).id).toBe(`po_${payout.id}`)
    expect((await admin("GET", `/payouts/po_${crypto.randomUUID()}`)).statusCode).toBe(404)
  })

  it("changes any terminal's settings, disabled ones too, and refuses bad settings", async () => {
    const merchant = await t.merchant()
    expect((await admin("POST", `/terminals/${merchant.terminal.id}/status`, { status: "disabled" })).statusCode).toBe(200)
    const updated = await admin("PUT", `/terminals/${merchant.terminal.id}`, { callback_url: "https://shop.example/hooks", show_platform_branding: false })
    expect(updated.statusCode).toBe(200)
    shape("Terminal", json(updated))
    expect(json(updated)).toMatchObject({ callback_url: "https://shop.example/hooks", show_platform_branding: false, status: "disabled" })
    expect(json(await admin("GET", `/terminals/${merchant.terminal.id}`)).callback_url).toBe("https://shop.example/hooks")
    const bad = await admin("PUT", `/terminals/${merchant.terminal.id}`, { conversion_time: "25:00" })
    expect([bad.statusCode, json(bad).error.field]).toEqual([400, "conversion_time"])
    const unknown = await admin("PUT", `/terminals/${merchant.terminal.id}`, { colour: "red" })
    expect(unknown.statusCode).toBe(400)
    expect(json(await admin("GET", `/terminals/${merchant.terminal.id}`)).conversion_time).toBe(null)
    expect((await admin("PUT", `/terminals/${crypto.randomUUID()}`, { show_platform_branding: true })).statusCode).toBe(404)
  })
})
