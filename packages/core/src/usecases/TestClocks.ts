/**
 * Use cases of test clocks for merchants: create one frozen at a time, read, list, and advance it
 * to a later time. Access follows the terminal rule (an API key acts on its terminal; a dashboard
 * owner on the terminals of the account). Sandbox payments and subscriptions are attached to a
 * clock at creation (`Payments.create`, `Subscriptions.create` with `testClock`).
 *
 * Advancing runs the clock's due work moment by moment up to the new time (`TestClockWork`) in the
 * request, within a budget: the answer is the clock `ready` at the new time, or still `advancing`
 * when the budget ran out (the background worker finishes it; the merchant polls the clock). Two
 * advances of one clock at once: one wins, the other is 409 `test clock is advancing`.
 *
 * Deleting a clock (`remove`, after Stripe's `DELETE /v1/test_helpers/test_clocks/{id}`) makes it
 * absent at once: 404 for the clock, 404 `test clock not found` for any action on its objects, 400
 * for a creation naming it. The housekeeping (`purge`) deletes its objects from the store a lease
 * later (a bounded number of rows a pass), and deletes the clocks whose `deletesAfter` has passed
 * (their creation plus the event retention, 30 days by default) the same way.
 */
import { Effect, Option } from "effect"
import * as Access from "../Access.js"
import type { Principal } from "../Access.js"
import { characterCount, hasControlCharacter, withoutLoneSurrogates } from "../Bytes.js"
import { PaydeskConfig } from "../Config.js"
import { AccessDenied, InvalidRequest, NotFound, TestClockAdvancing } from "../Errors.js"
import { isUuid } from "../Id.js"
import { formatIso, parseIso } from "../Instant.js"
import * as TestClock from "../TestClock.js"
import { Entropy } from "../ports/Entropy.js"
import { SubscriptionRepository } from "../ports/SubscriptionRepository.js"
import { TerminalRepository } from "../ports/TerminalRepository.js"
import { TestClockRepository } from "../ports/TestClockRepository.js"
import { atomic } from "./Atomic.js"
import * as TestClockScope from "./TestClockScope.js"
import * as TestClockWork from "./TestClockWork.js"
import * as Traced from "../Traced.js"

export { forObject, nowOf } from "./TestClockScope.js"
export { backgroundBudgetMs, clocksPerPass, earliestDue, failedHoldMs, runAt, runPending, runPendingFor, steps } from "./TestClockWork.js"

const invalid = (field: string, message: string) => new InvalidRequest({ field, message })

/** Clocks per page of the list. */
export const pageSize = 50

/** A frozen time from the wire: ISO 8601 with `Z` or an offset, within the years a clock accepts. */
const parseFrozenTime = Traced.fn("TestClocks.parseFrozenTime")(function*(input: string) {
  const parsed = parseIso(input)
  if (Option.isNone(parsed)) {
    return yield* invalid("frozen_time", "frozen_time must be an ISO 8601 date-time with Z or an offset, e.g. 2026-01-31T10:00:00+03:00")
  }
  if (!TestClock.inRange(parsed.value)) {
    return yield* invalid("frozen_time", `frozen_time must be ${TestClock.rangeText}`)
  }
  return parsed.value
})

/** Creates a ready clock of the terminal, frozen at `frozenTime`. */
export const create = Traced.fn("TestClocks.create")(function*(
  principal: Principal,
  input: { readonly terminalId?: string | null | undefined; readonly frozenTime: string; readonly name?: string | null | undefined }
) {
  const terminal = yield* Access.resolveTerminal(principal, input.terminalId, "write")
  const frozenTime = yield* parseFrozenTime(input.frozenTime)
  // Free text: a lone surrogate becomes U+FFFD, as a store writes it, so the answer is what is stored.
  const name = input.name === undefined || input.name === null ? null : withoutLoneSurrogates(input.name)
  if (name !== null && (characterCount(name) > TestClock.maxNameLength || hasControlCharacter(name))) {
    return yield* invalid("name", `name must be at most ${TestClock.maxNameLength} characters without control characters`)
  }
  const keepMs = (yield* PaydeskConfig).eventRetentionMs
  const clock = TestClock.make({ id: yield* (yield* Entropy).uuid, terminalId: terminal.id, name, frozenTime }, yield* TestClock.wallTime, keepMs)
  yield* (yield* TestClockRepository).insert(clock)
  return clock
})

