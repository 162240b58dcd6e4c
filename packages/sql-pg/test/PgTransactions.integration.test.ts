/**
 * A deadlock inside a transaction is a `WriteConflict` (which `atomic` retries), also when the
 * statement that lost it ran under an adapter's `orDie`, as batched reads and writes do: it used to
 * reach the caller as a defect (a 500) after the rollback. Two transactions lock two rows in
 * opposite orders; PostgreSQL aborts one of them after `deadlock_timeout` (1 s by default): the one
 * whose wait began first, or (the nested-atomic test) the one whose session did not raise it (a
 * setting a superuser may change: the Postgres targets connect as one).
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Layer } from "effect"
import { Atomic, Transactions } from "@paydesk/core"
import { SqlClient } from "effect/sql"
import * as PgStore from "../src/PgStore.js"
import { orDie } from "../src/PgSupport.js"
import { freshDatabase, lockWaits, targets } from "./PgHarness.js"

/** A fresh migrated database with two rows to lock (`id` 1 and 2, `v` 0). */
const twoRows = (url: string) =>
  Layer.unwrap(Effect.map(freshDatabase(url), (db) => PgStore.layer(db, { maxConnections: 4 })))

const setup = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE lock_pair (id int PRIMARY KEY, v int NOT NULL)`
  yield* sql`INSERT INTO lock_pair VALUES (1, 0), (2, 0)`
}).pipe(Effect.orDie)

/**
 * Two bodies: the first bumps row 1 then row 2, the second row 2 then row 1, each taking its second
 * lock only once both hold their first. Each statement runs under `orDie`, as in the adapters.
 */
const crossed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const holding = [yield* Deferred.make<void>(), yield* Deferred.make<void>()] as const
  const bump = (id: number) => orDie(sql`UPDATE lock_pair SET v = v + 1 WHERE id = ${id}`)
  const body = (first: number, second: number, mine: Deferred.Deferred<void>, other: Deferred.Deferred<void>) =>
    Effect.gen(function*() {
      yield* bump(first)
      yield* Deferred.succeed(mine, undefined)
      yield* Deferred.await(other)
      yield* bump(second)
    })
  return [body(1, 2, holding[0], holding[1]), body(2, 1, holding[1], holding[0])] as const
})

const values = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql<{ id: number; v: number }>`SELECT id, v FROM lock_pair ORDER BY id`
}).pipe(Effect.orDie)

for (const target of targets) {
  describe(`PgTransactions: deadlocks (${target.name})`, () => {
    it.live("the transaction that loses a deadlock in an orDie statement fails with WriteConflict, and the other commits", () =>
      Effect.gen(function*() {
        yield* setup
        const tx = yield* Transactions
        const [a, b] = yield* crossed
        const exits = yield* Effect.all([Effect.exit(tx.run(a)), Effect.exit(tx.run(b))], { concurrency: 2 })
        const failed = exits.filter(Exit.isFailure)
        assert.strictEqual(failed.length, 1)
        const cause = failed[0]!.cause
        // A typed failure, not a defect.
        assert.isFalse(Cause.hasDies(cause))
        assert.strictEqual((Cause.findErrorOption(cause) as { value?: { _tag?: string } }).value?._tag, "WriteConflict")
        // The loser's first update was rolled back; the winner's two stand.
        const rows = yield* values
        assert.deepStrictEqual(rows.map((r) => r.v).sort(), [1, 1])
      }).pipe(Effect.provide(twoRows(target.url))), 30_000)

    it.live("atomic retries the loser, and both bodies commit once each", () =>
      Effect.gen(function*() {
        yield* setup
        const [a, b] = yield* crossed
        const exits = yield* Effect.all([Effect.exit(Atomic.atomic(a)), Effect.exit(Atomic.atomic(b))], { concurrency: 2 })
        assert.isTrue(exits.every(Exit.isSuccess))
        assert.deepStrictEqual((yield* values).map((r) => r.v), [2, 2])
      }).pipe(Effect.provide(twoRows(target.url))), 30_000)

    it.live("a deadlock in a nested atomic is retried by the outermost one, which gives up the locks it held", () =>
      Effect.gen(function*() {
        yield* setup
        const sql = yield* SqlClient.SqlClient
        const holding = [yield* Deferred.make<void>(), yield* Deferred.make<void>()] as const
        // Opened once b waits for row 1: a's nested statement then closes the cycle.
        const bWaits = yield* Deferred.make<void>()
        const bump = (id: number) => orDie(sql`UPDATE lock_pair SET v = v + 1 WHERE id = ${id}`)
        let nestedRuns = 0
        let outerRuns = 0
        // Set once b has committed: a's retry waits for it. Without it, a's retry could take row 1
        // before b (woken by a's rollback) did, and deadlock again: nestedRuns 3 under load (a
        // fresh-clone CI run).
        const bDone = yield* Deferred.make<void>()
        // Row 1 in the outer transaction, row 2 in a nested atomic (a savepoint); the other the other way round.
        const a = Effect.gen(function*() {
          if (outerRuns++ > 0) yield* Deferred.await(bDone)
          yield* bump(1)
          yield* Deferred.succeed(holding[0], undefined)
          yield* Deferred.await(holding[1])
          yield* Deferred.await(bWaits)
          yield* Atomic.atomic(Effect.suspend(() => (nestedRuns++, bump(2))))
        })
        const b = Effect.gen(function*() {
          // The nested statement must be the victim: its session checks for a deadlock after the
          // default 1 s, this one only after 20 s (and it waits first). The test relied on a 300 ms
          // head start against two 1 s checks, and under load the nested atomic once ran a third time.
          yield* orDie(sql`SET LOCAL deadlock_timeout = '20s'`)
          yield* bump(2)
          yield* Deferred.succeed(holding[1], undefined)
          yield* Deferred.await(holding[0])
          yield* bump(1)
        })
        const opener = Effect.andThen(lockWaits(1), Deferred.succeed(bWaits, undefined))
        const [exits] = yield* Effect.all([
          Effect.all([Effect.exit(Atomic.atomic(a)), Effect.exit(Atomic.atomic(b).pipe(Effect.ensuring(Deferred.succeed(bDone, undefined))))], { concurrency: 2 }),
          opener
        ], { concurrency: 2 })
        assert.isTrue(exits.every(Exit.isSuccess))
        assert.deepStrictEqual((yield* values).map((r) => r.v), [2, 2])
        // Once, and once more with its outer transaction's retry (not within its savepoint, whose
        // retry would still hold the outer transaction's lock on row 1).
        assert.strictEqual(nestedRuns, 2)
      }).pipe(Effect.provide(twoRows(target.url))), 30_000)

    it.live("another SQL error under orDie stays a defect", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const tx = yield* Transactions
        const exit = yield* Effect.exit(tx.run(orDie(sql`SELECT 1 / 0`)))
        assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      }).pipe(Effect.provide(twoRows(target.url))), 30_000)
  })
}
