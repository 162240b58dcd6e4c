/**
 * The durable acquirer book (`@paydesk/emulators`' `PgChargeBook`) passes the `ChargeBook` contract
 * on every Postgres target, with two handles (two pools, as two server processes) on one database;
 * and a charge the bank recorded stays recorded when the core's transaction around the call rolls
 * back (the book has a client of its own).
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Duration, Effect, Fiber, Layer } from "effect"
import { AcquirerEmulator, PgChargeBook } from "@paydesk/emulators"
import { PgStore } from "@paydesk/sql-pg"
import { ChargeBookContract } from "@paydesk/testkit/contracts"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { inject } from "vitest"

const freshDatabase = (serverUrl: string) => PgStore.createDatabase(serverUrl, `${inject("pgPrefix")}book_${randomBytes(4).toString("hex")}`)

/** A book handle with a pool of its own on `url`. */
const handle = (url: string, client: string, options: { readonly retentionMs?: number; readonly purgeEveryMs?: number } = {}) =>
  Effect.map(
    Layer.build(PgChargeBook.layer({ client, ...options }).pipe(Layer.provide(PgStore.layerClient(url, { maxConnections: 4 })))),
    (context) => Context.get(context, AcquirerEmulator.ChargeBookService)
  )

const books = (serverUrl: string) =>
  Layer.effect(
    ChargeBookContract.ChargeBooks,
    Effect.gen(function*() {
      const url = yield* freshDatabase(serverUrl)
      return { first: yield* handle(url, "first"), second: yield* handle(url, "second") }
    })
  )

for (const target of inject("pgTargets")) {
  ChargeBookContract.suite(`postgres (${target.name})`, books(target.url))
}

