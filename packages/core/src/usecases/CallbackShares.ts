/**
 * Each terminal's share of this process's callback sending. A pass and the hand-off engine each send
 * up to `Callbacks.concurrency` callbacks at once, and a receiver may hold a request for the whole
 * timeout (10 s) without answering: without shares, one merchant whose endpoint hangs, with a burst of
 * free sandbox payments, filled every slot and held every other merchant's callbacks back for minutes
 * (an outside probe: 368 s after 1,200 such payments).
 *
 * - A terminal sends at most `perTerminal` callbacks at once in this process. One more of it waits
 *   for a slot of its own while the terminal's oldest send in flight is younger than `slowMs` (a
 *   fast receiver, a short wait; it looks again at least every `slowMs`), and is deferred otherwise (`Defer`: its delivery's lease is moved
 *   ahead by as long as that oldest send has run, `busyDeferMs` to `busyDeferMaxMs`, no attempt made), so the slots it would hold go to other terminals.
 * - After `failingAfter` attempts in a row that failed slowly (no answer within the timeout, or a
 *   failure that took `slowMs` or longer), the terminal is failing: `failingPerTerminal` at once,
 *   until an attempt succeeds or fails quickly; the rest are not sent (`Unsent`) and recorded as
 *   failed attempts (the endpoint is failing), so they follow the retry schedule and end `failed`
 *   after 8 attempts, as if each had been sent into the timeout. (They were deferred 30 s each, with
 *   no attempt counted: an outside probe's endpoint answering after 12 s kept 1,900 deliveries pending,
 *   growing with every payment and never purged, while 2 at a time ran into the timeout.) A receiver
 *   that answers an error at once (a 503, a refused connection) holds no slot for long and is not limited.
 *
 * A busy terminal's deferral is not an attempt: the delivery keeps its 8, and a pass defers a
 * payment's later events with it (`Callbacks.runDue`). The state is this process's (the default is one per process,
 * `CallbackShares`); another process has shares of its own. Deliveries of test clocks are not
 * counted (their passes have their own bounded time), nor a resend or test event a request asks for
 * (`Callbacks.attempt`).
 */
import { Clock, Context, Deferred, Effect } from "effect"

/** Callbacks one terminal sends at once in this process. */
export const perTerminal = 16
/** Attempts in a row that failed slowly after which a terminal counts as failing. */
export const failingAfter = 3
/** Callbacks a failing terminal sends at once. */
export const failingPerTerminal = 2
/** A send in flight this long makes the terminal slow: its next callbacks beyond its slots are deferred, not waited for. */
export const slowMs = 1_000
/**
 * How far a busy (slow) terminal's callback beyond its slots is deferred at least: as long as its
 * oldest send in flight has run, from `busyDeferMs` to `busyDeferMaxMs` (the callback's timeout, by
 * which that send has ended). A second each made the passes claim and defer a slow terminal's
 * backlog every second while its sends took up to 10 s (a review of the background sends).
 */
export const busyDeferMs = 1_000
/** How far a busy terminal's callback is deferred at most. */
export const busyDeferMaxMs = 10_000

/**
 * What `run` did: sent (`nowFailing`: this attempt made the terminal failing), or nothing: defer the
 * delivery by `forMs` (a busy terminal), or, for a failing one, `Unsent`: the caller records a failed
 * attempt without sending it, so the delivery's retries go on.
 */
export type Ran<A> =
  | { readonly _tag: "Sent"; readonly value: A; readonly nowFailing: boolean }
  | { readonly _tag: "Defer"; readonly forMs: number }
  | { readonly _tag: "Unsent"; readonly failures: number }

/**
 * How long a terminal stays failing after its last slow failure when no send of it ends meanwhile (a
 * quiet merchant after an outage, or its callbacks went through another process): then it may send
 * as any terminal again, and fails again within one timeout if its endpoint still does not answer.
 * (A review found a failing mark kept for a day: the next burst to a healthy endpoint sent 2 and
 * recorded the rest as not sent.)
 */
export const failingForgetMs = 30_000

interface TerminalState {
  inFlight: number
  /** When each send in flight started (at most `perTerminal`). */
  readonly starts: Array<number>
  failures: number
  /** When the last slow failure ended. */
  failedAt: number
  /** Runs waiting for a slot, first come first served; each slot given back wakes the first. */
  readonly waiters: Array<Waiter>
  /** Wakes asked for and not yet given (`wake`). */
  wakes: number
  /** Whether `wake` is giving them now (a wake asked for meanwhile joins its loop). */
  waking: boolean
}

interface Waiter {
  readonly turn: Deferred.Deferred<void>
  /** Whether a slot given back woke it (it then passes the wake on when it takes no slot). */
  woken: boolean
}

/** The shares of one process. */
export interface Shares {
  /**
   * Runs `send` in a slot of the terminal (waited for while its sends are quick), counting its
   * outcome towards the terminal's slow failures (`ok`: false for one), or answers `Defer` without running it. The slot
   * is given back however `send` ends, also when it is interrupted.
   */
  readonly run: <A, R>(terminalId: string, send: Effect.Effect<A, never, R>, ok: (value: A) => boolean) => Effect.Effect<Ran<A>, never, R>
  /** Sends in flight and slow failures in a row of a terminal. */
  readonly of: (terminalId: string) => { readonly inFlight: number; readonly failures: number }
}

