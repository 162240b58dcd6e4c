import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Operator, Payments, PayoutRepository } from "@paydesk/core"
import { Kit, MemoryRateSource } from "@paydesk/testkit"
import { expectError, json, keyCalls, make, shape, type TestApp } from "./TestApp.js"

let t: TestApp
let merchant: Kit.Merchant

beforeEach(async () => {
  t = await make()
  merchant = await t.merchant()
})
afterEach(() => t.close())

const call = (method: "GET" | "POST" | "PUT", url: string, payload?: unknown, headers: Record<string, string> = {}) =>
  keyCalls(t.app, () => merchant.apiKey)(method, url, payload, headers)

/** 9500.00 RUB paid at 95.00 gives 100 USDT available. */
const fund = async () => {
  const payment = json(await call("POST", "/payments", { amount: "9500", order_id: `fund-${crypto.randomUUID()}` }))
  await t.run(Payments.settle(payment.id, "paid"))
}
const wallet = "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"
const payoutCount = () => t.run(Effect.flatMap(PayoutRepository, (r) => r.list(merchant.terminal.id, { limit: 100, offset: 0 })).pipe(Effect.map((r) => r.total)))

describe("MerchantApi terminals, balance, rate and payouts", () => {
  it("changes terminal settings and answers the terminal", async () => {
    const response = await call("PUT", `/terminals/${merchant.terminal.id}`, {
      callback_url: "https://shop.example/hooks",
      success_redirect_url: "https://shop.example/ok",
      fail_redirect_url: null,
      conversion_mode: "scheduled",
      conversion_time: "10:30",
      show_platform_branding: false
    })
    expect(response.statusCode).toBe(200)
    expect(shape("Terminal", json(response))).toMatchObject({
      id: merchant.terminal.id,
      callback_url: "https://shop.example/hooks",
      success_redirect_url: "https://shop.example/ok",
      fail_redirect_url: null,
      conversion_mode: "scheduled",
      conversion_time: "10:30",
      show_platform_branding: false
    })
    // Only the fields sent change.
    const partial = json(await call("PUT", `/terminals/${merchant.terminal.id}`, { conversion_mode: "instant" }))
    expect(partial).toMatchObject({ conversion_mode: "instant", callback_url: "https://shop.example/hooks", show_platform_branding: false })
    expect(json(await call("PUT", `/terminals/${merchant.terminal.id.toUpperCase()}`, {})).id).toBe(merchant.terminal.id)
    // null removes a URL; an empty one is refused, saying so, and changes nothing.
    for (const field of ["callback_url", "success_redirect_url", "fail_redirect_url"]) {
      expectError(await call("PUT", `/terminals/${merchant.terminal.id}`, { [field]: "", conversion_mode: "scheduled" }), 400, "invalid_request", `${field} must be an http or https URL; null removes it`)
    }
    // A control character is no part of a URL (RFC 3986 percent-encodes it): refused, as the payer page would show it.
    for (const field of ["callback_url", "success_redirect_url", "fail_redirect_url"]) {
      expectError(await call("PUT", `/terminals/${merchant.terminal.id}`, { [field]: "https://shop.example/ok\u009b31m", conversion_mode: "scheduled" }), 400, "invalid_request", `${field} must be an http or https URL of at most 2048 characters`)
    }
    const cleared = json(await call("PUT", `/terminals/${merchant.terminal.id}`, { callback_url: null }))
    expect(cleared).toMatchObject({ callback_url: null, success_redirect_url: "https://shop.example/ok", conversion_mode: "instant" })
  })

  it("refuses unknown fields and wrong settings types with 400, changing nothing", async () => {
    const url = `/terminals/${merchant.terminal.id}`
    expectError(await call("PUT", url, { callback_url: "https://a.example", api_key: "x" }), 400, "invalid_request", "unknown field api_key")
    expect(expectError(await call("PUT", url, { show_platform_branding: "no" }), 400, "invalid_request").field).toBe("show_platform_branding")
    expect(expectError(await call("PUT", url, { conversion_mode: "daily" }), 400, "invalid_request").field).toBe("conversion_mode")
    expect(expectError(await call("PUT", url, { callback_url: "ftp://x" }), 400, "invalid_request").field).toBe("callback_url")
    expect(expectError(await call("PUT", url, { conversion_time: "25:00" }), 400, "invalid_request").field).toBe("conversion_time")
    expectError(await call("PUT", url, "[]", { "content-type": "application/json" }), 400, "invalid_json_body", "invalid json body")
    expectError(await call("PUT", "/terminals/not-a-uuid", {}), 403, "access_denied", "terminal access denied")
    const unchanged = json(await call("PUT", url, {}))
    expect(unchanged).toMatchObject({ callback_url: merchant.terminal.callbackUrl, conversion_mode: "instant", show_platform_branding: true })
  })

  it("reads the balance and the rate", async () => {
    const empty = await call("GET", "/balance")
    expect(shape("Balance", json(empty))).toEqual({ terminal_id: merchant.terminal.id, available_usdt: "0.000000", hold_usdt: "0.000000", pending_rub: "0.00" })
    await fund()
    expect(json(await call("GET", `/balance?terminal_id=${merchant.terminal.id}`))).toMatchObject({ available_usdt: "100.000000" })
    expectError(await call("GET", "/balance?terminal=x"), 400, "invalid_request", "unknown query parameter terminal")

    const rate = await call("GET", "/rate")
    expect(shape("Rate", json(rate))).toEqual({ rate: "95.00", updated_at: "1970-01-01T00:00:00.000Z" })
    await t.run(Effect.flatMap(MemoryRateSource.MemoryRateSource, (r) => r.setForTerminal(merchant.terminal.id, 96_500_000n, Date.parse("2026-04-01T09:00:00.000Z"))))
    expect(json(await call("GET", `/rate?terminal_id=${merchant.terminal.id}`))).toEqual({ rate: "96.50", updated_at: "2026-04-01T09:00:00.000Z" })
    expect(json(await call("GET", "/rate")).rate).toBe("95.00")
    const other = await t.merchant()
    expectError(await call("GET", `/rate?terminal_id=${other.terminal.id}`), 403, "access_denied", "terminal access denied")
    await t.run(Effect.flatMap(MemoryRateSource.MemoryRateSource, (r) => r.setUnavailable(true)))
    expectError(await call("GET", "/rate"), 503, "provider_unavailable", "provider not available")
  })

  it("creates a payout (200), replays its idempotency key (200), conflicts on another body (409) and lists payouts", async () => {
    await fund()
    const body = { amount_usdt: "40.5", wallet_address: wallet, network: "TRC-20", idempotency_key: "po-1" }
    const created = await call("POST", "/payouts", body)
    expect(created.statusCode).toBe(200)
    const payout = shape("Payout", json(created)) as Record<string, unknown>
    expect(payout).toMatchObject({ terminal_id: merchant.terminal.id, amount_usdt: "40.500000", status: "created", network: "TRC-20", idempotency_key: "po-1" })
    expect(payout["id"]).toMatch(/^po_[0-9a-f-]{36}$/)
    const replay = await call("POST", `/payouts?terminal_id=${merchant.terminal.id}`, body)
    expect(replay.statusCode).toBe(200)
    expect(json(replay).id).toBe(payout["id"])
    expectError(await call("POST", "/payouts", { ...body, amount_usdt: "41" }), 409, "idempotency_conflict", "idempotency key conflicts with another request")
    expect(json(await call("GET", "/balance"))).toMatchObject({ available_usdt: "59.500000", hold_usdt: "40.500000" })

    const list = await call("GET", "/payouts")
    expect(shape("PayoutPage", json(list))).toMatchObject({ total: 1, page: 1, per_page: 50 })
    expect(json(list).items[0].id).toBe(payout["id"])
    expect(json(await call("GET", "/payouts?page=2"))).toMatchObject({ items: [], total: 1, page: 2 })
    expect(expectError(await call("GET", "/payouts?page=x"), 400, "invalid_request").field).toBe("page")
  })

  it("a disabled terminal: a payout's replay is answered (its retry learns it was made), a new payout is 400 terminal is unavailable", async () => {
    await fund()
    const body = { amount_usdt: "10", wallet_address: wallet, network: "TRC-20", idempotency_key: "po-before" }
    const made = json(await call("POST", "/payouts", body))
    await t.run(Operator.setTerminalStatus(merchant.terminal.id, "disabled"))
    const replay = await call("POST", "/payouts", body)
    expect([replay.statusCode, json(replay).id]).toEqual([200, made.id])
    expectError(await call("POST", "/payouts", { ...body, idempotency_key: "po-after" }), 400, "terminal_unavailable", "terminal is unavailable")
    expectError(await call("POST", "/payouts", { ...body, idempotency_key: "po-before", amount_usdt: "11" }), 409, "idempotency_conflict", "idempotency key conflicts with another request")
    expect(await payoutCount()).toBe(1)
    expect(json(await call("GET", "/balance"))).toMatchObject({ available_usdt: "90.000000", hold_usdt: "10.000000" })
  })

  it("payouts: insufficient balance, max active payouts reached, bad bodies create nothing", async () => {
    const body = { amount_usdt: "1", wallet_address: wallet, network: "TRC-20" }
    expectError(await call("POST", "/payouts", body), 400, "insufficient_balance", "insufficient balance")
    await fund()
    expectError(await call("POST", "/payouts", { ...body, amount_usdt: "100.000001" }), 400, "insufficient_balance", "insufficient balance")
    expect(expectError(await call("POST", "/payouts", { ...body, amount_usdt: 1 }), 400, "usdt_amount_malformed")).toMatchObject({ message: expect.stringMatching(/amount_usdt/), field: "amount_usdt" })
    expect(expectError(await call("POST", "/payouts", { ...body, amount_usdt: "1.0000001" }), 400, "usdt_amount_malformed").field).toBe("amount_usdt")
    expect(expectError(await call("POST", "/payouts", { ...body, amount_usdt: "0" }), 400, "amount_not_positive").field).toBe("amount_usdt")
    // Beyond what an amount column holds (PostgreSQL's numeric overflow answered 500): refused as such;
    // the largest it holds is only beyond the balance.
    expect(expectError(await call("POST", "/payouts", { ...body, amount_usdt: "100000000000000" }), 400, "invalid_request", "amount_usdt must not exceed 99999999999999.999999").field)
      .toBe("amount_usdt")
    expectError(await call("POST", "/payouts", { ...body, amount_usdt: "99999999999999.999999" }), 400, "insufficient_balance", "insufficient balance")
    expect(expectError(await call("POST", "/payouts", { ...body, network: "BTC" }), 400, "invalid_request").field).toBe("network")
    expect(expectError(await call("POST", "/payouts", { ...body, wallet_address: "bad wallet!" }), 400, "invalid_request").field).toBe("wallet_address")
    expect(expectError(await call("POST", "/payouts", { amount_usdt: "1", network: "TON" }), 400, "invalid_request", "wallet_address is required").field).toBe("wallet_address")
    expectError(await call("POST", "/payouts", { ...body, memo: "x" }), 400, "invalid_request", "unknown field memo")
    // Payouts have no sandbox: a client in sandbox mode is refused, never given a live payout.
    expect(expectError(await call("POST", "/payouts", body, { "X-Test-Mode": "true" }), 400, "invalid_request",
      "payouts have no sandbox: a payout sends real USDT from the live balance; send it without X-Test-Mode: true").field).toBe("X-Test-Mode")
    expect(expectError(await call("POST", "/payouts", body, { "X-Test-Mode": " TRUE " }), 400, "invalid_request").field).toBe("X-Test-Mode")
    expect(expectError(await call("POST", "/payouts", body, { "X-Test-Mode": "yes" }), 400, "invalid_request").field).toBe("X-Test-Mode")
    // An address of another network, a mistyped one and a burn address: refused before anything is held.
    expect(expectError(await call("POST", "/payouts", { ...body, network: "ERC-20" }), 400, "invalid_request",
      "wallet_address is a TRC-20 address, but the payout's network is ERC-20: choose network TRC-20, or give an ERC-20 address").field).toBe("wallet_address")
    expect(expectError(await call("POST", "/payouts", { ...body, network: "TON" }), 400, "invalid_request").message).toMatch(/^wallet_address is a TRC-20 address, but the payout's network is TON/)
    expect(expectError(await call("POST", "/payouts", { ...body, wallet_address: `${wallet.slice(0, 10)}X${wallet.slice(11)}` }), 400, "invalid_request",
      "wallet_address is not a TRC-20 address: its checksum does not match: a character is probably mistyped; copy the address again").field).toBe("wallet_address")
    expectError(await call("POST", "/payouts", { ...body, wallet_address: "T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb" }), 400, "invalid_request",
      "wallet_address is a TRC-20 burn address: USDT sent there is lost")
    expectError(await call("POST", "/payouts", { ...body, wallet_address: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t" }), 400, "invalid_request",
      "wallet_address is USDT's own token contract, not a wallet: USDT sent there is lost")
    // A checksummed (EIP-55) Ethereum address with one digit mistyped.
    expect(expectError(await call("POST", "/payouts", { ...body, network: "ERC-20", wallet_address: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAee" }), 400, "invalid_request",
      "wallet_address is not an ERC-20 address: its checksum does not match: a character is probably mistyped; copy the address again").field).toBe("wallet_address")
    expect(await payoutCount()).toBe(0)
    expect(json(await call("GET", "/balance"))).toMatchObject({ available_usdt: "100.000000", hold_usdt: "0.000000" })
    for (const [network, address] of [["ERC-20", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"], ["TON", "EQBbpICDZRnZno_y9CuIwQeUIKJVxNwriXTo_Q-Q9nGB5fDX"]]) {
      const created = await call("POST", "/payouts", { ...body, network, wallet_address: address })
      expect(json(created)).toMatchObject({ network, wallet_address: address, status: "created" })
    }
    // A TON address in standard base64 is stored in base64url (the same address).
    const standard = await call("POST", "/payouts", { ...body, network: "TON", wallet_address: "EQCHFsJOm+UOeYHn650gtw7TPMXpKEZ5Foc6UlS8ppKeL25F" })
    expect(json(standard)).toMatchObject({ network: "TON", wallet_address: "EQCHFsJOm-UOeYHn650gtw7TPMXpKEZ5Foc6UlS8ppKeL25F", status: "created" })
    expect((await call("POST", "/payouts", body, { "X-Test-Mode": "false" })).statusCode).toBe(200)
    expect((await call("POST", "/payouts", body)).statusCode).toBe(200)
    expectError(await call("POST", "/payouts", body), 409, "max_active_payouts", "max active payouts reached")
    expect(await payoutCount()).toBe(5)
  })

  it("payouts need terminal_id for a dashboard user", async () => {
    const pair = json(await t.app.inject({ method: "POST", url: "/api/v1/auth/login", payload: { email: merchant.ownerEmail, password: Kit.ownerPassword } }))
    const headers = { authorization: `Bearer ${pair.access_token}` }
    const body = { amount_usdt: "1", wallet_address: wallet, network: "TRC-20" }
    expectError(await t.app.inject({ method: "POST", url: "/api/v1/payouts", headers, payload: body }), 400, "terminal_id_required", "terminal_id is required")
    expectError(await t.app.inject({ method: "GET", url: "/api/v1/payouts", headers }), 400, "terminal_id_required", "terminal_id is required")
    const listed = await t.app.inject({ method: "GET", url: `/api/v1/payouts?terminal_id=${merchant.terminal.id}`, headers })
    expect(json(listed)).toMatchObject({ items: [], total: 0 })
    const insufficient = await t.app.inject({ method: "POST", url: `/api/v1/payouts?terminal_id=${merchant.terminal.id}`, headers, payload: body })
    expectError(insufficient, 400, "insufficient_balance")
  })
})
