/**
 * Contract suite of `Acquirer` for adapters that can run without a real bank (emulators,
 * sandboxes): charges are idempotent per key, QR payments get a payload, H2H bindings a redirect.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Acquirer } from "@paydesk/core"
import * as Fixtures from "../Fixtures.js"

/** What the suite needs. */
export type Requirements = Acquirer

/** Registers the `Acquirer` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`Acquirer contract (${name})`, (it) => {
    it.effect("a repeated charge key answers the first outcome", () =>
      Effect.gen(function*() {
        const acquirer = yield* Acquirer
        const subscriptionId = Fixtures.uuid()
        const input = { subscriptionId, cycleNumber: 1, idempotencyKey: `sub:${subscriptionId}:cycle:1:attempt:1`, amount: 150_000n }
        const first = yield* acquirer.charge(input)
        assert.deepStrictEqual(yield* acquirer.charge(input), first)
        assert.deepStrictEqual(yield* acquirer.charge({ ...input, amount: 1n }), first)
      }))

    it.effect("createPayment returns a QR payload", () =>
      Effect.gen(function*() {
        const acquirer = yield* Acquirer
        const { qrPayload } = yield* acquirer.createPayment({
          paymentId: Fixtures.uuid(),
          terminalId: Fixtures.uuid(),
          amount: 100_000n,
          description: null
        })
        assert.isAbove(qrPayload.length, 0)
      }))

    it.effect("an H2H binding gets a redirect URL", () =>
      Effect.gen(function*() {
        const acquirer = yield* Acquirer
        const { redirectUrl } = yield* acquirer.startBinding({
          subscriptionId: Fixtures.uuid(),
          terminalId: Fixtures.uuid(),
          h2h: true,
          payerAmount: 150_000n
        })
        assert.match(redirectUrl ?? "", /^https:\/\//)
      }))
  })
