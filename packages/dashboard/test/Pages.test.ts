/**
 * The dashboard's pages rendered by Preact into the fake DOM of `FakeDom.ts`, against a stubbed
 * client: the payouts list pages like the payments list, a bad filter in the URL is ignored (not a
 * crash "Try again" cannot clear), a page past the end says so and leads back, USDT amounts and the
 * rate follow the language (payouts and home), the conversion time is labelled Moscow time, the
 * subscriptions' state filter and page and the payouts' page live in the URL as the payments'
 * filters do, merchant and operator texts are isolated in `<bdi>` (no bidi control reaches the
 * page's own text), a charge's cycle and attempt have columns of their own, and the README's sign-in
 * fields are the form's.
 */
import { afterEach, describe, expect, it, vi } from "vitest"
import { h, render } from "preact"
import { readFileSync } from "node:fs"
import { DashboardContext, type Dashboard } from "../src/Context.js"
import { translator, type Language } from "../src/I18n.js"
import { useLocation } from "../src/Router.js"
import fc from "fast-check"
import { button, click, edit, FakeElement, type FakeNode, findAll, install, submit } from "./FakeDom.js"
import { PaydeskApiError, PaydeskConnectionError } from "@paydesk/client"

// The pages are JSX (their own tsconfig): loaded by a computed path, so the root type-check does not follow them.
type Component = (props: Record<string, unknown>) => unknown
const load = (name: string): Promise<Record<string, Component>> => import(`../src/${name}.tsx`)

let root: FakeElement | undefined

afterEach(() => {
  if (root !== undefined) render(null, root as unknown as Element)
  root = undefined
})

/**
 * Renders `component` in the signed-in layout with `client`; answers the root and the URLs navigated
 * to. As in the app, the component gets the location's query as `search` and again after every
 * navigation, unless `props` gives its own `search`.
 */
const show = (component: Component, client: Record<string, unknown>, options: { language?: Language; path?: string; props?: Record<string, unknown>; sandbox?: boolean } = {}) => {
  const installed = install(options.path ?? "/dashboard/")
  root = installed.root
  const language = options.language ?? "en"
  const dashboard: Dashboard = {
    session: { client: client as never, terminals: [], terminalId: "term-1", email: "owner@example.com" },
    sandbox: options.sandbox ?? true,
    language,
    t: translator(language),
    fail: (error) => `failed: ${error instanceof Error ? error.message : String(error)}`
  }
  const Routed = () => h(component as never, { search: useLocation().search, ...options.props })
  render(h(DashboardContext.Provider, { value: dashboard }, h(Routed, {})), root as unknown as Element)
  return { root, pushed: installed.pushed }
}

/** After the render Preact schedules for a state change (as a browser renders between keystrokes). */
const rendered = () => new Promise((resolve) => setTimeout(resolve, 0))

const rows = (at: FakeElement) => findAll(at, (e) => e.localName === "tr").length - 1

/** A page of `items` as the API answers it. */
const pageOf = <A>(items: ReadonlyArray<A>, page: number, limit: number) => ({
  items: items.slice((page - 1) * limit, page * limit),
  total: items.length,
  page,
  per_page: limit,
  next_cursor: page * limit < items.length ? "more" : null
})

const payout = (n: number) => ({
  id: `po_${n}`, terminal_id: "term-1", amount_usdt: "1234.500000", wallet_address: `WALLET-${n}`, network: "TRC-20",
  status: "rejected", idempotency_key: null, tx_id: null, reject_reason: null,
  created_at: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString(), updated_at: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString()
})

const payoutsClient = (count: number, balance: { readonly available_usdt?: string; readonly pending_rub?: string } = {}) => {
  // Newest first, as the API lists them: WALLET-0 is the oldest, on the last page.
  const all = Array.from({ length: count }, (_, n) => payout(n)).toReversed()
  return {
    balance: { get: async () => ({ terminal_id: "term-1", available_usdt: "10.521578", hold_usdt: "1000.000001", pending_rub: "0.00", ...balance }) },
    rate: { get: async () => ({ rate: "95.00", updated_at: "2026-01-01T00:00:00.000Z" }) },
    payouts: { list: vi.fn(async (query: { page?: number; limit?: number }) => pageOf(all, query.page ?? 1, query.limit ?? 50)) }
  }
}

/** Fills the payout form (amount, a TRON wallet), submits it, waits for the confirmation and confirms. */
const requestPayout = async (at: FakeElement, amount: string, wallet = "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE") => {
  edit(findAll(at, (e) => e.getAttribute("name") === "amount")[0]!, amount)
  await rendered()
  edit(findAll(at, (e) => e.getAttribute("name") === "wallet")[0]!, wallet)
  await rendered()
  submit(findAll(at, (e) => e.localName === "form")[0]!)
  await vi.waitFor(() => expect(at.textContent).toContain(`Send ${amount} USDT of real money from the live balance to ${wallet}`))
  click(button(at, "Confirm"))
}

const payment = (n: number) => ({
  id: `pay_${n}`, order_id: `order-${n}`, amount: "100.00", status: "paid", environment: "sandbox",
  created_at: "2026-01-02T10:00:00.000Z"
})

