/**
 * Contract suite of `IdempotencyStore`: one record per `(terminalId, scope, key)`, the loser of a
 * concurrent duplicate gets `WriteConflict`, `purge` deletes records created before a time (of the
 * scopes given, or of all), and `remove` deletes one record.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { AccountRepository, IdempotencyStore, TerminalRepository, Transactions } from "@paydesk/core"
import * as Fixtures from "../Fixtures.js"
import { expectWriteConflict, none, some } from "./Support.js"

/** What the suite needs. */
export type Requirements = IdempotencyStore | AccountRepository | TerminalRepository | Transactions

/** Registers the `IdempotencyStore` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`IdempotencyStore contract (${name})`, (it) => {
    const setup = Effect.gen(function*() {
      const { terminal } = yield* Fixtures.seedTerminal()
      return { terminal, store: yield* IdempotencyStore }
    })

    it.effect("records round-trip and are keyed by terminal, scope and key", () =>
      Effect.gen(function*() {
        const { terminal, store } = yield* setup
        const { terminal: other } = yield* Fixtures.seedTerminal()
        const record = Fixtures.idempotencyRecord(terminal.id, { key: "Key-With.Symbols_~!*" })
        yield* store.insert(record)
        assert.deepStrictEqual(some(yield* store.find(terminal.id, "subscription", record.key)), record)
        none(yield* store.find(terminal.id, "payout", record.key))
        none(yield* store.find(other.id, "subscription", record.key))
        none(yield* store.find(terminal.id, "subscription", record.key.toLowerCase()))
        const payout = Fixtures.idempotencyRecord(terminal.id, { scope: "payout", key: record.key })
        const elsewhere = Fixtures.idempotencyRecord(other.id, { key: record.key })
        yield* store.insert(payout)
        yield* store.insert(elsewhere)
        assert.deepStrictEqual(some(yield* store.find(terminal.id, "payout", record.key)), payout)
        assert.deepStrictEqual(some(yield* store.find(other.id, "subscription", record.key)), elsewhere)
      }))

    it.effect("a second record for the same triple is a WriteConflict and the first stays", () =>
      Effect.gen(function*() {
        const { terminal, store } = yield* setup
        const first = Fixtures.idempotencyRecord(terminal.id)
        yield* store.insert(first)
        yield* expectWriteConflict(store.insert({ ...first, fingerprint: "other", resourceId: Fixtures.uuid() }))
        assert.deepStrictEqual(some(yield* store.find(terminal.id, first.scope, first.key)), first)
      }))

    it.effect("concurrent inserts of one triple: exactly one wins", () =>
      Effect.gen(function*() {
        const { terminal, store } = yield* setup
        const tx = yield* Transactions
        const key = `key-${Fixtures.unique()}`
        const exits = yield* Effect.forEach(
          Array.from({ length: 10 }, () => Fixtures.idempotencyRecord(terminal.id, { key })),
          (r) => Effect.exit(tx.run(store.insert(r))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(exits.filter((e) => e._tag === "Success").length, 1)
        assert.strictEqual(exits.filter((e) => e._tag === "Failure").length, 9)
      }))

    it.effect("purge deletes records created before the cutoff and counts them", () =>
      Effect.gen(function*() {
        const { terminal, store } = yield* setup
        const cutoff = Fixtures.baseTime - 1_000_000
        yield* store.purge(cutoff)
        const old = [
          Fixtures.idempotencyRecord(terminal.id, { createdAt: cutoff - 1 }),
          Fixtures.idempotencyRecord(terminal.id, { createdAt: cutoff - 500, scope: "payout" })
        ]
        const kept = [
          Fixtures.idempotencyRecord(terminal.id, { createdAt: cutoff }),
          Fixtures.idempotencyRecord(terminal.id, { createdAt: cutoff + 1 })
        ]
        for (const r of [...old, ...kept]) yield* store.insert(r)
        assert.strictEqual(yield* store.purge(cutoff), 2)
        for (const r of old) none(yield* store.find(r.terminalId, r.scope, r.key))
        for (const r of kept) assert.deepStrictEqual(some(yield* store.find(r.terminalId, r.scope, r.key)), r)
        // A purged key is free again.
        yield* store.insert({ ...old[0]!, createdAt: Fixtures.baseTime })
      }))

    it.effect("purge of some scopes leaves the others; remove frees one key", () =>
      Effect.gen(function*() {
        const { terminal, store } = yield* setup
        const cutoff = Fixtures.baseTime - 5_000_000
        // Every scope the core writes, `rotation` (a signing-secret rotation's key) and `operator` (an operator's move's) too.
        const records = (["subscription", "payment", "payout", "rotation", "operator"] as const).map((scope) =>
          Fixtures.idempotencyRecord(terminal.id, { scope, createdAt: cutoff - 1 }))
        for (const r of records) yield* store.insert(r)
        assert.deepStrictEqual(some(yield* store.find(terminal.id, "rotation", records[3]!.key)), records[3])
        assert.deepStrictEqual(some(yield* store.find(terminal.id, "operator", records[4]!.key)), records[4])
        assert.strictEqual(yield* store.purge(cutoff, ["payment", "payout", "rotation", "operator"]), 4)
        assert.deepStrictEqual(some(yield* store.find(terminal.id, "subscription", records[0]!.key)), records[0])
        none(yield* store.find(terminal.id, "payment", records[1]!.key))
        none(yield* store.find(terminal.id, "payout", records[2]!.key))
        none(yield* store.find(terminal.id, "rotation", records[3]!.key))
        none(yield* store.find(terminal.id, "operator", records[4]!.key))
        yield* store.remove(terminal.id, "subscription", records[0]!.key)
        none(yield* store.find(terminal.id, "subscription", records[0]!.key))
        // Removing what is not there changes nothing; a removed key is free again.
        yield* store.remove(terminal.id, "subscription", records[0]!.key)
        yield* store.insert(records[0]!)
      }))
  })
