/**
 * Contract suite of `PayoutNetwork` for adapters that can run without sending real money:
 * a repeated key with a final answer replays it and never sends twice.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { PayoutNetwork } from "@paydesk/core"
import * as Fixtures from "../Fixtures.js"

/** What the suite needs. */
export type Requirements = PayoutNetwork

/** Registers the `PayoutNetwork` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`PayoutNetwork contract (${name})`, (it) => {
    it.effect("a repeated key replays the final outcome", () =>
      Effect.gen(function*() {
        const network = yield* PayoutNetwork
        const input = { idempotencyKey: Fixtures.uuid(), amountUsdt: 10_000_000n, walletAddress: "TXyz", network: "TRC20" }
        let first = yield* network.send(input)
        for (let i = 0; i < 5 && first._tag === "Unknown"; i++) first = yield* network.send(input)
        assert.notStrictEqual(first._tag, "Unknown")
        assert.deepStrictEqual(yield* network.send(input), first)
        assert.deepStrictEqual(yield* network.send({ ...input, amountUsdt: 1n }), first)
      }))

    it.effect("different keys are different sends", () =>
      Effect.gen(function*() {
        const network = yield* PayoutNetwork
        const send = (key: string) => network.send({ idempotencyKey: key, amountUsdt: 1_000_000n, walletAddress: "TXyz", network: "TRC20" })
        const a = yield* send(Fixtures.uuid())
        const b = yield* send(Fixtures.uuid())
        if (a._tag === "Sent" && b._tag === "Sent") assert.notStrictEqual(a.txId, b.txId)
      }))
  })
