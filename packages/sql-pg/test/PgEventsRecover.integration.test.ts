/**
 * Two recoveries of one terminal's failed events at once, on every Postgres target: one re-queues
 * each failed event, the other finds none left (found by an outside probe: both answered
 * `requeued: 2` for two failed events, and the receiver got each event twice more).
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Fiber } from "effect"
import { Events, OutboxRepository } from "@paydesk/core"
import { Fixtures, Kit } from "@paydesk/testkit"
import { kitOn, lockWaits, targets, underLock } from "./PgHarness.js"

describe("Events.recover on Postgres", () => {
  for (const target of targets) {
    it.live(`two recoveries at once re-queue each failed event once (postgres ${target.name})`, () =>
      Effect.gen(function*() {
        const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/callbacks" })
        const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
        const terminalId = merchant.terminal.id
        const now = yield* Clock.currentTimeMillis
        const outbox = yield* OutboxRepository
        const failed = Array.from({ length: 3 }, (_, i) => Fixtures.outboxEvent(terminalId, { createdAt: now - 60_000 + i }))
        for (const event of failed) {
          yield* outbox.insertEvent(event, Fixtures.delivery(event, { status: "failed", attempts: 8, nextAttemptAt: null }))
        }
        const recover = Events.recover(principal, { since: now - 3_600_000 })
        // Both run while another transaction holds the terminal's row, which each new delivery's
        // foreign key needs: whatever they read, they read it before either writes.
        const [a, b] = yield* underLock(
          (sql) => sql`SELECT 1 FROM terminals WHERE id = ${terminalId} FOR UPDATE`,
          Effect.gen(function*() {
            const a = yield* Effect.forkChild(recover)
            const b = yield* Effect.forkChild(recover)
            yield* lockWaits(2)
            return [a, b] as const
          })
        )
        const requeued = [(yield* Fiber.join(a)).requeued, (yield* Fiber.join(b)).requeued].sort()
        assert.deepStrictEqual(requeued, [0, 3])
        for (const event of failed) {
          const deliveries = yield* outbox.deliveriesOf(event.id)
          assert.deepStrictEqual(deliveries.map((d) => [d.kind, d.status]), [["scheduled", "failed"], ["recover", "pending"]])
        }
        // Nothing left failed for a third.
        assert.strictEqual((yield* recover).requeued, 0)
      }).pipe(Effect.provide(kitOn(target.url))), 60_000)
  }
})