describe("Payouts page", () => {
  it("pages the payouts 20 at a time with the same paging bar as payments, down to the oldest", async () => {
    const client = payoutsClient(57)
    const { PayoutsPage } = await load("PayoutsPage")
    const { root } = show(PayoutsPage!, client)
    await vi.waitFor(() => expect(root.textContent).toContain("Page 1 of 3 (57 in all)"))
    expect(rows(root)).toBe(20)
    expect(client.payouts.list).toHaveBeenLastCalledWith({ terminal_id: "term-1", page: 1, limit: 20 })
    expect(root.textContent).toContain("WALLET-56")
    click(button(root, "Next"))
    await vi.waitFor(() => expect(root.textContent).toContain("Page 2 of 3 (57 in all)"))
    click(button(root, "Next"))
    await vi.waitFor(() => expect(root.textContent).toContain("Page 3 of 3 (57 in all)"))
    expect(rows(root)).toBe(17)
    expect(root.textContent).toContain("WALLET-0 ")
    expect(button(root, "Next").attributes.has("disabled")).toBe(true)
    click(button(root, "Previous"))
    await vi.waitFor(() => expect(root.textContent).toContain("Page 2 of 3 (57 in all)"))
  })

  it("shows USDT amounts and the rate with the language's separators, every digit kept", async () => {
    const { PayoutsPage } = await load("PayoutsPage")
    const ru = show(PayoutsPage!, payoutsClient(3), { language: "ru" }).root
    await vi.waitFor(() => expect(ru.textContent).toContain("Страница 1 из 1 (всего 3)"))
    expect(ru.textContent).toContain("10,521578\u00a0USDT")
    expect(ru.textContent).toContain("1\u00a0000,000001\u00a0USDT")
    expect(ru.textContent).toContain("95,00\u00a0₽/USDT")
    expect(ru.textContent).toContain("1\u00a0234,500000")
    expect(ru.textContent).not.toMatch(/\d\.\d/)
    render(null, ru as unknown as Element)
    const en = show(PayoutsPage!, payoutsClient(3), { language: "en" }).root
    await vi.waitFor(() => expect(en.textContent).toContain("Page 1 of 1 (3 in all)"))
    expect(en.textContent).toContain("10.521578 USDT")
    expect(en.textContent).toContain("1,000.000001 USDT")
    expect(en.textContent).toContain("95.00 ₽/USDT")
  })

  it("takes an amount written with a decimal comma, as the Russian page writes them, and sends it with a point", async () => {
    const { PayoutsPage } = await load("PayoutsPage")
    const create = vi.fn(async (_body: { amount_usdt: string }) => ({ ...payout(9), status: "created" }))
    const client = { ...payoutsClient(3), payouts: { ...payoutsClient(3).payouts, create } }
    const { root } = show(PayoutsPage!, client, { language: "ru" })
    await vi.waitFor(() => expect(root.textContent).toContain("Страница 1 из 1 (всего 3)"))
    const amount = findAll(root, (e) => e.getAttribute("name") === "amount")[0]!
    // As a browser compiles the pattern (the v flag, the whole value).
    const accepts = (input: FakeElement, value: string) => new RegExp(`^(?:${input.getAttribute("pattern")})$`, "v").test(value)
    expect(accepts(amount, "1,5")).toBe(true)
    edit(amount, "1,5")
    await rendered()
    edit(findAll(root, (e) => e.getAttribute("name") === "wallet")[0]!, "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE")
    await rendered()
    submit(findAll(root, (e) => e.localName === "form")[0]!)
    // The confirmation writes it the Russian way; the request carries 1.5.
    await vi.waitFor(() => expect(root.textContent).toContain("1,5 USDT"))
    click(button(root, "Подтвердить"))
    await vi.waitFor(() => expect(create).toHaveBeenCalledTimes(1))
    expect(create.mock.calls[0]![0].amount_usdt).toBe("1.5")
    render(null, root as unknown as Element)
    // On the English page a comma is a thousands separator: "10,000" is refused, never read as 10.
    const en = show(PayoutsPage!, client, { language: "en" }).root
    await vi.waitFor(() => expect(en.textContent).toContain("Page 1 of 1 (3 in all)"))
    const enAmount = findAll(en, (e) => e.getAttribute("name") === "amount")[0]!
    expect([accepts(enAmount, "10,000"), accepts(enAmount, "1,5"), accepts(enAmount, "1.5")]).toEqual([false, false, true])
    edit(enAmount, "10,000")
    await rendered()
    edit(findAll(en, (e) => e.getAttribute("name") === "wallet")[0]!, "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE")
    await rendered()
    submit(findAll(en, (e) => e.localName === "form")[0]!)
    await rendered()
    expect(en.textContent).not.toContain("USDT of real money from the live balance to")
    expect(create).toHaveBeenCalledTimes(1)
  })

  it("opens at the URL's page, writes the page it goes to into the URL, and goes back to page 1 after a payout", async () => {
    const client = { ...payoutsClient(57), payouts: { ...payoutsClient(57).payouts, create: vi.fn(async () => ({ ...payout(99), status: "created" })) } }
    const { PayoutsPage } = await load("PayoutsPage")
    const { root, pushed } = show(PayoutsPage!, client, { path: "/dashboard/payouts?page=2" })
    await vi.waitFor(() => expect(root.textContent).toContain("Page 2 of 3 (57 in all)"))
    expect(client.payouts.list).toHaveBeenCalledTimes(1)
    expect(client.payouts.list).toHaveBeenLastCalledWith({ terminal_id: "term-1", page: 2, limit: 20 })
    expect(root.textContent).not.toContain("Ignored in the address")
    click(button(root, "Next"))
    expect(pushed).toEqual(["/dashboard/payouts?page=3"])
    await vi.waitFor(() => expect(root.textContent).toContain("Page 3 of 3 (57 in all)"))
    expect(client.payouts.list).toHaveBeenLastCalledWith({ terminal_id: "term-1", page: 3, limit: 20 })
    click(button(root, "Previous"))
    expect(pushed).toEqual(["/dashboard/payouts?page=3", "/dashboard/payouts?page=2"])

    // A payout requested from a later page shows on the first one, in the URL too.
    await vi.waitFor(() => expect(root.textContent).toContain("Page 2 of 3 (57 in all)"))
    // The wallet's form follows the network chosen.
    expect(root.textContent).toContain("A TRON address: 34 characters starting with T.")
    edit(findAll(root, (e) => e.getAttribute("name") === "network")[0]!, "TON", "change")
    await rendered()
    expect(root.textContent).toContain("A TON address: 48 characters")
    expect(root.textContent).not.toContain("A TRON address")
    // An Ethereum address is asked for as the wallet shows it: its letters' case is checked (EIP-55).
    edit(findAll(root, (e) => e.getAttribute("name") === "network")[0]!, "ERC-20", "change")
    await rendered()
    expect(root.textContent).toContain("Copy it as your wallet shows it: the case of its letters is a checksum, checked when it mixes upper and lower case.")
    edit(findAll(root, (e) => e.getAttribute("name") === "network")[0]!, "TRC-20", "change")
    await rendered()
    await requestPayout(root, "1.5")
    await vi.waitFor(() => expect(root.textContent).toContain("Page 1 of 3 (57 in all)"))
    expect(client.payouts.create).toHaveBeenCalledTimes(1)
    expect(pushed.at(-1)).toBe("/dashboard/payouts")
    expect(client.payouts.list).toHaveBeenLastCalledWith({ terminal_id: "term-1", page: 1, limit: 20 })
  })

  it("a payout request whose outcome is unknown says so, and requesting it again sends the same Idempotency-Key (one payout); a new request gets a new key", async () => {
    let lost = true
    const create = vi.fn(async (_body: unknown, options: { idempotencyKey?: string }) => {
      if (lost) {
        lost = false
        throw new PaydeskConnectionError("POST /api/v1/payouts: no answer", 3, { outcomeUnknown: true, idempotencyKey: options.idempotencyKey })
      }
      return { ...payout(99), status: "created" }
    })
    const client = { ...payoutsClient(3), payouts: { ...payoutsClient(3).payouts, create } }
    const { PayoutsPage } = await load("PayoutsPage")
    const { root } = show(PayoutsPage!, client)
    await vi.waitFor(() => expect(root.textContent).toContain("Page 1 of 1 (3 in all)"))
    const ask = (amount: string) => requestPayout(root, amount)
    await ask("1.5")
    await vi.waitFor(() => expect(root.textContent).toContain("No answer came: the payout may have been requested."))
    // Kept in the tab, so a reload of the page asks with the same key too.
    const kept = () => JSON.parse(sessionStorage.getItem("paydesk.pendingPayout:term-1") ?? "null") as { key: string } | null
    expect(kept()?.key).toBe(create.mock.calls[0]![1].idempotencyKey)
    await ask("1.5")
    await vi.waitFor(() => expect(root.textContent).toContain("Payout requested: Created."))
    expect(kept()).toBeNull()
    await ask("2")
    await vi.waitFor(() => expect(create).toHaveBeenCalledTimes(3))
    const keys = create.mock.calls.map(([, options]) => options.idempotencyKey)
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(keys[1]).toBe(keys[0])
    expect(keys[2]).not.toBe(keys[0])
  })

  it("ignores a page in the URL that is no positive number, names it as the payments page does, and never sends it", async () => {
    const { PayoutsPage } = await load("PayoutsPage")
    for (const search of ["?page=abc", "?page=0", "?page=-2", "?page=1.5"]) {
      const client = payoutsClient(57)
      const { root, pushed } = show(PayoutsPage!, client, { path: `/dashboard/payouts${search}` })
      await vi.waitFor(() => expect(root.textContent, search).toContain("Page 1 of 3 (57 in all)"))
      expect(root.textContent, search).toContain(`Ignored in the address, not valid: ${search.slice(1)}.`)
      expect(client.payouts.list.mock.calls, search).toEqual([[{ terminal_id: "term-1", page: 1, limit: 20 }]])
      click(button(root, "Next"))
      expect(pushed, search).toEqual(["/dashboard/payouts?page=2"])
      await vi.waitFor(() => expect(root.textContent, search).toContain("Page 2 of 3 (57 in all)"))
      expect(root.textContent, search).not.toContain("Ignored in the address")
      render(null, root as unknown as Element)
    }
    // A page past any real list is capped, as the payments' is.
    const client = payoutsClient(57)
    const { root } = show(PayoutsPage!, client, { path: "/dashboard/payouts?page=99999999999" })
    await vi.waitFor(() => expect(root.textContent).toContain("Page 1000000 is past the end of the list"))
    expect(client.payouts.list).toHaveBeenLastCalledWith({ terminal_id: "term-1", page: 1_000_000, limit: 20 })
  })
})

