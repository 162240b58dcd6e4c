/**
 * The PostgreSQL outbox under a backlog the planner does not know of: statistics taken while 50
 * deliveries were pending among 20,000 delivered, then 2,000 more pending (as when the engine falls
 * behind a burst, or starts after a stop; the table changes faster than autovacuum analyses it). A
 * claim reads about `limit` entries of `deliveries_due`, not the backlog, and recording attempts
 * reads none of them (each delivery by its primary key). Counted with `scanning`: what this
 * transaction's scans returned.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Config, OutboxRepository } from "@paydesk/core"
import { Fixtures } from "@paydesk/testkit"
import { kitOn, scanning, targets } from "./PgHarness.js"

const backlog = 2000
const history = 20_000

/**
 * A terminal with `backlog` pending deliveries, due at or before `Fixtures`' base time, in a table of
 * `history` delivered ones whose statistics were taken when 50 of the pending were there.
 */
const staleBacklog = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const repo = yield* OutboxRepository
  const { terminal } = yield* Fixtures.seedTerminal({ callbackUrl: "https://shop.example/cb" })
  const payment = yield* Fixtures.seedPayment(terminal.id)
  // Due a second apart, the latest at the base time.
  const insert = (count: number) =>
    Effect.forEach(Array.from({ length: count }), (_, i) => {
      const event = Fixtures.outboxEvent(terminal.id, { paymentId: payment.id })
      const delivery = Fixtures.delivery(event, { nextAttemptAt: Fixtures.baseTime - i * 1000 })
      return Effect.as(repo.insertEvent(event, delivery), delivery)
    }, { concurrency: 8 })
  const [template] = yield* insert(1)
  // The delivered history, copies of that event, in one statement.
  yield* sql`WITH e AS (
      INSERT INTO outbox_events (id, terminal_id, event_type, payment_id, payout_id, body, test, test_clock_id, sequence, created_at)
      SELECT gen_random_uuid(), terminal_id, event_type, payment_id, payout_id, body, test, test_clock_id, sequence, created_at
      FROM outbox_events, generate_series(1, ${history}) WHERE id = ${template!.eventId}
      RETURNING id, terminal_id, created_at
    )
    INSERT INTO deliveries (id, event_id, terminal_id, status, attempts, next_attempt_at, created_at, updated_at, delivered_at)
    SELECT gen_random_uuid(), e.id, e.terminal_id, 'delivered', 1, NULL, e.created_at, e.created_at, e.created_at FROM e`
  yield* sql`UPDATE deliveries SET status = 'delivered', attempts = 1, next_attempt_at = NULL, delivered_at = created_at WHERE id = ${template!.id}`
  // 50 of them pending again at random due times, as a busy table has a few pending among the delivered.
  yield* sql`UPDATE deliveries SET status = 'pending', attempts = 0, delivered_at = NULL,
      next_attempt_at = ${new Date(Fixtures.baseTime)}::timestamptz - random() * interval '1 hour'
    WHERE seq % ${history / 50} = 0`
  // No autovacuum may analyse the table during the test: its statistics stay those of 50 pending
  // (and the index holds no dead entries, which every scan would read until vacuumed).
  yield* sql`ALTER TABLE deliveries SET (autovacuum_enabled = false)`
  yield* sql`VACUUM ANALYZE deliveries`
  return yield* insert(backlog)
}).pipe(Effect.orDie)

for (const target of targets) {
  describe(`PgOutboxRepository under a backlog the statistics do not show (${target.name})`, () => {
    it.live("a claim reads about its limit of due entries, not the backlog", () =>
      Effect.gen(function*() {
        yield* staleBacklog
        const repo = yield* OutboxRepository
        const now = Fixtures.baseTime + 1000
        // A claim of the default batch size, more than the 50 pending the statistics show.
        const limit = Config.defaults.batchSize
        const { result, read, indexEntries: dueEntries, bitmapScans } = yield* scanning("deliveries", repo.claimDue(now, now + 30_000, limit), "deliveries_due")
        assert.strictEqual(result.length, limit)
        // The claim turned bitmap scans off for its transaction, whatever the statistics say.
        assert.strictEqual(bitmapScans, "off")
        // An ordered scan of deliveries_due stops after the ones it locks. (Under bench:http's statistics the
        // planner chose a bitmap scan that read and sorted the whole backlog; these statistics do not lead
        // PostgreSQL 15 or 18 to it, so this checks the bound and the setting, and the bench the plan.)
        assert.isAtMost(dueEntries, 2 * limit)
        // With the leases written by key: a few reads per claimed delivery (about two), not the backlog.
        assert.isAtMost(read, 4 * limit)
        // The rest are left to the next claim.
        const remaining = yield* repo.claimDue(now, now + 30_000, 2 * backlog)
        assert.strictEqual(remaining.length, backlog + 50 - limit)
        const claimed = new Set(result.map(({ delivery }) => delivery.id))
        assert.isTrue(remaining.every(({ delivery }) => !claimed.has(delivery.id)))
      }).pipe(Effect.provide(kitOn(target.url))))

    it.live("a purge with nothing past the retention reads no event, and one with some reads about those", () =>
      Effect.gen(function*() {
        yield* staleBacklog
        const sql = yield* SqlClient.SqlClient
        yield* sql`ANALYZE outbox_events`.pipe(Effect.orDie)
        const repo = yield* OutboxRepository
        const nothingOld = yield* scanning("outbox_events", repo.purge(Fixtures.baseTime - 30 * 86_400_000))
        assert.strictEqual(nothingOld.result, 0)
        // Not the 22,000 events of the table (a sequential scan read them all).
        assert.isAtMost(nothingOld.read, 10)
        // 100 events of the delivered history made old: the purge reads about those.
        yield* sql`UPDATE outbox_events SET created_at = created_at - interval '400 days'
          WHERE id IN (SELECT event_id FROM deliveries WHERE status = 'delivered' ORDER BY seq LIMIT 100)`.pipe(Effect.orDie)
        const some = yield* scanning("outbox_events", repo.purge(Fixtures.baseTime - 30 * 86_400_000))
        assert.strictEqual(some.result, 100)
        assert.isAtMost(some.read, 10 * 100)
      }).pipe(Effect.provide(kitOn(target.url))))

    it.live("recording attempts reads each delivery by its key, not the pending ones", () =>
      Effect.gen(function*() {
        const deliveries = yield* staleBacklog
        const repo = yield* OutboxRepository
        const some = deliveries.slice(0, 20)
        const { result, read, indexEntries: dueEntries } = yield* scanning("deliveries", repo.recordAttempts(some.map((delivery) => ({
          attempt: Fixtures.attempt(delivery.id, { statusCode: 200 }),
          delivery: { ...delivery, attempts: 1, status: "delivered" as const, nextAttemptAt: null, lastStatusCode: 200 },
          expectedAttempts: 0
        }))), "deliveries_due")
        assert.deepStrictEqual(result, some.map(() => true))
        // About four reads per record (its key, and the attempt's foreign key check), not the pending ones.
        assert.isAtMost(read, 5 * some.length)
        assert.strictEqual(dueEntries, 0)
        for (const delivery of some) assert.strictEqual((yield* repo.listAttempts(delivery.id)).length, 1)
      }).pipe(Effect.provide(kitOn(target.url))))
  })
}
