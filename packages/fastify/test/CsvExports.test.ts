/**
 * CSV exports are built one at a time per app; the others wait their turn and all are answered.
 * Listings are not held up by them. An export reads its payments in pages of
 * `Payments.exportPageSize` from a keyset cursor: every payment once, newest first, up to
 * `Payments.exportLimit`. The list's `page`, `limit` and `cursor` are refused with an export.
 */
import { afterEach, describe, expect, it, vi } from "vitest"
import { Effect, Layer } from "effect"
import { PaymentRepository, Payments } from "@paydesk/core"
import { Fixtures, Kit } from "@paydesk/testkit"
import { get } from "node:http"
import * as MerchantPayments from "../src/MerchantPayments.js"
import { expectError, keyHeaders, make, type TestApp } from "./TestApp.js"

/**
 * The kit with its `PaymentRepository` counting the exports' page reads, those running at once (each
 * held for a while), and the reads that ran to their end, per terminal.
 */
const counting = () => {
  const state = { running: 0, most: 0, reads: 0, finished: new Map<string, number>() }
  const layer = Layer.effect(PaymentRepository, Effect.gen(function*() {
    const repo = yield* PaymentRepository
    return PaymentRepository.of({
      ...repo,
      listAfter: (filter, after, limit) =>
        Effect.acquireUseRelease(
          Effect.sync(() => {
            state.reads++
            state.most = Math.max(state.most, ++state.running)
          }),
          () =>
            Effect.andThen(Effect.sleep(200), repo.listAfter(filter, after, limit)).pipe(
              Effect.tap(() => Effect.sync(() => void state.finished.set(filter.terminalId, (state.finished.get(filter.terminalId) ?? 0) + 1)))
            ),
          () => Effect.sync(() => void state.running--)
        )
    })
  })).pipe(Layer.provideMerge(Kit.layer))
  return { state, layer }
}

let t: TestApp | undefined
afterEach(async () => {
  await t?.close()
  t = undefined
})