const subscription = (n: number) => ({
  id: `sub_${n}`, terminal_id: "term-1", plan_id: "plan-1", merchant_subscription_ref: `member-${n}`, description: null,
  provider_state: "active", billing_status: "enabled", test: true, environment: "sandbox", test_clock: null,
  plan_code: "gold", plan_version: 1, merchant_amount_rub: "100.00", payer_amount_rub: "100.00", interval: "month",
  successful_cycles: 1, consecutive_failures: 0, next_charge_at: null, created_at: "2026-01-02T10:00:00.000Z",
  activated_at: "2026-01-02T10:00:00.000Z", stopped_at: null
})

describe("Subscriptions page", () => {
  const subscriptionsClient = (total: number) => {
    const all = Array.from({ length: total }, (_, n) => subscription(n))
    return {
      subscriptions: {
        list: vi.fn(async (query: { page?: number; limit?: number }) => pageOf(all, query.page ?? 1, query.limit ?? 50))
      }
    }
  }
  const stateSelect = (root: FakeElement) => findAll(root, (e) => e.localName === "select" && e.getAttribute("name") === "state")[0]!

  it("opens at the URL's state and page, asks the API for them, and writes the page it goes to into the URL", async () => {
    const client = subscriptionsClient(45)
    const { SubscriptionsPage } = await load("SubscriptionsPage")
    const { root, pushed } = show(SubscriptionsPage!, client, { path: "/dashboard/subscriptions?state=active&page=2" })
    await vi.waitFor(() => expect(root.textContent).toContain("Page 2 of 3 (45 in all)"))
    expect(client.subscriptions.list).toHaveBeenCalledTimes(1)
    expect(client.subscriptions.list).toHaveBeenLastCalledWith({ terminal_id: "term-1", environment: "sandbox", state: "active", page: 2, limit: 20 })
    expect(root.textContent).toContain("member-20")
    expect(root.textContent).not.toContain("Ignored in the address")
    click(button(root, "Next"))
    expect(pushed).toEqual(["/dashboard/subscriptions?state=active&page=3"])
    await vi.waitFor(() => expect(root.textContent).toContain("Page 3 of 3 (45 in all)"))
    expect(client.subscriptions.list).toHaveBeenLastCalledWith({ terminal_id: "term-1", environment: "sandbox", state: "active", page: 3, limit: 20 })
    click(button(root, "Previous"))
    expect(pushed.at(-1)).toBe("/dashboard/subscriptions?state=active&page=2")
    await vi.waitFor(() => expect(root.textContent).toContain("Page 2 of 3 (45 in all)"))
  })

  it("starts a newly selected state at page 1, in the URL and in the API's query", async () => {
    const client = subscriptionsClient(45)
    const { SubscriptionsPage } = await load("SubscriptionsPage")
    const { root, pushed } = show(SubscriptionsPage!, client, { path: "/dashboard/subscriptions?state=active&page=3" })
    await vi.waitFor(() => expect(root.textContent).toContain("Page 3 of 3 (45 in all)"))
    edit(stateSelect(root), "stop", "change")
    expect(pushed).toEqual(["/dashboard/subscriptions?state=stop"])
    await vi.waitFor(() => expect(client.subscriptions.list).toHaveBeenLastCalledWith({ terminal_id: "term-1", environment: "sandbox", state: "stop", page: 1, limit: 20 }))
    await vi.waitFor(() => expect(root.textContent).toContain("Page 1 of 3 (45 in all)"))
    edit(stateSelect(root), "", "change")
    expect(pushed.at(-1)).toBe("/dashboard/subscriptions")
    await vi.waitFor(() => expect(client.subscriptions.list).toHaveBeenLastCalledWith({ terminal_id: "term-1", environment: "sandbox", page: 1, limit: 20 }))
  })

  it("ignores a page that is no positive number (named as the payments page names it) and a state it does not offer; sends neither", async () => {
    const { SubscriptionsPage } = await load("SubscriptionsPage")
    for (const [search, named] of [["?page=abc", "page=abc"], ["?state=bogus", null], ["?state=bogus&page=0", "page=0"], ["?state=new&page=x2", "page=x2"]] as const) {
      const client = subscriptionsClient(45)
      const { root, pushed } = show(SubscriptionsPage!, client, { path: `/dashboard/subscriptions${search}` })
      await vi.waitFor(() => expect(root.textContent, search).toContain("Page 1 of 3 (45 in all)"))
      if (named === null) expect(root.textContent, search).not.toContain("Ignored in the address")
      else expect(root.textContent, search).toContain(`Ignored in the address, not valid: ${named}.`)
      const state = search.includes("state=new") ? { state: "new" } : {}
      expect(client.subscriptions.list.mock.calls, search).toEqual([[{ terminal_id: "term-1", environment: "sandbox", ...state, page: 1, limit: 20 }]])
      click(button(root, "Next"))
      expect(pushed, search).toEqual([`/dashboard/subscriptions?${"state" in state ? "state=new&" : ""}page=2`])
      await vi.waitFor(() => expect(root.textContent, search).toContain("Page 2 of 3 (45 in all)"))
      expect(root.textContent, search).not.toContain("Ignored in the address")
      render(null, root as unknown as Element)
    }
  })

  it("reads the URL's state and page, leaving out what is not valid", async () => {
    const { parseSubscriptionFilters } = await load("SubscriptionsPage")
    const parse = parseSubscriptionFilters as unknown as (search: string) => { filters: Record<string, unknown>; ignored: ReadonlyArray<string> }
    expect(parse("?state=stop&page=4")).toEqual({ filters: { state: "stop", page: 4 }, ignored: [] })
    expect(parse("")).toEqual({ filters: { state: "", page: 1 }, ignored: [] })
    expect(parse("?state=bogus&page=abc")).toEqual({ filters: { state: "", page: 1 }, ignored: ["page=abc"] })
    expect(parse("?page=99999999999").filters.page).toBe(1_000_000)
  })
})

describe("Live money in sandbox mode", () => {
  it("the payouts page says payouts are live (in sandbox mode prominently), and the home page's balance says it is live", async () => {
    const { PayoutsPage } = await load("PayoutsPage")
    for (const [sandbox, text] of [[true, "Payouts are live, also in sandbox mode: real USDT leaves the live balance below."], [false, "Payouts always move real USDT, whatever the mode."]] as const) {
      const { root } = show(PayoutsPage!, payoutsClient(0), { sandbox })
      await vi.waitFor(() => expect(root.textContent).toContain(text))
      render(null, root as unknown as Element)
    }
    const { HomePage } = await load("HomePage")
    const pending = () => new Promise(() => undefined)
    for (const sandbox of [true, false]) {
      const { root } = show(HomePage!, { ...payoutsClient(0), payments: { stats: pending, dailyStats: pending } }, { sandbox })
      await vi.waitFor(() => expect(root.textContent).toContain("10.521578"))
      expect(root.textContent.includes("The live balance: real money, whatever the mode."), String(sandbox)).toBe(sandbox)
      render(null, root as unknown as Element)
    }
  })

  it("a refused payout's error goes when the draft is edited", async () => {
    const { PayoutsPage } = await load("PayoutsPage")
    const client = payoutsClient(0)
    const refused = Object.assign(client, { payouts: { ...client.payouts, create: vi.fn(async () => { throw new Error("wallet_address is not a TRC-20 address") }) } })
    const { root } = show(PayoutsPage!, refused)
    await vi.waitFor(() => expect(root.textContent).toContain("10.521578"))
    await requestPayout(root, "1", "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSX")
    await vi.waitFor(() => expect(root.textContent).toContain("failed: wallet_address is not a TRC-20 address"))
    edit(findAll(root, (e) => e.getAttribute("name") === "wallet")[0]!, "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE")
    await rendered()
    expect(root.textContent).not.toContain("failed: wallet_address")
  })
})

