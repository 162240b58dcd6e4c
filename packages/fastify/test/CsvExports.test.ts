/**
 * CSV exports are built one at a time per app (each holds up to `Payments.exportLimit` payments in
 * memory); the others wait their turn and all are answered. Listings are not held up by them.
 */
import { afterEach, describe, expect, it } from "vitest"
import { Effect, Layer } from "effect"
import { PaymentRepository, Payments } from "@paydesk/core"
import { Kit } from "@paydesk/testkit"
import * as MerchantPayments from "../src/MerchantPayments.js"
import { keyHeaders, make, type TestApp } from "./TestApp.js"

/** The kit with its `PaymentRepository` counting the exports' reads running at once (each held for a while). */
const counting = () => {
  const state = { running: 0, most: 0, exports: 0 }
  const layer = Layer.effect(PaymentRepository, Effect.gen(function*() {
    const repo = yield* PaymentRepository
    return PaymentRepository.of({
      ...repo,
      list: (filter, page) =>
        page.limit !== Payments.exportLimit
          ? repo.list(filter, page)
          : Effect.acquireUseRelease(
            Effect.sync(() => {
              state.exports++
              state.most = Math.max(state.most, ++state.running)
            }),
            () => Effect.andThen(Effect.sleep(200), repo.list(filter, page)),
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
  it("run one at a time; the others wait and are all answered, and a listing meanwhile is not held up", async () => {
    const { state, layer } = counting()
    t = await make({}, layer)
    const { app } = t
    const merchant = await t.merchant()
    for (let i = 0; i < 3; i++) {
      const created = await app.inject({ method: "POST", url: "/api/v1/payments", headers: keyHeaders(merchant.apiKey), payload: { amount: "10", order_id: `csv-${i}`, test: true } })
      expect(created.statusCode).toBe(201)
    }
    const exportCsv = () => app.inject({ method: "GET", url: "/api/v1/payments?format=csv&environment=sandbox", headers: keyHeaders(merchant.apiKey) })
    // (`inject` starts a request when its answer is asked for.)
    const exports = Array.from({ length: 4 }, () => exportCsv().then((answer) => answer))
    while (state.running === 0) await new Promise((ok) => setTimeout(ok, 5))
    const listing = await app.inject({ method: "GET", url: "/api/v1/payments?environment=sandbox", headers: keyHeaders(merchant.apiKey) })
    expect(listing.statusCode).toBe(200)
    expect(state.running).toBeGreaterThan(0) // the listing was answered while exports still ran
    const answers = await Promise.all(exports)
    expect(answers.map((a) => [a.statusCode, a.body.split("\r\n").length - 2])).toEqual(Array.from({ length: 4 }, () => [200, 3]))
    expect(state.exports).toBe(4)
    expect(state.most).toBe(1)
    expect(MerchantPayments.exportsAtOnce).toBe(1)
  })
})
