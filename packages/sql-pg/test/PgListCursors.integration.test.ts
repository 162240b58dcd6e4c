/**
 * The payments list's `cursor` pages on Postgres, on every target: keyset pages, so a payment that
 * matched the filter throughout a walk is never skipped. An outside probe found the offset cursor
 * skipping them: `status=created&limit=2`, pay the two listed, and the next page left out two
 * payments still created. A cursor pages from its payment's stored `created_at`, so payments
 * written in microseconds of one millisecond (by SQL of its own) are each listed once too.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Payments } from "@paydesk/core"
import { Kit } from "@paydesk/testkit"
import { SqlClient } from "effect/sql"
import { kitOn, targets } from "./PgHarness.js"

const ids = (records: ReadonlyArray<{ readonly id: string }>) => records.map((r) => r.id)

/** A merchant's API key principal with `count` created live payments; their ids newest first. */
const createdPayments = (count: number) =>
  Effect.gen(function*() {
    const merchant = yield* Kit.provisionMerchant({})
    const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
    for (let i = 0; i < count; i++) yield* Payments.create(principal, { amount: "100", orderId: `cursor-${i}` })
    const order = ids((yield* Payments.list(principal, {})).items)
    assert.strictEqual(order.length, count)
    return { principal, order }
  })

describe("Payment list cursors on Postgres", () => {
  for (const target of targets) {
    it.live(`status=created: the two listed are paid, the cursor goes on with the four still created (postgres ${target.name})`, () =>
      Effect.gen(function*() {
        const { principal, order } = yield* createdPayments(6)
        const first = yield* Payments.list(principal, { status: "created", limit: 2 })
        assert.deepStrictEqual(ids(first.items), order.slice(0, 2))
        assert.strictEqual(first.total, 6)
        for (const p of first.items) yield* Payments.settle(p.id, "paid")
        const second = yield* Payments.list(principal, { status: "created", limit: 2, cursor: first.nextCursor })
        assert.deepStrictEqual(ids(second.items), order.slice(2, 4))
        assert.strictEqual(second.total, 4)
        assert.strictEqual(second.page, 2)
        const third = yield* Payments.list(principal, { status: "created", limit: 2, cursor: second.nextCursor })
        assert.deepStrictEqual(ids(third.items), order.slice(4, 6))
        assert.strictEqual(third.page, 3)
        assert.isNull(third.nextCursor)
        // `page` stays by offset over the filter as it stands.
        assert.deepStrictEqual(ids((yield* Payments.list(principal, { status: "created", limit: 2, page: 2 })).items), order.slice(4, 6))
      }).pipe(Effect.provide(kitOn(target.url))), 60_000)

    it.live(`payments written in microseconds of one millisecond are each listed once, a page of one at a time (postgres ${target.name})`, () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { principal, order } = yield* createdPayments(5)
        const micros = [123456, 123200, 123900, 123001, 123700]
        yield* Effect.forEach(order, (id, i) =>
          sql`UPDATE payments SET created_at = ${`2026-03-01T10:00:00.${micros[i]}Z`}::timestamptz WHERE id = ${id}`)
        const expected = order.map((id, i) => ({ id, at: micros[i]! })).sort((a, b) => b.at - a.at).map((p) => p.id)
        const listed: Array<string> = []
        let cursor: string | null = null
        for (let page = 0; page < 10; page++) {
          const answer: { readonly items: ReadonlyArray<{ readonly id: string }>; readonly nextCursor: string | null } =
            yield* Payments.list(principal, { limit: 1, ...(cursor === null ? {} : { cursor }) })
          listed.push(...ids(answer.items))
          cursor = answer.nextCursor
          if (cursor === null) break
        }
        assert.deepStrictEqual(listed, expected)
      }).pipe(Effect.provide(kitOn(target.url))), 60_000)
  }
})