describe("Payment page", () => {
  it("reads the events of the payment's own terminal, and says when the payment is of the other mode", async () => {
    const { PaymentPage } = await load("PaymentPage")
    const list = vi.fn(async () => ({ items: [], next_cursor: null }))
    const livePayment = { ...payment(1), terminal_id: "term-2", environment: "prod", status: "paid", paid_at: null, expires_at: null, description: null }
    const client = { payments: { get: async () => livePayment }, events: { list, get: vi.fn() } }
    const { root } = show(PaymentPage!, client, { props: { id: "pay_1" }, sandbox: true })
    await vi.waitFor(() => expect(root.textContent).toContain("This payment is of Live mode, while the dashboard is in Sandbox mode."))
    expect(list).toHaveBeenCalledWith(expect.objectContaining({ terminal_id: "term-2", object_id: "pay_1", environment: "prod" }))
    render(null, root as unknown as Element)
    const same = show(PaymentPage!, client, { props: { id: "pay_1" }, sandbox: false }).root
    await vi.waitFor(() => expect(same.textContent).toContain("order-1"))
    expect(same.textContent).not.toContain("while the dashboard is in")
  })

  it("says what a live paid payment credited: USDT at the rate, or roubles awaiting conversion; nothing for others", async () => {
    const { PaymentPage } = await load("PaymentPage")
    const events = { list: async () => ({ items: [], next_cursor: null }), get: vi.fn() }
    const base = { ...payment(1), terminal_id: "term-1", environment: "prod", status: "paid", paid_at: "2026-01-02T10:00:00.000Z", expires_at: null, description: null }
    const credited = async (settlement: unknown, language: "en" | "ru" = "en") => {
      const { root } = show(PaymentPage!, { payments: { get: async () => ({ ...base, settlement }) }, events }, { language, props: { id: "pay_1" }, sandbox: false })
      await vi.waitFor(() => expect(root.textContent).toContain("order-1"))
      const text = findAll(root, (e) => e.getAttribute("data-testid") === "credited")[0]?.textContent ?? null
      render(null, root as unknown as Element)
      return text
    }
    const converted = { merchant_amount_rub: "1000.50", amount_usdt: "10.531578", rate: "95.00", converted_at: "2026-01-02T10:00:00.000Z" }
    expect(await credited(converted)).toMatch(/^10\.531578 USDT for ₽1,000\.50 at 95\.00 ₽\/USDT, .*2026/)
    expect(await credited(converted, "ru")).toMatch(/^10,531578\u00a0USDT за 1\u00a0000,50\u00a0₽ по курсу 95,00\u00a0₽\/USDT, /)
    expect(await credited({ merchant_amount_rub: "900.00", amount_usdt: null, rate: null, converted_at: null })).toBe("₽900.00, awaiting conversion")
    expect(await credited(null)).toBeNull()
    // Refunded: taken back; roubles refunded before their conversion are never converted (not "awaiting").
    base.status = "refunded"
    expect(await credited(converted)).toMatch(/^10\.531578 USDT for ₽1,000\.50 at 95\.00 ₽\/USDT, .*; taken back \(Refunded\)$/)
    expect(await credited({ merchant_amount_rub: "900.00", amount_usdt: null, rate: null, converted_at: null })).toBe("₽900.00, not converted; taken back (Refunded)")
  })
})

describe("A payment's events", () => {
  const delivery = (kind: "scheduled" | "resend", status: "delivered" | "failed") => ({
    id: `del-${kind}`, kind, status, attempts: 1, next_attempt_at: null,
    attempt_log: [{ attempt: 1, at: "2026-01-02T10:00:00.000Z", url: "https://shop.example/cb", status_code: status === "delivered" ? 200 : null, latency_ms: 5, error: status === "delivered" ? null : "getaddrinfo ENOTFOUND shop.example", response_body: null }]
  })
  const event = (deliveries: ReadonlyArray<ReturnType<typeof delivery>>) => ({
    id: "evt_1", type: "payment.created", sequence: 1, created_at: "2026-01-02T10:00:00.000Z", test: true, body: "{}", headers: {}, deliveries
  })

  it("a resend the endpoint did not accept is said so as an error; a delivery's kind and an attempt's time are in the page's language", async () => {
    const { PaymentPage } = await load("PaymentPage")
    const one = { ...payment(1), terminal_id: "term-1", paid_at: null, expires_at: null, description: null }
    const failedAttempt = { attempt: 1, at: "2026-01-02T10:01:00.000Z", url: "https://shop.example/cb", status_code: null, latency_ms: 7, error: "getaddrinfo ENOTFOUND shop.example", response_body: null }
    const resend = vi.fn(async () => ({ delivery: { ...delivery("resend", "failed") }, attempt: failedAttempt }))
    let current = event([delivery("scheduled", "delivered")])
    const get = vi.fn(async () => current)
    const client = { payments: { get: async () => one }, events: { list: async () => ({ items: [{ id: "evt_1" }], next_cursor: null }), get, resend } }
    const { root } = show(PaymentPage!, client, { language: "ru", props: { id: "pay_1" } })
    await vi.waitFor(() => expect(root.textContent).toContain("Доставка"))
    expect(root.textContent).toContain("(по расписанию)")
    expect(root.textContent).toContain("5 мс")
    expect(root.textContent).not.toMatch(/scheduled|\d ms/)
    current = event([delivery("scheduled", "delivered"), delivery("resend", "failed")])
    click(button(root, "Отправить снова"))
    await vi.waitFor(() => expect(root.textContent).toContain("Отправлено снова, но ваш обработчик его не принял: getaddrinfo ENOTFOUND shop.example"))
    const said = findAll(root, (e) => e.getAttribute("role") === "alert")
    expect(said.map((e) => e.textContent)).toEqual(["Отправлено снова, но ваш обработчик его не принял: getaddrinfo ENOTFOUND shop.example"])
    await vi.waitFor(() => expect(root.textContent).toContain("(отправка вручную)"))
  })
})

describe("Disabled terminal, finished payment", () => {
  it("the settings page says the operator disabled the terminal; an active one says nothing of it", async () => {
    const { SettingsPage } = await load("SettingsPage")
    const details = (status: "active" | "disabled") => ({
      id: "term-1", terminal_id: "term-1", account_id: "acc-1", name: "Shop", status, h2h: false, callback_url: null, success_redirect_url: null,
      fail_redirect_url: null, conversion_mode: "instant", conversion_time: null, show_platform_branding: true, updated_at: "2026-01-01T00:00:00.000Z",
      callback_endpoint: { status: "unknown", last_attempt_at: null, last_error: null, failing_since: null }, previous_secret_expires_at: null
    })
    for (const status of ["disabled", "active"] as const) {
      const { root } = show(SettingsPage!, { terminals: { get: async () => details(status) }, apiKeys: { list: async () => [] } })
      await vi.waitFor(() => expect(root.textContent).toContain("Shop"))
      expect(root.textContent.includes("The operator has disabled this terminal"), status).toBe(status === "disabled")
      render(null, root as unknown as Element)
    }
  })

  it("a payment shows when it expires only while it can still be paid", async () => {
    const { PaymentPage } = await load("PaymentPage")
    for (const [status, shown] of [["created", true], ["processing", true], ["paid", false], ["expired", false]] as const) {
      const paid = { ...payment(1), terminal_id: "term-1", status, paid_at: null, expires_at: "2026-01-02T10:30:00.000Z", description: null }
      const { root } = show(PaymentPage!, { payments: { get: async () => paid }, events: { list: async () => ({ items: [], next_cursor: null }), get: vi.fn() } }, { props: { id: "pay_1" } })
      await vi.waitFor(() => expect(root.textContent).toContain("order-1"))
      expect(root.textContent.includes("Expires"), status).toBe(shown)
      render(null, root as unknown as Element)
    }
  })
})

describe("Switching mode or terminal", () => {
  it("leaves the page out of the URL in place (the list starts at its first page), keeping the other filters", async () => {
    const { forgetQuery } = await import("../src/Router.js")
    const installed = install("/dashboard/payments?status=paid&page=2")
    root = installed.root
    forgetQuery("page")
    expect([window.location.pathname, window.location.search, installed.pushed]).toEqual(["/dashboard/payments", "?status=paid", []])
    forgetQuery("page")
    expect(window.location.search).toBe("?status=paid")
  })
})

