/**
 * The live passes beside a test clock frozen in the past. A clock keeps its objects' times on the
 * clock, and only its own passes take them: 2,000 pending deliveries, due subscriptions,
 * subscriptions to stop and open payments of a clock frozen in 2001 sort before every live one by
 * their due times. A live claim (of no clock) reads its own few, not the clock's backlog: counted
 * with `pg_stat_get_xact_tuples_returned` and `_fetched` (`scanning`), what the claim's scans read.
 * The clock's own claim still takes the clock's objects.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { OutboxRepository, PaymentRepository, SubscriptionRepository } from "@paydesk/core"
import { Fixtures } from "@paydesk/testkit"
import { kitOn, scanning, targets } from "./PgHarness.js"

const backlog = 2000
const live = 5
const clockTime = Date.parse("2001-01-01T00:00:00.000Z")
const now = Fixtures.baseTime + 1000

/**
 * `count` copies of the row `id` of `table`, each with a new id and the `fresh` columns made unique
 * (`seq` from its sequence when the table has one), in one statement.
 */
const copies = (table: string, id: string, count: number, fresh: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = [`'id', gen_random_uuid()`, ...fresh.map((column) => `'${column}', md5(random()::text)`)]
    if (table === "deliveries") columns.push(`'seq', nextval(pg_get_serial_sequence('deliveries', 'seq'))`)
    yield* sql.unsafe(`INSERT INTO ${table} SELECT (jsonb_populate_record(t, jsonb_build_object(${columns.join(", ")}))).*
      FROM ${table} t, generate_series(1, ${count}) WHERE t.id = $1`, [id])
  })

/** A terminal with `live` due objects of each kind, and `backlog` of each on a clock frozen in 2001. */
const seeded = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const outbox = yield* OutboxRepository
  const { terminal } = yield* Fixtures.seedTerminal({ callbackUrl: "https://shop.example/cb" })
  const clock = yield* Fixtures.seedTestClock(terminal.id, { frozenTime: clockTime })
  const onClock = { environment: "sandbox" as const, testClockId: clock.id }
  const due = (on: typeof onClock | null, at: number) =>
    Effect.gen(function*() {
      const payment = yield* Fixtures.seedPayment(terminal.id, { ...on, createdAt: at, updatedAt: at, expiresAt: at + 60_000 })
      const event = Fixtures.outboxEvent(terminal.id, { paymentId: payment.id, test: on !== null, testClockId: on?.testClockId ?? null, createdAt: at })
      const delivery = Fixtures.delivery(event)
      yield* outbox.insertEvent(event, delivery)
      const active = { ...on, providerState: "active" as const, billingStatus: "enabled" as const, nextChargeAt: at, createdAt: at, updatedAt: at }
      const charging = yield* Fixtures.seedSubscription(terminal.id, active)
      const stopping = yield* Fixtures.seedSubscription(terminal.id, { ...active, billingStatus: "stop_pending", nextChargeAt: null })
      return { payment, delivery, charging, stopping }
    })
  // The live ones are due before `now`, 25 years after the clock's.
  yield* Effect.forEach(Array.from({ length: live }), () => due(null, Fixtures.baseTime - 60_000 - 60_000), { discard: true })
  const template = yield* due(onClock, clockTime)
  yield* copies("payments", template.payment.id, backlog - 1, ["order_id", "pay_token"])
  yield* copies("deliveries", template.delivery.id, backlog - 1, [])
  yield* copies("subscriptions", template.charging.id, backlog - 1, ["pay_token"])
  yield* copies("subscriptions", template.stopping.id, backlog - 1, ["pay_token"])
  // The planner knows the clock's rows are there.
  yield* sql`ANALYZE payments, deliveries, subscriptions`
  return clock
}).pipe(Effect.orDie)

for (const target of targets) {
  describe(`live passes beside a test clock frozen in the past (${target.name})`, () => {
    it.live("each live claim reads its own due objects, not the clock's backlog; the clock's claim takes the clock's", () =>
      Effect.gen(function*() {
        const clock = yield* seeded
        const outbox = yield* OutboxRepository
        const payments = yield* PaymentRepository
        const subscriptions = yield* SubscriptionRepository
        const limit = 100
        // About a few reads per claimed object (the index entry, the row, the lease written by key).
        const bound = 8 * live + 20

        const deliveries = yield* scanning("deliveries", outbox.claimDue(now, now + 30_000, limit), "deliveries_due")
        assert.strictEqual(deliveries.result.length, live)
        assert.isTrue(deliveries.result.every(({ delivery }) => delivery.testClockId === null))
        assert.isAtMost(deliveries.indexEntries, live + 1)
        assert.isAtMost(deliveries.read, bound)

        const expired = yield* scanning("payments", payments.claimExpired(now, limit), "payments_expiry")
        assert.strictEqual(expired.result.length, live)
        assert.isTrue(expired.result.every((payment) => payment.testClockId === null))
        assert.isAtMost(expired.indexEntries, live + 1)
        assert.isAtMost(expired.read, bound)

        const charging = yield* scanning("subscriptions", subscriptions.claimDue(now, now + 30_000, limit), "subscriptions_due")
        assert.strictEqual(charging.result.length, live)
        assert.isTrue(charging.result.every((s) => s.testClockId === null))
        assert.isAtMost(charging.indexEntries, live + 1)
        assert.isAtMost(charging.read, bound)

        const stopping = yield* scanning("subscriptions", subscriptions.claimStopPending(now, now + 30_000, limit), "subscriptions_stop_pending")
        assert.strictEqual(stopping.result.length, live)
        assert.isTrue(stopping.result.every((s) => s.testClockId === null))
        assert.isAtMost(stopping.indexEntries, live + 1)
        assert.isAtMost(stopping.read, bound)

        // The clock's passes still find the clock's objects, on the clock's time.
        const at = clockTime + 120_000
        assert.strictEqual((yield* outbox.claimDue(at, at + 30_000, limit, clock.id)).length, limit)
        assert.strictEqual((yield* payments.claimExpired(at, limit, clock.id)).length, limit)
        assert.strictEqual((yield* subscriptions.claimDue(at, at + 30_000, limit, clock.id)).length, limit)
        assert.strictEqual((yield* subscriptions.claimStopPending(at, at + 30_000, limit, clock.id)).length, limit)
      }).pipe(Effect.provide(kitOn(target.url))))
  })
}