describe("CSV exports", () => {
  it("run one at a time; the others wait and are all answered, and a listing or a refused export meanwhile is not held up", async () => {
    const { state, layer } = counting()
    t = await make({}, layer)
    const { app } = t
    const merchant = await t.merchant()
    const second = await t.merchant()
    for (const shop of [merchant, second]) {
      for (let i = 0; i < 3; i++) {
        const created = await app.inject({ method: "POST", url: "/api/v1/payments", headers: keyHeaders(shop.apiKey), payload: { amount: "10", order_id: `csv-${i}`, test: true } })
        expect(created.statusCode).toBe(201)
      }
    }
    const exportCsv = (apiKey: string) => app.inject({ method: "GET", url: "/api/v1/payments?format=csv&environment=sandbox", headers: keyHeaders(apiKey) })
    // (`inject` starts a request when its answer is asked for.) Two of each terminal's, the most one terminal has at once.
    const exports = [merchant, second, merchant, second].map((shop) => exportCsv(shop.apiKey).then((answer) => answer))
    while (state.running === 0) await new Promise((ok) => setTimeout(ok, 5))
    // A third of one terminal's is answered at once: 429, retry in a second.
    const third = await exportCsv(merchant.apiKey)
    expectError(third, 429, "too_many_requests", "2 CSV exports of this terminal are already waiting or being built; retry once one is done")
    expect(third.headers["retry-after"]).toBe("1")
    const listing = await app.inject({ method: "GET", url: "/api/v1/payments?environment=sandbox", headers: keyHeaders(merchant.apiKey) })
    expect(listing.statusCode).toBe(200)
    expect(state.running).toBeGreaterThan(0) // the listing was answered while exports still ran
    // An export the query refuses is answered at once, not after the exports ahead of it.
    const refused = await app.inject({ method: "GET", url: "/api/v1/payments?format=csv&environment=sandbox&limit=1", headers: keyHeaders(merchant.apiKey) })
    expect([refused.statusCode, JSON.parse(refused.body).error.field]).toEqual([400, "limit"])
    expect(state.running).toBeGreaterThan(0)
    // So is one of a terminal the key may not read, or with a filter refused.
    const other = await t.merchant()
    const foreign = await app.inject({ method: "GET", url: `/api/v1/payments?format=csv&terminal_id=${other.terminal.id}`, headers: keyHeaders(merchant.apiKey) })
    expect(foreign.statusCode).toBe(403)
    const reversed = await app.inject({
      method: "GET",
      url: "/api/v1/payments?format=csv&environment=sandbox&created_from=2026-01-02T00:00:00Z&created_to=2026-01-01T00:00:00Z",
      headers: keyHeaders(merchant.apiKey)
    })
    expect([reversed.statusCode, JSON.parse(reversed.body).error.field]).toEqual([400, "created_to"])
    expect(state.running).toBeGreaterThan(0)
    const answers = await Promise.all(exports)
    expect(answers.map((a) => [a.statusCode, a.body.split("\r\n").length - 2])).toEqual(Array.from({ length: 4 }, () => [200, 3]))
    // Three payments: one page each.
    expect(state.reads).toBe(4)
    expect(state.most).toBe(1)
    expect(MerchantPayments.exportsAtOnce).toBe(1)
    // Once they are done, the terminal exports again.
    expect((await exportCsv(merchant.apiKey)).statusCode).toBe(200)
  })

  it("drops an export whose client left, waiting for its turn or being built: it no longer holds up the others", async () => {
    const { state, layer } = counting()
    t = await make({}, layer)
    const attacker = await t.merchant()
    const victim = await t.merchant()
    for (const shop of [attacker, victim]) {
      const created = await t.app.inject({ method: "POST", url: "/api/v1/payments", headers: keyHeaders(shop.apiKey), payload: { amount: "10", order_id: "left-1", test: true } })
      expect(created.statusCode).toBe(201)
    }
    const url = await t.app.listen({ port: 0, host: "127.0.0.1" })
    // Two exports of one terminal, both given up at once: the first while being built, the second while waiting.
    const gaveUp = await Promise.all([0, 1].map(() => {
      const request = get(`${url}/api/v1/payments?format=csv&environment=sandbox`, { headers: keyHeaders(attacker.apiKey) })
      request.on("error", () => undefined)
      return new Promise<void>((ok) => setTimeout(() => ok(void request.destroy()), 50))
    }))
    expect(gaveUp).toHaveLength(2)
    // The other merchant's export is answered; the two given up never read a page to its end (each
    // would have been built in full before it, in turn, each read taking 200 ms).
    const answer = await fetch(`${url}/api/v1/payments?format=csv&environment=sandbox`, { headers: keyHeaders(victim.apiKey) })
    expect(answer.status).toBe(200)
    expect((await answer.text()).split("\r\n").length - 2).toBe(1)
    await vi.waitFor(() => expect(state.running).toBe(0))
    expect([state.finished.get(attacker.terminal.id) ?? 0, state.finished.get(victim.terminal.id)]).toEqual([0, 1])
    // The terminal whose clients left may export again (they no longer count).
    expect((await fetch(`${url}/api/v1/payments?format=csv&environment=sandbox`, { headers: keyHeaders(attacker.apiKey) })).status).toBe(200)
  })

  it("reads pages of exportPageSize from a cursor: every payment once, newest first", async () => {
    const reads: Array<number> = []
    const layer = Layer.effect(PaymentRepository, Effect.gen(function*() {
      const repo = yield* PaymentRepository
      return PaymentRepository.of({
        ...repo,
        listAfter: (filter, after, limit) => Effect.tap(repo.listAfter(filter, after, limit), (page) => Effect.sync(() => void reads.push(page.length)))
      })
    })).pipe(Layer.provideMerge(Kit.layer))
    t = await make({}, layer)
    const merchant = await t.merchant()
    // More than two pages, many payments sharing a millisecond (their order is by id).
    const count = 2 * Payments.exportPageSize + 345
    const seeded = await t.run(Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
      Fixtures.seedPayment(merchant.terminal.id, { environment: "sandbox", orderId: `page-${i}`, createdAt: Fixtures.baseTime + Math.floor(i / 7) })))
    const exported = await t.app.inject({ method: "GET", url: "/api/v1/payments?format=csv&environment=sandbox", headers: keyHeaders(merchant.apiKey) })
    expect(exported.statusCode).toBe(200)
    const rows = exported.body.split("\r\n").slice(1, -1).map((line) => line.split(",")[0])
    const newestFirst = [...seeded].sort((a, b) => b.createdAt - a.createdAt || (b.id < a.id ? -1 : b.id > a.id ? 1 : 0))
    expect(rows).toEqual(newestFirst.map((p) => `pay_${p.id}`))
    expect(reads).toEqual([Payments.exportPageSize, Payments.exportPageSize, 345])
  })

  it("stops at exportLimit rows however many payments the filter matches", async () => {
    const limits: Array<number> = []
    let made = 0
    // Every read answers a full page of payments not seen before, as a filter matching millions would.
    const layer = Layer.effect(PaymentRepository, Effect.gen(function*() {
      const repo = yield* PaymentRepository
      return PaymentRepository.of({
        ...repo,
        listAfter: (filter, _after, limit) =>
          Effect.sync(() => {
            limits.push(limit)
            return Array.from({ length: limit }, () => Fixtures.payment(filter.terminalId, { environment: "sandbox", orderId: `many-${made++}` }))
          })
      })
    })).pipe(Layer.provideMerge(Kit.layer))
    t = await make({}, layer)
    const merchant = await t.merchant()
    const exported = await t.app.inject({ method: "GET", url: "/api/v1/payments?format=csv&environment=sandbox", headers: keyHeaders(merchant.apiKey) })
    expect(exported.statusCode).toBe(200)
    expect(exported.body.split("\r\n").length - 2).toBe(Payments.exportLimit)
    expect(limits.reduce((sum, limit) => sum + limit, 0)).toBe(Payments.exportLimit)
    expect(Math.max(...limits)).toBe(Payments.exportPageSize)
  })

  it("refuses the list's page, limit and cursor (400 naming the parameter) instead of ignoring them", async () => {
    t = await make()
    const merchant = await t.merchant()
    const get = (query: string) => t!.app.inject({ method: "GET", url: `/api/v1/payments?environment=sandbox&${query}`, headers: keyHeaders(merchant.apiKey) })
    for (let i = 0; i < 3; i++) {
      const created = await t.app.inject({ method: "POST", url: "/api/v1/payments", headers: keyHeaders(merchant.apiKey), payload: { amount: "10", order_id: `paged-${i}`, test: true } })
      expect(created.statusCode).toBe(201)
    }
    const cursor: string = expectOk(await get("limit=1")).next_cursor
    for (const [query, field] of [["cursor=" + cursor, "cursor"], ["limit=1", "limit"], ["page=2", "page"], ["limit=1&cursor=" + cursor, "limit"]] as const) {
      const refused = expectError(await get(`format=csv&${query}`), 400, "invalid_request")
      expect([query, refused.field, refused.message]).toEqual([query, field,
        `${field} is not accepted by a CSV export (format=csv): an export holds every payment the filters select, newest first, at most ${Payments.exportLimit} rows; narrow it with created_from and created_to`])
    }
    // Without them, every payment the filters select; the JSON list still pages.
    expect((await get("format=csv")).body.split("\r\n").length - 2).toBe(3)
    expect(expectOk(await get("limit=1&cursor=" + cursor)).items).toHaveLength(1)
  })
})

const expectOk = (answer: { statusCode: number; body: string }) => {
  expect(answer.statusCode, answer.body).toBe(200)
  return JSON.parse(answer.body)
}

