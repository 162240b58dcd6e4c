/**
 * The durable payout network book (`@paydesk/emulators`' `PgPayoutBook`) passes the `PayoutNetwork`
 * contract on every Postgres target; a payout the network answered is answered the same by another
 * emulator on the same database (a restarted or second server process), never sent again, also when
 * both are asked at once.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { PayoutNetworkEmulator, PgPayoutBook } from "@paydesk/emulators"
import { PgStore } from "@paydesk/sql-pg"
import { PayoutNetworkContract } from "@paydesk/testkit/contracts"
import { randomBytes, randomUUID } from "node:crypto"
import { SqlClient } from "effect/sql"
import { inject } from "vitest"

const freshDatabase = (serverUrl: string) => PgStore.createDatabase(serverUrl, `${inject("pgPrefix")}payouts_${randomBytes(4).toString("hex")}`)

/** An emulator on a book with a pool of its own on `url` (one server process). */
const emulatorOn = (url: string, client: string) =>
  Effect.map(
    Layer.build(PayoutNetworkEmulator.layerOnBook.pipe(Layer.provide(PgPayoutBook.layer({ client })), Layer.provide(PgStore.layerClient(url, { maxConnections: 2 })))),
    (context) => Context.get(context, PayoutNetworkEmulator.PayoutNetworkEmulator)
  )

for (const target of inject("pgTargets")) {
  PayoutNetworkContract.suite(
    `PgPayoutBook, postgres (${target.name})`,
    Layer.unwrap(Effect.map(freshDatabase(target.url), (url) =>
      PayoutNetworkEmulator.layerOnBook.pipe(Layer.provide(PgPayoutBook.layer({ client: "contract" })), Layer.provide(PgStore.layerClient(url, { maxConnections: 2 })))))
  )
}

describe("PgPayoutBook", () => {
  it.live("a payout answered before a restart is answered the same after it, never sent again; a rejected one stays rejected", () =>
    Effect.scoped(Effect.gen(function*() {
      const url = yield* freshDatabase(inject("pgTargets")[0]!.url)
      const before = yield* emulatorOn(url, "before")
      const payout = { idempotencyKey: randomUUID(), amountUsdt: 25_000_000n, walletAddress: "TXyz", network: "TRC20" }
      const sent = yield* before.network.send(payout)
      assert.strictEqual(sent._tag, "Sent")
      yield* before.programOutcomes(["rejected"])
      const refused = { ...payout, idempotencyKey: randomUUID() }
      assert.strictEqual((yield* before.network.send(refused))._tag, "Rejected")
      // A new process: a new emulator (nothing in memory) on the same database.
      const after = yield* emulatorOn(url, "after")
      assert.deepStrictEqual(yield* after.network.send(payout), sent)
      assert.deepStrictEqual(yield* after.network.send(refused), { _tag: "Rejected", reason: "rejected by the network" })
      assert.deepStrictEqual(after.sends, [])
      assert.deepStrictEqual(after.calls.map((c) => c.replay), [true, true])
      // A new payout gets a transaction id of its own.
      const other = yield* after.network.send({ ...payout, idempotencyKey: randomUUID() })
      assert.isTrue(other._tag === "Sent" && sent._tag === "Sent" && other.txId !== sent.txId)
      // Random, as a network's hashes: a serial would count the other merchants' payouts.
      for (const answer of [sent, other]) assert.match(answer._tag === "Sent" ? answer.txId : "", /^tx_[0-9a-f]{32}$/)
    })))

  it.live("a payout sent before the random ids keeps its tx_<serial>", () =>
    Effect.scoped(Effect.gen(function*() {
      const url = yield* freshDatabase(inject("pgTargets")[0]!.url)
      const network = yield* emulatorOn(url, "upgraded")
      const sql = Context.get(yield* Layer.build(PgStore.layerClient(url, { maxConnections: 1 })), SqlClient.SqlClient)
      const payout = { idempotencyKey: randomUUID(), amountUsdt: 1_000_000n, walletAddress: "TXyz", network: "TRC20" }
      yield* sql`INSERT INTO emulator_payouts (idempotency_key, amount_micro_usdt, wallet_address, network, outcome) VALUES (${payout.idempotencyKey}, 1000000, 'TXyz', 'TRC20', 'sent')`
      const [row] = yield* sql<{ serial: string }>`SELECT serial FROM emulator_payouts WHERE idempotency_key = ${payout.idempotencyKey}`
      assert.deepStrictEqual(yield* network.network.send(payout), { _tag: "Sent", txId: `tx_${row!.serial}` })
    })))

  it.live("two processes asked for one new payout at once answer the same send", () =>
    Effect.scoped(Effect.gen(function*() {
      const url = yield* freshDatabase(inject("pgTargets")[0]!.url)
      const [a, b] = [yield* emulatorOn(url, "a"), yield* emulatorOn(url, "b")]
      const payout = { idempotencyKey: randomUUID(), amountUsdt: 1_000_000n, walletAddress: "TXyz", network: "TRC20" }
      const answers = yield* Effect.all([a.network.send(payout), b.network.send(payout)], { concurrency: 2 })
      assert.deepStrictEqual(answers[0], answers[1])
      assert.strictEqual([...a.calls, ...b.calls].filter((c) => !c.replay).length, 1)
    })))
})
