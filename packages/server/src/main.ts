/**
 * `paydesk-server`: reads and checks the settings (nothing starts when one is wrong: every problem
 * is printed, each naming its variable), then runs the server's layer graph under
 * `NodeRuntime.runMain` until SIGTERM, SIGINT or SIGHUP, when the scope closes in order (requests
 * drained, worker stopped, pools closed, embedded PostgreSQL stopped) and the process exits 0.
 */
import { resolve } from "node:path"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Context, Effect, Exit, Layer } from "effect"
import { EmbeddedPostgres } from "@paydesk/sql-pg"
import * as Config from "./Config.js"
import * as Logging from "./Logging.js"
import * as Server from "./Server.js"

/** Resolves on SIGHUP (SIGINT and SIGTERM interrupt the main fiber through `runMain`). */
const hangup = Effect.callback<void>((resume) => {
  const listener = () => resume(Effect.void)
  process.once("SIGHUP", listener)
  return Effect.sync(() => void process.off("SIGHUP", listener))
})

const serve = (config: Config.ServerConfig) =>
  Effect.scoped(Effect.gen(function*() {
    for (const warning of [...config.warnings, ...Config.unknownSettings(process.env)]) yield* Effect.logWarning(`warning: ${warning}`)
    if (config.callbackAllowPrivate) {
      yield* Effect.logWarning("PAYDESK_CALLBACK_ALLOW_PRIVATE=1: callbacks may go to loopback and private addresses (development only)")
    }
    const http = Context.get(yield* Layer.build(Server.layer(config)), Server.Http)
    // A token none gave is kept in the data directory: the log says where, never the token itself
    // (printed, it went into the JSON log stream: an outside probe).
    if (http.adminTokenFile !== null) {
      const file = resolve(http.adminTokenFile)
      yield* Logging.lifecycle(`operator API token (PAYDESK_ADMIN_TOKEN not set): kept in ${file}; export PAYDESK_ADMIN_TOKEN=$(cat ${file})`)
    }
    yield* Effect.raceFirst(Effect.never, hangup)
  })).pipe(Effect.ensuring(Logging.lifecycle("paydesk stopped")), Effect.provide(Logging.layer(config.logLevel)))

const main = Effect.gen(function*() {
  const config = yield* Config.fromEnvironment
  return yield* serve(config)
}).pipe(
  Effect.tapError((error) =>
    Effect.sync(() => process.stderr.write(`paydesk: ${error._tag === "SettingsError" ? error.message : `cannot start: ${error.message}`}\n`)))
)

// `./run start` sets glibc's allocator for this process (its C library read them when it started)
// and names them here; the embedded PostgreSQL and any other child run with the caller's environment.
for (const name of (process.env.PAYDESK_ALLOCATOR_ENV ?? "").split(" ")) if (name !== "") delete process.env[name]
delete process.env.PAYDESK_ALLOCATOR_ENV

// This process stops the embedded PostgreSQL itself when it stops.
EmbeddedPostgres.leaveSignalsToHost()

NodeRuntime.runMain(main, {
  disableErrorReporting: true,
  // A stop on a signal is a clean stop.
  teardown: (exit, onExit) => {
    const code = Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1
    onExit(code)
    process.exit(code)
  }
})
