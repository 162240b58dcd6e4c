/**
 * Contract suite of `TerminalRepository`: round trip, whole-record updates, listing by account
 * and `claimDueConversions`.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { AccountRepository, TerminalRepository, Transactions } from "@paydesk/core"
import type { Terminal } from "@paydesk/core"
import * as Fixtures from "../Fixtures.js"
import { ids, none, only, some } from "./Support.js"

/** What the suite needs. */
export type Requirements = TerminalRepository | AccountRepository | Transactions

/** Registers the `TerminalRepository` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`TerminalRepository contract (${name})`, (it) => {
    const setup = Effect.gen(function*() {
      const account = Fixtures.account()
      yield* (yield* AccountRepository).insertAccount(account)
      const repo = yield* TerminalRepository
      const seed = (overrides: Partial<Terminal.Terminal> = {}) =>
        Effect.gen(function*() {
          const t = Fixtures.terminal(account.id, overrides)
          yield* repo.insert(t)
          return t
        })
      return { account, repo, seed }
    })

    it.effect("insert and get round-trip every field", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const plain = yield* seed()
        const full = yield* seed({
          name: "Кофейня №1",
          status: "disabled",
          h2h: true,
          callbackUrl: "https://shop.example/cb?x=1",
          successRedirectUrl: "https://shop.example/ok",
          failRedirectUrl: "https://shop.example/fail",
          conversionMode: "scheduled",
          conversionTime: "18:00",
          nextConversionAt: Fixtures.baseTime + 3_600_000,
          showPlatformBranding: false,
          createdAt: Fixtures.baseTime + 1,
          updatedAt: Fixtures.baseTime + 2
        })
        for (const t of [plain, full]) {
          assert.deepStrictEqual(some(yield* repo.get(t.id)), t)
          assert.deepStrictEqual(some(yield* repo.getForUpdate(t.id)), t)
        }
        none(yield* repo.get(Fixtures.uuid()))
      }))

    it.effect("update stores the whole record", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const t = yield* seed()
        const changed: Terminal.Terminal = {
          ...t,
          callbackUrl: "https://shop.example/new",
          conversionMode: "scheduled",
          conversionTime: "09:30",
          nextConversionAt: Fixtures.baseTime + 1000,
          updatedAt: Fixtures.baseTime + 1000
        }
        yield* repo.update(changed)
        assert.deepStrictEqual(some(yield* repo.get(t.id)), changed)
        const back: Terminal.Terminal = { ...changed, callbackUrl: null, conversionTime: null, nextConversionAt: null }
        yield* repo.update(back)
        assert.deepStrictEqual(some(yield* repo.get(t.id)), back)
      }))

    it.effect("listByAccount returns the account's terminals only", () =>
      Effect.gen(function*() {
        const { account, repo, seed } = yield* setup
        const a = yield* seed({ createdAt: Fixtures.baseTime })
        const b = yield* seed({ createdAt: Fixtures.baseTime + 1 })
        yield* Fixtures.seedTerminal()
        const listed = yield* repo.listByAccount(account.id)
        assert.deepStrictEqual(new Set(ids(listed)), new Set(ids([a, b])))
        assert.deepStrictEqual(listed.find((t) => t.id === a.id), a)
        assert.deepStrictEqual(yield* repo.listByAccount(Fixtures.uuid()), [])
      }))

    it.effect("claimDueConversions returns terminals whose conversion time has come", () =>
      Effect.gen(function*() {
        const { repo, seed } = yield* setup
        const due = [
          yield* seed({ conversionMode: "scheduled", conversionTime: "18:00", nextConversionAt: 1_000 }),
          yield* seed({ conversionMode: "scheduled", conversionTime: "18:00", nextConversionAt: 2_000 })
        ]
        const notDue = [
          yield* seed({ conversionMode: "scheduled", conversionTime: "18:00", nextConversionAt: 2_001 }),
          yield* seed({ conversionMode: "scheduled", conversionTime: "18:00", nextConversionAt: null }),
          yield* seed({ conversionMode: "instant", nextConversionAt: null })
        ]
        const claimed = only(yield* repo.claimDueConversions(2_000, 10_000), [...due, ...notDue])
        assert.deepStrictEqual(new Set(ids(claimed)), new Set(ids(due)))
        assert.deepStrictEqual(claimed.find((t) => t.id === due[0]!.id), due[0])
        assert.strictEqual((yield* repo.claimDueConversions(2_000, 1)).length, 1)
      }))
  })
