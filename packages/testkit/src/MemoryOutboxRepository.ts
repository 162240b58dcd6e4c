/**
 * Memory adapter of `OutboxRepository`: callback events, their deliveries and the attempt log.
 *
 * `claimDue` takes pending deliveries whose `nextAttemptAt` has come, oldest due first (ties in
 * insertion order), and moves their `nextAttemptAt` to the lease end so a second claim skips them
 * until a crashed attempt's lease runs out; it takes the deliveries of the given test clock only (of
 * none by default), and `purge` keeps the events of test clocks. `stampSending` (and a claim with `stamp`) keeps a stamp at or after `keepFrom`. Events are listed oldest first (ties in insertion
 * order), deliveries newest first, attempts oldest first. An event's deliveries keep their insertion
 * order (`deliveriesOf`; the latest is the last inserted).
 */
import { Effect, Layer, Option } from "effect"
import { type AttemptRecord, OutboxRepository } from "@paydesk/core"
import { Callback } from "@paydesk/core"
import { duplicateKey, earliest, MemoryDatabase } from "./MemoryDatabase.js"

/** Newest first: `createdAt` desc, then `sequence` desc, then `id` desc (negative when `a` comes first). */
const newestFirstOrder = (
  a: { readonly createdAt: number; readonly sequence: number; readonly id: string },
  b: { readonly createdAt: number; readonly sequence: number; readonly id: string }
): number => b.createdAt - a.createdAt || b.sequence - a.sequence || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)

