/**
 * The payer page in headless Chromium: open a sandbox `pay_url`, click "simulate paid", see the
 * page turn to paid without a reload, and follow the redirect to the terminal's success URL.
 * Needs Debian's chromium (`./run test` installs it when missing).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, ManagedRuntime } from "effect"
import { chromium, type Browser } from "playwright-core"
import { createServer } from "node:net"
import { existsSync } from "node:fs"
import { Payments, Terminals } from "@paydesk/core"
import { Kit } from "@paydesk/testkit"
import * as App from "../src/App.js"

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
    await page.goto(`${base}/public/payments/${payment.payToken}`)
    expect(await page.textContent("body")).toContain("Coffee Roasters")
    expect(await page.textContent("#status")).toBe("Ожидает оплаты")
    await page.click("text=simulate paid")
    await page.waitForFunction(() => document.querySelector("#status")?.textContent === "Оплачено", null, { timeout: 10_000 })
    await page.waitForURL(`${base}/docs`, { timeout: 15_000 })
    const stored = await runtime.runPromise(Payments.findPublic(payment.payToken))
    expect(stored.payment.status).toBe("paid")
    await page.close()
  }, 60_000)
})
