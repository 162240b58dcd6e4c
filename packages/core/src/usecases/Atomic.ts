/**
 * Runs a use case's state change in one transaction, retrying it when a concurrent writer
 * won a unique rule or a version check (`WriteConflict`): the retry then sees the winner's
 * row and answers as a replay or a conflict.
 *
 * The due moments a transaction writes (`wakeup`) are collected while it runs and handed to the
 * optional `Wakeups` port once it has committed: never for an attempt that rolled back or was
 * retried, and once for a nested `atomic`, after the outermost commit. Work of a test clock's
 * objects wakes nothing: it is due on the clock's time, which only the clock's advances move. The
 * deliveries a transaction wrote leased for the `DeliveryHandoff` port (`handOff`) go to it the
 * same way, after the commit.
 */
import { Cause, Context, Effect, Exit } from "effect"
import type { WriteConflict } from "../Errors.js"
import { Transactions } from "../ports/Transactions.js"
import * as TestClock from "../TestClock.js"
import { DeliveryHandoff, type Handed } from "../ports/DeliveryHandoff.js"
import { type Wakeup, Wakeups } from "../ports/Wakeups.js"

/** Attempts of one use case before a `WriteConflict` is given up and reported. */
export const maxAttempts = 5

/** What a transaction hands on after its commit: a wakeup, or a delivery for the `DeliveryHandoff` port. */
type AfterCommit = Wakeup | { readonly kind: "handoff"; readonly handed: Handed }

/** What the transaction in progress hands on after its commit; `null` outside `atomic`. */
export const Collector = Context.Reference<Array<AfterCommit> | null>("@paydesk/core/Atomic/Collector", {
  defaultValue: () => null
})

/**
 * Set while the items of `atomicEach` run side by side in one transaction: a nested `atomic` then
 * joins that transaction without a savepoint of its own (one would also cover, and undo, the
 * statements its siblings run meanwhile) and without retries; if it fails, `failed` makes the whole
 * batch fail, so every item runs again alone.
 */
const SideBySide = Context.Reference<{ failed: boolean } | null>("@paydesk/core/Atomic/SideBySide", {
  defaultValue: () => null
})

/** `items` to an optional port, when the host provides it and there are any; never fails (a warning instead). */
const toOptionalPort = <I, S, A>(
  key: Context.Key<I, S>,
  items: ReadonlyArray<A>,
  send: (port: S, items: ReadonlyArray<A>) => Effect.Effect<void>,
  warning: string
): Effect.Effect<void> =>
  items.length === 0
    ? Effect.void
    : Effect.flatMap(Effect.serviceOption(key), (port) =>
      port._tag === "None" ? Effect.void : send(port.value, items).pipe(Effect.catchCause((cause) => Effect.logWarning(warning, cause))))

/** Hands wakeups to the `Wakeups` port (they are hints: the sweeps find the work). */
const notifyWakeups = (items: ReadonlyArray<Wakeup>): Effect.Effect<void> =>
  toOptionalPort(Wakeups, items, (port, wakeups) => port.notify(wakeups), "wakeups not sent (the sweeps will find the work)")

/** Hands committed leased deliveries to the `DeliveryHandoff` port (one it does not take is sent by a pass after its lease). */
const notifyHandoff = (items: ReadonlyArray<Handed>): Effect.Effect<void> =>
  toOptionalPort(DeliveryHandoff, items, (port, handed) => port.take(handed), "deliveries not handed off (sent after their lease)")

/** Hands on what a committed transaction collected. */
const notify = (items: ReadonlyArray<AfterCommit>): Effect.Effect<void> => {
  if (items.length === 0) return Effect.void
  const wakeups: Array<Wakeup> = []
  const handed: Array<Handed> = []
  for (const item of items) {
    if (item.kind === "handoff") handed.push(item.handed)
    else wakeups.push(item)
  }
  return Effect.andThen(notifyHandoff(handed), notifyWakeups(wakeups))
}

/** Records that a record becomes due at `w.at`: after the commit inside `atomic`, at once outside (never on a test clock). */
export const wakeup = (w: Wakeup): Effect.Effect<void> => wakeups([w])

/** `wakeup` of several records; outside `atomic` they are notified together. */
export const wakeups = (items: ReadonlyArray<Wakeup>): Effect.Effect<void> =>
  Effect.flatMap(Effect.all([Collector, TestClock.Scope]), ([collector, clock]) => {
    if (clock !== null) return Effect.void
    if (collector === null) return notify(items)
    collector.push(...items)
    return Effect.void
  })

