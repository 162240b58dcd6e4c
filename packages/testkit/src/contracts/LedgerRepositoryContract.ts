/**
 * Contract suite of `LedgerRepository`: balances per account, entries per reference oldest first,
 * and all-or-nothing appends (also inside a failing transaction).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { AccountRepository, LedgerRepository, TerminalRepository, Transactions } from "@paydesk/core"
import * as Fixtures from "../Fixtures.js"
import { expectNoSuccess } from "./Support.js"

/** What the suite needs. */
export type Requirements = LedgerRepository | AccountRepository | TerminalRepository | Transactions

const zero = { rubPending: 0n, usdtAvailable: 0n, usdtHold: 0n }

/** Registers the `LedgerRepository` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`LedgerRepository contract (${name})`, (it) => {
    const setup = Effect.gen(function*() {
      const { terminal } = yield* Fixtures.seedTerminal()
      return { terminal, repo: yield* LedgerRepository }
    })

    it.effect("a terminal without entries has a zero balance", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        assert.deepStrictEqual(yield* repo.balance(terminal.id), zero)
        assert.deepStrictEqual(yield* repo.entriesFor(Fixtures.uuid()), [])
      }))

    it.effect("balance sums signed entries per account and per terminal", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const { terminal: other } = yield* Fixtures.seedTerminal()
        yield* repo.append([
          Fixtures.ledgerEntry(terminal.id, { account: "rub_pending", currency: "RUB", amount: 100_000n }),
          Fixtures.ledgerEntry(terminal.id, { account: "usdt_available", amount: 9_007_199_254_740_993n }),
          Fixtures.ledgerEntry(terminal.id, { account: "usdt_available", amount: -5_000_000n, kind: "payout_hold" }),
          Fixtures.ledgerEntry(terminal.id, { account: "usdt_hold", amount: 5_000_000n, kind: "payout_hold" }),
          Fixtures.ledgerEntry(other.id, { account: "usdt_available", amount: 7n })
        ])
        yield* repo.append([
          Fixtures.ledgerEntry(terminal.id, { account: "rub_pending", currency: "RUB", amount: -100_000n, kind: "conversion" })
        ])
        assert.deepStrictEqual(yield* repo.balance(terminal.id), {
          rubPending: 0n,
          usdtAvailable: 9_007_199_249_740_993n,
          usdtHold: 5_000_000n
        })
        assert.deepStrictEqual(yield* repo.balance(other.id), { ...zero, usdtAvailable: 7n })
      }))

    it.effect("entriesFor returns one reference's entries with every field, oldest first", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const refId = Fixtures.uuid()
        const later = Fixtures.ledgerEntry(terminal.id, { refId, createdAt: Fixtures.baseTime + 10, kind: "refund", amount: -1n })
        const earlier = Fixtures.ledgerEntry(terminal.id, {
          refId,
          account: "rub_pending",
          currency: "RUB",
          amount: 123_45n,
          createdAt: Fixtures.baseTime
        })
        yield* repo.append([later, Fixtures.ledgerEntry(terminal.id)])
        yield* repo.append([earlier])
        assert.deepStrictEqual(yield* repo.entriesFor(refId), [earlier, later])
      }))

    it.effect("append stores all entries or none", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const existing = Fixtures.ledgerEntry(terminal.id, { amount: 1n })
        yield* repo.append([existing])
        const refId = Fixtures.uuid()
        const fresh = Fixtures.ledgerEntry(terminal.id, { refId, amount: 1_000n })
        // The second entry reuses an id: the whole batch must be refused.
        yield* expectNoSuccess(repo.append([fresh, { ...existing, refId, amount: 2_000n }]))
        assert.deepStrictEqual(yield* repo.entriesFor(refId), [])
        assert.deepStrictEqual(yield* repo.balance(terminal.id), { ...zero, usdtAvailable: 1n })
      }))

    it.effect("entries appended in a failing transaction are not kept", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const tx = yield* Transactions
        const refId = Fixtures.uuid()
        yield* expectNoSuccess(tx.run(Effect.andThen(
          repo.append([Fixtures.ledgerEntry(terminal.id, { refId })]),
          Effect.fail("rollback" as const)
        )))
        assert.deepStrictEqual(yield* repo.entriesFor(refId), [])
        assert.deepStrictEqual(yield* repo.balance(terminal.id), zero)
      }))
  })
