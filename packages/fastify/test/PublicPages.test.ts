import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Effect, Option } from "effect"
import { Operator, Payments, Subscriptions, Terminals, Work } from "@paydesk/core"
import { AcquirerEmulator, Fixtures, Kit } from "@paydesk/testkit"
import * as PublicPages from "../src/PublicPages.js"
import { json, make, publicUrl, type TestApp } from "./TestApp.js"

let t: TestApp
beforeEach(async () => {
  t = await make()
})
afterEach(async () => {
  await t.close()
})

const emulatorOf = Effect.gen(function*() {
  return yield* AcquirerEmulator.AcquirerEmulator
})

const principalOf = (merchant: Kit.Merchant) => t.run(Kit.apiKeyPrincipal(merchant, crypto.randomUUID()))

/** A monthly calendar plan with a 1000 RUB ceiling for the terminal, its code made unique by the terminal. */
const monthlyPlan = (terminalId: string, texts: { readonly code: string; readonly consentText: string; readonly policyVersion: string }) =>
  t.run(Operator.createPlan({
    terminalIds: [terminalId],
    code: `${texts.code}-${terminalId.slice(0, 8)}`,
    name: texts.code,
    interval: "month",
    schedule: "calendar",
    capAmountRub: "1000.00",
    consentText: texts.consentText,
    policyVersion: texts.policyVersion
  }))

/** A merchant and one of its payments (sandbox unless `live`). */
const paymentOf = async (options: { readonly live?: boolean; readonly name?: string; readonly description?: string; readonly redirects?: boolean } = {}) => {
  const merchant = await t.merchant(options.name === undefined ? {} : { name: options.name })
  const principal = await principalOf(merchant)
  if (options.redirects === true) {
    await t.run(Terminals.updateSettings(principal, merchant.terminal.id, {
      successRedirectUrl: "https://shop.example/thanks",
      failRedirectUrl: "https://shop.example/sorry"
    }))
  }
  const { payment } = await t.run(Payments.create(principal, {
    amount: "1500,50",
    orderId: `order-${crypto.randomUUID()}`,
    test: options.live !== true,
    ...(options.description === undefined ? {} : { description: options.description })
  }))
  return { merchant, principal, payment, token: payment.payToken }
}

const getPage = (path: string) => t.app.inject({ method: "GET", url: path })
const postJson = (path: string, body: unknown) => t.app.inject({ method: "POST", url: path, payload: body as object })
const postForm = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: "POST",
    url: path,
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    payload: new URLSearchParams(fields).toString()
  })

/** The value of the page's hidden csrf_token input. */
const csrfOf = (html: string): string => {
  const match = /<input type="hidden" name="csrf_token" value="([^"]*)">/.exec(html)
  if (match === null) throw new Error("no csrf_token input")
  return match[1]!
}

