/**
 * The lists' `cursor` pages are keyset ones: a cursor page holds the records after the last one
 * listed that still match the filter, so a record that matched it throughout a walk is never
 * skipped, whatever happened to the records listed before (paid, stopped) or came in meanwhile.
 * An offset cursor skipped them (outside probe: status=created, pay the two listed, the next page
 * left out two payments still created).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { Payments, Payouts, Subscriptions } from "@paydesk/core"
import { Kit } from "@paydesk/testkit"
import { setup as subscriptionSetup } from "./SubscriptionSupport.js"

const start = Date.parse("2026-03-10T09:00:00.000Z")

const ids = (records: ReadonlyArray<{ readonly id: string }>) => records.map((r) => r.id)

describe("List cursors", () => {
  it.effect("payments: status=created, the two listed are paid, the cursor goes on with the four still created", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(start)
      const merchant = yield* Kit.provisionMerchant()
      const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
      // Two payments in each of three seconds (those of one millisecond are in id order).
      for (let i = 0; i < 6; i++) {
        yield* Payments.create(principal, { amount: "100", orderId: `ord-${i}` })
        if (i % 2 === 1) yield* TestClock.adjust("1 second")
      }
      const order = ids((yield* Payments.list(principal, {})).items)
      assert.strictEqual(order.length, 6)

      const first = yield* Payments.list(principal, { status: "created", limit: 2 })
      assert.deepStrictEqual(ids(first.items), order.slice(0, 2))
      assert.strictEqual(first.total, 6)
      assert.strictEqual(first.page, 1)
      assert.isNotNull(first.nextCursor)
      for (const p of first.items) yield* Payments.settle(p.id, "paid")

      const second = yield* Payments.list(principal, { status: "created", limit: 2, cursor: first.nextCursor })
      assert.deepStrictEqual(ids(second.items), order.slice(2, 4))
      assert.strictEqual(second.total, 4)
      assert.strictEqual(second.page, 2)
      assert.strictEqual(second.pageSize, 2)
      const third = yield* Payments.list(principal, { status: "created", limit: 2, cursor: second.nextCursor })
      assert.deepStrictEqual(ids(third.items), order.slice(4, 6))
      assert.strictEqual(third.page, 3)
      assert.isNull(third.nextCursor)

      // `page` is still by offset over the filter as it stands.
      assert.deepStrictEqual(ids((yield* Payments.list(principal, { status: "created", limit: 2, page: 2 })).items), order.slice(4, 6))
      // An offset cursor of before still reads from its offset; its next cursor is a keyset one.
      const legacy = yield* Payments.list(principal, { limit: 2, cursor: btoa("o:1").replace(/=+$/, "") })
      assert.deepStrictEqual(ids(legacy.items), order.slice(1, 3))
      const after = yield* Payments.list(principal, { limit: 2, cursor: legacy.nextCursor })
      assert.deepStrictEqual(ids(after.items), order.slice(3, 5))
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("subscriptions: state=new, the two listed are stopped, the cursor goes on with the four still new", () =>
    Effect.gen(function*() {
      const { merchant, plans, principal } = yield* subscriptionSetup()
      for (let i = 0; i < 6; i++) {
        yield* Subscriptions.create(principal, {
          idempotencyKey: `k-${i}`,
          terminalId: merchant.terminal.id,
          planId: plans.ceilingMonthly.id,
          amount: "100"
        })
        if (i % 2 === 1) yield* TestClock.adjust("1 second")
      }
      const order = ids((yield* Subscriptions.list(principal, { state: "new" })).items)
      assert.strictEqual(order.length, 6)

      const first = yield* Subscriptions.list(principal, { state: "new", limit: 2 })
      assert.deepStrictEqual(ids(first.items), order.slice(0, 2))
      assert.strictEqual(first.total, 6)
      for (const s of first.items) yield* Subscriptions.stop(principal, s.id)

      const second = yield* Subscriptions.list(principal, { state: "new", limit: 2, cursor: first.nextCursor })
      assert.deepStrictEqual(ids(second.items), order.slice(2, 4))
      assert.strictEqual(second.total, 4)
      assert.strictEqual(second.page, 2)
      const third = yield* Subscriptions.list(principal, { state: "new", limit: 2, cursor: second.nextCursor })
      assert.deepStrictEqual(ids(third.items), order.slice(4, 6))
      assert.isNull(third.nextCursor)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("payouts: one created between two pages is newer than the cursor, so the next page neither repeats nor skips one", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(start)
      const merchant = yield* Kit.provisionMerchant()
      const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
      // 9500.00 RUB at 95.00 gives 100 USDT.
      const { payment } = yield* Payments.create(principal, { amount: "9500", orderId: "fund" })
      yield* Payments.settle(payment.id, "paid")
      const request = { amountUsdt: "10", walletAddress: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" }
      for (let i = 0; i < 4; i++) {
        yield* Payouts.create(principal, request)
        yield* TestClock.adjust("1 second")
      }
      const order = ids((yield* Payouts.list(principal, {})).items)
      assert.strictEqual(order.length, 4)

      const first = yield* Payouts.list(principal, { limit: 2 })
      assert.deepStrictEqual(ids(first.items), order.slice(0, 2))
      const { payout: newer } = yield* Payouts.create(principal, request)

      const second = yield* Payouts.list(principal, { limit: 2, cursor: first.nextCursor })
      assert.deepStrictEqual(ids(second.items), order.slice(2, 4))
      assert.strictEqual(second.total, 5)
      assert.strictEqual(second.page, 2)
      assert.isNull(second.nextCursor)
      assert.deepStrictEqual(ids((yield* Payouts.list(principal, { limit: 2 })).items), [newer.id, order[0]!])
    }).pipe(Effect.provide(Kit.layer)))
})
