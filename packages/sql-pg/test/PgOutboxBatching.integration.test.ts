/**
 * The PostgreSQL outbox's batching, observed in the database: a statement-level trigger counts
 * the statements that insert attempts and that stamp deliveries. A pass of the callback engine
 * stamps its deliveries in one statement and records its attempts in far fewer statements than
 * deliveries (concurrent `recordAttempt`s batched); records made while a batch is being written
 * wait and go together in the next, unless it is stuck on a lock for `recordStallMs`; a batch
 * holding text PostgreSQL refuses fails only that record; inside a transaction an attempt is
 * recorded in it (and rolls back with it).
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Exit, Fiber, Option, Schedule } from "effect"
import { Callbacks, OutboxRepository, Payments, Transactions } from "@paydesk/core"
import { Fixtures, Kit, ManualClock, RecordingCallbackTransport } from "@paydesk/testkit"
import { countStatements, kitOn, lockWaits, targets, underLock } from "./PgHarness.js"
import { recordBatchesInFlight, recordStallMs } from "../src/PgOutboxRepository.js"

const anchor = Date.parse("2026-01-31T07:00:00.000Z")

/** The outbox and `count` pending deliveries of one payment of a fresh terminal. */
const pendingDeliveries = (count: number) =>
  Effect.gen(function*() {
    const { terminal } = yield* Fixtures.seedTerminal({ callbackUrl: "https://shop.example/cb" })
    const payment = yield* Fixtures.seedPayment(terminal.id)
    const repo = yield* OutboxRepository
    const seeded: Array<ReturnType<typeof Fixtures.delivery>> = []
    for (let i = 0; i < count; i++) {
      const event = Fixtures.outboxEvent(terminal.id, { paymentId: payment.id })
      const delivery = Fixtures.delivery(event)
      yield* repo.insertEvent(event, delivery)
      seeded.push(delivery)
    }
    return { repo, seeded }
  })

/**
 * Six pending deliveries. Another transaction holds the first one's row, so the first record's
 * statement waits in PostgreSQL; the other five are recorded one by one (each in a scheduler turn of
 * its own) while it waits; then `meanwhile` runs, still under the lock. The lock is released
 * whatever happens, so a failure ends the test instead of holding it. `records`: the six records.
 */
const behindALock = <A, E, R>(meanwhile: (setup: {
  readonly repo: OutboxRepository["Service"]
  readonly seeded: ReadonlyArray<ReturnType<typeof Fixtures.delivery>>
  readonly counted: Effect.Effect<{ readonly attempts: number }>
}) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const { repo, seeded } = yield* pendingDeliveries(6)
    const record = (delivery: (typeof seeded)[number]) =>
      repo.recordAttempt(Fixtures.attempt(delivery.id, { statusCode: 200 }), { ...delivery, attempts: 1, status: "delivered", nextAttemptAt: null, lastStatusCode: 200 }, 0)
    const counted = yield* countStatements({ attempts: "INSERT ON delivery_attempts" })
    const records: Array<Fiber.Fiber<boolean>> = []
    const seen = yield* underLock((sql) => sql`SELECT 1 FROM deliveries WHERE id = ${seeded[0]!.id} FOR UPDATE`, Effect.gen(function*() {
      records.push(yield* Effect.forkChild(record(seeded[0]!)))
      yield* lockWaits(1)
      for (const delivery of seeded.slice(1)) {
        records.push(yield* Effect.forkChild(record(delivery)))
        yield* Effect.sleep("5 millis")
      }
      return yield* meanwhile({ repo, seeded, counted })
    }))
    return { repo, seeded, counted, records, seen }
  })

/** After `behindALock`: every record stored once, in two statements (the first, then one for the five). */
const recordedInTwo = (held: Effect.Success<ReturnType<typeof behindALock>>) =>
  Effect.gen(function*() {
    assert.deepStrictEqual(yield* Fiber.joinAll(held.records), [true, true, true, true, true, true])
    assert.strictEqual((yield* held.counted).attempts, 2)
    for (const delivery of held.seeded) assert.strictEqual((yield* held.repo.listAttempts(delivery.id)).length, 1)
  })

/** The outbox and one pending delivery of a fresh terminal's payment. */
const oneDelivery = Effect.map(pendingDeliveries(1), ({ repo, seeded }) => ({ repo, delivery: seeded[0]! }))

