/**
 * The local background engine: a loop in the server that runs every due job (`Work.drain`)
 * on a short interval and as soon as it is woken (a commit wrote due work, see LocalWakeups).
 * Runs never overlap in one process; several processes on one database share the work safely because the use cases
 * claim rows with `SKIP LOCKED` and leases.
 */
import type { ManagedRuntime } from "effect"
import { type Services, Work } from "@paydesk/core"

/** A running worker. */
export interface Worker {
  /** Runs a pass soon (coalesced with a pass already queued). */
  wake(): void
  /** Runs a pass now (after the current one) and returns its report. */
  runNow(): Promise<Work.Report>
  /** Stops after the pass in progress. */
  stop(): Promise<void>
}

/** Starts the loop. */
export const start = (
  runtime: ManagedRuntime.ManagedRuntime<Services, never>,
  intervalMs: number,
  onError: (error: unknown) => void
): Worker => {
  let running: Promise<Work.Report> = Promise.resolve({ expiredPayments: 0, charges: 0, stops: 0, conversions: 0, payouts: 0, callbacks: 0 })
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let woken = false

  const pass = (): Promise<Work.Report> => {
    running = running.catch(() => undefined).then(() => runtime.runPromise(Work.drain()))
    return running
  }
  const schedule = (delay: number) => {
    if (stopped) return
    clearTimeout(timer)
    timer = setTimeout(() => {
      woken = false
      pass().catch(onError).finally(() => schedule(intervalMs))
    }, delay)
  }
  schedule(intervalMs)
  return {
    wake: () => {
      if (stopped || woken) return
      woken = true
      schedule(20)
    },
    runNow: () => pass(),
    stop: async () => {
      stopped = true
      clearTimeout(timer)
      await running.catch(() => undefined)
    }
  }
}