/** Fresh shares. */
export const make = (): Shares => {
  const terminals = new Map<string, TerminalState>()
  const stateOf = (terminalId: string): TerminalState => {
    let state = terminals.get(terminalId)
    if (state === undefined) {
      state = { inFlight: 0, starts: [], failures: 0, failedAt: 0, waiters: [], wakes: 0, waking: false }
      terminals.set(terminalId, state)
    }
    return state
  }
  /** Gives a slot back (`ok` null: the send was interrupted, no outcome); answers true when the terminal has just become failing. */
  const leave = (terminalId: string, startedAt: number, endedAt: number, ok: boolean | null): boolean => {
    const state = stateOf(terminalId)
    state.inFlight--
    state.starts.splice(state.starts.indexOf(startedAt), 1)
    const wasFailing = state.failures >= failingAfter
    if (ok !== null) state.failures = ok ? 0 : state.failures + 1
    if (ok === false) state.failedAt = endedAt
    wakeFirst(state)
    forget(terminalId, state)
    return !wasFailing && state.failures >= failingAfter
  }
  /**
   * Wakes the first `n` waiters, first come first served. A woken waiter runs at once, in this call's
   * stack (Effect's `Deferred.doneUnsafe` resumes it there), and may take a slot, send without
   * waiting (a synchronous transport) and give it back, asking for a wake again: such a wake joins
   * the loop already running instead of nesting (a chain of them overflowed the stack; two reviews).
   * Wakes asked for with no one waiting lapse.
   */
  const wake = (state: TerminalState, n: number): void => {
    state.wakes += n
    if (state.waking) return
    state.waking = true
    try {
      while (state.wakes > 0) {
        const first = state.waiters.shift()
        if (first === undefined) break
        state.wakes--
        first.woken = true
        Deferred.doneUnsafe(first.turn, Effect.void)
      }
    } finally {
      state.wakes = 0
      state.waking = false
    }
  }
  /**
   * One wake per slot given back. (Waking every waiter had each look again for every slot: with one
   * busy terminal and the engine's 32 sends at once, 2.1 waits per send, each with its race, fibers
   * and timer, against 0.3 since; docs/performance.md, twenty-ninth round.) A woken waiter whose
   * fiber was interrupted before it looked wakes the next in its place.
   */
  const wakeFirst = (state: TerminalState): void => wake(state, 1)
  /** When a woken waiter finds the terminal failing or slow, every other waiting gets the same answer now. */
  const wakeAll = (state: TerminalState): void => wake(state, state.waiters.length)
  /** Forgets a terminal with nothing in flight, no slow failures and no waiters (only the state in force). */
  const forget = (terminalId: string, state: TerminalState): void => {
    if (state.inFlight === 0 && state.failures === 0 && state.waiters.length === 0 && terminals.get(terminalId) === state) terminals.delete(terminalId)
  }
  const leaveQueue = (state: TerminalState, waiter: Waiter): void => {
    const at = state.waiters.indexOf(waiter)
    if (at >= 0) state.waiters.splice(at, 1)
  }
  const run = <A, R>(terminalId: string, send: Effect.Effect<A, never, R>, ok: (value: A) => boolean): Effect.Effect<Ran<A>, never, R> =>
    // The slot is taken and its release set up in one uninterruptible step; only the wait and `send` are interruptible.
    Effect.uninterruptibleMask((restore) => {
      /** `woken`: a slot given back woke this run (it was first in the queue). */
      const look = (woken: boolean): Effect.Effect<Ran<A>, never, R> => Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const state = stateOf(terminalId)
        // A mark no send has renewed for a while is forgotten (half open: the next sends find out).
        if (state.failures >= failingAfter && now - state.failedAt >= failingForgetMs) state.failures = 0
        const failing = state.failures >= failingAfter
        if (state.inFlight < (failing ? failingPerTerminal : perTerminal)) {
          state.inFlight++
          state.starts.push(now)
          let nowFailing = false
          return restore(send).pipe(
            Effect.onExit((exit) =>
              Effect.flatMap(Clock.currentTimeMillis, (endedAt) => Effect.sync(() => void (nowFailing = leave(terminalId, now, endedAt, exit._tag === "Success" ? ok(exit.value) : null))))),
            Effect.map((value): Ran<A> => ({ _tag: "Sent", value, nowFailing }))
          )
        }
        if (failing) {
          if (woken) wakeAll(state)
          return Effect.succeed<Ran<A>>({ _tag: "Unsent", failures: state.failures })
        }
        const oldest = now - Math.min(...state.starts)
        if (oldest >= slowMs) {
          if (woken) wakeAll(state)
          return Effect.succeed<Ran<A>>({ _tag: "Defer", forMs: Math.min(busyDeferMaxMs, Math.max(busyDeferMs, oldest)) })
        }
        // Quick sends: look again when a slot is given back to this run, or after `slowMs` at the
        // latest (the terminal may have become slow meanwhile: then defer, giving the caller's slot
        // to other terminals). A woken run that found no slot waits first in the queue again.
        const waiter: Waiter = { turn: Deferred.makeUnsafe<void>(), woken: false }
        if (woken) state.waiters.unshift(waiter)
        else state.waiters.push(waiter)
        return restore(Effect.race(Deferred.await(waiter.turn), Effect.sleep(slowMs))).pipe(
          Effect.onInterrupt(() =>
            Effect.sync(() => {
              leaveQueue(state, waiter)
              if (waiter.woken) wakeFirst(state)
              forget(terminalId, state)
            })
          ),
          Effect.andThen(Effect.suspend(() => {
            leaveQueue(state, waiter)
            return look(waiter.woken)
          }))
        )
      })
      return look(false)
    })
  return {
    run,
    of: (terminalId) => {
      const state = terminals.get(terminalId)
      return { inFlight: state?.inFlight ?? 0, failures: state?.failures ?? 0 }
    }
  }
}

/** The shares the callback sending uses: one per process unless a layer provides its own. */
export const CallbackShares = Context.Reference<Shares>("@paydesk/core/CallbackShares", { defaultValue: make })