describe("PublicPages: payment page", () => {
  it("shows the platform footer unless the terminal turned show_platform_branding off, on both pages", async () => {
    const { merchant, principal, token } = await paymentOf()
    const footer = "<footer>Платёжная страница Paydesk</footer>"
    expect((await getPage(`/public/payments/${token}`)).body).toContain(footer)
    await t.run(Terminals.updateSettings(principal, merchant.terminal.id, { showPlatformBranding: false }))
    expect((await getPage(`/public/payments/${token}`)).body).not.toContain(footer)
    const plans = await t.plans(merchant.terminal.id)
    const { subscription } = await t.run(Subscriptions.create(await principalOf(merchant), {
      idempotencyKey: "branding", terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "10"
    }))
    expect((await getPage(`/public/subscriptions/${subscription.payToken}`)).body).not.toContain(footer)
    await t.run(Terminals.updateSettings(principal, merchant.terminal.id, { showPlatformBranding: true }))
    expect((await getPage(`/public/subscriptions/${subscription.payToken}`)).body).toContain(footer)
  })

  it("a sandbox page offers simulate processing while created; the status endpoint then shows processing", async () => {
    const { token } = await paymentOf()
    const page = (await getPage(`/public/payments/${token}`)).body
    expect(page).toContain("value=\"processing\"")
    const answer = await postJson(`/public/payments/${token}/simulate`, { outcome: "processing", csrf_token: csrfOf(page) })
    expect([answer.statusCode, json(answer).status]).toEqual([200, "processing"])
    const after = (await getPage(`/public/payments/${token}`)).body
    expect(after).not.toContain("value=\"processing\"")
    expect(after).toContain("value=\"paid\"")
  })

  it("renders shop, amount, status, QR image and sandbox buttons with csrf_token for a sandbox payment", async () => {
    const { merchant, token, payment } = await paymentOf()
    const response = await getPage(`/public/payments/${token}`)
    expect(response.statusCode).toBe(200)
    expect(response.headers["content-type"]).toMatch(/^text\/html; charset=utf-8/)
    expect(response.headers["cache-control"]).toBe("no-store")
    expect(response.headers["content-security-policy"]).toMatch(/script-src 'nonce-/)
    const html = response.body
    expect(html).toContain(merchant.terminal.name)
    expect(html).toContain("1500.50 RUB")
    expect(html).toContain("Ожидает оплаты")
    expect(html).toMatch(/<img src="data:image\/png;base64,[A-Za-z0-9+/=]+"/)
    expect(html).toContain(`<form method="post" action="/public/payments/${token}/simulate"`)
    expect(html).toContain(`<input type="hidden" name="outcome" value="paid">`)
    expect(html).toContain(`<input type="hidden" name="outcome" value="failed">`)
    // In the pages' Russian, as every other word of them.
    expect(html).toContain(">Имитировать оплату</button>")
    expect(html).toContain(">Имитировать отказ в оплате</button>")
    expect(html).toContain(">Имитировать начало оплаты (плательщик начал платить)</button>")
    expect(html).not.toMatch(/simulate (paid|failed|processing)/)
    expect(csrfOf(html)).toBe(payment.csrfToken)
    expect(html).toContain(`data-status-url="/public/payments/${token}/status"`)
    // The status polling script is the only script and carries the CSP nonce.
    expect(html.match(/<script/g)?.length).toBe(1)
    expect(html).toMatch(/setTimeout\(poll, 2000\)/)
  })

  it("shows a live payment's QR code without simulate buttons", async () => {
    const { token } = await paymentOf({ live: true })
    const html = (await getPage(`/public/payments/${token}`)).body
    expect(html).toMatch(/<img src="data:image\/png;base64,/)
    expect(html).not.toContain("/simulate")
    expect(html).not.toContain(PublicPages.simulateLabels.paid)
    expect(html).not.toContain(`name="csrf_token"`)
  })

  it("answers an unknown token with a 404 HTML page and a 404 status body", async () => {
    const page = await getPage("/public/payments/no-such-token")
    expect(page.statusCode).toBe(404)
    expect(page.headers["content-type"]).toMatch(/^text\/html/)
    expect(page.body).toContain("Страница не найдена")
    const status = await getPage("/public/payments/no-such-token/status")
    expect(status.statusCode).toBe(404)
    expect(json(status).error.code).toBe("not_found")
  })

  it("escapes every interpolated text", async () => {
    const { token } = await paymentOf({ name: "<script>alert(1)</script>", description: "\"><img src=x onerror=alert(2)>" })
    const html = (await getPage(`/public/payments/${token}`)).body
    expect(html).not.toContain("<script>alert(1)</script>")
    expect(html).not.toContain("<img src=x")
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt; shop")
    expect(html).toContain("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;")
    expect(html.match(/<script/g)?.length).toBe(1)
  })

  it("reports the status and no redirect while the payment is open", async () => {
    const { token } = await paymentOf({ redirects: true })
    const response = await getPage(`/public/payments/${token}/status`)
    expect(response.statusCode).toBe(200)
    expect(response.headers["cache-control"]).toBe("no-store")
    expect(json(response)).toEqual({ status: "created", redirect_url: null })
    expect((await getPage(`/public/payments/${token}`)).body).not.toContain("Вернуться")
  })
})

describe("PublicPages: sandbox simulation", () => {
  it("simulates paid through JSON and then redirects to the success page", async () => {
    const { token, payment } = await paymentOf({ redirects: true })
    const response = await postJson(`/public/payments/${token}/simulate`, { outcome: "paid", csrf_token: payment.csrfToken })
    expect(response.statusCode).toBe(200)
    expect(json(response)).toEqual({ status: "paid", redirect_url: "https://shop.example/thanks" })
    expect(json(await getPage(`/public/payments/${token}/status`))).toEqual({ status: "paid", redirect_url: "https://shop.example/thanks" })
    const html = (await getPage(`/public/payments/${token}`)).body
    expect(html).toContain("Оплачено")
    expect(html).toContain(`data-redirect-url="https://shop.example/thanks"`)
    // Without scripts the payer follows a link back to the shop.
    expect(html).toContain(`<a href="https://shop.example/thanks" rel="noreferrer">Вернуться в магазин</a>`)
    expect(html).not.toContain("data:image/png")
    expect(html).toMatch(/<div data-open-only hidden>/)
    const stored = await t.run(Payments.findPublic(token))
    expect(stored.payment.status).toBe("paid")
  })

  it("simulates failed through a plain form post, answered with 303 back to the page", async () => {
    const { token, payment } = await paymentOf({ redirects: true })
    const response = await postForm(`/public/payments/${token}/simulate`, { outcome: "failed", csrf_token: payment.csrfToken })
    expect(response.statusCode).toBe(303)
    expect(response.headers.location).toBe(`/public/payments/${token}`)
    expect(json(await getPage(`/public/payments/${token}/status`))).toEqual({ status: "canceled", redirect_url: "https://shop.example/sorry" })
    expect((await getPage(`/public/payments/${token}`)).body).toContain(`<a href="https://shop.example/sorry" rel="noreferrer">Вернуться на сайт магазина</a>`)
  })

  it("reports no redirect when the terminal has none", async () => {
    const { token, payment } = await paymentOf()
    const response = await postJson(`/public/payments/${token}/simulate`, { outcome: "paid", csrf_token: payment.csrfToken })
    expect(json(response)).toEqual({ status: "paid", redirect_url: null })
  })

  it("refuses a live payment with 400", async () => {
    const { token, payment } = await paymentOf({ live: true })
    const response = await postJson(`/public/payments/${token}/simulate`, { outcome: "paid", csrf_token: payment.csrfToken })
    expect(response.statusCode).toBe(400)
    expect(json(response).error).toMatchObject({ code: "operation_not_allowed", message: "simulation is available only for sandbox payments" })
  })

  it("refuses a wrong csrf_token with 403 (JSON, form, and a page for a browser form)", async () => {
    const { token } = await paymentOf()
    const viaJson = await postJson(`/public/payments/${token}/simulate`, { outcome: "paid", csrf_token: "wrong" })
    expect(viaJson.statusCode).toBe(403)
    expect(json(viaJson).error).toMatchObject({ code: "csrf_rejected", message: "invalid csrf_token" })
    const viaForm = await postForm(`/public/payments/${token}/simulate`, { outcome: "paid" })
    expect(viaForm.statusCode).toBe(403)
    expect(json(viaForm).error.code).toBe("csrf_rejected")
    const browser = await postForm(`/public/payments/${token}/simulate`, { outcome: "paid", csrf_token: "x" }, { accept: "text/html,*/*" })
    expect(browser.statusCode).toBe(403)
    expect(browser.headers["content-type"]).toMatch(/^text\/html/)
    expect(browser.body).toContain("Страница устарела. Обновите её и попробуйте ещё раз.")
    expect((await t.run(Payments.findPublic(token))).payment.status).toBe("created")
  })

  it("refuses a bad outcome (400), a non-object body (400) and a second simulation (409)", async () => {
    const { token, payment } = await paymentOf()
    const bad = await postJson(`/public/payments/${token}/simulate`, { outcome: "maybe", csrf_token: payment.csrfToken })
    expect(bad.statusCode).toBe(400)
    expect(json(bad).error.field).toBe("outcome")
    const array = await postJson(`/public/payments/${token}/simulate`, ["paid"])
    expect(array.statusCode).toBe(400)
    expect(json(array).error.code).toBe("invalid_json_body")
    expect((await postJson(`/public/payments/${token}/simulate`, { outcome: "failed", csrf_token: payment.csrfToken })).statusCode).toBe(200)
    const again = await postJson(`/public/payments/${token}/simulate`, { outcome: "paid", csrf_token: payment.csrfToken })
    expect(again.statusCode).toBe(409)
  })

  it("on a terminal disabled after the payment: the payer still pays (as live), the merchant's own simulate is refused", async () => {
    const { merchant, principal, token, payment } = await paymentOf()
    const other = await paymentOf()
    await t.run(Operator.setTerminalStatus(merchant.terminal.id, "disabled"))
    await t.run(Operator.setTerminalStatus(other.merchant.terminal.id, "disabled"))
    const byMerchant = await t.run(Effect.flip(Payments.simulateAsMerchant(other.principal, other.payment.id, "paid")))
    expect(byMerchant).toMatchObject({ _tag: "TerminalUnavailable" })
    expect((await t.run(Payments.findPublic(other.token))).payment.status).toBe("created")
    const byPayer = await postJson(`/public/payments/${token}/simulate`, { outcome: "paid", csrf_token: payment.csrfToken })
    expect([byPayer.statusCode, json(byPayer).status]).toEqual([200, "paid"])
    expect((await t.run(Payments.get(principal, payment.id))).status).toBe("paid")
  })

  it("answers 404 for an unknown token", async () => {
    const response = await postJson("/public/payments/nope/simulate", { outcome: "paid", csrf_token: "x" })
    expect(response.statusCode).toBe(404)
  })
})

describe("PublicPages: subscription consent page", () => {
  /** A fixed-tariff subscription waiting for consent. */
  const subscriptionOf = async (options: { readonly name?: string } = {}) => {
    const merchant = await t.merchant(options.name === undefined ? {} : { name: options.name })
    const plans = await t.plans(merchant.terminal.id)
    const principal = await principalOf(merchant)
    const { subscription } = await t.run(Subscriptions.create(principal, {
      idempotencyKey: crypto.randomUUID(),
      terminalId: merchant.terminal.id, planId: plans.fixedMonthly.id, payerId: "payer-1"
    }))
    return { merchant, plans, principal, subscription, token: subscription.payToken }
  }

  const confirmJson = (token: string, csrf: string) => postJson(`/public/subscriptions/${token}/confirm`, { csrf_token: csrf })

  it("consent_pending: amount, period, shop, consent text and a confirm form; nothing charged", async () => {
    const { merchant, token, subscription } = await subscriptionOf()
    const response = await getPage(`/public/subscriptions/${token}`)
    expect(response.statusCode).toBe(200)
    const html = response.body
    expect(html).toContain(merchant.terminal.name)
    expect(html).toContain("990.00 RUB")
    expect(html).toContain("раз в месяц")
    expect(html).toContain("Я согласен на регулярные списания по условиям подписки.")
    expect(html).toContain("До вашего подтверждения деньги не списываются.")
    expect(html).toContain(`<form method="post" action="/public/subscriptions/${token}/confirm">`)
    expect(csrfOf(html)).toBe(subscription.csrfToken)
    expect(html).toContain("Подтвердить")

    // No charge and no first payment before consent, whatever the background work does.
    await t.run(Work.runDue())
    const emulator = await t.run(emulatorOf)
    expect(emulator.charges).toHaveLength(0)
    const current = await t.run(Subscriptions.findPublic(token))
    expect(current.subscription.billingStatus).toBe("consent_pending")
    expect(Option.isNone(current.firstPayment)).toBe(true)
  })

  it("confirm (JSON) creates the first payment and stays consent_pending until it is paid; the page links to it", async () => {
    const { token, subscription } = await subscriptionOf()
    const response = await confirmJson(token, subscription.csrfToken)
    expect(response.statusCode).toBe(200)
    const body = json(response)
    // Pending only once the payer pays (spec: "confirms terms on the form and pays the first payment").
    expect(body.billing_status).toBe("consent_pending")
    const found = await t.run(Subscriptions.findPublic(token))
    const first = Option.getOrThrow(found.firstPayment)
    expect(body.first_payment_url).toBe(`${publicUrl}/public/payments/${first.payToken}`)
    expect(first.status).toBe("created")
    expect(first.paymentMethod).toBe("sbp_recurrent")
    expect(first.amount).toBe(99_000n)

    const html = (await getPage(`/public/subscriptions/${token}`)).body
    expect(html).toContain("Условия подтверждены. Оплатите первый платёж")
    expect(html).not.toContain("Первый платёж принят")
    expect(html).toContain(`href="/public/payments/${first.payToken}"`)
    expect(html).not.toContain("/confirm")

    // The payer pays: the bank reports processing, the page says the first payment is accepted, with no pay link.
    await t.run(Payments.settle(first.id, "processing"))
    const pending = (await getPage(`/public/subscriptions/${token}`)).body
    expect(pending).toContain("data-billing-status=\"pending\"")
    expect(pending).toContain("Первый платёж принят, подключение регулярных платежей проверяется.")
    expect(pending).not.toContain("Оплатить первый платёж")

    // Confirming again is a no-op.
    const again = json(await confirmJson(token, subscription.csrfToken))
    expect(again).toEqual({ ...body, billing_status: "pending" })
    // The first payment's page shows its QR code.
    expect((await getPage(`/public/payments/${first.payToken}`)).body).toContain("990.00 RUB")
  })

  it("confirm (form) answers 303 to the first payment's page", async () => {
    const { token, subscription } = await subscriptionOf()
    const response = await postForm(`/public/subscriptions/${token}/confirm`, { csrf_token: subscription.csrfToken })
    expect(response.statusCode).toBe(303)
    const first = Option.getOrThrow((await t.run(Subscriptions.findPublic(token))).firstPayment)
    expect(response.headers.location).toBe(`/public/payments/${first.payToken}`)
  })

  it("confirm with a wrong csrf_token is 403 and changes nothing", async () => {
    const { token } = await subscriptionOf()
    const response = await confirmJson(token, "wrong")
    expect(response.statusCode).toBe(403)
    expect(json(response).error.code).toBe("csrf_rejected")
    expect((await t.run(Subscriptions.findPublic(token))).subscription.billingStatus).toBe("consent_pending")
    expect((await postJson("/public/subscriptions/nope/confirm", { csrf_token: "x" })).statusCode).toBe(404)
  })

  it("enabled: recurring charges connected", async () => {
    const { token, subscription } = await subscriptionOf()
    await confirmJson(token, subscription.csrfToken)
    const first = Option.getOrThrow((await t.run(Subscriptions.findPublic(token))).firstPayment)
    await t.run(Payments.settle(first.id, "paid"))
    const html = (await getPage(`/public/subscriptions/${token}`)).body
    expect(html).toContain(`data-billing-status="enabled"`)
    expect(html).toContain("Регулярные платежи подключены.")
    expect(html).not.toContain(`name="csrf_token"`)
  })

  it("review: awaits checking, no repeated confirmation needed", async () => {
    const { token, subscription } = await subscriptionOf()
    await confirmJson(token, subscription.csrfToken)
    const first = Option.getOrThrow((await t.run(Subscriptions.findPublic(token))).firstPayment)
    await t.run(Payments.settle(first.id, "failed"))
    const html = (await getPage(`/public/subscriptions/${token}`)).body
    expect(html).toContain(`data-billing-status="review"`)
    expect(html).toContain("Платёж ожидает проверки. Повторно подтверждать подписку не нужно.")
    expect(html).not.toContain("/confirm")
  })

  it("stopped and stop_pending: the recurring payment is no longer available", async () => {
    const stopped = await subscriptionOf()
    await t.run(Subscriptions.stopById(stopped.subscription.id))
    const html = (await getPage(`/public/subscriptions/${stopped.token}`)).body
    expect(html).toContain(`data-billing-status="stopped"`)
    expect(html).toContain("Регулярный платёж больше недоступен.")
    expect(html).not.toContain("/confirm")
    // A confirmation after the stop does not start a payment.
    const late = json(await confirmJson(stopped.token, stopped.subscription.csrfToken))
    expect(late).toEqual({ billing_status: "stopped", first_payment_url: null })

    // The acquirer cannot be reached: the stop stays pending.
    const pending = await subscriptionOf()
    await confirmJson(pending.token, pending.subscription.csrfToken)
    await t.run(Effect.flatMap(emulatorOf, (e) => e.setUnavailable(true)))
    await t.run(Effect.ignore(Subscriptions.stopById(pending.subscription.id)))
    const pendingHtml = (await getPage(`/public/subscriptions/${pending.token}`)).body
    expect(pendingHtml).toContain(`data-billing-status="stop_pending"`)
    expect(pendingHtml).toContain("Регулярный платёж больше недоступен.")
  })

  it("sandbox: the banner in every state, and the first payment's simulate buttons (its csrf_token) that pay it and activate the subscription", async () => {
    const merchant = await t.merchant()
    const plans = await t.plans(merchant.terminal.id)
    const principal = await principalOf(merchant)
    const { subscription } = await t.run(Subscriptions.create(principal, {
      idempotencyKey: crypto.randomUUID(),
      terminalId: merchant.terminal.id, planId: plans.fixedMonthly.id, payerId: "payer-1", test: true
    }))
    const token = subscription.payToken
    const banner = "Тестовая подписка (песочница)."

    // Before consent: the banner, the confirm form, no simulate button (nothing to pay yet).
    const before = (await getPage(`/public/subscriptions/${token}`)).body
    expect(before).toContain("data-sandbox")
    expect(before).toContain(banner)
    expect(before).not.toContain("data-simulate")
    // A live subscription's page has neither.
    const live = await subscriptionOf()
    const liveHtml = (await getPage(`/public/subscriptions/${live.token}`)).body
    expect(liveHtml).not.toContain("data-sandbox")
    await confirmJson(live.token, live.subscription.csrfToken)
    expect((await getPage(`/public/subscriptions/${live.token}`)).body).not.toContain("data-simulate")

    // After consent: the first payment's buttons, posting to its page's simulate route with its csrf_token.
    expect(json(await confirmJson(token, subscription.csrfToken)).billing_status).toBe("consent_pending")
    const first = Option.getOrThrow((await t.run(Subscriptions.findPublic(token))).firstPayment)
    expect(first.environment).toBe("sandbox")
    expect(first.paymentMethod).toBe("sbp_test")
    const html = (await getPage(`/public/subscriptions/${token}`)).body
    expect(html).toContain(banner)
    const action = `/public/payments/${first.payToken}/simulate`
    expect(html.match(new RegExp(`<form method="post" action="${action}" data-simulate>`, "g"))).toHaveLength(3)
    expect(html).toContain(`<input type="hidden" name="outcome" value="paid">`)
    expect(html).toContain(`<input type="hidden" name="outcome" value="failed">`)
    expect(html).toContain(`<input type="hidden" name="outcome" value="processing">`)
    expect(csrfOf(html)).toBe(first.csrfToken)
    expect(first.csrfToken).not.toBe(subscription.csrfToken)

    // The subscription's own csrf_token does not pass the payment's check; nothing moves.
    const wrong = await postForm(action, { outcome: "paid", csrf_token: subscription.csrfToken }, { accept: "text/html" })
    expect(wrong.statusCode).toBe(403)
    expect((await t.run(Subscriptions.findPublic(token))).subscription.billingStatus).toBe("consent_pending")

    // The page's form, as a browser posts it: 303 to the first payment's page; the subscription is enabled.
    const paid = await postForm(action, { outcome: "paid", csrf_token: csrfOf(html) }, { accept: "text/html" })
    expect(paid.statusCode).toBe(303)
    expect(paid.headers.location).toBe(`/public/payments/${first.payToken}`)
    const after = await t.run(Subscriptions.findPublic(token))
    expect(Option.getOrThrow(after.firstPayment).status).toBe("paid")
    expect(after.subscription.billingStatus).toBe("enabled")
    const enabled = (await getPage(`/public/subscriptions/${token}`)).body
    expect(enabled).toContain("Регулярные платежи подключены.")
    expect(enabled).toContain(banner)
    expect(enabled).not.toContain("data-simulate")
  })

  it("escapes the shop name and the consent text; unknown token is a 404 page", async () => {
    const merchant = await t.merchant({ name: "<script>alert(1)</script>" })
    const plan = await monthlyPlan(merchant.terminal.id, { code: "evil", consentText: "<img src=x onerror=alert(2)>", policyVersion: "\"v1\"" })
    const principal = await principalOf(merchant)
    const { subscription } = await t.run(Subscriptions.create(principal, {
      idempotencyKey: "k-1",
      terminalId: merchant.terminal.id, planId: plan.id, amount: "500"
    }))
    const html = (await getPage(`/public/subscriptions/${subscription.payToken}`)).body
    expect(html).not.toContain("<script>alert(1)")
    expect(html).not.toContain("<img src=x")
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
    expect(html).toContain("&lt;img src=x onerror=alert(2)&gt;")
    expect(html).toContain("&quot;v1&quot;")
    expect(html).toContain("500.00 RUB")
    expect(html.match(/<script/g)).toBeNull()

    const missing = await getPage("/public/subscriptions/nope")
    expect(missing.statusCode).toBe(404)
    expect(missing.headers["content-type"]).toMatch(/^text\/html/)
  })
})

describe("PublicPages: payer-facing wording, layout and accessibility", () => {
  /** The inline `<style>` of a page. */
  const styleOf = (html: string): string => /<style nonce="[^"]*">([\s\S]*?)<\/style>/.exec(html)?.[1] ?? ""
  /** The opening tag of the element with `id`. */
  const tagOf = (html: string, id: string): string => new RegExp(`<[a-z]+ [^>]*id="${id}"[^>]*>`).exec(html)?.[0] ?? ""
  const english = /does not accept|invalid csrf_token|in state|not found|simulation is available/i

  it("breaks long unbroken merchant and payer texts (description, shop name, consent text) on both pages", async () => {
    const { token } = await paymentOf({ description: `https://shop.example/${"a".repeat(120)}` })
    const payment = styleOf((await getPage(`/public/payments/${token}`)).body)
    // The rule sits on <main>, so every text of the page (description, shop, consent, plan, policy) inherits it.
    expect(payment).toMatch(/(^|\n)main\{[^}]*overflow-wrap:anywhere/)
    const merchant = await t.merchant()
    const plans = await t.plans(merchant.terminal.id)
    const { subscription } = await t.run(Subscriptions.create(await principalOf(merchant), {
      idempotencyKey: "wrap", terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "10"
    }))
    expect(styleOf((await getPage(`/public/subscriptions/${subscription.payToken}`)).body)).toMatch(/(^|\n)main\{[^}]*overflow-wrap:anywhere/)
  })

  it("announces status changes: #status is a polite live region", async () => {
    const { token } = await paymentOf()
    const status = tagOf((await getPage(`/public/payments/${token}`)).body, "status")
    expect(status).toContain("aria-live=\"polite\"")
  })

  it("maps every refusal to Russian payer wording, never the internal message", () => {
    const codes = ["invalid_transition", "csrf_rejected", "operation_not_allowed", "not_found", "write_conflict", "service_busy", "internal_error", "something_new"]
    for (const code of codes) {
      const text = PublicPages.payerErrorText(code)
      expect(text, code).toMatch(/[а-яё]/i)
      expect(text, code).not.toMatch(english)
    }
    expect(PublicPages.payerErrorText("invalid_transition")).toMatch(/завершён|отменён/)
  })

  it("the page's script shows mapped Russian messages, not the server's error.message", async () => {
    const { token } = await paymentOf()
    const html = (await getPage(`/public/payments/${token}`)).body
    expect(html).not.toContain("error.message")
    const messages = /data-messages="([^"]*)"/.exec(html)?.[1]
    expect(messages).toBeDefined()
    const decoded = JSON.parse(messages!.replaceAll("&quot;", "\"").replaceAll("&#39;", "'").replaceAll("&amp;", "&"))
    expect(decoded.invalid_transition).toBe(PublicPages.payerErrorText("invalid_transition"))
    expect(decoded.fallback).toMatch(/[а-яё]/i)
  })

  it("a plain browser form refused (payment already final, wrong csrf_token) gets a Russian page with a way back", async () => {
    const { token, payment } = await paymentOf()
    expect((await postJson(`/public/payments/${token}/simulate`, { outcome: "failed", csrf_token: payment.csrfToken })).statusCode).toBe(200)
    const late = await postForm(`/public/payments/${token}/simulate`, { outcome: "paid", csrf_token: payment.csrfToken }, { accept: "text/html" })
    expect(late.statusCode).toBe(409)
    expect(late.headers["content-type"]).toMatch(/^text\/html/)
    expect(late.body).not.toMatch(english)
    expect(late.body).toContain(escapeHtml(PublicPages.payerErrorText("invalid_transition")))
    expect(late.body).toContain(`href="/public/payments/${token}"`)
    const csrf = await postForm(`/public/payments/${token}/simulate`, { outcome: "paid", csrf_token: "x" }, { accept: "text/html" })
    expect(csrf.statusCode).toBe(403)
    expect(csrf.body).not.toMatch(english)
    expect(csrf.body).toContain(escapeHtml(PublicPages.payerErrorText("csrf_rejected")))
  })

  it("a live payment offers its payment link as an \"open in bank app\" link next to the QR code", async () => {
    const { token, payment } = await paymentOf({ live: true })
    expect(payment.qrPayload).toMatch(/^https:\/\//)
    const html = (await getPage(`/public/payments/${token}`)).body
    expect(html).toMatch(new RegExp(`<a class="bank-link" href="${payment.qrPayload!.replaceAll(".", "\\.")}"[^>]*>Открыть в приложении банка</a>`))
    // Only while the payment can be paid: the link sits in the block the script hides.
    expect(html).toMatch(/<div class="qr" data-open-only>[\s\S]*class="bank-link"[\s\S]*?<\/div>/)
    // A sandbox payment's QR payload is no link: no button.
    const sandbox = (await getPage(`/public/payments/${(await paymentOf()).token}`)).body
    expect(sandbox).not.toContain("class=\"bank-link\"")
  })

  it("links only an https payment link; anything else (javascript:, custom text) is shown as QR code only", () => {
    const terminal = Fixtures.terminal(crypto.randomUUID())
    const render = (qrPayload: string) =>
      PublicPages.paymentPage({
        payment: Fixtures.payment(terminal.id, { qrPayload }),
        terminal,
        qrDataUrl: "data:image/png;base64,AAAA",
        pagePath: "/public/payments/x",
        nonce: "n"
      })
    expect(render("https://qr.nspk.ru/AD100001?type=02&sum=100")).toContain(`href="https://qr.nspk.ru/AD100001?type=02&amp;sum=100"`)
    for (const payload of ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,x", "sandbox-qr:1", "http://qr.example/x", "not a url"]) {
      expect(render(payload), payload).not.toContain("class=\"bank-link\"")
    }
  })
})

