/**
 * How often the server logs a failed callback attempt: the first failure to a destination (an
 * origin) is a warning at once, the next ones to it within `windowMs` are counted, not logged, and
 * the first failure after that window says how many were left out. A merchant whose endpoint is down
 * made one warning per attempt of each of its callbacks: an outside probe's 40 minutes with four
 * failing receivers wrote 46,000 such lines, half of a 0.9 GB-a-day log. Each attempt stays in the
 * attempt log (`paydesk deliveries show`) and in `paydesk_callback_attempts_total`.
 */

import { Effect } from "effect"

/** What to do with one failure: log it (saying how many to its destination were left out before it), or not. */
export type Verdict = { readonly log: true; readonly leftOut: number } | { readonly log: false }

/** The failures of one process. */
export interface FailureLog {
  readonly note: (destination: string, now: number) => Verdict
}

/** Destinations remembered at most (past that the oldest window is forgotten: its next failure is logged). */
export const maxDestinations = 10_000

export const make = (windowMs = 60_000): FailureLog => {
  const windows = new Map<string, { from: number; leftOut: number }>()
  return {
    note: (destination, now) => {
      const window = windows.get(destination)
      if (window !== undefined && now - window.from < windowMs) {
        window.leftOut++
        return { log: false }
      }
      const leftOut = window?.leftOut ?? 0
      windows.delete(destination)
      if (windows.size >= maxDestinations) windows.delete(windows.keys().next().value!)
      windows.set(destination, { from: now, leftOut: 0 })
      return { log: true, leftOut }
    }
  }
}

/** The line's suffix for the failures left out before it (`what`: what they are, plural). */
export const leftOutSuffix = (leftOut: number, what = "failed attempts to it"): string =>
  leftOut === 0 ? "" : ` (and ${leftOut} more ${leftOut === 1 ? what.replace(/s( |$)/, "$1") : what} since the last line, not logged)`

/**
 * Logs `message` about `key` as `failures` decides: the first at once, the next within the window
 * left out, the first after it saying how many were (`what`, as in `leftOutSuffix`, and the field
 * `left_out`). `write` logs a line at the caller's level (with its cause, if any).
 */
export const logNoted = (
  failures: FailureLog,
  key: string,
  message: string,
  write: (line: string) => Effect.Effect<void>,
  annotations: Record<string, unknown> = {},
  what?: string
): Effect.Effect<void> => {
  const verdict = failures.note(key, Date.now())
  return verdict.log
    ? write(`${message}${leftOutSuffix(verdict.leftOut, what)}`).pipe(
      Effect.annotateLogs({ ...annotations, ...(verdict.leftOut === 0 ? {} : { left_out: verdict.leftOut }) })
    )
    : Effect.void
}