describe("PgChargeBook", () => {
  it.live("keeps a charge recorded inside a core transaction that rolls back", () =>
    Effect.scoped(Effect.gen(function*() {
      const url = yield* freshDatabase(inject("pgTargets")[0]!.url)
      const core = yield* Layer.build(PgStore.layerClient(url, { maxConnections: 2 }))
      const sql = Context.get(core, SqlClient.SqlClient)
      const book = yield* handle(url, "server")
      const request = { subscriptionId: "sub-1", cycleNumber: 1, idempotencyKey: "sub-1:1:1", amount: 990_00n }
      let recorded: AcquirerEmulator.BookEntry | undefined
      const exit = yield* sql.withTransaction(Effect.gen(function*() {
        recorded = yield* book.take(request)
        return yield* Effect.fail("roll back")
      })).pipe(Effect.exit)
      assert.isTrue(exit._tag === "Failure" && recorded?.fresh === true)
      const again = yield* book.take(request)
      assert.deepStrictEqual([again.fresh, again.serial, again.program], [false, recorded!.serial, "paid"])
      const rows = yield* sql<{ outcome: string }>`SELECT outcome FROM emulator_charges WHERE idempotency_key = ${request.idempotencyKey}`
      assert.deepStrictEqual(rows.map((r) => r.outcome), ["paid"])
    })))

  // Each step within 20 s, named when it is not (the test has 60 s): it once ran past vitest's 30 s on a
  // machine busy with a second suite and a build (1 s alone), and its report could not say which step waited.
  const step = (name: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    effect.pipe(Effect.timeoutOrElse({ duration: Duration.seconds(20), orElse: () => Effect.die(new Error(`${name} took more than 20 s`)) }))

  it.live("a book whose database goes away fails with BookUnavailable, and the emulator answers unknown instead of failing the pass", () =>
    Effect.scoped(Effect.gen(function*() {
      const serverUrl = inject("pgTargets")[0]!.url
      const url = yield* freshDatabase(serverUrl).pipe(step("CREATE DATABASE"))
      const book = yield* handle(url, "server").pipe(step("the book's start"))
      const request = { subscriptionId: "sub-1", cycleNumber: 1, idempotencyKey: "sub-1:1:1", amount: 990_00n }
      assert.strictEqual((yield* book.take(request).pipe(step("the first take"))).program, "paid")
      const name = new URL(url).pathname.slice(1)
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP DATABASE ${name} WITH (FORCE)`)).pipe(
        Effect.provide(PgStore.layerClient(serverUrl, { maxConnections: 1 })),
        Effect.orDie,
        step("DROP DATABASE")
      )
      const failure = yield* Effect.flip(book.take({ ...request, idempotencyKey: "sub-1:2:1", cycleNumber: 2 })).pipe(step("the take on the dropped database"))
      assert.strictEqual(failure._tag, "BookUnavailable")
      const emulator = AcquirerEmulator.make(book)
      assert.deepStrictEqual(yield* emulator.acquirer.charge({ ...request, idempotencyKey: "sub-1:2:1", cycleNumber: 2 }), {
        _tag: "Unknown",
        reason: "the acquirer did not answer"
      })
      assert.strictEqual((yield* Effect.flip(emulator.acquirer.stopBinding({ subscriptionId: "sub-1" })))._tag, "ProviderUnavailable")
    })), 60_000)

  it.live("forgets the settled charge keys no one asked about for the retention and a stopped binding's programs; a key asked about or unknown stays", () =>
    Effect.scoped(Effect.gen(function*() {
      const url = yield* freshDatabase(inject("pgTargets")[0]!.url)
      const sql = Context.get(yield* Layer.build(PgStore.layerClient(url, { maxConnections: 1 })), SqlClient.SqlClient)
      const book = yield* handle(url, "server")
      const purge = PgChargeBook.purge(PgChargeBook.defaultRetentionMs).pipe(Effect.provideService(SqlClient.SqlClient, sql))
      const charge = (key: string, cycleNumber: number, subscriptionId = "sub-1") => ({ subscriptionId, cycleNumber, idempotencyKey: key, amount: 990_00n })
      const old = yield* book.take(charge("old", 1))
      const asked = yield* book.take(charge("asked", 2))
      const recent = yield* book.take(charge("recent", 3))
      yield* book.program("sub-4", ["unknown", "unknown"])
      yield* book.take(charge("in-doubt", 1, "sub-4"))
      yield* book.take(charge("settled", 2, "sub-4"))
      yield* book.program("sub-2", ["failed"])
      yield* book.program("sub-3", ["failed", "failed"])
      yield* book.stopBinding("sub-3")
      // 31 days ago: every key; then the core asks about one again, and the operator settles another.
      yield* sql`UPDATE emulator_charges SET seen_at = now() - interval '31 days'`
      const replay = yield* book.void({ subscriptionId: "sub-1", idempotencyKey: "asked" })
      assert.deepStrictEqual([replay.fresh, replay.serial, replay.program], [false, asked.serial, "paid"])
      assert.isTrue(yield* book.resolve("settled", "failed"))
      // old and recent go; asked and settled were renewed; in-doubt is unknown; sub-3's two programs go with its stopped binding.
      assert.strictEqual(yield* purge, 4)
      const keys = yield* sql<{ idempotency_key: string }>`SELECT idempotency_key FROM emulator_charges ORDER BY serial`
      assert.deepStrictEqual(keys.map((r) => r.idempotency_key), ["asked", "in-doubt", "settled"])
      const programs = yield* sql<{ subscription_id: string }>`SELECT subscription_id FROM emulator_charge_programs`
      assert.deepStrictEqual(programs.map((r) => r.subscription_id), ["sub-2"])
      // What stays is answered as before: the unknown one can still be settled; a forgotten key is a new one to the bank (the retention's meaning).
      assert.strictEqual((yield* book.take(charge("asked", 2))).serial, asked.serial)
      assert.isTrue(yield* book.resolve("in-doubt", "paid"))
      const again = yield* book.take(charge("old", 1))
      assert.isTrue(again.fresh && again.serial > recent.serial && again.serial !== old.serial)
      assert.strictEqual((yield* book.take(charge("sub-2-first", 1, "sub-2"))).program, "failed")
      assert.strictEqual((yield* book.take(charge("sub-3-next", 3, "sub-3"))).program, "stopped")
      assert.strictEqual(yield* purge, 0)
      // Untouched for 400 days (a subscription gone without a stop): an unknown key and a live binding's program go too.
      yield* book.program("sub-5", ["unknown", "failed"])
      yield* book.take(charge("abandoned", 1, "sub-5"))
      yield* sql`UPDATE emulator_charges SET seen_at = now() - interval '401 days' WHERE idempotency_key = 'abandoned'`
      yield* sql`UPDATE emulator_charge_programs SET created_at = now() - interval '401 days' WHERE subscription_id = 'sub-5'`
      yield* book.program("sub-6", ["failed"])
      yield* sql`UPDATE emulator_charge_programs SET created_at = now() - interval '399 days' WHERE subscription_id = 'sub-6'`
      assert.strictEqual(yield* purge, 2)
      assert.deepStrictEqual((yield* sql<{ subscription_id: string }>`SELECT subscription_id FROM emulator_charge_programs`).map((r) => r.subscription_id), ["sub-6"])
      assert.isFalse(yield* book.resolve("abandoned", "paid"))
    })))

  it.live("a start finds the book's tables current and runs no DDL, so it waits for no lock a charge holds", () =>
    Effect.scoped(Effect.gen(function*() {
      const url = yield* freshDatabase(inject("pgTargets")[0]!.url)
      const sql = Context.get(yield* Layer.build(PgStore.layerClient(url, { maxConnections: 2 })), SqlClient.SqlClient)
      yield* handle(url, "first")
      assert.deepStrictEqual(yield* sql`SELECT book, version FROM emulator_book_schema`, [{ book: 0, version: 2 }])
      // A transaction of another process holds both tables (as a charge does, and more): a second start still completes.
      const started = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`LOCK TABLE emulator_charges, emulator_charge_programs IN ACCESS EXCLUSIVE MODE`
        return yield* handle(url, "second").pipe(Effect.timeout(Duration.seconds(5)), Effect.as("started"))
      }))
      assert.strictEqual(started, "started")
    })))

  it.live("an upgrade gives way to a session holding a table instead of queueing the running processes' charges behind it", () =>
    Effect.scoped(Effect.gen(function*() {
      const url = yield* freshDatabase(inject("pgTargets")[0]!.url)
      const first = yield* handle(url, "first")
      const sql = Context.get(yield* Layer.build(PgStore.layerClient(url, { maxConnections: 2 })), SqlClient.SqlClient)
      // The book as an older build left it (version 1), and a report reading its charges for 6 s.
      yield* sql`UPDATE emulator_book_schema SET version = 1 WHERE book = 0`
      const report = yield* Effect.forkScoped(sql.withTransaction(sql`SELECT count(*) FROM emulator_charges`.pipe(Effect.andThen(sql`SELECT pg_sleep(6)`))))
      yield* Effect.sleep(Duration.millis(300))
      const upgrading = yield* Effect.forkScoped(handle(url, "second"))
      yield* Effect.sleep(Duration.millis(300))
      // A charge of the running process: it waits at most for one of the upgrade's short lock requests, not for the report.
      const before = Date.now()
      yield* first.take({ subscriptionId: "sub-1", cycleNumber: 1, idempotencyKey: "during-upgrade", amount: 100n })
      assert.isBelow(Date.now() - before, 3_500)
      yield* Fiber.join(report)
      yield* Fiber.join(upgrading)
      assert.deepStrictEqual(yield* sql`SELECT version FROM emulator_book_schema WHERE book = 0`, [{ version: 2 }])
    })), 30_000)

  it.live("purges in batches, and the layer purges while it lives", () =>
    Effect.scoped(Effect.gen(function*() {
      const url = yield* freshDatabase(inject("pgTargets")[0]!.url)
      const sql = Context.get(yield* Layer.build(PgStore.layerClient(url, { maxConnections: 1 })), SqlClient.SqlClient)
      const book = yield* handle(url, "first")
      yield* book.take({ subscriptionId: "sub-1", cycleNumber: 1, idempotencyKey: "live", amount: 1n })
      const count = sql<{ n: number }>`SELECT count(*)::int AS n FROM emulator_charges`
      // More than a batch, all past the retention.
      const aged = PgChargeBook.purgeBatch * 2 + 5
      yield* sql`INSERT INTO emulator_charges (idempotency_key, subscription_id, cycle_number, amount_kopecks, outcome, seen_at)
        SELECT 'aged-' || n, 'sub-aged', n, 100, 'paid', now() - interval '2 minutes' FROM generate_series(1, ${aged}) AS n`
      assert.strictEqual((yield* count)[0]!.n, aged + 1)
      // A second handle, as a second process would start one: it purges at once and every 100 ms.
      yield* handle(url, "second", { retentionMs: 60_000, purgeEveryMs: 100 })
      let left = aged + 1
      for (let i = 0; i < 100 && left > 1; i++) {
        yield* Effect.sleep(Duration.millis(50))
        left = (yield* count)[0]!.n
      }
      assert.strictEqual(left, 1)
      yield* sql`UPDATE emulator_charges SET seen_at = now() - interval '2 minutes'`
      for (let i = 0; i < 100 && left > 0; i++) {
        yield* Effect.sleep(Duration.millis(50))
        left = (yield* count)[0]!.n
      }
      assert.strictEqual(left, 0)
    })))
})