for (const target of targets) {
  describe(`PgOutboxRepository batching (${target.name})`, () => {
    it.live("a pass claims and stamps its deliveries in one statement and records their attempts in a few", () =>
      Effect.gen(function*() {
        const clock = yield* ManualClock.make(anchor)
        yield* Effect.gen(function*() {
          const merchant = yield* Kit.provisionMerchant()
          const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
          const count = 24
          for (let i = 0; i < count; i++) yield* Payments.create(principal, { amount: "10", orderId: `b-${i}`, test: true })
          const counted = yield* countStatements({ attempts: "INSERT ON delivery_attempts", updates: "UPDATE ON deliveries" })
          assert.strictEqual(yield* Callbacks.runDue(), count)
          const statements = yield* counted
          // The claim leases and stamps the deliveries in one update; the records update them in the same statements as their inserts.
          assert.isAtMost(statements.attempts, count / 4)
          assert.strictEqual(statements.updates, 1 + statements.attempts)
          const transport = yield* RecordingCallbackTransport.RecordingCallbackTransport
          assert.strictEqual(transport.requests.length, count)
          // Every delivery delivered once, with the X-Timestamp of its stamp.
          const deliveries = yield* (yield* OutboxRepository).listDeliveries({ limit: 100 })
          assert.strictEqual(deliveries.length, count)
          for (const d of deliveries) {
            assert.deepStrictEqual([d.status, d.attempts, d.sendingAt], ["delivered", 1, null])
            assert.strictEqual((yield* (yield* OutboxRepository).listAttempts(d.id)).length, 1)
          }
          assert.isTrue(transport.requests.every((r) => r.headers["x-timestamp"] === String(anchor / 1000)))
        }).pipe(Effect.provideService(Clock.Clock, clock.clock))
      }).pipe(Effect.provide(kitOn(target.url))))

    it.live("records made while a batch is being written wait, and go together in the next", () =>
      Effect.gen(function*() {
        assert.strictEqual(recordBatchesInFlight, 1)
        const held = yield* behindALock(({ counted }) => Effect.map(counted, (c) => c.attempts))
        // Nothing was written while the first statement waited.
        assert.strictEqual(held.seen, 0)
        yield* recordedInTwo(held)
      }).pipe(Effect.provide(kitOn(target.url))))

    it.live("a record statement stuck on a lock holds the others back for recordStallMs, not longer", () =>
      Effect.gen(function*() {
        const held = yield* behindALock(({ repo, seeded }) =>
          Effect.gen(function*() {
            // Still under the lock: the five are recorded once the first statement has stalled.
            const started = Date.now()
            yield* Effect.forEach(seeded.slice(1), (delivery) =>
              Effect.flatMap(repo.listAttempts(delivery.id), (attempts) => attempts.length === 1 ? Effect.void : Effect.fail("not recorded yet")).pipe(
                Effect.retry({ schedule: Schedule.spaced("20 millis"), times: 500 })
              ), { discard: true })
            return { waited: Date.now() - started, first: (yield* repo.listAttempts(seeded[0]!.id)).length }
          }))
        assert.strictEqual(held.seen.first, 0)
        assert.isBelow(held.seen.waited, recordStallMs + 5_000)
        yield* recordedInTwo(held)
      }).pipe(Effect.provide(kitOn(target.url))))

    it.live("a batch with text PostgreSQL refuses fails only that record", () =>
      Effect.gen(function*() {
        const { repo, seeded } = yield* pendingDeliveries(6)
        const counted = yield* countStatements({ attempts: "INSERT ON delivery_attempts", updates: "UPDATE ON deliveries" })
        const exits = yield* Effect.forEach(seeded, (delivery, i) => {
          const error = i === 2 ? "bad\u0000text" : "HTTP 503"
          const attempt = Fixtures.attempt(delivery.id, { statusCode: 503, error })
          return Effect.exit(repo.recordAttempt(attempt, { ...delivery, attempts: 1, lastStatusCode: 503, lastError: error }, 0))
        }, { concurrency: "unbounded" })
        assert.deepStrictEqual(exits.map((e) => Exit.isSuccess(e) ? e.value : "died"), [true, true, "died", true, true, true])
        // The batch was refused as a whole, then each record was made alone: the five that stored
        // are five statements (a refused statement, rolled back, leaves no count).
        assert.strictEqual((yield* counted).attempts, seeded.length - 1)
        for (const [i, delivery] of seeded.entries()) {
          assert.strictEqual((yield* repo.listAttempts(delivery.id)).length, i === 2 ? 0 : 1)
          assert.strictEqual(Option.getOrThrow(yield* repo.getDelivery(delivery.id)).attempts, i === 2 ? 0 : 1)
        }
      }).pipe(Effect.provide(kitOn(target.url))))

    it.live("two records of one delivery, its id spelled in either case, are made one after the other", () =>
      Effect.gen(function*() {
        const { repo, delivery } = yield* oneDelivery
        const failed = { ...delivery, attempts: 1, lastStatusCode: 503, lastError: "HTTP 503" }
        const results = yield* repo.recordAttempts([
          { attempt: Fixtures.attempt(delivery.id, { statusCode: 503 }), delivery: failed, expectedAttempts: 0 },
          {
            attempt: Fixtures.attempt(delivery.id.toUpperCase(), { attemptNumber: 2, statusCode: 200 }),
            delivery: { ...failed, id: delivery.id.toUpperCase(), attempts: 2, status: "delivered", nextAttemptAt: null, lastStatusCode: 200, lastError: null },
            expectedAttempts: 1
          }
        ])
        assert.deepStrictEqual(results, [true, true])
        assert.deepStrictEqual((yield* repo.listAttempts(delivery.id)).map((a) => a.attemptNumber), [1, 2])
        assert.strictEqual(Option.getOrThrow(yield* repo.getDelivery(delivery.id)).status, "delivered")
      }).pipe(Effect.provide(kitOn(target.url))))

    it.live("inside a transaction an attempt is recorded in it, and rolls back with it", () =>
      Effect.gen(function*() {
        const { repo, delivery } = yield* oneDelivery
        const attempt = Fixtures.attempt(delivery.id, { statusCode: 200 })
        const after = { ...delivery, attempts: 1, status: "delivered" as const, nextAttemptAt: null, lastStatusCode: 200 }
        const exit = yield* Effect.exit((yield* Transactions).run(Effect.gen(function*() {
          assert.isTrue(yield* repo.recordAttempt(attempt, after, 0))
          assert.strictEqual((yield* repo.listAttempts(delivery.id)).length, 1)
          return yield* Effect.fail("abort" as const)
        })))
        assert.isTrue(Exit.isFailure(exit))
        assert.deepStrictEqual(yield* repo.listAttempts(delivery.id), [])
        assert.deepStrictEqual(Option.getOrThrow(yield* repo.getDelivery(delivery.id)), delivery)
      }).pipe(Effect.provide(kitOn(target.url))))
  })
}