/** A clock the principal may see (404 `test clock not found` for others). */
export const get = Traced.fn("TestClocks.get")(function*(principal: Principal, id: string) {
  const key = id.toLowerCase()
  const found = isUuid(key) ? yield* (yield* TestClockRepository).get(key) : Option.none<TestClock.TestClock>()
  if (Option.isNone(found) || !(yield* Access.canSee(principal, found.value.terminalId))) return yield* NotFound.of("test clock")
  return found.value
})

/** Clocks of the key's terminal (or of the account's terminals for a dashboard user), newest first, 50 per page. */
export const list = Traced.fn("TestClocks.list")(function*(
  principal: Principal,
  query: { readonly terminalId?: string | null | undefined; readonly page?: number | null | undefined }
) {
  const page = query.page ?? 1
  if (!Number.isInteger(page) || page < 1) return yield* invalid("page", "page must be a positive integer")
  // An empty terminal_id is given, not absent: a 403 (Access.resolveTerminal), not the account's terminals.
  const terminalIds = principal._tag === "User" && (query.terminalId === undefined || query.terminalId === null)
    ? (yield* (yield* TerminalRepository).listByAccount(principal.accountId)).map((t) => t.id)
    : [(yield* Access.resolveTerminal(principal, query.terminalId, "read")).id]
  const result = yield* (yield* TestClockRepository).list(terminalIds, { limit: pageSize, offset: (page - 1) * pageSize })
  return { ...result, page }
})

/**
 * A key without subscription write access moves a clock only while none of its subscriptions has work
 * to come (a charge, a pending stop), and deletes it only while none is ongoing (not stopped):
 * advancing would charge them and deleting would end them with the clock, which that key may not do
 * to a subscription itself (an outside probe's restricted key charged a sandbox subscription twice by
 * advancing its clock; another deleted a subscription awaiting consent with its clock).
 */
const subscriptionsAllow = Effect.fnUntraced(function*(principal: Principal, clockId: string, action: "advance" | "delete") {
  if (principal._tag !== "ApiKey" || principal.subscriptionWrite) return
  const subscriptions = yield* SubscriptionRepository
  if ((yield* subscriptions.earliestDue(clockId)) !== null) return yield* AccessDenied.subscriptionWrite()
  if (action === "delete" && (yield* subscriptions.anyOngoing(clockId))) return yield* AccessDenied.subscriptionWrite()
})

/**
 * Advances a clock to a later `frozenTime` (at most `TestClock.maxAdvanceMs` ahead), running the due
 * work of its objects on the way. Returns the clock: `ready` at the new time when the work is done,
 * or `advancing` when the request's budget ran out (the background worker goes on).
 */
export const advance = Traced.fn("TestClocks.advance")(function*(principal: Principal, id: string, frozenTime: string) {
  const found = yield* get(principal, id)
  yield* Access.resolveTerminal(principal, principal._tag === "ApiKey" ? null : found.terminalId, "write")
  yield* subscriptionsAllow(principal, found.id, "advance")
  const target = yield* parseFrozenTime(frozenTime)
  const config = yield* PaydeskConfig
  const repo = yield* TestClockRepository
  const start = atomic(Effect.gen(function*() {
    const locked = yield* repo.getForUpdate(found.id)
    if (Option.isNone(locked)) return yield* NotFound.of("test clock")
    const clock = locked.value
    if (clock.status === "advancing") return yield* TestClockAdvancing.of()
    // Again under the clock's lock, after any wait: a subscription made meanwhile counts.
    yield* subscriptionsAllow(principal, found.id, "advance")
    if (target <= clock.frozenTime) {
      return yield* invalid("frozen_time", `frozen_time must be later than the clock's frozen_time (${formatIso(clock.frozenTime)})`)
    }
    if (target - clock.frozenTime > TestClock.maxAdvanceMs) {
      return yield* invalid("frozen_time", "a clock advances at most 731 days at once")
    }
    const wall = yield* TestClock.wallTime
    // Held by the work due at its time or a resend (`TestClock.isHeld`): waited for (`whenFree`), as
    // stepping past the lease of a callback in flight would send it again (an outside probe got one
    // payment.paid twice, 28 ms apart, advancing right after the simulate that made it).
    if (TestClock.isHeld(clock, wall)) return Option.none<TestClock.TestClock>()
    const next: TestClock.TestClock = {
      ...clock,
      status: "advancing",
      targetTime: target,
      leaseUntil: wall + config.leaseMs,
      updatedAt: wall,
      version: clock.version + 1
    }
    yield* repo.update(next)
    return Option.some(next)
  }))
  // The wait for a holder comes out of the request's budget (the rest continues in the background).
  const started = yield* TestClockScope.whenFree(start)
  return yield* TestClockWork.steps(started.value, Math.max(0, TestClockWork.requestBudgetMs - started.waitedMs))
})

