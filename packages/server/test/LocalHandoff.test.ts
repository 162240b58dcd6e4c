import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Layer, Scope } from "effect"
import { TestClock } from "effect/testing"
import { CallbackShares, CallbackTransport, DeliveryHandoff, OutboxRepository, Payments } from "@paydesk/core"
import { Kit } from "@paydesk/testkit"
import * as LocalHandoff from "../src/LocalHandoff.js"
import { Metrics } from "../src/Metrics.js"
import { fakeMetrics } from "./FakeMetrics.js"

const start = Date.parse("2026-06-01T12:00:00.000Z")

describe("LocalHandoff", () => {
  it.effect("takes up to its limit, sends what it took once, and sends what is still waiting when its scope closes", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(start)
      const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/cb" })
      const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
      // A receiver that answers only once the gate opens.
      const gate = yield* Deferred.make<void>()
      const posted: Array<string> = []
      const transport = CallbackTransport.of({
        post: (request) => Effect.andThen(Deferred.await(gate), Effect.sync(() => {
          posted.push(JSON.parse(request.body).order_id)
          return { statusCode: 200, latencyMs: 1 }
        }))
      })
      let counted = 0
      const metrics = fakeMetrics({ observeHandedOff: () => void counted++ })
      const scope = yield* Scope.make()
      const built = yield* Layer.buildWithScope(LocalHandoff.layer({ limit: 2, concurrency: 1 }), scope).pipe(
        Effect.provideService(CallbackTransport, transport),
        Effect.provideService(Metrics, metrics)
      )
      const handoff = Context.get(built, DeliveryHandoff)
      const create = (orderId: string) =>
        Effect.map(Payments.create(principal, { amount: "10", orderId, test: true }).pipe(Effect.provideService(DeliveryHandoff, handoff)), (r) => r.payment)
      const deliveryOf = (paymentId: string) =>
        Effect.map(Effect.flatMap(OutboxRepository, (o) => o.listDeliveries({ paymentId, limit: 1 })), (ds) => ds[0]!)

      assert.isTrue(yield* handoff.accepting)
      const a = yield* create("a")
      const b = yield* create("b")
      // Two taken and not finished: the third goes through the passes.
      assert.isFalse(yield* handoff.accepting)
      const c = yield* create("c")
      assert.strictEqual((yield* deliveryOf(a.id)).nextAttemptAt, start + 60_000)
      assert.strictEqual((yield* deliveryOf(c.id)).nextAttemptAt, start)
      assert.isNull((yield* deliveryOf(c.id)).sendingAt)
      assert.deepStrictEqual(posted, [])

      // One at a time: "b" still waits in the queue when the scope closes. Closing sends what was
      // taken, each once, and records it.
      assert.isTrue(handoff.sending().has((yield* deliveryOf(a.id)).id))
      assert.isFalse(handoff.sending().has((yield* deliveryOf(b.id)).id))
      yield* Deferred.succeed(gate, undefined)
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual([...posted].sort(), ["a", "b"])
      assert.strictEqual(counted, 2)
      for (const payment of [a, b]) {
        const delivery = yield* deliveryOf(payment.id)
        assert.strictEqual(delivery.status, "delivered")
        assert.strictEqual(delivery.attempts, 1)
      }
      assert.strictEqual((yield* deliveryOf(c.id)).status, "pending")
      assert.strictEqual(handoff.sending().size, 0)
      // Closed: nothing more is taken.
      assert.isFalse(yield* handoff.accepting)
      const d = yield* create("d")
      assert.strictEqual((yield* deliveryOf(d.id)).nextAttemptAt, start)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a send slower than slowMs gives its place back: two merchants whose receivers hang hold no place of a third", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(start)
      const hanging = yield* Effect.forEach(["https://a.example/cb", "https://b.example/cb"], (callbackUrl) => Kit.provisionMerchant({ callbackUrl }))
      const healthy = yield* Kit.provisionMerchant({ callbackUrl: "https://ok.example/cb" })
      const gate = yield* Deferred.make<void>()
      const posted: Array<string> = []
      const transport = CallbackTransport.of({
        post: (request) =>
          Effect.andThen(request.url === "https://ok.example/cb" ? Effect.void : Deferred.await(gate), Effect.sync(() => {
            posted.push(request.url)
            return { statusCode: 200, latencyMs: 1 }
          }))
      })
      const scope = yield* Scope.make()
      const built = yield* Layer.buildWithScope(LocalHandoff.layer(), scope).pipe(Effect.provideService(CallbackTransport, transport))
      const handoff = Context.get(built, DeliveryHandoff)
      const create = (merchant: Kit.Merchant, orderId: string) =>
        Effect.flatMap(Kit.apiKeyPrincipal(merchant, crypto.randomUUID()), (principal) =>
          Payments.create(principal, { amount: "10", orderId, test: true }).pipe(Effect.provideService(DeliveryHandoff, handoff)))
      // Each hanging merchant's share of the sending (16) is full; 32 sends hang, in every place.
      for (const merchant of hanging) for (let i = 0; i < 16; i++) yield* create(merchant, `hang-${i}`)
      yield* create(healthy, "ok")
      const tick = Effect.promise(() => new Promise((ok) => setTimeout(ok, 5)))
      for (let i = 0; i < 20; i++) yield* tick
      assert.deepStrictEqual(posted, [])
      // A second on: the hanging sends go on in the background, and the third merchant's is sent.
      yield* TestClock.adjust(CallbackShares.slowMs)
      for (let i = 0; i < 200 && posted.length === 0; i++) yield* tick
      assert.deepStrictEqual(posted, ["https://ok.example/cb"])
      yield* Deferred.succeed(gate, undefined)
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(posted.length, 33)
    }).pipe(Effect.provide(Kit.layer)))
})