describe("Balance", () => {
  it("shows the roubles awaiting scheduled conversion on Home and Payouts, only when there are any (a probe saw paid money missing until 12:00)", async () => {
    const { HomePage } = await load("HomePage")
    const { PayoutsPage } = await load("PayoutsPage")
    const pending = () => new Promise(() => undefined)
    for (const [Page, extra] of [[HomePage!, { payments: { stats: pending, dailyStats: pending } }], [PayoutsPage!, {}]] as const) {
      const en = show(Page, { ...payoutsClient(0, { pending_rub: "900.00" }), ...extra }, { language: "en" }).root
      await vi.waitFor(() => expect(en.textContent).toContain("Paid, awaiting conversion₽900.00"))
      render(null, en as unknown as Element)
      const ru = show(Page, { ...payoutsClient(0, { pending_rub: "1234.50" }), ...extra }, { language: "ru" }).root
      await vi.waitFor(() => expect(ru.textContent).toContain("Оплачено, ждёт конвертации1\u00a0234,50\u00a0₽"))
      render(null, ru as unknown as Element)
      const none = show(Page, { ...payoutsClient(0), ...extra }, { language: "en" }).root
      await vi.waitFor(() => expect(none.textContent).toContain("10.521578 USDT"))
      expect(none.textContent).not.toContain("awaiting conversion")
      render(null, none as unknown as Element)
    }
  })

  it("refuses an amount of zero in the form (no confirmation of a payout of nothing), in both languages' notations", async () => {
    const { PayoutsPage } = await load("PayoutsPage")
    for (const [language, amount, text] of [["en", "0", "The amount must be greater than zero."], ["en", "0.000000", "The amount must be greater than zero."], ["ru", "0,0", "Сумма должна быть больше нуля."]] as const) {
      const client = { ...payoutsClient(0), payouts: { ...payoutsClient(0).payouts, create: vi.fn() } }
      const { root } = show(PayoutsPage!, client, { language })
      await vi.waitFor(() => expect(root.textContent).toContain("USDT"))
      edit(findAll(root, (e) => e.getAttribute("name") === "amount")[0]!, amount)
      await rendered()
      edit(findAll(root, (e) => e.getAttribute("name") === "wallet")[0]!, "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE")
      await rendered()
      expect(root.textContent, amount).toContain(text)
      submit(findAll(root, (e) => e.localName === "form")[0]!)
      await rendered()
      expect(findAll(root, (e) => e.getAttribute("role") === "alertdialog"), amount).toHaveLength(0)
      expect(client.payouts.create).not.toHaveBeenCalled()
      // Another amount clears it.
      edit(findAll(root, (e) => e.getAttribute("name") === "amount")[0]!, "1")
      await rendered()
      expect(root.textContent, amount).not.toContain(text)
      render(null, root as unknown as Element)
    }
  })

  it("refuses every payout amount in the form while the available balance is negative (a reversal after a hold)", async () => {
    const { PayoutsPage } = await load("PayoutsPage")
    const { root } = show(PayoutsPage!, payoutsClient(0, { available_usdt: "-10.000000" }), { language: "en" })
    await vi.waitFor(() => expect(root.textContent).toContain("-10.000000 USDT"))
    edit(findAll(root, (e) => e.getAttribute("name") === "amount")[0]!, "0.000001")
    await rendered()
    expect(root.textContent).toContain("The amount is more than the available balance.")
    expect(button(root, "Request payout").attributes.has("disabled")).toBe(true)
  })
})

describe("Home page", () => {
  it("shows the balance and the rate with the language's separators", async () => {
    const { HomePage } = await load("HomePage")
    const pending = () => new Promise(() => undefined)
    const client = { ...payoutsClient(0), payments: { stats: pending, dailyStats: pending } }
    const ru = show(HomePage!, client, { language: "ru" }).root
    await vi.waitFor(() => expect(ru.textContent).toContain("95,00\u00a0₽/USDT"))
    expect(ru.textContent).toContain("10,521578\u00a0USDT")
    expect(ru.textContent).toContain("1\u00a0000,000001\u00a0USDT")
  })
})

describe("Payments page", () => {
  const paymentsClient = (total: number) => ({
    payments: {
      list: vi.fn(async (query: { page?: number; limit?: number }) => pageOf(Array.from({ length: total }, (_, n) => payment(n)), query.page ?? 1, query.limit ?? 50))
    }
  })

  it("ignores a date in the URL that does not exist, names it, and lists the rest (no 'Invalid time value')", async () => {
    const { PaymentsPage } = await load("PaymentsPage")
    for (const search of ["?from=2026-13-45", "?from=2026-02-30&status=paid", "?to=9999-99-99", "?from=2026-05-10&to=2026-05-01"]) {
      const client = paymentsClient(3)
      const { root } = show(PaymentsPage!, client, { path: `/dashboard/payments${search}`, props: { search } })
      await vi.waitFor(() => expect(root.textContent, search).toContain("Page 1 of 1 (3 in all)"))
      expect(root.textContent, search).toMatch(/Ignored in the address, not valid: (from|to)=/)
      expect(root.textContent, search).not.toContain("failed")
      const query = client.payments.list.mock.calls[0]![0] as Record<string, unknown>
      expect(query, search).not.toHaveProperty("created_to")
      if (search.startsWith("?from=2026-05-10")) expect(query.created_from, search).toBeTypeOf("string")
      else if (search.startsWith("?from")) expect(query, search).not.toHaveProperty("created_from")
      render(null, root as unknown as Element)
    }
  })

  it("sends every day the date fields take as a date-time the API reads: the year 9999's last day as the end sets no end (not +010000-…)", async () => {
    const { PaymentsPage } = await load("PaymentsPage")
    const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
    for (const search of ["?to=9999-12-31", "?from=9999-12-31&to=9999-12-31", "?from=0001-01-01&to=9999-12-30"]) {
      const client = paymentsClient(3)
      const { root } = show(PaymentsPage!, client, { path: `/dashboard/payments${search}`, props: { search } })
      await vi.waitFor(() => expect(root.textContent, search).toContain("Page 1 of 1 (3 in all)"))
      expect(root.textContent, search).not.toContain("Ignored in the address")
      const query = client.payments.list.mock.calls[0]![0] as Record<string, unknown>
      if (search.endsWith("to=9999-12-31")) expect(query, search).not.toHaveProperty("created_to")
      else expect(query.created_to, search).toMatch(iso)
      if (search.includes("from=")) expect(query.created_from, search).toMatch(iso)
      render(null, root as unknown as Element)
    }
  })

  it("says a page past the end is past the end (not 'No payments match.') and leads back to the first page", async () => {
    const { PaymentsPage } = await load("PaymentsPage")
    const search = "?status=paid&page=999999"
    const { root, pushed } = show(PaymentsPage!, paymentsClient(3), { path: `/dashboard/payments${search}`, props: { search } })
    await vi.waitFor(() => expect(root.textContent).toContain("Page 999999 is past the end of the list: the last page is 1 (3 in all)."))
    expect(root.textContent).not.toContain("No payments match.")
    click(button(root, "Go to the first page"))
    expect(pushed).toEqual(["/dashboard/payments?status=paid"])
  })

  it("still says 'No payments match.' when nothing matches", async () => {
    const { PaymentsPage } = await load("PaymentsPage")
    const { root } = show(PaymentsPage!, paymentsClient(0), { path: "/dashboard/payments?page=3", props: { search: "?page=3" } })
    await vi.waitFor(() => expect(root.textContent).toContain("No payments match."))
    expect(root.textContent).not.toContain("past the end")
  })

  it("reads the URL's filters, leaving out what is not valid", async () => {
    const { parseFilters } = await load("PaymentsPage")
    const parse = parseFilters as unknown as (search: string) => { filters: Record<string, unknown>; ignored: ReadonlyArray<string> }
    expect(parse("?from=2026-02-28&to=2026-03-01&status=paid&page=2&order=a%26b")).toEqual({
      filters: { status: "paid", from: "2026-02-28", to: "2026-03-01", all: false, order: "a&b", page: 2 }, ignored: []
    })
    expect(parse("?from=2024-02-29&to=2024-02-29").ignored).toEqual([])
    expect(parse("?from=2026-13-45&to=2026-02-29&page=abc&status=bogus")).toEqual({
      filters: { status: "", from: "", to: "", all: false, order: "", page: 1 }, ignored: ["from=2026-13-45", "to=2026-02-29", "page=abc"]
    })
    expect(parse("?from=2026-05-10&to=2026-05-01").ignored).toEqual(["to=2026-05-01"])
    expect(parse("?page=0").ignored).toEqual(["page=0"])
    expect(parse("?page=99999999999").filters.page).toBe(1_000_000)
  })
})

