/**
 * The merchant dashboard in headless Chromium against the real server (PostgreSQL, manual clock
 * set to the real time): the owner signs in, sees the sandbox payments created through the API,
 * filters them, opens a paid one with its events and delivery attempts, resends an event, reloads
 * (the session survives in the tab), switches to Russian, rotates the signing secret after a
 * confirmation, and signs out (a reload stays signed out). Again at 390 px wide, with no
 * horizontal scrolling. No page logs a console error. Screenshots at 1280 and 390 px go to
 * `test-results/dashboard/` (gitignored). Also the serving itself: headers, deep links, 404s.
 * Needs Debian's chromium (`./run test` installs it) and the built dashboard (built here when missing).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Paydesk } from "@paydesk/client"
import { chromium, type Browser, type Page } from "playwright-core"
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync } from "node:fs"
import { join, resolve } from "node:path"
import * as Dashboard from "../src/Dashboard.js"
import { type Receiver, startReceiver, startServer } from "./ServerHarness.js"

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
  await page.goto(`${srv.base}/dashboard/`)
  await page.getByLabel("E-mail").fill(merchant.email)
  await page.getByLabel("Password").fill(merchant.password)
  await page.getByLabel("Terminal ID").fill(merchant.terminalId)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.getByRole("heading", { name: "Payments" }).waitFor()
}

beforeAll(async () => {
  if (!existsSync(executablePath)) throw new Error(`Chromium not found at ${executablePath}: install Debian's chromium (./run test does)`)
  const dist = Dashboard.assetsDir()
  if (dist === null || !existsSync(join(dist, "index.html"))) {
    execFileSync(join(root, "node_modules", ".bin", "vite"), ["build"], { cwd: join(root, "packages", "dashboard"), stdio: "ignore" })
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

  it("signs in, lists and filters sandbox payments, shows a payment's deliveries, resends, keeps the session on reload, rotates the secret, signs out (1280 px)", async () => {
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
    await expect.poll(() => table.locator("tbody tr").count()).toBe(1)
    await page.getByRole("link", { name: "Clear" }).click()
    await page.getByLabel("Order ID").fill(orders.waiting)
    await page.getByRole("button", { name: "Search" }).click()
    await page.waitForURL(/order=/)
    await table.getByRole("link", { name: orders.waiting }).waitFor()
    await expect.poll(() => table.locator("tbody tr").count()).toBe(1)
    await page.getByRole("link", { name: "Clear" }).click()

    // The paid payment: its events, the failed first attempt, a resend that succeeds.
    await table.getByRole("link", { name: orders.paid }).click()
    await page.getByRole("heading", { name: `Payment ${orders.paid}` }).waitFor()
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

  it("is usable at 390 px: no horizontal scrolling, the sandbox switch and sign-out on every page", async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: "en-GB", deviceScaleFactor: 2 })
    const page = watch(await context.newPage())
    const fits = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)
    await page.goto(`${srv.base}/dashboard/`)
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    expect(await fits()).toBe(true)
    await page.screenshot({ path: join(shots, "signin-390.png"), fullPage: true })
    await signIn(page)
    await page.locator("table.payments").getByRole("link", { name: orders.paid }).waitFor()
    expect(await fits()).toBe(true)
    await page.screenshot({ path: join(shots, "payments-390.png"), fullPage: true })
    await page.locator("table.payments").getByRole("link", { name: orders.paid }).click()
    await page.locator("article.event table.attempts").first().waitFor()
    expect(await page.getByRole("radio", { name: "Sandbox" }).isVisible()).toBe(true)
    expect(await page.getByRole("button", { name: "Sign out" }).isVisible()).toBe(true)
    await page.screenshot({ path: join(shots, "payment-390.png"), fullPage: true })
    // Live mode: the sandbox payments are not listed.
    await page.getByRole("link", { name: "Payments", exact: true }).click()
    await page.getByRole("radio", { name: "Live" }).check()
    await page.getByText("No payments match.").waitFor()
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("heading", { name: "Sign in" }).waitFor()
    await context.close()
    expect(problems).toEqual([])
  }, 90_000)
})
