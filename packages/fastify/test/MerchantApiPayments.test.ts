import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { gzipSync } from "node:zlib"
import { Effect, Option } from "effect"
import { Operator, PaymentRepository, Payments } from "@paydesk/core"
import { Fixtures } from "@paydesk/testkit"
import { expectError, json, keyHeaders, make, shape, type TestApp } from "./TestApp.js"

let t: TestApp
let apiKey: string
let terminalId: string

beforeEach(async () => {
  t = await make()
  const merchant = await t.merchant()
  apiKey = merchant.apiKey
  terminalId = merchant.terminal.id
})
afterEach(() => t.close())

const post = (payload: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({ method: "POST", url: "/api/v1/payments", headers: keyHeaders(apiKey, headers), payload: payload as string })
const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: "GET", url: `/api/v1${url}`, headers: keyHeaders(apiKey, headers) })
const countPayments = () => t.run(Effect.flatMap(PaymentRepository, (r) => r.list({ terminalId, environment: "all", recurring: null }, { limit: 100, offset: 0 })).pipe(Effect.map((r) => r.total)))

describe("MerchantApi payments", () => {
  it("creates a live payment (201), replays its order_id (200) and refuses another body for it (409)", async () => {
    const body = { amount: "1500,5", order_id: "order-1", description: "Coffee", metadata: { cart: 7, largest: 9007199254740991, price: 1.5 } }
    const created = await post(body)
    expect(created.statusCode).toBe(201)
    expect(created.headers["x-request-id"]).toMatch(/^req_/)
    const payment = shape("Payment", json(created)) as Record<string, unknown>
    expect(payment).toMatchObject({
      amount: "1500.50",
      payment_currency: "RUB",
      order_id: "order-1",
      status: "created",
      test: false,
      environment: "prod",
      payment_method: "sbp",
      metadata: { cart: 7, largest: 9007199254740991, price: 1.5 },
      subscription_id: null,
      recurring: false,
      terminal_id: terminalId
    })
    expect(payment["id"]).toMatch(/^pay_[0-9a-f-]{36}$/)
    expect(payment["pay_url"]).toMatch(/^http:\/\/pay\.test\/public\/payments\//)

    const replay = await post({ ...body, amount: "1500.50" })
    expect(replay.statusCode).toBe(200)
    expect(json(replay).id).toBe(payment["id"])

    expectError(await post({ ...body, amount: "1600" }), 409, "order_id_conflict", "order_id already used for another payment")
    expect(await countPayments()).toBe(1)
  })

  it("a disabled terminal: a payment's replay (order_id, Idempotency-Key; live and sandbox) is answered, a new payment is 400 terminal is unavailable", async () => {
    const live = json(await post({ amount: "10", order_id: "d-live" }))
    const sandbox = json(await post({ amount: "10", order_id: "d-sandbox", test: true }))
    const keyed = json(await post({ amount: "10", order_id: "d-keyed" }, { "idempotency-key": "k-1" }))
    await t.run(Operator.setTerminalStatus(terminalId, "disabled"))
    for (const [body, headers, id] of [
      [{ amount: "10", order_id: "d-live" }, {}, live.id],
      [{ amount: "10", order_id: "d-sandbox", test: true }, {}, sandbox.id],
      [{ amount: "10", order_id: "d-keyed" }, { "idempotency-key": "k-1" }, keyed.id]
    ] as const) {
      const replay = await post(body, headers)
      expect([body.order_id, replay.statusCode, json(replay).id]).toEqual([body.order_id, 200, id])
    }
    expectError(await post({ amount: "10", order_id: "d-new" }), 400, "terminal_unavailable", "terminal is unavailable")
    expectError(await post({ amount: "10", order_id: "d-new", test: true }), 400, "terminal_unavailable", "terminal is unavailable")
    expectError(await post({ amount: "11", order_id: "d-live" }), 409, "order_id_conflict", "order_id already used for another payment")
    expect(await countPayments()).toBe(3)
  })

  it("creates sandbox payments with test: true or X-Test-Mode: true", async () => {
    const byBody = json(await post({ amount: "10", order_id: "s-1", test: true }))
    expect(byBody).toMatchObject({ test: true, environment: "sandbox", payment_method: "sbp_test" })
    const byHeader = await post({ amount: "10", order_id: "s-2" }, { "x-test-mode": "true" })
    expect(byHeader.statusCode).toBe(201)
    expect(json(byHeader)).toMatchObject({ test: true, environment: "sandbox" })
    expectError(await post({ amount: "10", order_id: "s-3" }, { "x-test-mode": "yes" }), 400, "invalid_request", "X-Test-Mode must be true or false")
    // The two given and disagreeing: 400 on test, nothing created (it used to be a sandbox payment either way).
    expectError(await post({ amount: "10", order_id: "s-4", test: false }, { "x-test-mode": "true" }), 400, "invalid_request", "test (false) and X-Test-Mode (true) disagree: send one of them, or the same value")
    expectError(await post({ amount: "10", order_id: "s-4", test: true }, { "x-test-mode": "false" }), 400, "invalid_request", "test (true) and X-Test-Mode (false) disagree: send one of them, or the same value")
    expect(json(await get("/payments?environment=all")).total).toBe(2)
    // Agreeing, both are fine.
    expect(json(await post({ amount: "10", order_id: "s-4", test: true }, { "x-test-mode": "true" })).environment).toBe("sandbox")
    expect(json(await post({ amount: "10", order_id: "s-5", test: false }, { "x-test-mode": "false" })).environment).toBe("prod")
  })

  it("reads a payment by pay_<uuid> or bare uuid; another terminal's payment is not found", async () => {
    const created = json(await post({ amount: "99.99", order_id: "r-1" }))
    const byPrefixed = await get(`/payments/${created.id}`)
    expect(byPrefixed.statusCode).toBe(200)
    expect(shape("Payment", json(byPrefixed))).toEqual(created)
    const bare = await get(`/payments/${String(created.id).slice(4).toUpperCase()}`)
    expect(json(bare).id).toBe(created.id)
    const other = await t.merchant()
    const foreign = await t.app.inject({ method: "GET", url: `/api/v1/payments/${created.id}`, headers: keyHeaders(other.apiKey) })
    expectError(foreign, 404, "not_found", "payment not found")
    expectError(await get("/payments/nonsense"), 404, "not_found", "payment not found")
  })

  it("lists payments with filters and paging, and exports CSV", async () => {
    await post({ amount: "1", order_id: "l-1" })
    await post({ amount: "2", order_id: "l-2, \"quoted\"" })
    await post({ amount: "3", order_id: "l-3", test: true })
    const live = json(await get("/payments"))
    shape("PaymentPage", live)
    expect(live).toMatchObject({ total: 2, page: 1, per_page: 50 })
    expect(live.items.map((p: { order_id: string }) => p.order_id)).toEqual(["l-2, \"quoted\"", "l-1"])
    expect(json(await get("/payments?environment=sandbox")).total).toBe(1)
    expect(json(await get("/payments?environment=all")).total).toBe(3)
    expect(json(await get("/payments?environment=all&recurring=true")).total).toBe(0)
    expect(json(await get("/payments?recurring=false&page=2"))).toMatchObject({ items: [], total: 2, page: 2 })
    expect(json(await get(`/payments?terminal_id=${terminalId}`)).total).toBe(2)

    const csv = await get("/payments?format=csv&environment=all")
    expect(csv.statusCode).toBe(200)
    expect(csv.headers["content-type"]).toBe("text/csv; charset=utf-8")
    const lines = csv.body.split("\r\n")
    expect(lines[0]).toBe(Payments.csvColumns.join(","))
    expect(lines).toHaveLength(5) // header, 3 rows, trailing empty line
    expect(lines[2]).toContain("\"l-2, \"\"quoted\"\"\"")
    expect(lines[1]).toMatch(/^pay_[0-9a-f-]{36},l-3,\d{4}-\d\d-\d\dT[\d:.]+Z,created,3\.00,RUB,sandbox,false,,sbp_test,,,,,,$/)
  })

  it("a live paid payment shows what it credited (settlement), in the API and the CSV, and the settlements add up to the balance", async () => {
    const put = (url: string, payload: unknown) => t.app.inject({ method: "PUT", url: `/api/v1${url}`, headers: keyHeaders(apiKey), payload: payload as string })
    // Instant conversion at the kit's 95.00: 1000.50 RUB is 10.531578 USDT, rounded down.
    const instant = json(await post({ amount: "1000.50", order_id: "s-1" }))
    expect(instant.settlement).toBeNull()
    await t.run(Payments.settle(instant.id, "paid"))
    const converted = shape("Payment", json(await get(`/payments/${instant.id}`))) as Record<string, unknown>
    expect(converted.settlement).toEqual({ merchant_amount_rub: "1000.50", amount_usdt: "10.531578", rate: "95.00", converted_at: converted.paid_at })
    // Scheduled conversion: the roubles wait, no USDT, rate or time yet.
    expect((await put(`/terminals/${terminalId}`, { conversion_mode: "scheduled", conversion_time: "12:00" })).statusCode).toBe(200)
    const scheduled = json(await post({ amount: "900", order_id: "s-2" }))
    await t.run(Payments.settle(scheduled.id, "paid"))
    expect(json(await get(`/payments/${scheduled.id}`)).settlement).toEqual({ merchant_amount_rub: "900.00", amount_usdt: null, rate: null, converted_at: null })
    // Sandbox and unpaid payments credit nothing.
    const sandbox = json(await post({ amount: "5", order_id: "s-3", test: true }))
    await t.run(Effect.gen(function*() {
      const stored = Option.getOrThrow(yield* (yield* PaymentRepository).get(sandbox.id.slice(4)))
      yield* Payments.simulate(stored.payToken, { outcome: "paid", csrfToken: stored.csrfToken })
    }))
    expect(json(await get(`/payments/${sandbox.id}`))).toMatchObject({ status: "paid", settlement: null })
    await post({ amount: "7", order_id: "s-4" })
    // The balance is the settlements' sum.
    expect(json(await get("/balance"))).toMatchObject({ available_usdt: "10.531578", pending_rub: "900.00" })
    const rows = (await get("/payments?format=csv&environment=all")).body.split("\r\n").slice(1, -1).map((line) => line.split(","))
    const column = (name: string) => Payments.csvColumns.indexOf(name as typeof Payments.csvColumns[number])
    const byOrder = new Map(rows.map((r) => [r[column("order_id")], r]))
    const settled = (order: string) => ["merchant_amount_rub", "amount_usdt", "rate", "converted_at"].map((name) => byOrder.get(order)![column(name)])
    expect(settled("s-1")).toEqual(["1000.50", "10.531578", "95.00", converted.paid_at])
    expect(settled("s-2")).toEqual(["900.00", "", "", ""])
    expect(settled("s-3")).toEqual(["", "", "", ""])
    expect(settled("s-4")).toEqual(["", "", "", ""])
  })

  it("X-Test-Mode on a read is the default of its environment; one that disagrees with environment is 400", async () => {
    await post({ amount: "1", order_id: "m-1" })
    await post({ amount: "2", order_id: "m-2", test: true })
    const read = (url: string, mode: string) => get(url, { "x-test-mode": mode })
    const orders = async (url: string, mode: string) => json(await read(url, mode)).items.map((p: { order_id: string }) => p.order_id)
    // It was ignored: a merchant who sent X-Test-Mode: true read live payments.
    expect(await orders("/payments", "true")).toEqual(["m-2"])
    expect(await orders("/payments", " TRUE ")).toEqual(["m-2"])
    expect(await orders("/payments", "false")).toEqual(["m-1"])
    expect(await orders("/payments?environment=sandbox", "true")).toEqual(["m-2"])
    expect(json(await read("/payments/stats", "true"))).toEqual(json(await get("/payments/stats?environment=sandbox")))
    expect(json(await read("/payments/stats", "true"))).not.toEqual(json(await get("/payments/stats")))
    expect(json(await read("/payments/by-order?order_id=m-2", "true")).order_id).toBe("m-2")
    expectError(await read("/payments/by-order?order_id=m-2", "false"), 404, "not_found")
    for (const [url, mode, env] of [["/payments?environment=prod", "true", "prod"], ["/payments?environment=all", "true", "all"], ["/payments?environment=sandbox", "false", "sandbox"], ["/events?environment=prod", "true", "prod"]]) {
      expect(expectError(await read(url!, mode!), 400, "invalid_request", `environment (${env}) and X-Test-Mode (${mode}) disagree: send one of them, or agreeing values`).field).toBe("environment")
    }
    expect(expectError(await read("/payments", "yes"), 400, "invalid_request", "X-Test-Mode must be true or false").field).toBe("X-Test-Mode")
    // An environment that is not one is said to be so, header or not.
    expect(expectError(await read("/payments?environment=test", "true"), 400, "invalid_request").message).toMatch(/^environment must be one of/)
    expect(expectError(await read("/payments/by-order?order_id=m-2&environment=all", "true"), 400, "invalid_request").message).toMatch(/^environment must be/)
    // A read without an environment takes it as before (ignored there, as any header it does not read).
    expect((await read(`/payments/${json(await read("/payments", "false")).items[0].id}`, "true")).statusCode).toBe(200)
  })

  it("rejects bad list queries with the field named", async () => {
    expect(expectError(await get("/payments?environment=test"), 400, "invalid_request").field).toBe("environment")
    expect(expectError(await get("/payments?recurring=yes"), 400, "invalid_request").field).toBe("recurring")
    expect(expectError(await get("/payments?page=0"), 400, "invalid_request").field).toBe("page")
    expect(expectError(await get("/payments?format=xml"), 400, "invalid_request").field).toBe("format")
    expectError(await get("/payments?sort=asc"), 400, "invalid_request", "unknown query parameter sort")
    expectError(await get("/payments?page=1&page=2"), 400, "invalid_request")
    // A terminal_id that is not a UUID is a terminal the key does not have: 403 (spec, API key rule 3).
    expectError(await get("/payments?terminal_id=not-a-uuid"), 403, "access_denied", "terminal access denied")
    const other = await t.merchant()
    expectError(await get(`/payments?terminal_id=${other.terminal.id}`), 403, "access_denied", "terminal access denied")
  })

  it("gives statistics per status with totals", async () => {
    const a = json(await post({ amount: "100", order_id: "st-1" }))
    await post({ amount: "50.25", order_id: "st-2" })
    await post({ amount: "7", order_id: "st-3", test: true })
    await t.run(Payments.settle(a.id, "paid"))
    const stats = await get("/payments/stats")
    expect(stats.statusCode).toBe(200)
    const body = shape("PaymentStats", json(stats)) as Record<string, unknown>
    expect(body).toMatchObject({
      terminal_id: terminalId,
      environment: "prod",
      recurring: null,
      currency: "RUB",
      by_status: {
        created: { count: 1, amount: "50.25" },
        paid: { count: 1, amount: "100.00" },
        processing: { count: 0, amount: "0.00" },
        refunded: { count: 0, amount: "0.00" }
      },
      total: { count: 2, amount: "150.25" }
    })
    expect(json(await get("/payments/stats?environment=all")).total).toEqual({ count: 3, amount: "157.25" })
    expect(json(await get("/payments/stats?environment=sandbox&recurring=false")).by_status.created).toEqual({ count: 1, amount: "7.00" })
    expectError(await get("/payments/stats?page=1"), 400, "invalid_request", "unknown query parameter page")
  })

  it("narrows the list, the export and the statistics by status, order_id and a created range", async () => {
    const seed = (iso: string, overrides: { status?: "paid" | "created" | "expired"; environment?: "sandbox"; orderId: string; amount: bigint }) =>
      t.run(Fixtures.seedPayment(terminalId, { createdAt: Date.parse(iso), ...overrides }))
    await seed("2026-03-09T20:30:00Z", { status: "paid", orderId: "f-1", amount: 10_000n })
    await seed("2026-03-09T21:30:00Z", { status: "paid", orderId: "f-2", amount: 2_050n })
    await seed("2026-03-10T12:00:00Z", { status: "expired", orderId: "f-3", amount: 300n })
    await seed("2026-03-10T12:00:00Z", { status: "paid", environment: "sandbox", orderId: "f-4", amount: 400n })
    const orders = async (query: string) => (shape("PaymentPage", json(await get(`/payments?${query}`))) as { items: ReadonlyArray<{ order_id: string }> }).items.map((p) => p.order_id)
    expect(await orders("status=paid")).toEqual(["f-2", "f-1"])
    expect(await orders("status=paid&environment=all")).toEqual(["f-4", "f-2", "f-1"])
    expect(await orders("order_id=f-3")).toEqual(["f-3"])
    expect(await orders("order_id=missing")).toEqual([])
    expect(await orders(`created_from=${encodeURIComponent("2026-03-10T00:30:00+03:00")}`)).toEqual(["f-3", "f-2"])
    expect(await orders("created_to=2026-03-09T21:30:00Z")).toEqual(["f-1"])
    expect(json(await get("/payments?status=paid&limit=1")).total).toBe(2)
    const csv = (await get("/payments?format=csv&status=expired")).body.split("\r\n")
    expect(csv.slice(1, -1).map((line) => line.split(",")[1])).toEqual(["f-3"])
    expect(json(await get("/payments/stats?created_from=2026-03-10T00:00:00Z")).total).toEqual({ count: 1, amount: "3.00" })
    expect(json(await get("/payments/stats?status=paid")).total).toEqual({ count: 2, amount: "120.50" })

    // Per day: in Moscow the two paid ones fall on two days, in UTC on one.
    const daily = async (query: string) => {
      const response = await get(`/payments/stats/daily?created_from=2026-03-01T00:00:00Z&created_to=2026-03-31T00:00:00Z&${query}`)
      expect(response.statusCode).toBe(200)
      return shape("PaymentDailyStats", json(response)) as { time_zone: string; items: ReadonlyArray<{ date: string; total: unknown; by_status: Record<string, unknown> }> }
    }
    const utc = await daily("")
    expect(utc.time_zone).toBe("UTC")
    expect(utc.items.map((d) => [d.date, d.total])).toEqual([["2026-03-09", { count: 2, amount: "120.50" }], ["2026-03-10", { count: 1, amount: "3.00" }]])
    const moscow = await daily("time_zone=Europe/Moscow")
    expect(moscow.items.map((d) => [d.date, d.by_status["paid"], d.by_status["expired"]])).toEqual([
      ["2026-03-09", { count: 1, amount: "100.00" }, { count: 0, amount: "0.00" }],
      ["2026-03-10", { count: 1, amount: "20.50" }, { count: 1, amount: "3.00" }]
    ])
    expect((await daily("environment=sandbox")).items.map((d) => [d.date, d.total])).toEqual([["2026-03-10", { count: 1, amount: "4.00" }]])
  })

  it("refuses bad filters and daily ranges with the field named", async () => {
    expect(expectError(await get("/payments?status=lost"), 400, "invalid_request").field).toBe("status")
    expect(expectError(await get("/payments?created_from=yesterday"), 400, "invalid_request", "created_from must be an ISO 8601 date-time with Z or an offset").field).toBe("created_from")
    expect(expectError(await get("/payments?created_from=2026-03-02T00:00:00Z&created_to=2026-03-01T00:00:00Z"), 400, "invalid_request", "created_to must be later than created_from").field).toBe("created_to")
    const day = "/payments/stats/daily"
    expect(expectError(await get(`${day}?created_to=2026-03-01T00:00:00Z`), 400, "invalid_request").field).toBe("created_from")
    expect(expectError(await get(`${day}?created_from=2026-03-01T00:00:00Z`), 400, "invalid_request").field).toBe("created_to")
    expectError(await get(`${day}?created_from=2025-01-01T00:00:00Z&created_to=2026-03-01T00:00:00Z`), 400, "invalid_request", "created_from to created_to must span at most 366 days")
    for (const zone of ["Mars/Olympus", "Europe/Moscow;DROP", "x".repeat(65)]) {
      expect(expectError(await get(`${day}?created_from=2026-03-01T00:00:00Z&created_to=2026-03-02T00:00:00Z&time_zone=${encodeURIComponent(zone)}`), 400, "invalid_request",
        "time_zone must be an IANA time zone such as Europe/Moscow or UTC").field).toBe("time_zone")
    }
    expectError(await get(`${day}?created_from=2026-03-01T00:00:00Z&created_to=2026-03-02T00:00:00Z&page=1`), 400, "invalid_request", "unknown query parameter page")
  })

  it("rejects bodies with wrong types, missing or unknown fields, naming the field, and creates nothing", async () => {
    const cases: ReadonlyArray<readonly [unknown, string, string, string]> = [
      [{ amount: "1", order_id: "x", test: "yes" }, "invalid_request", "test", "test must be true, false or null"],
      [{ amount: "1", order_id: 5 }, "invalid_request", "order_id", "order_id must be a string"],
      [{ amount: "1" }, "invalid_request", "order_id", "order_id is required"],
      [{ amount: "1", order_id: "x", colour: "red" }, "invalid_request", "colour", "unknown field colour"],
      [{ amount: "1", order_id: "x", metadata: [1] }, "invalid_request", "metadata", "metadata must be a JSON object or null"],
      // An integer JSON cannot carry exactly (it came back changed: 12345678901234567890 as ...7000).
      [{ amount: "1", order_id: "x", metadata: { id: 12345678901234567890 } }, "invalid_request", "metadata", "metadata integers must be within ±9007199254740991 (2^53 - 1), which JSON carries exactly; send larger ones as strings"],
      [{ amount: "1", order_id: "x", metadata: { deep: { list: [1, 2 ** 60] } } }, "invalid_request", "metadata", "metadata integers must be within ±9007199254740991 (2^53 - 1), which JSON carries exactly; send larger ones as strings"],
      // A surrogate without its pair (JSON allows the escape; no JSON store keeps it), in a value or a key.
      [{ amount: "1", order_id: "x", metadata: { note: "half \ud800 pair" } }, "invalid_request", "metadata", "metadata must be valid Unicode text (a surrogate without its pair was sent)"],
      [{ amount: "1", order_id: "x", metadata: { ["\udc00key"]: 1 } }, "invalid_request", "metadata", "metadata must be valid Unicode text (a surrogate without its pair was sent)"],
      // The payment's key, which a store would write with U+FFFD for the lone half (so two keys would meet).
      [{ amount: "1", order_id: "x\udfffy" }, "invalid_request", "order_id", "order_id must be valid Unicode text (a surrogate without its pair was sent)"],
      [{ amount: "1", order_id: "\ud800", test: true }, "invalid_request", "order_id", "order_id must be valid Unicode text (a surrogate without its pair was sent)"],
      // A type error says what is expected.
      [{ amount: 100.5, order_id: "x" }, "amount_malformed", "amount", "amount must be a string like \"1000.50\" (roubles, at most two decimals)"],
      [{ amount: "1.234", order_id: "x" }, "amount_malformed", "amount", "amount malformed: rubles with at most two decimals"],
      [{ amount: "0", order_id: "x" }, "amount_not_positive", "amount", "amount must be greater than zero"],
      [{ amount: "1000000.01", order_id: "x" }, "invalid_request", "amount", "amount must not exceed 1000000.00"],
      [{ amount: "1", order_id: "x", payment_currency: "USD" }, "invalid_request", "payment_currency", "payment_currency must be RUB"],
      [[{ amount: "1", order_id: "x" }], "invalid_json_body", "", "invalid json body"],
      ["text", "invalid_json_body", "", "invalid json body"],
      [null, "invalid_json_body", "", "invalid json body"]
    ]
    for (const [body, code, field, message] of cases) {
      const error = expectError(await post(JSON.stringify(body), { "content-type": "application/json" }), 400, code, message)
      if (field !== "") expect(error.field).toBe(field)
    }
    // A number beyond the largest double parses as Infinity, which JSON writes as null (an outside
    // probe's 1e400 was stored and sent in callbacks as null).
    for (const metadata of ["{\"n\":1e400}", "{\"deep\":{\"list\":[1,-1e309]}}"]) {
      const error = expectError(await post(`{"amount":"1","order_id":"x","test":true,"metadata":${metadata}}`, { "content-type": "application/json" }), 400, "invalid_request",
        "metadata numbers must be within ±1.7976931348623157e308, the largest JSON numbers carry; send larger ones as strings")
      expect(error.field).toBe("metadata")
    }
    const proto = "{\"amount\":\"1\",\"order_id\":\"x\",\"__proto__\":{\"test\":true}}"
    expectError(await post(proto, { "content-type": "application/json" }), 400, "invalid_request", "unknown field __proto__")
    expectError(await t.app.inject({ method: "POST", url: "/api/v1/payments", headers: keyHeaders(apiKey) }), 400, "invalid_json_body", "invalid json body")
    expect(await countPayments()).toBe(0)
  })

  it("rejects malformed JSON, invalid UTF-8, oversized and non-JSON bodies with the error body, and creates nothing", async () => {
    const raw = (payload: string | Buffer, contentType = "application/json") =>
      t.app.inject({ method: "POST", url: "/api/v1/payments", headers: keyHeaders(apiKey, { "content-type": contentType }), payload })
    expectError(await raw("{\"amount\": \"1\", "), 400, "invalid_json_body", "invalid json body")
    expectError(await raw(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d])), 400, "invalid_json_body")
    const big = JSON.stringify({ amount: "1", order_id: "big", description: "x".repeat(70 * 1024) })
    expectError(await raw(big), 400, "body_too_large")
    expectError(await raw("amount=1&order_id=form", "application/x-www-form-urlencoded"), 415, "unsupported_media_type")
    expectError(await raw("<xml/>", "application/xml"), 415, "unsupported_media_type")
    // A JSON text sent as another type is refused too (a text/plain parser would take it).
    const json = JSON.stringify({ amount: "1", order_id: "typed", test: true })
    for (const type of ["text/plain", "text/plain; charset=utf-8", "application/jsonx", "application/x-json"]) {
      expectError(await raw(json, type), 415, "unsupported_media_type")
    }
    // A compressed body, or one in a transfer coding Node does not decode, is refused for what it is
    // (a gzipped body read "request body is not valid UTF-8"; gzip, chunked "invalid json body").
    const coded = (headers: Record<string, string>) =>
      t.app.inject({ method: "POST", url: "/api/v1/payments", headers: keyHeaders(apiKey, { "content-type": "application/json", ...headers }), payload: gzipSync(json) })
    expectError(await coded({ "content-encoding": "gzip" }), 415, "unsupported_media_type", "Content-Encoding gzip is not supported: send the body uncompressed")
    expectError(await coded({ "transfer-encoding": "gzip, chunked" }), 415, "unsupported_media_type",
      "Transfer-Encoding gzip, chunked is not supported: send the body as is, or chunked")
    // A coding of no body is no coding: a read with the header is answered as without it.
    expect((await get("/payments", { "content-encoding": "gzip" })).statusCode).toBe(200)
    expect((await raw(json, "application/json; charset=utf-8")).statusCode).toBe(201)
    // JSON has no charset (RFC 8259): the parameter is ignored, the body read as UTF-8 whatever it says.
    const declared = JSON.stringify({ amount: "1", order_id: "заказ-utf16", test: true })
    const created = await raw(declared, "application/json; charset=utf-16")
    expect([created.statusCode, JSON.parse(created.body).order_id]).toEqual([201, "заказ-utf16"])
    expectError(await raw(Buffer.from(declared, "utf16le"), "application/json; charset=utf-16"), 400, "invalid_json_body")
    expect(await countPayments()).toBe(2)
  })

  it("an empty body has no type: curl -d '' and Python's urllib (a form type, no body) reach operations without a body; a creation is told its body is missing", async () => {
    const created = json(await post({ amount: "1", order_id: "empty-body" }))
    const empty = (method: "POST", url: string, headers: Record<string, string>) =>
      t.app.inject({ method, url: `/api/v1${url}`, headers: keyHeaders(apiKey, headers), payload: "" })
    for (const type of ["application/x-www-form-urlencoded", "text/plain", "application/xml"]) {
      const ping = await empty("POST", `/terminals/${terminalId}/test-event`, { "content-type": type, "content-length": "0" })
      expect([ping.statusCode, json(ping).event.type], type).toEqual([200, "ping"])
      expectError(await empty("POST", "/payments", { "content-type": type, "content-length": "0" }), 400, "invalid_json_body", "invalid json body")
    }
    // A form with a body is still refused.
    expectError(await t.app.inject({ method: "POST", url: `/api/v1/terminals/${terminalId}/test-event`, headers: keyHeaders(apiKey, { "content-type": "application/x-www-form-urlencoded" }), payload: "a=1" }),
      415, "unsupported_media_type")
    expect(await countPayments()).toBe(1)
    expect(created.order_id).toBe("empty-body")
  })

  it("a body refused before authentication (malformed, invalid UTF-8, oversized, 415) leaves its nonce unused: the same nonce then works", async () => {
    const refused: ReadonlyArray<readonly [string | Buffer, string, number, string]> = [
      ["{\"amount\": \"1\", ", "application/json", 400, "invalid_json_body"],
      [Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]), "application/json", 400, "invalid_json_body"],
      [JSON.stringify({ amount: "1", order_id: "big", description: "x".repeat(70 * 1024) }), "application/json", 400, "body_too_large"],
      ["amount=1&order_id=form", "application/x-www-form-urlencoded", 415, "unsupported_media_type"]
    ]
    for (const [index, [payload, contentType, status, code]] of refused.entries()) {
      const headers = keyHeaders(apiKey, { "content-type": contentType })
      expectError(await t.app.inject({ method: "POST", url: "/api/v1/payments", headers, payload }), status, code)
      const good = await t.app.inject({
        method: "POST",
        url: "/api/v1/payments",
        headers: { ...headers, "content-type": "application/json" },
        payload: JSON.stringify({ amount: "1", order_id: `nonce-kept-${index}` })
      })
      expect(good.statusCode, `the nonce after a ${code} body`).toBe(201)
      // The good request did use it up.
      const again = await t.app.inject({ method: "POST", url: "/api/v1/payments", headers: { ...headers, "content-type": "application/json" }, payload: JSON.stringify({ amount: "1", order_id: `nonce-kept-x${index}` }) })
      expectError(again, 401, "nonce_already_used")
    }
    // A well-formed body that fails validation is decoded after authentication: its nonce is used up.
    const headers = keyHeaders(apiKey, { "content-type": "application/json" })
    expectError(await t.app.inject({ method: "POST", url: "/api/v1/payments", headers, payload: JSON.stringify({ amount: "-1", order_id: "v" }) }), 400, "amount_malformed")
    expectError(await t.app.inject({ method: "POST", url: "/api/v1/payments", headers, payload: JSON.stringify({ amount: "1", order_id: "v" }) }), 401, "nonce_already_used")
    expect(await countPayments()).toBe(refused.length)
  })

  it("answers unknown routes with the error body and a request id", async () => {
    const response = await get("/nowhere")
    expectError(response, 404, "route_not_found")
  })
})