describe("Paging", () => {
  it("counts pages and tells a page past the end from an empty list", async () => {
    const { pageCount, pastEnd } = await load("Paging")
    const count = pageCount as unknown as (total: number) => number
    const past = pastEnd as unknown as (page: number, total: number) => boolean
    expect([count(0), count(1), count(20), count(21), count(57)]).toEqual([1, 1, 1, 2, 3])
    expect([past(1, 0), past(5, 0), past(3, 57), past(4, 57), past(999999, 3)]).toEqual([false, false, false, true, true])
  })
})

describe("Terminal settings", () => {
  it("labels the conversion time as Moscow time, with the same moment in the browser's zone when it differs", async () => {
    const { TerminalForm, conversionHint } = await load("TerminalForm")
    const terminal = {
      id: "term-1", name: "Shop", callback_url: null, success_redirect_url: null, fail_redirect_url: null,
      conversion_mode: "scheduled", conversion_time: "18:00", show_platform_branding: true, updated_at: "2026-01-01T00:00:00.000Z"
    }
    for (const language of ["en", "ru"] as const) {
      const { root } = show(TerminalForm!, {}, { language, props: { terminal, onSaved: () => undefined } })
      const label = findAll(root, (e) => e.localName === "label" && e.getAttribute("for") === "conversion_time")[0]
      expect(label?.textContent, language).toMatch(language === "en" ? /Moscow time/ : /по Москве/)
      const hint = (conversionHint as unknown as (t: unknown, text: string) => string | null)(translator(language), "18:00")
      const input = findAll(root, (e) => e.getAttribute("id") === "conversion_time")[0]
      if (hint === null) expect(input?.getAttribute("aria-describedby")).toBeNull()
      else {
        expect(root.textContent).toContain(hint)
        expect(input?.getAttribute("aria-describedby")).toBe("conversion_time_hint")
      }
      render(null, root as unknown as Element)
    }
  })

  it("a rotation whose answer was lost is repeated under its Idempotency-Key by the next press (its secret shown, no second rotation); after an answer the next press is a new rotation", async () => {
    const { SettingsPage } = await load("SettingsPage")
    const terminal = {
      id: "term-1", terminal_id: "term-1", account_id: "acc-1", name: "Shop", status: "active", h2h: false, callback_url: null, success_redirect_url: null,
      fail_redirect_url: null, conversion_mode: "instant", conversion_time: null, show_platform_branding: true, updated_at: "2026-01-01T00:00:00.000Z",
      callback_endpoint: { status: "unknown", last_attempt_at: null, last_error: null, failing_since: null }, previous_secret_expires_at: null
    }
    // The server's side: a key rotates once and is answered its secret again.
    const made = new Map<string, string>()
    let lost = 1
    let limited = 0
    const rotate = vi.fn(async (options: { terminalId?: string; idempotencyKey?: string }) => {
      const key = options.idempotencyKey ?? "none"
      if (limited > 0) {
        limited--
        // Refuses that attempt only: says nothing of the earlier press's rotation.
        throw new PaydeskApiError(429, "too_many_requests", "too many requests", "req_1")
      }
      if (!made.has(key)) made.set(key, `sk_sign_${made.size + 1}`)
      if (lost > 0) {
        lost--
        throw new PaydeskConnectionError("POST rotate: no answer", 2, { outcomeUnknown: true, idempotencyKey: key })
      }
      return { terminal_id: "term-1", signing_secret: made.get(key)!, rotated_at: "2026-01-01T00:00:00.000Z", previous_secret_expires_at: null }
    })
    const { root } = show(SettingsPage!, { terminals: { get: async () => terminal }, apiKeys: { list: async () => [] }, signingSecret: { rotate } })
    await vi.waitFor(() => expect(root.textContent).toContain("Shop"))
    const press = async () => {
      click(button(root, "Rotate signing secret"))
      await rendered()
      click(button(root, "Confirm"))
      await vi.waitFor(() => expect(button(root, "Rotate signing secret")).toBeDefined())
    }
    await press()
    await vi.waitFor(() => expect(root.textContent).toContain("No answer came: the secret may have been rotated."))
    // A reload of the page keeps the key too: it lives in the tab.
    expect(JSON.parse(sessionStorage.getItem("paydesk.pendingRotation:term-1") ?? "null")?.key).toBe(rotate.mock.calls[0]![0].idempotencyKey)
    // A refusal of that attempt alone (429) keeps the key: the lost press may have rotated.
    limited = 1
    await press()
    await vi.waitFor(() => expect(rotate).toHaveBeenCalledTimes(2))
    expect(JSON.parse(sessionStorage.getItem("paydesk.pendingRotation:term-1") ?? "null")?.key).toBe(rotate.mock.calls[0]![0].idempotencyKey)
    await press()
    await vi.waitFor(() => expect(root.textContent).toContain("sk_sign_1"))
    expect(sessionStorage.getItem("paydesk.pendingRotation:term-1")).toBeNull()
    await press()
    await vi.waitFor(() => expect(root.textContent).toContain("sk_sign_2"))
    const keys = rotate.mock.calls.map(([options]) => options.idempotencyKey)
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(keys[1]).toBe(keys[0])
    expect(keys[2]).toBe(keys[0])
    expect(keys[3]).not.toBe(keys[0])
    expect(made.size).toBe(2)
  })

  it("a key shown once and then revoked is no longer shown as a key to copy; revoking another key leaves it shown", async () => {
    const { ApiKeys } = await load("ApiKeys")
    const listed: Array<{ id: string; prefix: string; subscription_write: boolean; created_at: string; revoked_at: string | null }> = [
      { id: "key-old", prefix: "pk_old", subscription_write: false, created_at: "2026-01-01T00:00:00.000Z", revoked_at: null }
    ]
    const client = {
      apiKeys: {
        list: async () => listed.map((k) => ({ ...k })),
        create: async () => {
          const key = { id: `key-${listed.length}`, prefix: `pk_new${listed.length}`, subscription_write: false, created_at: "2026-01-02T00:00:00.000Z", revoked_at: null }
          listed.push(key)
          return { ...key, api_key: `${key.prefix}_SECRET` }
        },
        revoke: async (id: string) => {
          listed.find((k) => k.id === id)!.revoked_at = "2026-01-03T00:00:00.000Z"
        }
      }
    }
    const { root } = show(ApiKeys!, client)
    const revokeButton = (prefix: string) => findAll(root, (e) => e.localName === "button" && e.getAttribute("aria-label") === `Revoke ${prefix}`)[0]
    const revoke = async (prefix: string) => {
      await vi.waitFor(() => expect(revokeButton(prefix)).toBeDefined())
      click(revokeButton(prefix)!)
      await rendered()
      click(button(root, "Confirm"))
      await vi.waitFor(() => expect(root.textContent).not.toContain(`Revoke key ${prefix}`))
    }
    click(button(root, "Create API key"))
    await vi.waitFor(() => expect(root.textContent).toContain("pk_new1_SECRET"))
    await revoke("pk_old")
    await rendered()
    expect(root.textContent).toContain("pk_new1_SECRET")
    await revoke("pk_new1")
    await vi.waitFor(() => expect(root.textContent).not.toContain("pk_new1_SECRET"))
    expect(root.textContent).not.toContain("New API key (shown only now")
  })

  it("gives the conversion time's local equivalent, with the day when it moves", async () => {
    const { conversionHint } = await load("TerminalForm")
    const hint = conversionHint as unknown as (t: unknown, text: string, now: Date, timeZone: string) => string | null
    const now = new Date("2026-07-15T12:00:00Z")
    expect(hint(translator("en"), "18:00", now, "Asia/Vladivostok")).toBe("18:00 Moscow time is 01:00 the next day in your time zone.")
    expect(hint(translator("ru"), "18:00", now, "Asia/Vladivostok")).toBe("18:00 по Москве — это 01:00 следующего дня по вашему времени.")
    expect(hint(translator("en"), "01:30", now, "America/Los_Angeles")).toBe("01:30 Moscow time is 15:30 the day before in your time zone.")
    expect(hint(translator("en"), "18:00", now, "Asia/Yekaterinburg")).toBe("18:00 Moscow time is 20:00 in your time zone.")
    expect(hint(translator("en"), "18:00", now, "Europe/Moscow")).toBeNull()
    expect(hint(translator("en"), "25:00", now, "Asia/Vladivostok")).toBeNull()
    expect(hint(translator("en"), "", now, "Asia/Vladivostok")).toBeNull()
  })
})

