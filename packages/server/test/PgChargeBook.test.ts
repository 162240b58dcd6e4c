/**
 * The durable acquirer book (`@paydesk/emulators`' `PgChargeBook`) passes the `ChargeBook` contract
 * on every Postgres target, with two handles (two pools, as two server processes) on one database;
 * and a charge the bank recorded stays recorded when the core's transaction around the call rolls
 * back (the book has a client of its own).
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { AcquirerEmulator, PgChargeBook } from "@paydesk/emulators"
import { PgStore } from "@paydesk/sql-pg"
import { ChargeBookContract } from "@paydesk/testkit/contracts"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { inject } from "vitest"

const freshDatabase = (serverUrl: string) => PgStore.createDatabase(serverUrl, `${inject("pgPrefix")}book_${randomBytes(4).toString("hex")}`)

/** A book handle with a pool of its own on `url`. */
const handle = (url: string, client: string) =>
  Effect.map(
    Layer.build(PgChargeBook.layer({ client }).pipe(Layer.provide(PgStore.layerClient(url, { maxConnections: 4 })))),
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

  it.live("a book whose database goes away fails with BookUnavailable, and the emulator answers unknown instead of failing the pass", () =>
    Effect.scoped(Effect.gen(function*() {
      const serverUrl = inject("pgTargets")[0]!.url
      const url = yield* freshDatabase(serverUrl)
      const book = yield* handle(url, "server")
      const request = { subscriptionId: "sub-1", cycleNumber: 1, idempotencyKey: "sub-1:1:1", amount: 990_00n }
      assert.strictEqual((yield* book.take(request)).program, "paid")
      const name = new URL(url).pathname.slice(1)
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP DATABASE ${name} WITH (FORCE)`)).pipe(
        Effect.provide(PgStore.layerClient(serverUrl, { maxConnections: 1 })),
        Effect.orDie
      )
      const failure = yield* Effect.flip(book.take({ ...request, idempotencyKey: "sub-1:2:1", cycleNumber: 2 }))
      assert.strictEqual(failure._tag, "BookUnavailable")
      const emulator = AcquirerEmulator.make(book)
      assert.deepStrictEqual(yield* emulator.acquirer.charge({ ...request, idempotencyKey: "sub-1:2:1", cycleNumber: 2 }), {
        _tag: "Unknown",
        reason: "the acquirer did not answer"
      })
      assert.strictEqual((yield* Effect.flip(emulator.acquirer.stopBinding({ subscriptionId: "sub-1" })))._tag, "ProviderUnavailable")
    })))
})
