/**
 * The live passes beside a test clock frozen in the past. A clock keeps its objects' times on the
 * clock, and only its own passes take them: 2,000 pending deliveries, due subscriptions,
 * subscriptions to stop and open payments of a clock frozen in 2001 sort before every live one by
 * their due times. A live claim (of no clock) reads its own few, not the clock's backlog: counted
 * with `pg_stat_get_xact_tuples_returned` and `_fetched` (`scanning`), what the claim's scans read.
 * The clock's own claims take the clock's objects in the order of their own indexes, stopping at
 * their limit, though all are due at the same instant.
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
        const lease = now + 30_000
        const clocks = <A extends { readonly testClockId: string | null }>(all: ReadonlyArray<A>) => all.map((o) => o.testClockId)
        // Deliveries and subscriptions are leased by their claim; payments only locked in the claim's transaction.
        const liveClaims = [
          { table: "deliveries", index: "deliveries_due", leases: true, claim: (n: number) => Effect.map(outbox.claimDue(now, lease, n), (all) => clocks(all.map(({ delivery }) => delivery))) },
          { table: "payments", index: "payments_expiry", leases: false, claim: (n: number) => Effect.map(payments.claimExpired(now, n), clocks) },
          { table: "subscriptions", index: "subscriptions_due", leases: true, claim: (n: number) => Effect.map(subscriptions.claimDue(now, lease, n), clocks) },
          { table: "subscriptions", index: "subscriptions_stop_pending", leases: true, claim: (n: number) => Effect.map(subscriptions.claimStopPending(now, lease, n), clocks) }
        ]
        for (const { table, index, leases, claim } of liveClaims) {
          // The live ones are due at the same instant: a claim of two stops after two entries (the
          // index holds the tie-breaker), and the next takes the rest.
          const first = yield* scanning(table, claim(2), index)
          const rest = yield* scanning(table, claim(limit), index)
          assert.deepStrictEqual([first.result.length, rest.result.length], [2, leases ? live - 2 : live], index)
          assert.isTrue([...first.result, ...rest.result].every((clockId) => clockId === null), index)
          assert.isAtMost(first.indexEntries, 3, index)
          // (With the entries the first claim's leases left: an updated row may have a new one.)
          assert.isAtMost(rest.indexEntries, 2 * live, index)
          assert.isAtMost(first.read + rest.read, bound, index)
        }

        // The clock's passes take the clock's objects, on the clock's time, in the order of their own
        // indexes, stopping at their limit (all 2,000 are due at the same instant: the index holds the
        // tie-breaker). (How they then write the leases is the planner's choice on a table this small.)
        const at = clockTime + 120_000
        const clockClaims = [
          yield* scanning("deliveries", outbox.claimDue(at, at + 30_000, limit, clock.id), "deliveries_clock_due"),
          yield* scanning("payments", payments.claimExpired(at, limit, clock.id), "payments_clock_expiry"),
          yield* scanning("subscriptions", subscriptions.claimDue(at, at + 30_000, limit, clock.id), "subscriptions_clock_due"),
          yield* scanning("subscriptions", subscriptions.claimStopPending(at, at + 30_000, limit, clock.id), "subscriptions_clock_stop_pending")
        ]
        for (const { result, indexEntries } of clockClaims) {
          assert.strictEqual(result.length, limit)
          // Read through that index (none read would mean another plan), up to its limit.
          assert.isAtLeast(indexEntries, limit)
          assert.isAtMost(indexEntries, limit + 1)
        }
      }).pipe(Effect.provide(kitOn(target.url))))
  })
}
