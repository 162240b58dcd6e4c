/**
 * The merchant dashboard in headless Chromium against the real server (PostgreSQL, manual clock
 * set to the real time): the owner signs in, sees the sandbox payments created through the API,
 * filters them, opens a paid one with its events and delivery attempts, resends an event, reloads
 * (the session survives in the tab), switches to Russian, rotates the signing secret after a
 * confirmation, and signs out (a reload stays signed out); stops a sandbox subscription and
 * requests a payout (each after a confirmation) and sees the operator's approval; saves a terminal
 * setting, sends a test event, creates an API key and revokes it; reads the home page (balance,
 * today, statuses, 30-day chart) and exports the payments as CSV. Again at 390 px wide, with no
 * horizontal scrolling. No page logs a console error. Screenshots at 1280 and 390 px go to
 * `test-results/dashboard/` (gitignored). Also the serving itself: headers, deep links, 404s.
 * Needs Debian's chromium (`./run test` installs it) and the built dashboard (built here when missing).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Paydesk } from "@paydesk/client"
import { chromium, type Browser, type Page } from "playwright-core"
import { execFileSync } from "node:child_process"
import { createRequire } from "node:module"
import { existsSync, mkdirSync } from "node:fs"
import { join, resolve } from "node:path"
import * as Dashboard from "../src/Dashboard.js"
import { type Receiver, startReceiver, startServer } from "./ServerHarness.js"
import { confirmOnPage } from "./ServerProcess.js"

const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const root = resolve(import.meta.dirname, "../../..")
const shots = join(root, "test-results", "dashboard")

type Srv = Awaited<ReturnType<typeof startServer>>
type Merchant = Awaited<ReturnType<Srv["merchant"]>>

let srv: Srv
let receiver: Receiver
let browser: Browser
let merchant: Merchant
const orders = { paid: "", waiting: "", other: "" }
/** Console errors and page errors, per page URL. */
const problems: Array<string> = []

const watch = (page: Page): Page => {
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`${page.url()}: ${message.text()}`)
  })
  page.on("pageerror", (error) => problems.push(`${page.url()}: ${error.message}`))
  return page
}

const signIn = async (page: Page) => {
  await page.goto(`${srv.base}/dashboard/payments`)
  await page.getByLabel("E-mail").fill(merchant.email)
  await page.getByLabel("Password").fill(merchant.password)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.getByRole("heading", { name: "Payments" }).waitFor()
}

beforeAll(async () => {
  if (!existsSync(executablePath)) throw new Error(`Chromium not found at ${executablePath}: install Debian's chromium (./run test does)`)
  const dist = Dashboard.assetsDir()
  if (dist === null || !existsSync(join(dist, "index.html"))) {
    execFileSync(join(root, "packages", "dashboard", "node_modules", ".bin", "vite"), ["build"], { cwd: join(root, "packages", "dashboard"), stdio: "ignore" })
  }
  mkdirSync(shots, { recursive: true })
  srv = await startServer()
  // Access tokens expire by the server's clock; the browser renews them by the real one.
  await srv.setClock(new Date().toISOString())
  receiver = await startReceiver(() => Date.now())
  merchant = await srv.merchant(receiver.url)
  const api = new Paydesk({ apiKey: merchant.apiKey, baseUrl: srv.base, sandbox: true })
  const tag = merchant.terminalId.slice(0, 6)
  orders.paid = `paid-${tag}`
  orders.waiting = `wait-${tag}`
  orders.other = `more-${tag}`
  const paid = await api.payments.create({ amount: "1500.00", order_id: orders.paid, description: "Coffee beans" })
  await api.payments.create({ amount: "250.50", order_id: orders.waiting })
  await api.payments.create({ amount: "99.00", order_id: orders.other })
  // The first delivery of payment.paid fails (500); the resend then succeeds.
  receiver.answersFor = "payment.paid"
  receiver.answers.push(500)
  await api.payments.simulate(paid.id, "paid")
  await srv.work()
  // A sandbox subscription waiting for consent (stopped from the dashboard), and a live balance of 100 USDT.
  const plan = await srv.admin("POST", "/plans", {
    terminal_ids: [merchant.terminalId], code: `dash-${tag}`, name: "Monthly", interval: "month",
    schedule: "calendar", cap_amount_rub: "4000", consent_text: "Согласен", policy_version: "1"
  })
  await new Paydesk({ apiKey: merchant.apiKey, baseUrl: srv.base, sandbox: true, terminalId: merchant.terminalId })
    .subscriptions.create({ plan_id: plan.json.id, amount: "1500", merchant_subscription_ref: `member-${tag}` })
  const live = new Paydesk({ apiKey: merchant.apiKey, baseUrl: srv.base })
  const funding = await live.payments.create({ amount: "9500", order_id: `fund-${tag}` })
  await srv.admin("POST", `/acquirer/payments/${funding.id}/outcome`, { outcome: "paid" })
  browser = await chromium.launch({
    executablePath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
  })
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await receiver?.close()
  await srv?.stop()
})

