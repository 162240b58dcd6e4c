/**
 * `listAfter` pages by the cursor payment's stored `created_at`: payments written in microseconds
 * (by SQL of its own, as the benches' pgbench writes them) within one millisecond are each listed
 * once, in order, however the pages fall. A cursor in the entity's milliseconds would compare past
 * the later ones of that millisecond and skip them.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type Payment, PaymentRepository, type PaymentFilter } from "@paydesk/core"
import { Fixtures, Kit } from "@paydesk/testkit"
import { SqlClient } from "effect/sql"
import { kitOn, targets } from "./PgHarness.js"

for (const target of targets) {
  describe(`PgPaymentRepository.listAfter (${target.name})`, () => {
    it.layer(kitOn(target.url))((it) => {
      it.effect("lists payments written in microseconds of one millisecond once each, in order, a page of one at a time", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const repo = yield* PaymentRepository
          const merchant = yield* Kit.provisionMerchant()
          const terminalId = merchant.terminal.id
          const seeded = yield* Effect.forEach([0, 1, 2, 3, 4], () => Fixtures.seedPayment(terminalId))
          // All in the millisecond .123, at different microseconds; the order is by created_at, then id.
          const micros = [123456, 123200, 123900, 123001, 123700]
          yield* Effect.forEach(seeded, (p, i) =>
            sql`UPDATE payments SET created_at = ${`2026-03-01T10:00:00.${micros[i]}Z`}::timestamptz WHERE id = ${p.id}`)
          const expected = seeded.map((p, i) => ({ id: p.id, at: micros[i]! })).sort((a, b) => b.at - a.at).map((p) => p.id)
          const filter: PaymentFilter = { terminalId, environment: "all", recurring: null }
          const listed: Array<string> = []
          let after: { readonly createdAt: number; readonly id: string } | null = null
          for (let page = 0; page < 10; page++) {
            const items: ReadonlyArray<Payment.Payment> = yield* repo.listAfter(filter, after, 1)
            if (items.length === 0) break
            listed.push(items[0]!.id)
            after = items[0]!
          }
          assert.deepStrictEqual(listed, expected)
          assert.deepStrictEqual(ids((yield* repo.list(filter, { limit: 10, offset: 0 })).items), expected)
        }).pipe(Effect.orDie))
    })
  })
}

const ids = (payments: ReadonlyArray<{ readonly id: string }>) => payments.map((p) => p.id)
