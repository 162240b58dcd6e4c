/**
 * Callback sends a pass leaves running when they are slow, so that the pass ends and the next one
 * takes what fell due meanwhile. A pass waits for every send it started; without this, a receiver
 * that takes its time (a 200 after 9 s is within the spec's 10 s) made the pass last that long, and
 * every other merchant's callbacks due meanwhile, and the charges and payouts of the same worker
 * loop, waited for it: an outside probe saw a healthy merchant's callbacks 50 s late behind two such
 * receivers, and 110 s behind sixty that never answered.
 *
 * With an `InFlight` in context (the local engine provides one, `make`, forking into its own scope),
 * a pass starts each payment's (or payout's) deliveries in the background and waits for them at most
 * `waitMs`; those still running go on there, holding their leases (renewed before an attempt when
 * little is left) and their terminal's share (`CallbackShares`), and record their attempts when they
 * end. At most `limit` groups run in the background; beyond that a pass sends its groups itself, as
 * without one. One payment's deliveries keep their order across passes: a group waits for the
 * groups of its payment started before it (`chains`), and defers its deliveries as long as one of
 * them deferred the payment's. `sending` names their deliveries, which a later pass that claims one again (its lease
 * ran out while it waited) leaves to them, as it leaves the hand-off engine's, noting the lease its claim
 * set (`reclaim`): a group whose renewal fails sends a delivery only under a lease this process set,
 * and leaves one another process claimed to that process. Without an `InFlight`
 * (the default: the Inngest engine, test clocks, tests) a pass waits for everything it started.
 *
 * The background runs with the pass's services and uninterruptibly, so the host's scope, when it
 * closes, waits for the sends in progress (at most `Callback.timeoutMs` and the record) and never
 * cuts one in half; after `close` a group makes no new attempt (a payment's later events stay
 * pending and go after their lease, from whichever process runs then: stopping waited 10 s more per
 * event left otherwise, a re-probe found). A crash loses nothing either: a delivery held is pending
 * with a lease.
 */
import { Context, Deferred, Effect, Fiber } from "effect"

/** How long a pass waits for a payment's deliveries before it leaves them running in the background. */
export const waitMs = 1_000
/** Groups running in the background at most (one process). */
export const limit = 256

/** Waits for `fiber` at most `ms`; it goes on after that (in the background it was forked into). */
export const waitAtMost = <A, E>(fiber: Fiber.Fiber<A, E>, ms: number): Effect.Effect<void> =>
  Effect.asVoid(Effect.raceFirst(Fiber.await(fiber), Effect.sleep(ms)))

/** Runs effects in the background of the host (its scope), uninterruptibly. */
export type Fork = <A, R>(effect: Effect.Effect<A, never, R>) => Effect.Effect<Fiber.Fiber<A>, never, R>

/** Until when a payment's group deferred its deliveries (epoch ms; null: it deferred none). */
export type DeferredUntil = number | null

/** The background of one process. */
export interface InFlight {
  /**
   * Runs one payment's group after the groups of the same payment started before it (`send` gets what
   * to wait for, which answers until when that group deferred the payment's deliveries, and answers
   * its own), in the background when there is room, and answers when it is done or after `waitMs`.
   */
  readonly run: <R>(
    key: string,
    deliveryIds: ReadonlyArray<string>,
    send: (before: Deferred.Deferred<DeferredUntil> | undefined) => Effect.Effect<DeferredUntil, never, R>
  ) => Effect.Effect<void, never, R>
  /** The deliveries of the groups started and not yet done. */
  readonly sending: () => ReadonlySet<string>
  /** A pass of this process claimed one of `sending` again, with a lease until `leaseUntil` (epoch ms), and left it to its group. */
  readonly reclaim: (deliveryId: string, leaseUntil: number) => void
  /** The lease this process's last claim of a delivery of `sending` set, if one claimed it again. */
  readonly reclaimed: (deliveryId: string) => number | undefined
  /** Groups running in the background now. */
  readonly running: () => number
  /** The same, whose passes run every group themselves (never in the background) after the groups of its payment started before. */
  readonly waiting: () => InFlight
  /** Asks the groups to make no new attempt (the host is stopping): what they hold stays pending, sent after its lease. */
  readonly close: () => void
  /** Whether `close` was asked. */
  readonly closing: () => boolean
}

/** A background that forks with `fork`. */
export const make = (fork: Fork, options: { readonly limit?: number; readonly waitMs?: number } = {}): InFlight => {
  const wait = options.waitMs ?? waitMs
  /** Per payment: the done signal of its group started last. */
  const chains = new Map<string, Deferred.Deferred<DeferredUntil>>()
  const sending = new Set<string>()
  const leases = new Map<string, number>()
  let background = 0
  let closing = false
  const runUpTo = (most: number): InFlight["run"] => <R>(
    key: string,
    deliveryIds: ReadonlyArray<string>,
    send: (before: Deferred.Deferred<DeferredUntil> | undefined) => Effect.Effect<DeferredUntil, never, R>
  ) =>
    Effect.suspend(() => {
      const before = chains.get(key)
      const done = Deferred.makeUnsafe<DeferredUntil>()
      chains.set(key, done)
      for (const id of deliveryIds) sending.add(id)
      const inBackground = background < most
      if (inBackground) background++
      // Once, whether the group ran to its end, failed, or never started (a fork into a scope that
      // had closed: the fiber is interrupted before its first step).
      let settled = false
      const settle = (until: DeferredUntil) => {
        if (settled) return
        settled = true
        for (const id of deliveryIds) {
          sending.delete(id)
          leases.delete(id)
        }
        if (chains.get(key) === done) chains.delete(key)
        if (inBackground) background--
        Deferred.doneUnsafe(done, Effect.succeed(until))
      }
      const group = send(before).pipe(
        Effect.onExit((exit) => Effect.sync(() => settle(exit._tag === "Success" ? exit.value : null)))
      )
      if (!inBackground) return Effect.asVoid(group)
      return Effect.flatMap(fork(group), (fiber) => {
        fiber.addObserver(() => settle(null))
        return waitAtMost(fiber, wait)
      })
    })
  const withLimit = (most: number): InFlight => ({
    run: runUpTo(most),
    sending: () => sending,
    reclaim: (deliveryId, leaseUntil) => {
      if (sending.has(deliveryId)) leases.set(deliveryId, leaseUntil)
    },
    reclaimed: (deliveryId) => leases.get(deliveryId),
    running: () => background,
    waiting: () => withLimit(0),
    close: () => void (closing = true),
    closing: () => closing
  })
  return withLimit(options.limit ?? limit)
}

/** The background a pass uses: none unless the host provides one. */
export const InFlight = Context.Reference<InFlight | null>("@paydesk/core/CallbacksInFlight", { defaultValue: () => null })
