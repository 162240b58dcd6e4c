/**
 * Contract suite of `PlanRepository`: round trip, unique `(code, version)`, latest versions,
 * deactivation of older versions and the per-terminal listing order.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { AccountRepository, PlanRepository, TerminalRepository } from "@paydesk/core"
import type { Plan } from "@paydesk/core"
import * as Fixtures from "../Fixtures.js"
import { expectWriteConflict, ids, none, some } from "./Support.js"

/** What the suite needs. */
export type Requirements = PlanRepository | AccountRepository | TerminalRepository

// The port does not promise an order of `terminalIds`.
const normalized = (plan: Plan.Plan): Plan.Plan => ({ ...plan, terminalIds: [...plan.terminalIds].sort() })

/** Registers the `PlanRepository` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`PlanRepository contract (${name})`, (it) => {
    const setup = Effect.gen(function*() {
      const { terminal } = yield* Fixtures.seedTerminal()
      return { terminal, repo: yield* PlanRepository }
    })

    it.effect("insert and get round-trip every field", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const { terminal: second } = yield* Fixtures.seedTerminal()
        const fixed = yield* Fixtures.seedPlan([terminal.id, second.id], { maxCycles: 12 })
        const ceiling = yield* Fixtures.seedPlan([terminal.id], {
          mode: "ceiling",
          schedule: "calendar",
          interval: "year",
          capAmount: 9_007_199_254_740_993n,
          payerAmount: null,
          merchantAmount: null,
          consentText: "Согласен на списания",
          active: false,
          createdAt: Fixtures.baseTime + 5
        })
        assert.deepStrictEqual(normalized(some(yield* repo.get(fixed.id))), normalized(fixed))
        assert.deepStrictEqual(normalized(some(yield* repo.get(ceiling.id))), normalized(ceiling))
        none(yield* repo.get(Fixtures.uuid()))
      }))

    it.effect("(code, version) is unique; a new version of a code is fine", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const v1 = yield* Fixtures.seedPlan([terminal.id])
        const clash = Fixtures.plan([terminal.id], { code: v1.code, version: 1 })
        yield* expectWriteConflict(repo.insert(clash))
        none(yield* repo.get(clash.id))
        yield* repo.insert(Fixtures.plan([terminal.id], { code: v1.code, version: 2 }))
        assert.strictEqual(yield* repo.latestVersion(v1.code), 2)
      }))

    it.effect("latestVersion is the highest version, 0 for an unknown code", () =>
      Effect.gen(function*() {
        const { terminal } = yield* setup
        const repo = yield* PlanRepository
        const code = `plan-${Fixtures.unique()}`
        assert.strictEqual(yield* repo.latestVersion(code), 0)
        yield* Fixtures.seedPlan([terminal.id], { code, version: 3 })
        yield* Fixtures.seedPlan([terminal.id], { code, version: 1 })
        assert.strictEqual(yield* repo.latestVersion(code), 3)
      }))

    it.effect("deactivateOlder deactivates the lower versions of that code only", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const code = `plan-${Fixtures.unique()}`
        const v1 = yield* Fixtures.seedPlan([terminal.id], { code, version: 1 })
        const v2 = yield* Fixtures.seedPlan([terminal.id], { code, version: 2 })
        const v3 = yield* Fixtures.seedPlan([terminal.id], { code, version: 3 })
        const otherCode = yield* Fixtures.seedPlan([terminal.id], { version: 1 })
        yield* repo.deactivateOlder(code, 3)
        assert.isFalse(some(yield* repo.get(v1.id)).active)
        assert.isFalse(some(yield* repo.get(v2.id)).active)
        assert.deepStrictEqual(normalized(some(yield* repo.get(v3.id))), normalized(v3))
        assert.isTrue(some(yield* repo.get(otherCode.id)).active)
        assert.deepStrictEqual(normalized(some(yield* repo.get(v1.id))), normalized({ ...v1, active: false }))
      }))

    it.effect("activeVersions returns the active versions of that code only, by version, with their terminals", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const { terminal: other } = yield* Fixtures.seedTerminal()
        const code = `plan-${Fixtures.unique()}`
        assert.deepStrictEqual(yield* repo.activeVersions(code), [])
        const v2 = yield* Fixtures.seedPlan([terminal.id, other.id], { code, version: 2 })
        const v1 = yield* Fixtures.seedPlan([terminal.id], { code, version: 1 })
        yield* Fixtures.seedPlan([other.id], { version: 1 })
        assert.deepStrictEqual((yield* repo.activeVersions(code)).map(normalized), [normalized(v1), normalized(v2)])
        yield* repo.deactivateOlder(code, 2)
        const left = yield* repo.activeVersions(code)
        assert.deepStrictEqual(left.map((p) => p.id), [v2.id])
        assert.deepStrictEqual(left[0]!.terminalIds, [terminal.id, other.id])
      }))

    it.effect("listForTerminal returns connected plans by code then version; activeOnly filters", () =>
      Effect.gen(function*() {
        const { terminal, repo } = yield* setup
        const { terminal: other } = yield* Fixtures.seedTerminal()
        const b2 = yield* Fixtures.seedPlan([terminal.id], { code: `b-${terminal.id}`, version: 2 })
        const a1 = yield* Fixtures.seedPlan([terminal.id, other.id], { code: `a-${terminal.id}`, version: 1 })
        const b1 = yield* Fixtures.seedPlan([terminal.id], { code: `b-${terminal.id}`, version: 1, active: false })
        const elsewhere = yield* Fixtures.seedPlan([other.id], { code: `c-${terminal.id}` })
        assert.deepStrictEqual(ids(yield* repo.listForTerminal(terminal.id, { activeOnly: false })), ids([a1, b1, b2]))
        assert.deepStrictEqual(ids(yield* repo.listForTerminal(terminal.id, { activeOnly: true })), ids([a1, b2]))
        assert.deepStrictEqual(ids(yield* repo.listForTerminal(other.id, { activeOnly: true })), ids([a1, elsewhere]))
        assert.deepStrictEqual(yield* repo.listForTerminal(Fixtures.uuid(), { activeOnly: false }), [])
      }))
  })