const rlo = "\u202e"
const pdi = "\u2069"
const bidiControls = /[\u202a-\u202e\u2066-\u2069]/

/** The text of `node` outside every `<bdi>` (the dashboard's own text). */
const ownText = (node: FakeNode): string =>
  node instanceof FakeElement ? (node.localName === "bdi" ? "" : node.childNodes.map(ownText).join("")) : node.textContent

/** The texts of the `<bdi>` elements under `node`. */
const isolatedTexts = (node: FakeElement): ReadonlyArray<string> => findAll(node, (e) => e.localName === "bdi").map((e) => e.textContent)

/** The first element under `node` whose own (not isolated) text contains `text`. */
const elementWith = (node: FakeElement, name: string, text: string): FakeElement => {
  const found = findAll(node, (e) => e.localName === name && e.textContent.includes(text))[0]
  if (found === undefined) throw new Error(`no <${name}> with "${text}" in: ${node.textContent}`)
  return found
}

describe("Merchant and operator texts (bidi isolation)", () => {
  const charge = (cycle: number, attempt: number, message: string | null) => ({
    id: `ch-${cycle}-${attempt}`, payment_id: null, status: "fail", validation_status: "accepted", validation_reason: null,
    cycle_number: cycle, attempt, amount_rub: "100.00", expected_amount_rub: "100.00", scheduled_at: "2026-01-02T10:00:00.000Z",
    actual_at: null, created_at: "2026-01-02T10:00:00.000Z", message
  })

  it("a subscription's page isolates its reference, plan code and charge messages; no override reaches the page's own text", async () => {
    const { SubscriptionPage } = await load("SubscriptionPage")
    const s = { ...subscription(1), merchant_subscription_ref: `${pdi}${rlo}member-1`, plan_code: `${rlo}gold`, billing_status: "review" }
    const client = { subscriptions: { get: async () => s, charges: async () => [charge(1, 1, `${rlo}declined by bank`)] } }
    const { root } = show(SubscriptionPage!, client, { props: { id: "sub_1" } })
    await vi.waitFor(() => expect(root.textContent).toContain("Charge history"))
    const title = elementWith(root, "h1", "Subscription")
    // The stray PDI is dropped: it would close the <bdi>'s own isolate and free the override.
    expect(isolatedTexts(title)).toEqual([`${rlo}member-1`])
    expect(ownText(title)).toBe("Subscription ")
    expect(ownText(elementWith(root, "dd", "v1"))).toBe(" v1 (monthly)")
    expect(isolatedTexts(root)).toEqual([`${rlo}member-1`, `${rlo}gold`, `${rlo}declined by bank`])
    click(button(root, "Stop"))
    await rendered()
    const question = findAll(root, (e) => e.getAttribute("id") === "stop-question")[0]!
    expect(ownText(question)).toBe("Stop subscription ? No further charges will be made.")
    expect(isolatedTexts(question)).toEqual([`${rlo}member-1`])
    expect(ownText(root)).not.toMatch(bidiControls)
  })

  it("the subscriptions list isolates references and plan codes, in the rows and in the stop's question and message", async () => {
    const { SubscriptionsPage } = await load("SubscriptionsPage")
    const s = { ...subscription(1), merchant_subscription_ref: `${rlo}member-1`, plan_code: `${rlo}gold` }
    const stop = vi.fn(async () => ({ ...s, billing_status: "stop_pending" }))
    const client = { subscriptions: { list: vi.fn(async () => pageOf([s], 1, 20)), stop } }
    const { root } = show(SubscriptionsPage!, client)
    await vi.waitFor(() => expect(root.textContent).toContain("Page 1 of 1 (1 in all)"))
    expect(isolatedTexts(root)).toEqual([`${rlo}member-1`, `${rlo}gold`])
    // The stop button's accessible name carries the reference without bidi controls (an attribute cannot isolate).
    expect(button(root, "Stop").getAttribute("aria-label")).toBe("Stop member-1")
    click(button(root, "Stop"))
    await rendered()
    expect(ownText(findAll(root, (e) => e.getAttribute("id") === "stop-question")[0]!)).toBe("Stop subscription ? No further charges will be made.")
    click(button(root, "Confirm"))
    await vi.waitFor(() => expect(root.textContent).toContain("is stopping."))
    expect(ownText(elementWith(root, "p", "is stopping."))).toBe("Subscription  is stopping.")
    expect(ownText(root)).not.toMatch(bidiControls)
  })

  it("payments, payouts, terminal settings and an address's ignored values show merchant, operator and link texts isolated", async () => {
    const { PaymentsPage } = await load("PaymentsPage")
    const search = `?from=${encodeURIComponent(`${rlo}2026`)}&page=${encodeURIComponent(`${rlo}x`)}`
    const payments = { payments: { list: async () => pageOf([{ ...payment(1), order_id: `${rlo}order-1` }], 1, 20) } }
    const list = show(PaymentsPage!, payments, { path: `/dashboard/payments${search}`, props: { search } }).root
    await vi.waitFor(() => expect(list.textContent).toContain("Page 1 of 1 (1 in all)"))
    expect(isolatedTexts(list)).toEqual([`from=${rlo}2026`, `page=${rlo}x`, `${rlo}order-1`])
    expect(ownText(elementWith(list, "p", "Ignored"))).toBe("Ignored in the address, not valid: , .")
    expect(ownText(list)).not.toMatch(bidiControls)
    render(null, list as unknown as Element)

    const { PaymentPage } = await load("PaymentPage")
    const one = { ...payment(1), order_id: `${rlo}order-1`, description: `${rlo}beans ${pdi}`, terminal_id: "term-1", paid_at: null, expires_at: null }
    const page = show(PaymentPage!, { payments: { get: async () => one }, events: { list: async () => ({ items: [], next_cursor: null }), get: vi.fn() } }, { props: { id: "pay_1" } }).root
    await vi.waitFor(() => expect(page.textContent).toContain("Timeline"))
    expect(ownText(elementWith(page, "h1", "Payment"))).toBe("Payment ")
    expect(isolatedTexts(page)).toEqual([`${rlo}order-1`, `${rlo}beans `])
    expect(ownText(page)).not.toMatch(bidiControls)
    render(null, page as unknown as Element)

    const { PayoutsPage } = await load("PayoutsPage")
    const rejected = { ...payoutsClient(1), payouts: { list: async () => pageOf([{ ...payout(1), reject_reason: `${rlo}wallet on a sanctions list` }], 1, 20) } }
    const payouts = show(PayoutsPage!, rejected).root
    await vi.waitFor(() => expect(payouts.textContent).toContain("Page 1 of 1 (1 in all)"))
    expect(isolatedTexts(payouts)).toEqual([`${rlo}wallet on a sanctions list`])
    expect(ownText(payouts)).not.toMatch(bidiControls)
    render(null, payouts as unknown as Element)

    const { SettingsPage } = await load("SettingsPage")
    const terminal = {
      id: "term-1", terminal_id: "term-1", account_id: "acc-1", name: `${rlo}Shop`, status: "active", h2h: false, callback_url: null, success_redirect_url: null,
      fail_redirect_url: null, conversion_mode: "instant", conversion_time: null, show_platform_branding: true, updated_at: "2026-01-01T00:00:00.000Z",
      callback_endpoint: { status: "unknown", last_attempt_at: null, last_error: null, failing_since: null }, previous_secret_expires_at: null
    }
    const settings = show(SettingsPage!, { terminals: { get: async () => terminal }, apiKeys: { list: async () => [] } }).root
    await vi.waitFor(() => expect(settings.textContent).toContain("Shop"))
    expect(isolatedTexts(settings)).toEqual([`${rlo}Shop`])
    expect(ownText(settings)).not.toMatch(bidiControls)
  })

  it("balances a text's isolates inside its <bdi>, and takes every bidi control out where no element can isolate (tooltips, options)", async () => {
    const { balanceIsolates, withoutBidiControls } = await import("../src/Bidi.js")
    expect(balanceIsolates(`a${pdi}b`)).toBe("ab")
    expect(balanceIsolates(`\u2067a${pdi}b${pdi}`)).toBe(`\u2067a${pdi}b`)
    expect(balanceIsolates("\u2068a\nb\u2066")).toBe(`\u2068a${pdi}\nb\u2066${pdi}`)
    expect(withoutBidiControls(`\u202aa\u202bb\u202cc\u202dd${rlo}e\u2066f\u2067g\u2068h${pdi}`)).toBe("abcdefgh")
    // Whatever the text: only PDIs are added or dropped, and every isolate it opens is closed in order.
    const bidi = fc.constantFrom("\u202a", "\u202b", "\u202c", "\u202d", rlo, "\u2066", "\u2067", "\u2068", pdi, "\n", "a", "\u05d0", " ")
    fc.assert(fc.property(fc.array(bidi).map((chars) => chars.join("")), (text) => {
      const balanced = balanceIsolates(text)
      expect(balanced.replaceAll(pdi, "")).toBe(text.replaceAll(pdi, ""))
      let open = 0
      for (const char of balanced) {
        if ("\u2066\u2067\u2068".includes(char)) open += 1
        else if (char === pdi) open -= 1
        else if (char === "\n") expect(open).toBe(0)
        expect(open).toBeGreaterThanOrEqual(0)
      }
      expect(open).toBe(0)
    }))
  })
})