/**
 * Deletes a clock (write access, as for advancing it): it is absent from now on, and its objects are
 * deleted from the store a lease later by `purge`. 409 `test clock is advancing` during an advance
 * (the merchant deletes it once it is `ready`); 404 for another terminal's, or one deleted already.
 * Returns the clock as deleted.
 */
export const remove = Traced.fn("TestClocks.remove")(function*(principal: Principal, id: string) {
  const found = yield* get(principal, id)
  yield* Access.resolveTerminal(principal, principal._tag === "ApiKey" ? null : found.terminalId, "write")
  yield* subscriptionsAllow(principal, found.id, "delete")
  const repo = yield* TestClockRepository
  return yield* atomic(Effect.gen(function*() {
    const locked = yield* repo.getForUpdate(found.id)
    if (Option.isNone(locked)) return yield* NotFound.of("test clock")
    const clock = locked.value
    if (clock.status === "advancing") return yield* TestClockAdvancing.of()
    // Again under the clock's lock: a subscription made on it meanwhile counts.
    yield* subscriptionsAllow(principal, found.id, "delete")
    const wall = yield* TestClock.wallTime
    const deleted: TestClock.TestClock = { ...clock, deletedAt: wall, updatedAt: wall, version: clock.version + 1 }
    yield* repo.update(deleted)
    return deleted
  }))
})

/** Rows a `purgeDeleted` call deletes at most: of one table, or events with their deliveries and attempts. */
export const purgeBatch = 1_000

/** `purgeDeleted` calls of one `purge` at most (each its own short transaction). */
export const purgeCallsPerPass = 20

/** Wall time after which a `purge` makes no further `purgeDeleted` call. */
export const purgeBudgetMs = 250

/**
 * Housekeeping of test clocks: deletes the `ready` clocks whose `deletesAfter` has passed (up to
 * `purgeBatch`), then purges the objects of clocks deleted at least a lease ago (an action on their
 * objects that began before the deletion, or a worker's run of their due work, has ended by then):
 * `purgeDeleted` again while it finds something, up to `purgeCallsPerPass` calls or `purgeBudgetMs`
 * of wall time, so a clock of a few thousand rows goes in one pass and many go in a few, also where
 * the housekeeping runs once a minute (the Inngest sweep). Returns clocks expired plus rows deleted.
 */
export const purge = Traced.fn("TestClocks.purge")(function*() {
  const { leaseMs } = yield* PaydeskConfig
  const repo = yield* TestClockRepository
  const now = yield* TestClock.wallTime
  const expired = yield* repo.expire(now, purgeBatch)
  let purged = 0
  for (let call = 0; call < purgeCallsPerPass; call++) {
    const rows = yield* repo.purgeDeleted(now - leaseMs, now, purgeBatch)
    purged += rows
    if (rows === 0 || (yield* TestClock.wallTime) - now >= purgeBudgetMs) break
  }
  // The operator's view of the purge (an outside probe found none): a line a pass that did any.
  if (expired + purged > 0) {
    yield* Effect.logInfo("test clocks purged").pipe(Effect.annotateLogs({ expired, rows: purged, ms: (yield* TestClock.wallTime) - now }))
  }
  return expired + purged
})