describe("PublicPages: merchant texts isolated from the page's own (bidi)", () => {
  const rlo = "\u202e"
  const pdi = "\u2069"
  const controls = /[\u202a-\u202e\u2066-\u2069]/
  /** Every `<bdi>`'s content, and the page with them cut out (the page's own text). */
  const split = (html: string) => ({
    isolated: [...html.matchAll(/<bdi>([^<]*)<\/bdi>/g)].map((m) => m[1]!),
    outside: html.replaceAll(/<bdi>[^<]*<\/bdi>/g, "")
  })
  const titleOf = (html: string) => /<title>([^<]*)<\/title>/.exec(html)?.[1] ?? ""

  it("the payment page isolates the shop name and the description in <bdi>, keeps bidi controls out of <title>, and stores them as given", async () => {
    const name = `Shop ${rlo}BUR 00.1`
    const description = `${pdi}${rlo}Order 42 ${pdi}`
    const { token } = await paymentOf({ name, description })
    const html = (await getPage(`/public/payments/${token}`)).body
    const { isolated, outside } = split(html)
    expect(isolated).toContain(`${PublicPages.escape(name)} shop`)
    // The stray PDIs are dropped: one would close the <bdi>'s own isolate and free the override.
    expect(isolated).toContain(`${rlo}Order 42 `)
    expect(html).toContain(`<p class="merchant"><bdi>${PublicPages.escape(name)} shop</bdi></p>`)
    // Nothing of the merchant's reaches the page's own text: the amount and status are outside any <bdi>.
    expect(outside).not.toMatch(controls)
    expect(outside).toContain("<p class=\"amount\">1500.50 RUB</p>")
    expect(titleOf(html)).toBe("Оплата: Shop BUR 00.1 shop")
    // The API stores and answers the texts as given.
    const stored = await t.run(Payments.findPublic(token))
    expect([stored.terminal.name, stored.payment.description]).toEqual([`${name} shop`, description])
  })

  it("the consent page isolates the shop name, the consent text and the policy version; its <title> has no bidi controls", async () => {
    const merchant = await t.merchant({ name: `${rlo}Gym` })
    const plan = await monthlyPlan(merchant.terminal.id, { code: "bidi", consentText: `Charged monthly ${rlo}\nsecond line \u2067open`, policyVersion: `v1${pdi}${rlo}` })
    const { subscription } = await t.run(Subscriptions.create(await principalOf(merchant), {
      idempotencyKey: "bidi", terminalId: merchant.terminal.id, planId: plan.id, amount: "500"
    }))
    const html = (await getPage(`/public/subscriptions/${subscription.payToken}`)).body
    const { isolated, outside } = split(html)
    expect(html).toContain(`<dd class="merchant"><bdi>${rlo}Gym shop</bdi></dd>`)
    // An isolate the text opens is closed where its line ends and at its end.
    expect(html).toContain(`<div class="consent"><bdi>Charged monthly ${rlo}\nsecond line \u2067open${pdi}</bdi></div>`)
    expect(html).toContain(`<p class="policy">Версия условий: <bdi>v1${rlo}</bdi></p>`)
    expect(isolated).toHaveLength(3)
    expect(outside).not.toMatch(controls)
    expect(titleOf(html)).toBe("Подписка: Gym shop")
  })

  it("balances a text's isolates: a PDI that closes none of its own is dropped, one it leaves open is closed (also before a line end)", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["plain", "plain"],
      [`${rlo}reversed`, `${rlo}reversed`],
      [`a${pdi}b`, "ab"],
      [`\u2067a${pdi}b${pdi}`, `\u2067a${pdi}b`],
      ["\u2066a\u2068b", `\u2066a\u2068b${pdi}${pdi}`],
      [`\u2067a\n${pdi}b`, `\u2067a${pdi}\nb`],
      ["\u2068a\u2029b", `\u2068a${pdi}\u2029b`]
    ]
    for (const [text, balanced] of cases) expect(PublicPages.balanceIsolates(text), JSON.stringify(text)).toBe(balanced)
    expect(PublicPages.isolate(`<b>${pdi}`)).toBe("<bdi>&lt;b&gt;</bdi>")
    expect(PublicPages.withoutBidiControls(`\u202aa\u202bb\u202cc\u202dd\u202ee\u2066f\u2067g\u2068h${pdi}`)).toBe("abcdefgh")
  })
})

const escapeHtml = (text: string) => PublicPages.escape(text)