describe("dashboard", () => {
  it("is served at /dashboard with its own-origin CSP, deep links answering the app, and missing assets 404", async () => {
    const redirect = await fetch(`${srv.base}/dashboard`, { redirect: "manual" })
    expect([redirect.status, redirect.headers.get("location")]).toEqual([302, "/dashboard/"])
    for (const path of ["/dashboard/", "/dashboard/payments/pay_00000000-0000-0000-0000-000000000000", "/dashboard/settings"]) {
      const page = await fetch(`${srv.base}${path}`)
      expect(page.status, path).toBe(200)
      expect(page.headers.get("content-type"), path).toMatch(/^text\/html/)
      expect(page.headers.get("content-security-policy"), path).toBe(Dashboard.contentSecurityPolicy)
      expect(page.headers.get("cache-control"), path).toBe("no-cache")
      expect(await page.text(), path).toContain('<div id="app"></div>')
    }
    const html = await (await fetch(`${srv.base}/dashboard/`)).text()
    const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)?.[1]
    expect(script).toBeDefined()
    const asset = await fetch(`${srv.base}${script}`)
    expect(asset.status).toBe(200)
    expect(asset.headers.get("content-type")).toMatch(/javascript/)
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect((await fetch(`${srv.base}/dashboard/assets/missing.js`)).status).toBe(404)
  })

  it("signs in, lists and filters sandbox payments (status, dates, order_id), shows a payment's timeline and deliveries, resends, keeps the session on reload, rotates the secret, signs out (1280 px)", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-GB" })
    const page = watch(await context.newPage())
    await signIn(page)
    const table = page.locator("table.payments")
    for (const order of Object.values(orders)) await table.getByRole("link", { name: order }).waitFor()
    await expect(page.getByRole("radio", { name: "Sandbox" }).isChecked()).resolves.toBe(true)
    await page.screenshot({ path: join(shots, "payments-1280.png"), fullPage: true })

    // Status filter (paid), then the order_id search.
    await page.getByLabel("Status").selectOption("paid")
    await page.getByRole("button", { name: "Search" }).click()
    await page.waitForURL(/status=paid/)
    await table.getByRole("link", { name: orders.paid }).waitFor()
    await expect.poll(() => table.locator("tbody tr").count(), { timeout: 15_000 }).toBe(1)
    await page.getByRole("link", { name: "Clear" }).click()
    await page.waitForURL((url) => url.pathname === "/dashboard/payments" && url.search === "")
    // Date range (the browser's local days): today holds the three, tomorrow none.
    const day = (offset: number) => page.evaluate((o) => {
      const d = new Date()
      d.setDate(d.getDate() + o)
      return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`
    }, offset)
    const today = await day(0)
    await page.getByLabel("From").fill(today)
    await page.getByLabel("To").fill(today)
    await page.getByRole("button", { name: "Search" }).click()
    await page.waitForURL((url) => url.search === `?from=${today}&to=${today}`).catch((e) => { throw new Error(`the filters gave ${page.url()}`, { cause: e }) })
    await expect.poll(() => table.locator("tbody tr").count(), { timeout: 15_000 }).toBe(3)
    await page.getByLabel("From").fill(await day(1))
    await page.getByLabel("To").fill(await day(1))
    await page.getByRole("button", { name: "Search" }).click()
    await page.getByText("No payments match.").waitFor()
    await page.getByRole("link", { name: "Clear" }).click()
    await page.waitForURL((url) => url.pathname === "/dashboard/payments" && url.search === "")
    await page.getByLabel("Order ID").fill(orders.waiting)
    await page.getByRole("button", { name: "Search" }).click()
    await page.waitForURL(/order=/)
    await table.getByRole("link", { name: orders.waiting }).waitFor()
    await expect.poll(() => table.locator("tbody tr").count(), { timeout: 15_000 }).toBe(1)
    // An order_id no payment has: an empty list (no failed request in the console).
    await page.getByLabel("Order ID").fill(`none-${orders.waiting}`)
    await page.getByRole("button", { name: "Search" }).click()
    await page.getByText("No payments match.").waitFor()
    await page.getByRole("link", { name: "Clear" }).click()
    await page.waitForURL((url) => url.pathname === "/dashboard/payments" && url.search === "")
    // Clear also empties edits not searched yet (the address stays as it is).
    await page.getByLabel("Order ID").fill("typed, not searched")
    await page.getByLabel("Status").selectOption("paid")
    await page.getByRole("link", { name: "Clear" }).click()
    await expect.poll(() => page.getByLabel("Order ID").inputValue()).toBe("")
    expect(await page.getByLabel("Status").inputValue()).toBe("")

    // The paid payment: its events, the failed first attempt, a resend that succeeds.
    await table.getByRole("link", { name: orders.paid }).click()
    await page.getByRole("heading", { name: `Payment ${orders.paid}` }).waitFor()
    expect(await page.locator("ol.timeline li strong").allTextContents()).toEqual(["Created", "Paid"])
    const paidEvent = page.locator("article.event", { hasText: "payment.paid" })
    await paidEvent.locator("table.attempts").first().waitFor()
    expect(await paidEvent.locator("table.attempts tbody tr").first().textContent()).toContain("500")
    await paidEvent.getByRole("button", { name: "Resend" }).click()
    await paidEvent.getByText("Sent again: HTTP 200").waitFor()
    await paidEvent.locator("section.delivery", { hasText: "resend" }).getByText("Delivered").waitFor()
    expect(receiver.requests.filter((r) => r.body.includes('"event_type":"payment.paid"'))).toHaveLength(2)
    await page.screenshot({ path: join(shots, "payment-1280.png"), fullPage: true })

    // A reload of the deep link keeps the session (refresh token in this tab's sessionStorage).
    await page.reload()
    await page.getByRole("heading", { name: `Payment ${orders.paid}` }).waitFor()
    expect(await page.evaluate(() => Object.keys(localStorage).filter((k) => localStorage.getItem(k)?.includes(".") && k.includes("refresh")))).toEqual([])

    // Russian, then back.
    await page.getByLabel("Language").first().selectOption("ru")
    await page.getByRole("heading", { name: "События и доставки" }).waitFor()
    await page.getByRole("link", { name: "Настройки терминала" }).click()
    await page.getByRole("heading", { name: "Настройки терминала" }).waitFor()
    await page.getByLabel("Язык").first().selectOption("en")

    // Signing-secret rotation after a confirmation; the new secret is shown once.
    await page.getByRole("button", { name: "Rotate signing secret" }).click()
    await page.getByRole("button", { name: "Confirm" }).click()
    const secret = await page.locator("code.reveal").textContent()
    expect(secret?.length ?? 0).toBeGreaterThan(16)
    expect(secret).not.toBe(merchant.signingSecret)
    await page.screenshot({ path: join(shots, "settings-1280.png"), fullPage: true })

    // Sign out: back to the form, and a reload stays signed out.
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    await page.reload()
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    await page.screenshot({ path: join(shots, "signin-1280.png"), fullPage: true })
    await context.close()
    expect(problems).toEqual([])
  }, 90_000)

  it("an account with two terminals: no terminal ID asked at sign-in, a switch in the header, the choice kept across a reload (390 px)", async () => {
    const owner = await srv.merchant(receiver.url)
    // The manual clock moves on a second, so "Kiosk" is the younger terminal (the list is oldest first).
    await srv.setClock(new Date(srv.now() + 1000).toISOString())
    const second = await srv.admin("POST", "/terminals", { account_id: owner.accountId, name: "Kiosk", callback_url: receiver.url })
    const order = `kiosk-${owner.terminalId.slice(0, 6)}`
    await new Paydesk({ apiKey: second.json.api_key, baseUrl: srv.base, sandbox: true }).payments.create({ amount: "42.00", order_id: order })
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: "en-GB" })
    const page = watch(await context.newPage())
    await page.goto(`${srv.base}/dashboard/payments`)
    await page.getByLabel("E-mail").fill(owner.email)
    await page.getByLabel("Password").fill(owner.password)
    await expect(page.getByLabel("Terminal ID").count()).resolves.toBe(0)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Payments" }).waitFor()
    // The first terminal (oldest) holds no payment; the second the one created above.
    await page.getByText("No payments match.").waitFor()
    const terminal = page.getByLabel("Terminal")
    expect(await terminal.locator("option").allTextContents()).toEqual(["Shop", "Kiosk"])
    await terminal.selectOption({ label: "Kiosk" })
    await page.locator("table.payments").getByRole("link", { name: order }).waitFor()
    await page.screenshot({ path: join(shots, "terminals-390.png"), fullPage: true })
    await page.reload()
    await page.locator("table.payments").getByRole("link", { name: order }).waitFor()
    expect(await page.getByLabel("Terminal").inputValue()).toBe(second.json.terminal_id)
    await context.close()
    expect(problems).toEqual([])
  }, 90_000)

  it("home shows balance, rate, today's count and volume, the statuses and a 30-day chart; payments export as CSV (1280 px)", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-GB", acceptDownloads: true })
    const page = watch(await context.newPage())
    await signIn(page)
    await page.getByRole("link", { name: "Home" }).click()
    await page.getByRole("heading", { name: "Home" }).waitFor()
    await page.getByTestId("today-count").getByText("3", { exact: true }).waitFor()
    await page.getByText("₽1,849.50").first().waitFor()
    await page.getByText("3 · ₽1,849.50").waitFor()
    await page.getByRole("img", { name: /Payment volume per day over the last 30 days, by status; ₽1,849.50 in all/ }).waitFor()
    await page.screenshot({ path: join(shots, "home-1280.png"), fullPage: true })

    await page.getByRole("link", { name: "Payments", exact: true }).click()
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Export CSV" }).click()])
    const csv = await new Response(await download.createReadStream() as unknown as ReadableStream).text()
    for (const order of Object.values(orders)) expect(csv).toContain(order)
    expect(csv).not.toContain("fund-")
    await context.close()
    expect(problems).toEqual([])
  }, 90_000)

  it("stops a sandbox subscription and requests a payout after confirmations; the operator's approval shows (1280 px)", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-GB" })
    const page = watch(await context.newPage())
    await signIn(page)
    const ref = `member-${merchant.terminalId.slice(0, 6)}`

    await page.getByRole("link", { name: "Subscriptions" }).click()
    await page.getByRole("heading", { name: "Subscriptions" }).waitFor()
    // On its own page the confirmation takes the Stop button's place: Escape gives the focus back to
    // it (an outside probe found it on the page's body).
    await page.getByRole("link", { name: ref }).click()
    await page.getByRole("heading", { name: `Subscription ${ref}` }).waitFor()
    await page.getByRole("button", { name: "Stop", exact: true }).click()
    await page.getByRole("alertdialog").waitFor()
    await page.keyboard.press("Escape")
    await page.getByRole("alertdialog").waitFor({ state: "detached" })
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe("Stop")
    await page.getByRole("link", { name: "Subscriptions", exact: true }).click()
    await page.getByRole("heading", { name: "Subscriptions" }).waitFor()
    await page.getByRole("button", { name: `Stop ${ref}` }).click()
    await page.getByRole("alertdialog").getByText(`Stop subscription ${ref}?`).waitFor()
    // The confirmation takes the focus; Escape cancels, nothing is stopped.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe("Confirm")
    await page.keyboard.press("Escape")
    await page.getByRole("alertdialog").waitFor({ state: "detached" })
    await page.getByRole("button", { name: `Stop ${ref}` }).click()
    await page.getByRole("button", { name: "Confirm" }).click()
    await page.getByText(`Subscription ${ref} is stopping.`).waitFor()
    await page.getByRole("button", { name: `Stop ${ref}` }).waitFor({ state: "detached" })
    const stopped = (await srv.call("GET", `/api/v1/subscriptions?environment=sandbox`, { headers: { "x-api-key": merchant.apiKey, "x-nonce": crypto.randomUUID() } })).json
    expect(stopped.items[0]).toMatchObject({ merchant_subscription_ref: ref, provider_state: "stop" })
    await page.screenshot({ path: join(shots, "subscriptions-1280.png"), fullPage: true })
    // Its page: stopped, no charges, nothing upcoming, no stop button.
    await page.getByRole("link", { name: ref }).click()
    await page.getByRole("heading", { name: `Subscription ${ref}` }).waitFor()
    await page.getByText("No charges yet.").waitFor()
    await page.getByText("None: only an enabled subscription is charged.").waitFor()
    expect(await page.locator(".details .badge").textContent()).toBe("Stopped")
    expect(await page.getByRole("button", { name: "Stop" }).count()).toBe(0)

    await page.getByRole("link", { name: "Payouts" }).click()
    await page.getByText("100.000000 USDT").waitFor()
    // Under the sandbox banner, the page says payouts are live.
    await page.getByRole("note").getByText("Payouts are live, also in sandbox mode: real USDT leaves the live balance below.").waitFor()
    // More than the balance: refused before any request.
    await page.getByLabel("Amount, USDT").fill("150")
    await page.getByText("The amount is more than the available balance.").waitFor()
    await page.getByLabel("Amount, USDT").fill("40.5")
    await page.getByLabel("Wallet address").fill("TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE")
    await page.getByRole("button", { name: "Request payout" }).click()
    await page.getByText("Send 40.5 USDT of real money from the live balance to TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE (TRC-20)? Available: 100.000000 USDT.").waitFor()
    // Escape cancels, and the focus goes back to the button that asked (not the page's body).
    await page.keyboard.press("Escape")
    await page.getByRole("alertdialog").waitFor({ state: "detached" })
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Request payout")
    await page.getByRole("button", { name: "Request payout" }).click()
    await page.getByRole("button", { name: "Confirm" }).click()
    await page.getByText("Payout requested: Created.").waitFor()
    await page.getByText("59.500000 USDT").waitFor()
    const payouts = (await srv.call("GET", "/api/v1/payouts", { headers: { "x-api-key": merchant.apiKey, "x-nonce": crypto.randomUUID() } })).json
    expect(payouts.items).toHaveLength(1)
    expect((await srv.admin("POST", `/payouts/${payouts.items[0].id}/approve`)).status).toBe(200)
    await page.reload()
    await page.locator("table.payments").getByText("Processing").waitFor()
    await page.screenshot({ path: join(shots, "payouts-1280.png"), fullPage: true })
    await context.close()
    expect(problems).toEqual([])
  }, 90_000)

  it("terminal settings: saves a redirect URL, sends a test event, creates an API key shown once and revokes it (1280 px)", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-GB" })
    const page = watch(await context.newPage())
    await signIn(page)
    await page.getByRole("link", { name: "Terminal settings" }).click()
    await page.getByRole("heading", { name: "Terminal settings", level: 1 }).waitFor()

    // A refused value: the API's message in the form, nothing saved.
    await page.getByLabel("Callback URL").fill("https://user:secret@shop.example/callbacks")
    await page.getByRole("button", { name: "Save settings" }).click()
    await page.getByRole("alert").filter({ hasText: "must not contain credentials (user:password@)" }).waitFor()
    // Chromium logs the refused request's 400 to the console: that one is expected.
    expect(problems).toEqual([expect.stringMatching(/status of 400/)])
    problems.length = 0
    // Put back as it was: nothing to save, and the old error goes.
    await page.getByLabel("Callback URL").fill(receiver.url)
    await page.getByRole("button", { name: "Save settings" }).click()
    await page.getByText("Nothing changed.").waitFor()
    expect(await page.getByRole("alert").count()).toBe(0)
    await page.getByLabel("Redirect after payment").fill("https://shop.example/thanks")
    // The server's clock is frozen; moved on, the save gives the terminal a new updated_at, as in production.
    await srv.setClock(new Date(srv.now() + 1000).toISOString())
    await page.getByRole("button", { name: "Save settings" }).click()
    await page.getByText("Settings saved.").waitFor()
    // The page reloads the terminal after a save; the confirmation outlives that reload.
    await page.waitForLoadState("networkidle")
    expect(await page.getByText("Settings saved.").isVisible()).toBe(true)
    expect(await page.getByLabel("Redirect after payment").inputValue()).toBe("https://shop.example/thanks")
    const owner = await Paydesk.login({ baseUrl: srv.base, email: merchant.email, password: merchant.password, terminalId: merchant.terminalId })
    expect((await owner.terminals.get(merchant.terminalId)).success_redirect_url).toBe("https://shop.example/thanks")
    expect((await owner.terminals.get(merchant.terminalId)).callback_url).toBe(receiver.url)

    const pings = () => receiver.requests.filter((r) => r.body.includes('"event_type":"ping"')).length
    const before = pings()
    await page.getByRole("button", { name: "Send a test event" }).click()
    await page.getByText("Test event sent: HTTP 200").waitFor()
    expect(pings()).toBe(before + 1)

    await page.getByRole("button", { name: "Create API key" }).click()
    const key = (await page.locator(".secret code.reveal").textContent()) ?? ""
    const byNewKey = new Paydesk({ apiKey: key, baseUrl: srv.base, maxRetries: 0 })
    expect((await byNewKey.balance.get()).terminal_id).toBe(merchant.terminalId)
    await page.screenshot({ path: join(shots, "settings-keys-1280.png"), fullPage: true })
    const prefix = key.slice(0, 10)
    await page.getByRole("button", { name: `Revoke ${prefix}` }).click()
    await page.getByRole("button", { name: "Confirm" }).click()
    await page.getByRole("button", { name: `Revoke ${prefix}` }).waitFor({ state: "detached" })
    expect(await byNewKey.balance.get().catch((e: unknown) => e)).toMatchObject({ status: 401 })
    await owner.auth.logout()
    await context.close()
    expect(problems).toEqual([])
  }, 90_000)

  it("changes the password on the settings page: this tab stays signed in, another's session ends, the old password no longer works; sign-out forgets the e-mail", async () => {
    // A merchant of its own: the others' tests sign in with the suite's merchant's password.
    const own = await srv.merchant(receiver.url)
    const open = async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-GB" })
      const page = watch(await context.newPage())
      await page.goto(`${srv.base}/dashboard/settings`)
      await page.getByLabel("E-mail").fill(own.email)
      await page.getByLabel("Password").fill(own.password)
      await page.getByRole("button", { name: "Sign in" }).click()
      await page.getByRole("heading", { name: "Terminal settings", level: 1 }).waitFor()
      return { context, page }
    }
    const here = await open()
    const elsewhere = await open()
    const { page } = here
    const form = async (current: string, next: string, repeat: string) => {
      await page.getByLabel("Current password").fill(current)
      await page.getByLabel("New password (8 to 256 characters)").fill(next)
      await page.getByLabel("New password again").fill(repeat)
      await page.getByRole("button", { name: "Change password" }).click()
    }
    await page.getByRole("heading", { name: "Your password" }).waitFor()
    await form(own.password, "a new horse battery", "a new horse batterY")
    await page.getByRole("alert").filter({ hasText: "The two new passwords differ." }).waitFor()
    // The same password again is said before any request.
    await form(own.password, own.password, own.password)
    await page.getByRole("alert").filter({ hasText: "The new password is the current one: choose another." }).waitFor()
    // The API's refusal in the page's words (it named its field, current_password, before).
    await form("wrong horse battery", "a new horse battery", "a new horse battery")
    await page.getByRole("alert").filter({ hasText: "The current password is not right." }).waitFor()
    // Chromium logs the refused request's 400 to the console: that one is expected.
    expect(problems).toEqual([expect.stringMatching(/status of 400/)])
    problems.length = 0
    expect((await Paydesk.login({ baseUrl: srv.base, email: own.email, password: own.password }).then((c) => c.auth.logout())).ok).toBe(true)

    await form(own.password, "a new horse battery", "a new horse battery")
    await page.getByRole("status").filter({ hasText: "Password changed. Every other session has been signed out." }).waitFor()
    expect(await page.getByLabel("Current password").inputValue()).toBe("")
    // This tab goes on, also after a reload (its new refresh token kept).
    await page.getByRole("link", { name: "Payments" }).click()
    await page.getByRole("heading", { name: "Payments" }).waitFor()
    await page.reload()
    await page.getByRole("heading", { name: "Payments" }).waitFor()
    // The other tab's session is over: a reload finds its refresh token refused.
    await elsewhere.page.reload()
    await elsewhere.page.getByRole("heading", { name: "Sign in" }).waitFor()
    await elsewhere.context.close()
    expect(problems.every((p) => /status of 401/.test(p)), problems.join("\n")).toBe(true)
    problems.length = 0
    expect(await Paydesk.login({ baseUrl: srv.base, email: own.email, password: own.password }).catch((e: unknown) => e)).toMatchObject({ status: 401 })
    await (await Paydesk.login({ baseUrl: srv.base, email: own.email, password: "a new horse battery" })).auth.logout()

    // Sign-out forgets the e-mail: the next person at this browser does not see it.
    expect(await page.evaluate(() => localStorage.getItem("paydesk.email"))).toBe(own.email)
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    expect(await page.evaluate(() => localStorage.getItem("paydesk.email"))).toBeNull()
    expect(await page.getByLabel("E-mail").inputValue()).toBe("")
    await here.context.close()
    expect(problems).toEqual([])
  }, 90_000)

  it("is usable at 390 px: no horizontal scrolling, the sandbox switch and sign-out on every page", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: "en-GB", deviceScaleFactor: 2 })
    const page = watch(await context.newPage())
    const fits = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)
    await page.goto(`${srv.base}/dashboard/`)
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    expect(await fits()).toBe(true)
    await page.screenshot({ path: join(shots, "signin-390.png"), fullPage: true })
    // A long unbroken order id wraps instead of widening the list or the payment's page (an outside
    // probe's 128 characters pushed every value out of view).
    const long = `long-${merchant.terminalId.slice(0, 6)}-${"x".repeat(100)}`
    expect((await merchant.api("POST", "/payments", { amount: "10", order_id: long, test: true })).status).toBe(201)
    await signIn(page)
    await page.locator("table.payments").getByRole("link", { name: orders.paid }).waitFor()
    await page.locator("table.payments").getByRole("link", { name: long }).waitFor()
    expect(await fits()).toBe(true)
    // Each card's values stay within the page.
    expect(await page.locator("table.payments td").evaluateAll((cells) => cells.every((cell) => cell.scrollWidth <= cell.clientWidth + 1))).toBe(true)
    await page.screenshot({ path: join(shots, "payments-390.png"), fullPage: true })
    await page.locator("table.payments").getByRole("link", { name: long }).click()
    await page.getByRole("heading", { name: new RegExp(long) }).waitFor()
    expect(await fits()).toBe(true)
    await page.goBack()
    await page.getByRole("link", { name: "Home" }).click()
    await page.getByTestId("today-count").waitFor()
    await page.getByRole("img", { name: /Payment volume per day/ }).waitFor()
    expect(await fits()).toBe(true)
    await page.screenshot({ path: join(shots, "home-390.png"), fullPage: true })
    await page.getByRole("link", { name: "Payments", exact: true }).click()
    await page.locator("table.payments").getByRole("link", { name: orders.paid }).click()
    await page.locator("article.event table.attempts").first().waitFor()
    expect(await page.getByRole("radio", { name: "Sandbox" }).isVisible()).toBe(true)
    expect(await page.getByRole("button", { name: "Sign out" }).isVisible()).toBe(true)
    await page.screenshot({ path: join(shots, "payment-390.png"), fullPage: true })
    // Live mode: the live funding payment, not the sandbox ones.
    await page.getByRole("link", { name: "Payments", exact: true }).click()
    await page.getByRole("radio", { name: "Live" }).check()
    await page.locator("table.payments").getByRole("link", { name: `fund-${merchant.terminalId.slice(0, 6)}` }).waitFor()
    expect(await page.locator("table.payments tbody tr").count()).toBe(1)
    expect(await page.getByText("Sandbox: test data, no real money").count()).toBe(0)
    expect(await fits()).toBe(true)
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    await context.close()
    expect(problems).toEqual([])
  }, 90_000)

  it("in Russian at 390 px: a sandbox subscription's charges and upcoming dates on a test clock (Moscow time); refunded and charged-back live payments' timelines", async () => {
    const tag = merchant.terminalId.slice(0, 6)
    // A sandbox subscription on a test clock from 31 January: consented, first payment simulated, two months advanced.
    const plan = await srv.admin("POST", "/plans", {
      terminal_ids: [merchant.terminalId], code: `ru-${tag}`, name: "Ежемесячно", interval: "month",
      schedule: "calendar", cap_amount_rub: "4000", consent_text: "Согласен", policy_version: "1"
    })
    const clock = (await merchant.api("POST", "/test-clocks", { frozen_time: "2026-01-31T10:00:00+03:00" })).json
    const ref = `ru-member-${tag}`
    const sub = (await merchant.api("POST", "/subscriptions", { terminal_id: merchant.terminalId, plan_id: plan.json.id, amount: "700", test_clock: clock.id, merchant_subscription_ref: ref },
      { "idempotency-key": `ru-${tag}`, "x-test-mode": "true" })).json
    const { firstPaymentToken } = await confirmOnPage(sub.pay_url)
    const firstPage = `${srv.base}/public/payments/${firstPaymentToken}`
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(await fetch(firstPage).then((r) => r.text()))![1]!
    expect((await srv.call("POST", `/public/payments/${firstPaymentToken}/simulate`, { body: { outcome: "paid", csrf_token: csrf } })).json.status).toBe("paid")
    expect((await merchant.api("POST", `/subscriptions/${sub.id}/sandbox/charge-outcomes`, { outcomes: ["paid", "paid"] })).status).toBe(200)
    let advanced = (await merchant.api("POST", `/test-clocks/${clock.id}/advance`, { frozen_time: "2026-04-01T00:00:00+03:00" })).json
    for (let i = 0; i < 50 && advanced.status !== "ready"; i++) {
      await srv.work()
      advanced = (await merchant.api("GET", `/test-clocks/${clock.id}`)).json
    }
    expect(advanced.status).toBe("ready")
    const charges = (await merchant.api("GET", `/subscriptions/${sub.id}/charges`)).json
    expect(charges.map((c: { status: string }) => c.status)).toEqual(["payed", "payed", "payed"])
    const upcoming = (await merchant.api("GET", `/subscriptions/${sub.id}/upcoming?count=6`)).json.items as ReadonlyArray<{ scheduled_at_moscow: string }>
    expect(upcoming.slice(0, 2).map((u) => u.scheduled_at_moscow)).toEqual(["2026-04-30T10:00:00.000+03:00", "2026-05-31T10:00:00.000+03:00"])
    // Two paid live payments: one refunded, one charged back by the operator.
    const live = new Paydesk({ apiKey: merchant.apiKey, baseUrl: srv.base })
    const refunded = await live.payments.create({ amount: "1200", order_id: `refund-${tag}` })
    const disputed = await live.payments.create({ amount: "800", order_id: `dispute-${tag}` })
    for (const p of [refunded, disputed]) expect((await srv.admin("POST", `/acquirer/payments/${p.id}/outcome`, { outcome: "paid" })).status).toBe(200)
    expect((await srv.admin("POST", `/payments/${refunded.id}/refund`)).json.status).toBe("refunded")
    expect((await srv.admin("POST", `/payments/${disputed.id}/chargeback`)).json.status).toBe("chargeback")

    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: "ru-RU", timezoneId: "Europe/Moscow" })
    const page = watch(await context.newPage())
    const fits = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)
    await page.goto(`${srv.base}/dashboard/subscriptions`)
    await page.getByRole("heading", { name: "Вход" }).waitFor()
    // A refusal in Russian, not the API's English message (another e-mail: the merchant's own is signed
    // in by every test of this file, close to its 10 attempts a minute).
    await page.getByLabel("Эл. почта").fill("nobody@coffee.example")
    await page.getByLabel("Пароль").fill("не тот пароль")
    await page.getByRole("button", { name: "Войти" }).click()
    await page.getByRole("alert").getByText("Неверный e-mail или пароль.").waitFor()
    await page.getByLabel("Эл. почта").fill(merchant.email)
    // The browser logs the refused request (401) as a console error: that one is expected.
    const refused = problems.findIndex((problem) => problem.includes("status of 401"))
    expect(refused).toBeGreaterThanOrEqual(0)
    problems.splice(refused, 1)
    await page.getByLabel("Пароль").fill(merchant.password)
    await page.getByRole("button", { name: "Войти" }).click()
    await page.getByRole("heading", { name: "Подписки" }).waitFor()
    await page.getByRole("link", { name: ref }).click()
    await page.getByRole("heading", { name: `Подписка ${ref}` }).waitFor()
    // The charge history, newest first, in Russian and Moscow time: 31 March, 28 February, the first payment.
    const rows = page.locator("table.payments tbody tr")
    await rows.first().waitFor()
    expect(await rows.count()).toBe(3)
    for (const row of await rows.all()) expect((await row.textContent()) ?? "").toContain("Оплачено")
    expect((await rows.nth(0).textContent()) ?? "").toContain("31 мар. 2026 г., 10:00")
    expect((await rows.nth(1).textContent()) ?? "").toContain("28 февр. 2026 г., 10:00")
    expect((await rows.nth(1).textContent()) ?? "").toContain("700,00\u00a0₽")
    const details = (await page.locator(".details").textContent()) ?? ""
    for (const text of ["Включены", "ежемесячно", "Оплачено циклов3"]) expect(details).toContain(text)
    // The upcoming charges are the API's (the schedule that charges), six of them from 30 April.
    const next = page.locator("ol.upcoming li")
    expect(await next.count()).toBe(6)
    expect(await next.nth(0).textContent()).toBe("30 апр. 2026 г., 10:00 · 700,00\u00a0₽")
    expect(await next.nth(1).textContent()).toBe("31 мая 2026 г., 10:00 · 700,00\u00a0₽")
    await page.getByRole("button", { name: "Остановить" }).waitFor()
    expect(await fits()).toBe(true)
    await page.screenshot({ path: join(shots, "subscription-ru-390.png"), fullPage: true })

    // The live payments: each one's timeline tells its story.
    await page.getByRole("link", { name: "Платежи", exact: true }).click()
    await page.getByRole("radio", { name: "Боевой" }).check()
    for (const [order, last] of [[`refund-${tag}`, "Возврат"], [`dispute-${tag}`, "Чарджбэк"]] as const) {
      await page.locator("table.payments").getByRole("link", { name: order }).click()
      await page.getByRole("heading", { name: `Платёж ${order}` }).waitFor()
      const steps = page.locator("ol.timeline li strong")
      await steps.first().waitFor()
      expect(await steps.allTextContents()).toEqual(["Создан", "Оплачен", last])
      expect(await fits()).toBe(true)
      if (last === "Возврат") await page.screenshot({ path: join(shots, "payment-refunded-ru-390.png"), fullPage: true })
      await page.getByRole("link", { name: "Все платежи" }).click()
    }
    await context.close()
    expect(problems).toEqual([])
  }, 90_000)

  it("renews the access token before it expires, and returns to sign-in with a notice when the session is ended elsewhere", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-GB" })
    const page = watch(await context.newPage())
    // The page's timers run on a fake clock the test moves; the server's clock stays where it is.
    await page.clock.install()
    const login = page.waitForResponse((r) => r.url().endsWith("/api/v1/auth/login"))
    await signIn(page)
    const first = await (await login).json()
    const renewal = page.waitForResponse((r) => r.url().endsWith("/api/v1/auth/refresh"))
    // One minute before the access token expires (by the page's clock), the page renews it.
    await page.clock.fastForward(first.expires_at * 1000 - Date.now() - 55_000)
    const renewed = await renewal
    expect(renewed.status()).toBe(200)
    const pair = await renewed.json()
    expect(pair.refresh_token).not.toBe(first.refresh_token)
    // The renewed session keeps working: the pages load with the new access token.
    await page.getByRole("link", { name: "Home" }).click()
    await page.getByTestId("today-count").waitFor()

    // The session is ended elsewhere (its refresh family revoked); the next renewal is refused.
    expect((await srv.call("POST", "/api/v1/auth/logout", { body: { refresh_token: pair.refresh_token } })).status).toBe(200)
    const refused = page.waitForResponse((r) => r.url().endsWith("/api/v1/auth/refresh"))
    await page.clock.fastForward(pair.expires_at * 1000 - first.expires_at * 1000 + 60_000)
    expect((await refused).status()).toBe(401)
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    await page.getByText("Your session has ended. Please sign in again.").waitFor()
    // Nothing of the session is left in the tab: a reload stays signed out.
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0)
    await page.reload()
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    await context.close()
    // The refused renewals are the only console messages (Chromium logs every 4xx response). The
    // server's clock is frozen, so each renewal answers the same expiry and the page's timer, running
    // on, may renew again at its 5 s floor: one or two renewals can meet the revoked family.
    expect(problems.length).toBeGreaterThan(0)
    for (const problem of problems) expect(problem).toMatch(/Failed to load resource: the server responded with a status of 401/)
    problems.length = 0
  }, 90_000)

  it("meets axe-core's WCAG 2.1 A and AA rules on every page, in English and Russian, and signs in by keyboard alone", async () => {
    const axeScript = createRequire(import.meta.url).resolve("axe-core/axe.min.js")
    /** The WCAG 2.1 A/AA violations axe finds on the page as it is now: rule, impact and the elements. */
    const violations = async (page: Page) => {
      await page.addScriptTag({ path: axeScript })
      return page.evaluate(async () => {
        const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: Array<string> }> }> }> } }).axe
        const result = await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } })
        return result.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)
      })
    }
    for (const [locale, width] of [["en-GB", 1280], ["ru-RU", 390]] as const) {
      // bypassCSP lets the test inject axe; the dashboard's own scripts are the same either way.
      const context = await browser.newContext({ viewport: { width, height: 900 }, locale, bypassCSP: true })
      const page = watch(await context.newPage())
      await page.goto(`${srv.base}/dashboard/`)
      const email = page.locator("input[type=email]")
      await email.waitFor()
      expect(await violations(page), `sign-in ${locale}`).toEqual([])
      // Keyboard alone: the e-mail field is reached by Tab from the top, then password, then Enter.
      await page.keyboard.press("Tab")
      for (let i = 0; i < 10 && !(await email.evaluate((e) => e === document.activeElement)); i++) await page.keyboard.press("Tab")
      expect(await email.evaluate((e) => e === document.activeElement)).toBe(true)
      await page.keyboard.type(merchant.email)
      await page.keyboard.press("Tab")
      await page.keyboard.type(merchant.password)
      await page.keyboard.press("Enter")
      await page.locator("nav a").first().waitFor()
      const pages: ReadonlyArray<readonly [string, string]> = [
        ["", "[data-testid=today-count]"],
        ["payments", "table.payments tbody tr"],
        ["subscriptions", "table.payments tbody tr"],
        ["payouts", "[data-testid=available]"],
        ["settings", "form.settings-form"],
        // An unknown address: a page that says so, with the way home.
        ["nowhere", `a[href="/dashboard/"]:below(h1)`]
      ]
      for (const [path, ready] of pages) {
        await page.goto(`${srv.base}/dashboard/${path}`)
        await page.locator(ready).first().waitFor()
        if (path === "nowhere") expect(await page.locator("h1").textContent()).toBe(locale === "en-GB" ? "Page not found" : "Страница не найдена")
        expect(await violations(page), `${path} ${locale}`).toEqual([])
      }
      // A payment's and a subscription's own pages.
      await page.goto(`${srv.base}/dashboard/payments`)
      await page.locator("table.payments").getByRole("link", { name: orders.paid }).click()
      await page.locator("article.event table.attempts").first().waitFor()
      expect(await violations(page), `payment ${locale}`).toEqual([])
      await page.goto(`${srv.base}/dashboard/subscriptions`)
      await page.locator("table.payments tbody tr a").first().click()
      await page.locator("table.payments, .details").first().waitFor()
      expect(await violations(page), `subscription ${locale}`).toEqual([])
      await context.close()
    }
    expect(problems).toEqual([])
  }, 120_000)
})
