/**
 * The payer pages in headless Chromium: open a sandbox `pay_url`, click "Имитировать оплату"
 * (simulate paid), see the page turn to paid without a reload, and follow the redirect to the
 * terminal's success URL; a phone-wide viewport with long unbroken merchant texts; two tabs racing
 * on one payment; the simulate buttons while a submission is in flight; merchant texts with bidi
 * controls laid out without reordering the text around them. Needs Debian's chromium (`./run test`
 * installs it when missing).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, ManagedRuntime } from "effect"
import { chromium, type Browser, type Page } from "playwright-core"
import { createServer } from "node:net"
import { existsSync } from "node:fs"
import { Operator, Payments, Subscriptions, Terminals } from "@paydesk/core"
import { Kit } from "@paydesk/testkit"
import * as App from "../src/App.js"
import * as PublicPages from "../src/PublicPages.js"

const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

const freePort = () =>
  new Promise<number>((ok, fail) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? ok(address.port) : fail(new Error("no port"))))
    })
  })

let browser: Browser
let app: Awaited<ReturnType<typeof App.build>>
let runtime: ManagedRuntime.ManagedRuntime<Kit.Services, never>
let base = ""

beforeAll(async () => {
  if (!existsSync(executablePath)) throw new Error(`Chromium not found at ${executablePath}: install Debian's chromium (./run test does)`)
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  runtime = ManagedRuntime.make(Kit.layer)
  app = await App.build({ runtime, publicUrl: base })
  await app.listen({ port, host: "127.0.0.1" })
  browser = await chromium.launch({
    executablePath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
  })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
  await runtime?.dispose()
})

describe("payer page in a browser", () => {
  it("simulate paid turns the page to paid and redirects to the success URL", async () => {
    const payment = await runtime.runPromise(Effect.gen(function*() {
      const merchant = yield* Kit.provisionMerchant({ name: "Coffee Roasters" })
      const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
      yield* Terminals.updateSettings(principal, merchant.terminal.id, { successRedirectUrl: `${base}/docs` })
      return (yield* Payments.create(principal, { amount: "1000.50", orderId: "browser-1", test: true })).payment
    }))
    const page = await browser.newPage()
    // The shop's page the payer came from (any page of this server stands for it).
    await page.goto(`${base}/openapi.json`)
    await page.goto(`${base}/public/payments/${payment.payToken}`)
    expect(await page.textContent("body")).toContain("Coffee Roasters")
    expect(await page.textContent("#status")).toBe("Ожидает оплаты")
    await page.click("text=Имитировать оплату")
    await page.waitForFunction(() => document.querySelector("#status")?.textContent === "Оплачено", null, { timeout: 10_000 })
    await page.waitForURL(`${base}/docs`, { timeout: 15_000 })
    const stored = await runtime.runPromise(Payments.findPublic(payment.payToken))
    expect(stored.payment.status).toBe("paid")
    // The redirect replaced the payment page: Back goes to where the payer came from, not to the
    // page, which would send them forward again (an outside probe could not leave the shop's page).
    await page.goBack()
    expect(page.url()).toBe(`${base}/openapi.json`)
    await page.close()
  }, 60_000)

  it("at a 375px-wide viewport, long unbroken merchant texts wrap: neither page gets wider than the screen", async () => {
    const long = `https://shop.example/order/${"x".repeat(150)}`
    const { payment, subscription } = await runtime.runPromise(Effect.gen(function*() {
      const merchant = yield* Kit.provisionMerchant({ name: `Shop${"W".repeat(80)}` })
      const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
      const payment = (yield* Payments.create(principal, { amount: "10", orderId: "mobile-1", test: true, description: long })).payment
      const plan = yield* Operator.createPlan({
        terminalIds: [merchant.terminal.id],
        code: `wide-${merchant.terminal.id.slice(0, 8)}`,
        name: "Wide",
        interval: "month",
        schedule: "calendar",
        capAmountRub: "1000.00",
        consentText: `Условия: ${long}`,
        policyVersion: `v-${"1".repeat(60)}`
      })
      const { subscription } = yield* Subscriptions.create(principal, {
        idempotencyKey: "mobile-sub", terminalId: merchant.terminal.id, planId: plan.id, amount: "500", test: true
      })
      return { payment, subscription }
    }))
    const context = await browser.newContext({ viewport: { width: 375, height: 700 }, isMobile: true, hasTouch: true })
    try {
      const page = await context.newPage()
      const widths: Record<string, ReadonlyArray<number>> = {}
      for (const [name, path] of [["payment", `/public/payments/${payment.payToken}`], ["subscription", `/public/subscriptions/${subscription.payToken}`]] as const) {
        await page.goto(`${base}${path}`)
        widths[name] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth])
      }
      expect(widths).toEqual({ payment: [375, 375], subscription: [375, 375] })
    } finally {
      await context.close()
    }
  }, 60_000)

  it("a merchant text isolated as the pages isolate it cannot reorder the text after it (override, stray PDI, isolate left open)", async () => {
    const page = await browser.newPage()
    try {
      // Where each word of the page's own text starts, left to right, with `merchant` in the middle.
      const layout = async (merchant: string) => {
        await page.setContent(`<!doctype html><p id="p" style="font:16px monospace;white-space:nowrap">Shop ${merchant} pays 100 RUB</p>`)
        return page.evaluate(() => ["Shop", "pays", "100", "RUB"].map((word) => {
          // The page's own text: the text nodes of the paragraph itself, not those in the <bdi>.
          const texts = [...document.getElementById("p")!.childNodes].filter((node): node is Text => node.nodeType === 3)
          const text = texts.find((node) => node.data.includes(word))!
          const range = document.createRange()
          const at = text.data.indexOf(word)
          range.setStart(text, at)
          range.setEnd(text, at + word.length)
          return range.getBoundingClientRect().left
        }))
      }
      const inOrder = (xs: ReadonlyArray<number>) => xs.every((x, i) => i === 0 || x > xs[i - 1]!)
      const evil = ["\u202ename", "\u2069\u202ename", "\u05d0\u2067"]
      // Not isolated, an override turns the page's own words around (the reason for the <bdi>).
      expect(inOrder(await layout(PublicPages.escape(evil[0]!)))).toBe(false)
      for (const text of evil) {
        const positions = await layout(PublicPages.isolate(text))
        expect(inOrder(positions), JSON.stringify(text)).toBe(true)
      }
      // After the isolated text its own words stay where a plain name puts them.
      const plain = await layout(PublicPages.isolate("\u05d0"))
      expect(await layout(PublicPages.isolate("\u05d0\u2067"))).toEqual(plain)
    } finally {
      await page.close()
    }
  }, 60_000)

  /** A sandbox payment of a terminal without redirect pages, so the tabs stay on it. */
  const sandboxPayment = (orderId: string) =>
    runtime.runPromise(Effect.gen(function*() {
      const merchant = yield* Kit.provisionMerchant({ name: "Tabs" })
      const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
      return (yield* Payments.create(principal, { amount: "10", orderId, test: true })).payment
    }))

  const textOf = (page: Page, selector: string) => page.evaluate((s) => document.querySelector(s)?.textContent ?? null, selector)

  it("two tabs: the tab that lost the race shows a Russian message and the final status at once", async () => {
    const payment = await sandboxPayment("tabs-1")
    const context = await browser.newContext()
    try {
      const [first, second] = [await context.newPage(), await context.newPage()]
      await first.goto(`${base}/public/payments/${payment.payToken}`)
      // The second tab's status polls (every 2 s) held: it acts on the page as it loaded, as a tab left
      // open does; on a slow machine a poll could otherwise take the final status first and hide the
      // buttons before the click (a fresh-clone CI run timed out so).
      await second.clock.install()
      await second.goto(`${base}/public/payments/${payment.payToken}`)
      await second.clock.pauseAt(new Date(Date.now() + 1000))
      expect(await second.getAttribute("#status", "aria-live")).toBe("polite")
      await first.click("text=Имитировать отказ в оплате")
      await first.waitForFunction(() => document.querySelector("#status")?.textContent === "Платёж отменён", null, { timeout: 10_000 })
      await second.click("text=Имитировать оплату")
      await second.waitForFunction(() => (document.querySelector("#error")?.textContent ?? "") !== "", null, { timeout: 10_000 })
      // Read in the same task as the message appeared: the status was refreshed with it, not by a later poll.
      const [status, error] = await second.evaluate(() => [document.querySelector("#status")?.textContent, document.querySelector("#error")?.textContent])
      expect(status).toBe("Платёж отменён")
      expect(error).toMatch(/[а-яё]/i)
      expect(error).not.toMatch(/does not accept|in state|confirm/)
      expect(await second.locator("form[data-simulate] button:visible").count()).toBe(0)
    } finally {
      await context.close()
    }
  }, 60_000)

  it("the simulate buttons are disabled while a submission is in flight (a double click posts once); an error clears when the status changes", async () => {
    const payment = await sandboxPayment("inflight-1")
    const page = await browser.newPage()
    try {
      let posts = 0
      let release: () => void = () => {}
      const held = new Promise<void>((ok) => (release = ok))
      // The server is busy for this one submission: held, then answered 503.
      await page.route("**/simulate", async (route) => {
        posts++
        await held
        await route.fulfill({ status: 503, contentType: "application/json", body: JSON.stringify({ error: { code: "service_busy", message: "service busy", request_id: "req_x" } }) })
      })
      await page.goto(`${base}/public/payments/${payment.payToken}`)
      await page.dblclick("text=Имитировать оплату")
      await page.waitForFunction(() => [...document.querySelectorAll("form[data-simulate] button")].every((b) => (b as HTMLButtonElement).disabled), null, { timeout: 5_000 })
      release()
      await page.waitForFunction(() => (document.querySelector("#error")?.textContent ?? "") !== "", null, { timeout: 10_000 })
      expect(posts).toBe(1)
      expect(await textOf(page, "#error")).toMatch(/[а-яё]/i)
      expect(await textOf(page, "#error")).not.toContain("service busy")
      expect(await page.evaluate(() => [...document.querySelectorAll("form[data-simulate] button")].map((b) => (b as HTMLButtonElement).disabled))).toEqual([false, false, false])
      // Paid elsewhere: the next poll shows it and the stale error goes.
      await runtime.runPromise(Payments.simulate(payment.payToken, { outcome: "paid", csrfToken: payment.csrfToken }))
      await page.waitForFunction(() => document.querySelector("#status")?.textContent === "Оплачено", null, { timeout: 10_000 })
      expect(await textOf(page, "#error")).toBe("")
    } finally {
      await page.close()
    }
  }, 60_000)
})
