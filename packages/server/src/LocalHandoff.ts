/**
 * The core's `DeliveryHandoff` port for the local engine: a new payment's first delivery, written
 * leased by the transaction that created the payment, is sent from here right after its commit,
 * instead of waiting for a pass to claim it (one statement less per callback, and no wait behind a
 * pass in progress).
 *
 * At most `concurrency` deliveries are started at once (each terminal within its share,
 * `CallbackShares`), each sent as a pass sends one (`Callbacks.sendHanded`: signed, posted, its
 * attempt recorded), uninterruptibly, so a shutdown never cuts one in half. One still running after
 * `CallbackShares.slowMs` goes on in the background and gives its place back: two merchants whose
 * receivers hang held every place for 10 s at a time, and a healthy merchant's first callbacks
 * queued behind them for up to 50 s (an outside probe). Sending all taken at once instead cost a
 * batch of due charges a third of its rate (`bench:work`), so the places stay at 32.
 * `accepting` answers false once `limit` deliveries are taken and not yet finished, so a burst
 * beyond what this process sends keeps going through the passes, which every process shares. The
 * terminals' signing secrets are decrypted once per `cacheMs` window. With the server's `Metrics` in
 * context, each callback sent counts in `paydesk_work_items_total{kind="callbacks"}`, as a pass's do.
 * When the layer's scope closes, it takes nothing more and sends what it has taken; a crash loses
 * nothing either: a delivery it held is pending with a lease, and a pass sends it once the lease has
 * run out. `sending` names the deliveries whose attempt has started, for the passes of this process.
 */
import { Cause, Deferred, Effect, Fiber, Layer, Queue, Scope, Stream } from "effect"
import { CallbackShares, Callbacks, CallbacksInFlight, DeliveryHandoff, type Handed, SecretCipher } from "@paydesk/core"
import type { WorkServices } from "./LocalWorker.js"
import { Metrics } from "./Metrics.js"
import * as Logging from "./Logging.js"

/** Options of `layer`. */
export interface Options {
  /** Deliveries taken and not yet finished, at most (default 256). */
  readonly limit?: number
  /** Deliveries started at once (default `Callbacks.concurrency`, as a pass); one slower than `CallbackShares.slowMs` gives its place back. */
  readonly concurrency?: number
  /** How long a decrypted signing secret is reused (default 60 s). */
  readonly cacheMs?: number
}

/** The port, sending in the layer's scope with the services in context. */
export const layer = (options: Options = {}): Layer.Layer<DeliveryHandoff, never, WorkServices> =>
  Layer.effect(
    DeliveryHandoff,
    Effect.gen(function*() {
      const services = yield* Effect.context<WorkServices>()
      const metrics = yield* Effect.serviceOption(Metrics)
      const limit = options.limit ?? 256
      const concurrency = options.concurrency ?? Callbacks.concurrency
      const cacheMs = options.cacheMs ?? 60_000
      const cipher = yield* SecretCipher
      const queue = yield* Queue.unbounded<Handed, Cause.Done>()
      const state = { open: true, taken: 0 }
      /** Per payment (or payout): its deliveries taken and not finished, and a signal for when none is left. */
      const objects = new Map<string, { count: number; readonly settled: Deferred.Deferred<void> }>()
      /** The deliveries being sent now (attempt started, not yet recorded). */
      const sending = new Set<string>()
      let secrets = { since: Number.NEGATIVE_INFINITY, cipher }

      const keyOf = (handed: Handed) => Callbacks.groupKey(handed.event)
      const cipherNow = () => {
        const now = Date.now()
        if (now - secrets.since > cacheMs) secrets = { since: now, cipher: Callbacks.decryptingOnce(cipher) }
        return secrets.cipher
      }
      const finished = (handed: Handed) =>
        Effect.sync(() => {
          state.taken--
          sending.delete(handed.delivery.id)
          const key = keyOf(handed)
          const object = objects.get(key)
          if (object === undefined) return
          object.count--
          if (object.count > 0) return
          objects.delete(key)
          Deferred.doneUnsafe(object.settled, Effect.void)
        })
      // Whatever is left when closing (none, unless the sender died) no longer holds back a pass:
      // registered first, so it runs last, after the sends (below) have ended.
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const object of objects.values()) Deferred.doneUnsafe(object.settled, Effect.void)
          objects.clear()
          sending.clear()
        })
      )
      // A send still running after `CallbackShares.slowMs` goes on in this scope, uninterruptibly, and
      // gives its place among the `concurrency` back (it still counts towards `limit`): closing waits
      // for it after the sender has ended.
      const background = yield* Scope.fork(yield* Effect.scope, "parallel")
      const sendOne = (handed: Handed) =>
        Effect.suspend(() =>
          Callbacks.sendHanded(handed, Effect.sync(() => void sending.add(handed.delivery.id))).pipe(Effect.provideService(SecretCipher, cipherNow()))
        ).pipe(
          Effect.tap((sent) => Effect.sync(() => sent && metrics._tag === "Some" && metrics.value.observeHandedOff())),
          Effect.catchCause((cause) => Effect.logError("handed-off callback failed (a pass sends it after its lease)", cause)),
          Effect.ensuring(finished(handed)),
          Effect.uninterruptible
        )
      const send = (handed: Handed) =>
        Effect.flatMap(Effect.forkIn(sendOne(handed), background, { uninterruptible: true }), (fiber) =>
          CallbacksInFlight.waitAtMost(fiber, CallbackShares.slowMs))
      // The services are given to the sender once: its sends' fibers inherit them (giving them to
      // each send copied the whole context per callback).
      const sender = yield* Stream.fromQueue(queue).pipe(
        Stream.mapEffect(send, { concurrency, unordered: true }),
        Stream.runDrain,
        Effect.provideContext(services),
        Effect.forkScoped
      )
      // Closing: nothing more is taken, and what was taken is sent before the services go (the
      // sender, then the sends it left running).
      yield* Effect.addFinalizer(() =>
        Effect.suspend(() => {
          state.open = false
          Queue.endUnsafe(queue)
          // Said, so an operator sees what a stop waits for (each send ends within the 10 s timeout).
          const left = state.taken
          return left === 0 ? Fiber.await(sender) : Logging.lifecycle(`callback hand-off: sending the ${left} callbacks it took before it stops`).pipe(Effect.andThen(Fiber.await(sender)))
        })
      )

      return DeliveryHandoff.of({
        accepting: Effect.sync(() => state.open && state.taken < limit),
        take: (items) =>
          Effect.sync(() => {
            if (!state.open) return
            for (const handed of items) {
              const key = keyOf(handed)
              const object = objects.get(key)
              if (object === undefined) objects.set(key, { count: 1, settled: Deferred.makeUnsafe<void>() })
              else object.count++
              state.taken++
              Queue.offerUnsafe(queue, handed)
            }
          }),
        settled: (objectId) =>
          Effect.suspend(() => {
            const object = objects.get(objectId)
            return object === undefined ? Effect.void : Deferred.await(object.settled)
          }),
        sending: () => new Set(sending)
      })
    })
  )
