/**
 * The purge of a deleted test clock on PostgreSQL, beside a large live history. Deleting payments and
 * clocks makes PostgreSQL check the foreign keys that point at them; without an index a check can
 * use, each deleted payment read the whole `charges` table (a review measured 7 ms a payment with
 * 50,000 charges: minutes for a purge call, inside the local worker's pass). Counted with
 * `scanning` (what the scans read of `charges`, the checks' own queries included). Also: a clock
 * inserted by an older build, which names no `deletes_after`, gets one (the column's default).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { PaymentRepository, TestClockRepository } from "@paydesk/core"
import { Fixtures } from "@paydesk/testkit"
import { kitOn, scanning, targets } from "./PgHarness.js"

const clockPayments = 200
const liveCharges = 5000

for (const target of targets) {
  describe(`the purge of a deleted clock (${target.name})`, () => {
    it.live("reads the charges by index: a few entries per deleted payment, not the table", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const repo = yield* TestClockRepository
        const { terminal } = yield* Fixtures.seedTerminal()
        // A live history: one subscription with `liveCharges` charges, each of a live payment.
        const sub = yield* Fixtures.seedSubscription(terminal.id, { providerState: "active", billingStatus: "enabled" })
        const paid = yield* Fixtures.seedPayment(terminal.id, { status: "paid", subscriptionId: sub.id })
        yield* sql`INSERT INTO charges (id, subscription_id, terminal_id, cycle_number, attempt, kind, status, validation_status,
            payment_id, amount, expected_amount, idempotency_key, scheduled_at, created_at, updated_at)
          SELECT gen_random_uuid(), ${sub.id}, ${terminal.id}, g, 1, 'recurring', 'payed', 'accepted', ${paid.id}, 100, 100,
            md5(random()::text), now(), now(), now()
          FROM generate_series(1, ${liveCharges}) g`
        const clock = yield* Fixtures.seedTestClock(terminal.id)
        for (let i = 0; i < clockPayments; i++) yield* Fixtures.seedPayment(terminal.id, { environment: "sandbox", testClockId: clock.id })
        yield* sql`ANALYZE charges, payments`
        const deletedAt = Fixtures.baseTime + 1_000
        yield* repo.update({ ...clock, deletedAt, updatedAt: deletedAt, version: clock.version + 1 })

        const { read, result } = yield* scanning("charges", Effect.gen(function*() {
          let rows = 0
          for (let n = yield* repo.purgeDeleted(deletedAt, deletedAt, 1_000); n > 0; n = yield* repo.purgeDeleted(deletedAt, deletedAt, 1_000)) rows += n
          return rows
        }))
        assert.strictEqual(result, clockPayments + 1)
        // Without charges_payment: 200 × 5,000 rows.
        assert.isBelow(read, 10 * clockPayments)
        // The live payment and its charges stay.
        assert.strictEqual((yield* (yield* PaymentRepository).get(paid.id))._tag, "Some")
        const [left] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM charges WHERE payment_id = ${paid.id}`
        assert.strictEqual(left!.n, liveCharges)
      }).pipe(Effect.provide(kitOn(target.url)), Effect.orDie), 60_000)

    it.live("a clock inserted by an older build, which names no deletes_after, is kept 30 days", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { terminal } = yield* Fixtures.seedTerminal()
        const id = Fixtures.uuid()
        yield* sql`INSERT INTO test_clocks (id, terminal_id, name, frozen_time, status, work_due, created_at, updated_at, version)
          VALUES (${id}, ${terminal.id}, NULL, now(), 'ready', false, now(), now(), 1)`
        const [row] = yield* sql<{ readonly days: number }>`SELECT round(extract(epoch FROM deletes_after - created_at) / 86400)::int AS days
          FROM test_clocks WHERE id = ${id}`
        assert.strictEqual(row!.days, 30)
        assert.strictEqual((yield* (yield* TestClockRepository).get(id))._tag, "Some")
      }).pipe(Effect.provide(kitOn(target.url)), Effect.orDie))
  })
}