describe("Charge history", () => {
  it("shows a charge's cycle and attempt in columns of their own (cycle 0, attempt 1 read as \"0.1\")", async () => {
    const { SubscriptionPage } = await load("SubscriptionPage")
    const charge = (cycle: number, attempt: number) => ({
      id: `ch-${cycle}-${attempt}`, payment_id: null, status: "payed", validation_status: "accepted", validation_reason: null,
      cycle_number: cycle, attempt, amount_rub: "100.00", expected_amount_rub: "100.00", scheduled_at: "2026-01-02T10:00:00.000Z",
      actual_at: null, created_at: "2026-01-02T10:00:00.000Z", message: null
    })
    const client = { subscriptions: { get: async () => ({ ...subscription(1), billing_status: "review" }), charges: async () => [charge(1, 2), charge(0, 1)] } }
    for (const [language, header] of [["en", ["Cycle", "Attempt"]], ["ru", ["Цикл", "Попытка"]]] as const) {
      const { root } = show(SubscriptionPage!, client, { language, props: { id: "sub_1" } })
      await vi.waitFor(() => expect(findAll(root, (e) => e.localName === "table")).toHaveLength(1))
      const table = findAll(root, (e) => e.localName === "table")[0]!
      expect(findAll(table, (e) => e.localName === "th").slice(0, 2).map((e) => e.textContent), language).toEqual(header)
      const cells = findAll(table, (e) => e.localName === "tr").slice(1).map((row) => findAll(row, (e) => e.localName === "td").slice(0, 2).map((e) => e.textContent))
      expect(cells, language).toEqual([["1", "2"], ["0", "1"]])
      for (const joined of ["0.1", "1.2"]) expect(table.textContent, language).not.toContain(joined)
      render(null, root as unknown as Element)
    }
  })
})

describe("README", () => {
  it("lists the sign-in form's own fields (e-mail and password, no terminal ID)", async () => {
    const { SignIn } = await load("SignIn")
    const { root } = show(SignIn!, {}, { props: { t: translator("en"), ended: false, onSignedIn: () => undefined, onEnded: () => undefined } })
    const fields = findAll(root, (e) => e.localName === "input").map((e) => e.getAttribute("name"))
    expect(fields).toEqual(["email", "password"])
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8").replace(/\s+/g, " ")
    const signIn = /sign-in \(([^)]*)\)/.exec(readme)?.[1]
    expect(signIn?.split(/[,;]/)[0]).toBe("e-mail")
    expect(signIn?.split(/[,;]/)[1]?.trim()).toBe("password")
    expect(signIn).not.toMatch(/terminal ID/i)
  })
})

describe("Error texts", () => {
  type Describe = (t: unknown, language: Language, error: unknown) => string
  const noAnswerRu = "Сервер не ответил: проверьте подключение и повторите попытку"
  const noAnswerEn = "No answer from the server: check the connection and try again"

  it("a call that got no answer says so in the page's language (the client's English detail only in English; none on the sign-in form)", async () => {
    const { describeError } = await load("App") as unknown as { describeError: Describe }
    const { signInErrorText } = await load("SignIn") as unknown as { signInErrorText: Describe }
    const lost = new PaydeskConnectionError("GET /api/v1/payments: no answer (fetch failed) after 3 attempts", 3)
    for (const [describeOf, english, generic] of [
      [describeError, `${noAnswerEn} (GET /api/v1/payments: no answer (fetch failed) after 3 attempts)`, "Что-то пошло не так: boom"],
      [signInErrorText, noAnswerEn, "Что-то пошло не так"]
    ] as const) {
      expect(describeOf(translator("ru"), "ru", lost)).toBe(noAnswerRu)
      expect(describeOf(translator("en"), "en", lost)).toBe(english)
      // Any other error keeps the generic text (with its own message on the pages).
      expect(describeOf(translator("ru"), "ru", new Error("boom"))).toBe(generic)
    }
  })
})

describe("Pending writes", () => {
  it("keep one key per kind of write and terminal: a write on another terminal meanwhile leaves the first one's key (a review)", async () => {
    const { pendingKey, settled, slotOf } = await import("../src/PendingWrite.js")
    install("/dashboard/")
    const onA = pendingKey(slotOf("paydesk.pendingPayout", "term-a"), "payout 1000 on A")
    const onB = pendingKey(slotOf("paydesk.pendingPayout", "term-b"), "payout 5 on B")
    expect(onB).not.toBe(onA)
    expect(pendingKey(slotOf("paydesk.pendingPayout", "term-a"), "payout 1000 on A")).toBe(onA)
    // Another request on the same terminal gets a key of its own; settled, the same request a new one.
    const other = pendingKey(slotOf("paydesk.pendingPayout", "term-a"), "payout 7 on A")
    expect(other).not.toBe(onA)
    settled(slotOf("paydesk.pendingPayout", "term-a"))
    expect(pendingKey(slotOf("paydesk.pendingPayout", "term-a"), "payout 7 on A")).not.toBe(other)
    expect(pendingKey(slotOf("paydesk.pendingPayout", "term-b"), "payout 5 on B")).toBe(onB)
  })

  it("are settled by an answer that judged the request, not by one that refused that attempt alone", async () => {
    const { settles } = await import("../src/PendingWrite.js")
    const api = (status: number, code: string) => new PaydeskApiError(status, code as never, "x", "req")
    for (const judged of [api(400, "invalid_request"), api(404, "not_found"), api(422, "invalid_request"), api(409, "idempotency_conflict")]) expect(settles(judged), judged.code).toBe(true)
    for (const attempt of [api(401, "unauthorized"), api(403, "forbidden"), api(408, "request_timeout"), api(429, "too_many_requests"), api(409, "write_conflict"), api(500, "internal_error"),
      new PaydeskConnectionError("no answer", 3, { outcomeUnknown: true }), new Error("session ended")]) {
      expect(settles(attempt), String(attempt)).toBe(false)
    }
  })
})