/**
 * Hands a delivery written leased (`Outbox.prepareFirst`) to the `DeliveryHandoff` port: after the
 * commit inside `atomic`, at once outside, where the write has committed (a store's own statement);
 * a write inside a transaction that is not `atomic`'s must not hand off.
 */
export const handOff = (handed: Handed): Effect.Effect<void> =>
  Effect.flatMap(Collector, (collector) => {
    if (collector === null) return notifyHandoff([handed])
    collector.push({ kind: "handoff", handed })
    return Effect.void
  })

const isWriteConflict = (e: unknown) => (e as { _tag?: string })._tag === "WriteConflict"

/** `Transactions.run` with retries on `WriteConflict`; the collected wakeups are notified after the commit. */
export const atomic = <A, E, R>(
  effect: Effect.Effect<A, E | WriteConflict, R>
): Effect.Effect<A, E | WriteConflict, R | Transactions> => run(effect, maxAttempts)

const run = <A, E, R>(
  effect: Effect.Effect<A, E | WriteConflict, R>,
  attempts: number
): Effect.Effect<A, E | WriteConflict, R | Transactions> =>
  Effect.flatMap(Effect.all([Transactions, Collector, SideBySide]), ([tx, outer, sideBySide]) => {
    if (outer !== null && sideBySide !== null) {
      return Effect.onError(effect, () => Effect.sync(() => void (sideBySide.failed = true)))
    }
    if (outer !== null) {
      // Nested: join the outer transaction (as a savepoint) and its collector; an attempt that
      // fails takes back what it collected, as its writes are undone.
      return Effect.suspend(() => {
        const mark = outer.length
        return tx.run(effect).pipe(Effect.onError(() => Effect.sync(() => void outer.splice(mark))))
      }).pipe(Effect.retry({ times: attempts - 1, while: isWriteConflict }))
    }
    return Effect.suspend(() => {
      // A fresh buffer per attempt: a retried attempt's wakeups are discarded with its writes.
      const collected: Array<AfterCommit> = []
      return tx.run(Effect.provideService(effect, Collector, collected)).pipe(
        Effect.map((value) => ({ value, collected }))
      )
    }).pipe(
      Effect.retry({ times: attempts - 1, while: isWriteConflict }),
      Effect.flatMap(({ value, collected }) => Effect.as(notify(collected), value))
    )
  })

/**
 * The items side by side (inside the batch's transaction), each to its end: one that fails does not
 * interrupt the others (whose statements may be on the wire), it fails the batch once all are done;
 * so does a nested `atomic` that failed.
 */
const sideBySide = <I, A, E, R>(items: ReadonlyArray<I>, f: (item: I) => Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const state = { failed: false }
    return Effect.forEach(items, (item) => Effect.exit(f(item)), { concurrency: "unbounded" }).pipe(
      Effect.provideService(SideBySide, state),
      Effect.flatMap((exits) => {
        const failure = exits.find(Exit.isFailure)
        if (failure !== undefined) return Effect.failCause(failure.cause)
        if (state.failed) return Effect.die(new Error("a nested atomic failed side by side: each item runs alone"))
        return Effect.succeed(exits.map((exit) => (exit as Exit.Success<A>).value))
      })
    )
  })

/**
 * `atomic(f(item))` for every item, answered per item, written together when it can be: all items
 * run side by side in one transaction (a store that batches the calls made side by side writes them together),
 * and only when that transaction fails (one item refused or at fault, a conflict, a defect, a nested
 * `atomic` of an item failing) is each item run again alone in its own `atomic`, so only the one at
 * fault fails. Within an open transaction, each item runs alone (as a savepoint).
 */
export const atomicEach = <I, A, E, R>(
  items: ReadonlyArray<I>,
  f: (item: I) => Effect.Effect<A, E | WriteConflict, R>
): Effect.Effect<Array<Exit.Exit<A, E | WriteConflict>>, never, R | Transactions> => {
  const alone = Effect.forEach(items, (item) => Effect.exit(atomic(f(item))))
  if (items.length < 2) return alone
  return Effect.flatMap(Collector, (outer) =>
    outer !== null
      ? alone
      // Once: a batch that fails is not retried whole; its items are, each on its own.
      : Effect.flatMap(Effect.exit(run(sideBySide(items, f), 1)), (batch) =>
        Exit.isSuccess(batch)
          ? Effect.succeed(batch.value.map((value) => Exit.succeed(value)))
          : Cause.hasInterruptsOnly(batch.cause)
          ? Effect.failCause(batch.cause as Cause.Cause<never>)
          : alone))
}