/** Memory `OutboxRepository` on the `MemoryDatabase` in context. */
export const layer: Layer.Layer<OutboxRepository, never, MemoryDatabase> = Layer.effect(
  OutboxRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { outboxEvents, deliveries, attempts } = db.tables
    // Insertion order of deliveries (the Postgres `seq`): the latest delivery of an event is the last inserted.
    const order = new Map<string, number>()
    let inserted = 0
    // Insertion positions of events (the Postgres `seq` of the events feed): only ever growing; kept
    // by the stored event, so a deleted one's goes with it.
    const positions = new WeakMap<Callback.OutboxEvent, number>()
    let positioned = 0
    const deliveriesOfEvent = (eventId: string): Array<Callback.Delivery> =>
      [...deliveries.values()].filter((d) => d.eventId === eventId).sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0))
    const attemptsOfTerminal = (terminalId: string): Array<Callback.Attempt> =>
      [...attempts.values()].filter((a) => deliveries.get(a.deliveryId)?.terminalId === terminalId)

    const insertDelivery = (delivery: Callback.Delivery) => {
      if (deliveries.has(delivery.id)) return duplicateKey("deliveries", delivery.id)
      if (!outboxEvents.has(delivery.eventId)) {
        return Effect.die(new Error(`delivery ${delivery.id} references unknown event ${delivery.eventId}`))
      }
      deliveries.set(delivery.id, delivery)
      order.set(delivery.id, ++inserted)
      return Effect.void
    }

    /** The stamp in force after stamping `id` (none when the delivery is unknown). */
    const stamp = (id: string, now: number, keepFrom: number): number | undefined => {
      const d = deliveries.get(id)
      if (d === undefined) return undefined
      if (d.sendingAt !== null && d.sendingAt >= keepFrom) return d.sendingAt
      deliveries.set(id, { ...d, sendingAt: now })
      return now
    }
    /** One guarded attempt record (`recordAttempt`). */
    const record = ({ attempt, delivery, expectedAttempts }: AttemptRecord) => {
      const stored = deliveries.get(delivery.id)
      if (stored === undefined || stored.status !== "pending" || stored.attempts !== expectedAttempts) return Effect.succeed(false)
      if (attempts.has(attempt.id)) return duplicateKey("delivery_attempts", attempt.id)
      deliveries.set(delivery.id, delivery)
      attempts.set(attempt.id, attempt)
      return Effect.succeed(true)
    }

    return OutboxRepository.of({
      insertEvent: (event, delivery) =>
        db.atomically(Effect.suspend(() => {
          if (outboxEvents.has(event.id)) return duplicateKey("outbox_events", event.id)
          outboxEvents.set(event.id, event)
          positions.set(event, ++positioned)
          return delivery === undefined ? Effect.void : insertDelivery(delivery)
        })),
      getEvent: (id) => db.atomically(Effect.sync(() => Option.fromUndefinedOr(outboxEvents.get(id)))),
      listEvents: (filter) =>
        db.atomically(Effect.sync(() => {
          // Map order is insertion order; the sort is stable.
          const matching = [...outboxEvents.values()]
            .filter((e) =>
              (filter.paymentId === undefined || e.paymentId === filter.paymentId) &&
              (filter.terminalId === undefined || e.terminalId === filter.terminalId) &&
              (filter.test === undefined || e.test === filter.test)
            )
            .sort((a, b) => a.createdAt - b.createdAt)
          return filter.limit === undefined ? matching : matching.slice(0, filter.limit)
        })),
      feedEvents: (filter) =>
        db.atomically(Effect.sync(() =>
          // Map order is insertion order, that is position order.
          [...outboxEvents.values()]
            .filter((e) => e.terminalId === filter.terminalId && (filter.test === undefined || e.test === filter.test))
            .map((event) => ({ event, position: positions.get(event) ?? 0 }))
            .filter(({ position }) => position > filter.afterPosition)
            .slice(0, Math.max(0, filter.limit))
        )),
      eventPosition: (id) =>
        db.atomically(Effect.sync(() =>
          Option.map(Option.fromUndefinedOr(outboxEvents.get(id)), (event) => ({ terminalId: event.terminalId, position: positions.get(event) ?? 0 }))
        )),
      feedPositions: (terminalId) =>
        db.atomically(Effect.sync(() => {
          let newest = 0
          for (const event of outboxEvents.values()) {
            if (event.terminalId === terminalId) newest = Math.max(newest, positions.get(event) ?? 0)
          }
          return { newest, issued: positioned }
        })),
      insertDelivery: (delivery) => db.atomically(Effect.suspend(() => insertDelivery(delivery))),
      getDelivery: (id) => db.atomically(Effect.sync(() => Option.fromUndefinedOr(deliveries.get(id)))),
      updateDelivery: (delivery) =>
        db.atomically(Effect.sync(() => {
          if (deliveries.has(delivery.id)) deliveries.set(delivery.id, delivery)
        })),
      stampSending: (id, now, keepFrom) => db.atomically(Effect.sync(() => stamp(id, now, keepFrom) ?? now)),
      endPending: (eventId, at) =>
        db.atomically(Effect.sync(() => {
          const pending = deliveriesOfEvent(eventId).filter((d) => d.status === "pending" && !(d.kind === "resend" && d.nextAttemptAt !== null && d.nextAttemptAt > at))
          for (const d of pending) {
            deliveries.set(d.id, { ...d, status: "delivered", deliveredAt: at, nextAttemptAt: null, sendingAt: null, updatedAt: at })
          }
          return pending.length
        })),
      renewLease: (id, heldUntil, leaseUntil) =>
        db.atomically(Effect.sync(() => {
          const d = deliveries.get(id)
          if (d === undefined || d.status !== "pending" || d.nextAttemptAt !== heldUntil) return false
          deliveries.set(id, { ...d, nextAttemptAt: leaseUntil })
          return true
        })),
      claimDue: (now, leaseUntil, limit, testClockId, stamping) =>
        db.atomically(Effect.sync(() => {
          const due = [...deliveries.values()]
            .filter((d) => d.status === "pending" && d.nextAttemptAt !== null && d.nextAttemptAt <= now && d.testClockId === (testClockId ?? null))
            .sort((a, b) =>
              (a.nextAttemptAt ?? 0) - (b.nextAttemptAt ?? 0) || a.createdAt - b.createdAt
            )
            .slice(0, Math.max(0, limit))
          const claimed: Array<{ readonly delivery: Callback.Delivery; readonly event: Callback.OutboxEvent }> = []
          for (const d of due) {
            const event = outboxEvents.get(d.eventId)
            if (event === undefined) continue
            const sendingAt = stamping === undefined ? d.sendingAt : stamp(d.id, now, stamping.keepFrom)!
            const delivery = { ...d, nextAttemptAt: leaseUntil, sendingAt }
            deliveries.set(d.id, delivery)
            claimed.push({ delivery, event })
          }
          return claimed
        })),
      listDeliveries: (filter) =>
        db.atomically(Effect.sync(() =>
          // Newest written first: the map keeps insertion order.
          [...deliveries.values()]
            .filter((d) =>
              (filter.terminalId === undefined || d.terminalId === filter.terminalId) &&
              (filter.status === undefined || d.status === filter.status) &&
              (filter.paymentId === undefined || outboxEvents.get(d.eventId)?.paymentId === filter.paymentId) &&
              (filter.test === undefined || outboxEvents.get(d.eventId)?.test === filter.test)
            )
            .reverse()
            .slice(0, Math.max(0, filter.limit))
        )),
      insertAttempt: (attempt) =>
        db.atomically(Effect.suspend(() => {
          if (attempts.has(attempt.id)) return duplicateKey("delivery_attempts", attempt.id)
          attempts.set(attempt.id, attempt)
          return Effect.void
        })),
      recordAttempt: (attempt, delivery, expectedAttempts) =>
        db.atomically(Effect.suspend(() => record({ attempt, delivery, expectedAttempts }))),
      recordAttempts: (records) => db.atomically(Effect.forEach(records, (r) => Effect.suspend(() => record(r)))),
      listAttempts: (deliveryId) =>
        db.atomically(Effect.sync(() =>
          [...attempts.values()]
            .filter((a) => a.deliveryId === deliveryId)
            .sort((a, b) => a.at - b.at || a.attemptNumber - b.attemptNumber)
        )),
      pageEvents: (filter) =>
        db.atomically(Effect.sync(() =>
          [...outboxEvents.values()]
            .map((event) => {
              const own = deliveriesOfEvent(event.id)
              return { event, delivery: Callback.standing(own) }
            })
            .filter(({ event, delivery }) =>
              filter.terminalIds.includes(event.terminalId) &&
              (filter.test === null || event.test === filter.test) &&
              (filter.eventType === undefined || event.eventType === filter.eventType) &&
              (filter.objectId === undefined || event.paymentId === filter.objectId || event.payoutId === filter.objectId) &&
              (filter.createdFrom === undefined || event.createdAt >= filter.createdFrom) &&
              (filter.createdBefore === undefined || event.createdAt < filter.createdBefore) &&
              (filter.retainedFrom === undefined || event.createdAt >= filter.retainedFrom || event.testClockId !== null) &&
              (filter.deliveryStatus === undefined ||
                (filter.deliveryStatus === "none" ? delivery === null : delivery?.status === filter.deliveryStatus)) &&
              (filter.before === undefined || newestFirstOrder(event, filter.before) > 0)
            )
            .sort((a, b) => newestFirstOrder(a.event, b.event))
            .slice(0, Math.max(0, filter.limit))
        )),
      // Memory transactions run one at a time: a recovery holds every terminal already.
      lockRecovery: () => Effect.void,
      deliveriesOf: (eventId) => db.atomically(Effect.sync(() => deliveriesOfEvent(eventId))),
      lastSequence: (objectId) =>
        db.atomically(Effect.sync(() =>
          [...outboxEvents.values()]
            .filter((e) => e.paymentId === objectId || e.payoutId === objectId)
            .reduce((most, e) => Math.max(most, e.sequence), 0)
        )),
      attemptFacts: (terminalId) =>
        db.atomically(Effect.sync(() => {
          // A test clock's attempts carry its time, not the endpoint's: they are not the endpoint's health.
          const all = attemptsOfTerminal(terminalId).filter((a) => deliveries.get(a.deliveryId)?.testClockId === null).sort((a, b) => a.at - b.at)
          const successes = all.filter((a) => a.error === null)
          const lastSuccessAt = successes.at(-1)?.at ?? null
          const firstFailure = all.find((a) => a.error !== null && (lastSuccessAt === null || a.at > lastSuccessAt))
          return { last: all.at(-1) ?? null, lastSuccessAt, firstFailureAfterSuccess: firstFailure?.at ?? null }
        })),
      purge: (before) =>
        db.atomically(Effect.sync(() => {
          let purged = 0
          for (const event of [...outboxEvents.values()]) {
            const own = deliveriesOfEvent(event.id)
            if (event.testClockId !== null || event.createdAt >= before || own.some((d) => d.status === "pending")) continue
            for (const d of own) {
              for (const a of [...attempts.values()]) if (a.deliveryId === d.id) attempts.delete(a.id)
              deliveries.delete(d.id)
              order.delete(d.id)
            }
            outboxEvents.delete(event.id)
            purged++
          }
          return purged
        })),
      earliestDelivery: (testClockId) =>
        db.atomically(Effect.sync(() =>
          earliest([...deliveries.values()].filter((d) => d.testClockId === testClockId && d.status === "pending").map((d) => d.nextAttemptAt))
        )),
      releaseLeases: (testClockId, at) =>
        db.atomically(Effect.sync(() => {
          let released = 0
          for (const d of deliveries.values()) {
            if (d.testClockId === testClockId && d.status === "pending" && d.sendingAt !== null && d.nextAttemptAt !== null && d.nextAttemptAt > at) {
              deliveries.set(d.id, { ...d, nextAttemptAt: at })
              released++
            }
          }
          return released
        }))
    })
  })
)
