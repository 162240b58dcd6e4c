/**
 * Memory adapter of `OutboxRepository`: callback events, their deliveries and the attempt log.
 *
 * `claimDue` takes pending deliveries whose `nextAttemptAt` has come, oldest due first (ties in
 * insertion order), and moves their `nextAttemptAt` to the lease end so a second claim skips them
 * until a crashed attempt's lease runs out. `stampSending` keeps a stamp at or after `keepFrom`. Events are listed oldest first (ties in insertion
 * order), deliveries newest first, attempts oldest first.
 */
import { Effect, Layer, Option } from "effect"
import { OutboxRepository } from "@paydesk/core"
import type { Callback } from "@paydesk/core"
import { duplicateKey, MemoryDatabase, newestFirst } from "./MemoryDatabase.js"

/** Memory `OutboxRepository` on the `MemoryDatabase` in context. */
export const layer: Layer.Layer<OutboxRepository, never, MemoryDatabase> = Layer.effect(
  OutboxRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { outboxEvents, deliveries, attempts } = db.tables

    return OutboxRepository.of({
      insertEvent: (event) =>
        db.atomically(Effect.suspend(() => {
          if (outboxEvents.has(event.id)) return duplicateKey("outbox_events", event.id)
          outboxEvents.set(event.id, event)
          return Effect.void
        })),
      getEvent: (id) => db.atomically(Effect.sync(() => Option.fromUndefinedOr(outboxEvents.get(id)))),
      listEvents: (filter) =>
        db.atomically(Effect.sync(() =>
          [...outboxEvents.values()]
            .filter((e) =>
              (filter.paymentId === undefined || e.paymentId === filter.paymentId) &&
              (filter.terminalId === undefined || e.terminalId === filter.terminalId)
            )
            .sort((a, b) => a.createdAt - b.createdAt)
        )),
      insertDelivery: (delivery) =>
        db.atomically(Effect.suspend(() => {
          if (deliveries.has(delivery.id)) return duplicateKey("deliveries", delivery.id)
          if (!outboxEvents.has(delivery.eventId)) {
            return Effect.die(new Error(`delivery ${delivery.id} references unknown event ${delivery.eventId}`))
          }
          deliveries.set(delivery.id, delivery)
          return Effect.void
        })),
      getDelivery: (id) => db.atomically(Effect.sync(() => Option.fromUndefinedOr(deliveries.get(id)))),
      updateDelivery: (delivery) =>
        db.atomically(Effect.sync(() => {
          if (deliveries.has(delivery.id)) deliveries.set(delivery.id, delivery)
        })),
      stampSending: (id, now, keepFrom) =>
        db.atomically(Effect.sync(() => {
          const d = deliveries.get(id)
          if (d === undefined) return now
          if (d.sendingAt !== null && d.sendingAt >= keepFrom) return d.sendingAt
          deliveries.set(id, { ...d, sendingAt: now })
          return now
        })),
      claimDue: (now, leaseUntil, limit) =>
        db.atomically(Effect.sync(() => {
          const due = [...deliveries.values()]
            .filter((d) => d.status === "pending" && d.nextAttemptAt !== null && d.nextAttemptAt <= now)
            .sort((a, b) =>
              (a.nextAttemptAt ?? 0) - (b.nextAttemptAt ?? 0) || a.createdAt - b.createdAt
            )
            .slice(0, Math.max(0, limit))
          const claimed: Array<{ readonly delivery: Callback.Delivery; readonly event: Callback.OutboxEvent }> = []
          for (const d of due) {
            const event = outboxEvents.get(d.eventId)
            if (event === undefined) continue
            const delivery = { ...d, nextAttemptAt: leaseUntil }
            deliveries.set(d.id, delivery)
            claimed.push({ delivery, event })
          }
          return claimed
        })),
      listDeliveries: (filter) =>
        db.atomically(Effect.sync(() =>
          [...deliveries.values()]
            .filter((d) =>
              (filter.terminalId === undefined || d.terminalId === filter.terminalId) &&
              (filter.status === undefined || d.status === filter.status) &&
              (filter.paymentId === undefined || outboxEvents.get(d.eventId)?.paymentId === filter.paymentId)
            )
            .sort(newestFirst)
            .slice(0, Math.max(0, filter.limit))
        )),
      insertAttempt: (attempt) =>
        db.atomically(Effect.suspend(() => {
          if (attempts.has(attempt.id)) return duplicateKey("delivery_attempts", attempt.id)
          attempts.set(attempt.id, attempt)
          return Effect.void
        })),
      listAttempts: (deliveryId) =>
        db.atomically(Effect.sync(() =>
          [...attempts.values()]
            .filter((a) => a.deliveryId === deliveryId)
            .sort((a, b) => a.at - b.at || a.attemptNumber - b.attemptNumber)
        ))
    })
  })
)
