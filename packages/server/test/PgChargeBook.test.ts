/**
 * The reference server's durable acquirer book passes the `ChargeBook` contract on every
 * Postgres target, with two handles (two pools, as two server processes) on one database.
 */
import { Effect, Layer } from "effect"
import { PgStore } from "@paydesk/sql-pg"
import { ChargeBookContract } from "@paydesk/testkit"
import { randomBytes } from "node:crypto"
import { inject } from "vitest"
import * as PgChargeBook from "../src/PgChargeBook.js"

const books = (serverUrl: string) =>
  Layer.effect(
    ChargeBookContract.ChargeBooks,
    Effect.gen(function*() {
      const url = yield* PgStore.createDatabase(serverUrl, `${inject("pgPrefix")}book_${randomBytes(4).toString("hex")}`)
      const open = () => Effect.acquireRelease(Effect.promise(() => PgChargeBook.open(url)), (opened) => Effect.promise(() => opened.close()))
      const first = yield* open()
      const second = yield* open()
      return { first: first.book, second: second.book }
    })
  )

for (const target of inject("pgTargets")) {
  ChargeBookContract.suite(`postgres (${target.name})`, books(target.url))
}
