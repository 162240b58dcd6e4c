/**
 * `paydesk-server`: starts the reference server from the environment and stops it cleanly on
 * SIGTERM, SIGINT or SIGHUP (in-flight requests finish, the worker stops, embedded PostgreSQL stops).
 */
import { EmbeddedPostgres } from "@paydesk/sql-pg"
import * as Config from "./Config.js"
import * as Server from "./Server.js"

const log = (line: string) => process.stdout.write(`${JSON.stringify({ level: 30, time: Date.now(), msg: line })}\n`)

const main = async () => {
  const config = Config.load()
  const running = await Server.start(config, log)
  log(`paydesk listening on ${running.url} (public ${running.config.publicUrl}, clock ${config.clock}, engine ${config.engine})`)
  if (config.adminTokenGenerated) {
    process.stdout.write(`\nOperator API token (generated for this run): ${config.adminToken}\n  export PAYDESK_ADMIN_TOKEN=${config.adminToken}\n\n`)
  }
  let signalled = false
  const shutdown = (signal: string) => {
    if (signalled) return
    signalled = true
    log(`${signal}: shutting down`)
    running.stop().then(() => process.exit(0), (error) => {
      log(`shutdown failed: ${String(error)}`)
      process.exit(1)
    })
  }
  // This process stops the server (and its embedded PostgreSQL) on these signals itself.
  EmbeddedPostgres.leaveSignalsToHost()
  process.on("SIGTERM", () => shutdown("SIGTERM"))
  process.on("SIGINT", () => shutdown("SIGINT"))
  process.on("SIGHUP", () => shutdown("SIGHUP"))
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Config.ConfigError ? error.message : error?.stack ?? String(error)}\n`)
  process.exit(1)
})
