/**
 * The Inngest engine (loaded by `Engine.layerInngest` only when `PAYDESK_ENGINE=inngest`): the
 * client from the `INNGEST_*` settings, wakeups sent as Inngest events after each commit, and the
 * functions (cron sweeps and sleep-until flows over the same use cases) served at `/api/inngest`.
 */
import type { FastifyBaseLogger } from "fastify"
import { Layer, Option, Redacted } from "effect"
import type { Wakeups } from "@paydesk/core"
import { InngestClient, InngestFunctions, InngestPlugin, InngestWakeups } from "@paydesk/inngest"
import type { ServerConfig } from "./Config.js"
import type { Engine as EngineService, WorkServices } from "./Engine.js"
import * as Engine from "./Engine.js"

/**
 * The SDK's messages in the server's log, one JSON line each (the SDK's console logger wrote a
 * stack over several plain lines for every unsigned call: an outside probe), once the app is there.
 */
const forwardingLogger = () => {
  let target: FastifyBaseLogger | null = null
  const level = (name: "info" | "warn" | "error" | "debug") => (...args: Array<unknown>) => {
    if (target === null) return
    const [first, ...rest] = args
    if (typeof first === "object" && first !== null && !(first instanceof Error)) target[name](first, rest.map(String).join(" "))
    else if (first instanceof Error) target[name]({ err: first }, rest.map(String).join(" ") || first.message)
    else target[name](args.map(String).join(" "))
  }
  return {
    logger: { info: level("info"), warn: level("warn"), error: level("error"), debug: level("debug") },
    attach: (log: FastifyBaseLogger) => void (target = log.child({ component: "inngest" }))
  }
}

/** The engine and its `Wakeups`. */
export const layer = (config: ServerConfig["inngest"]): Layer.Layer<EngineService | Wakeups, never, WorkServices> => {
  const log = forwardingLogger()
  const client = InngestClient.makeClient({
    logger: log.logger,
    isDev: config.isDev,
    ...Option.match(config.signingKey, { onNone: () => ({}), onSome: (key) => ({ signingKey: Redacted.value(key) }) }),
    ...Option.match(config.eventKey, { onNone: () => ({}), onSome: (key) => ({ eventKey: Redacted.value(key) }) }),
    ...Option.match(config.baseUrl, { onNone: () => ({}), onSome: (baseUrl) => ({ baseUrl }) })
  })
  const engine = Engine.layerWithoutWorker("inngest", "inngest: functions served at /api/inngest", (app, runner) => {
    log.attach(app.log)
    InngestPlugin.register(app, {
      client,
      functions: InngestFunctions.makeFunctions(client, runner).all,
      // Never the request's Host: a sync (PUT, unsigned by Inngest's design) would register the caller's.
      ...Option.match(config.serveOrigin, { onNone: () => ({}), onSome: (serveOrigin) => ({ serveOrigin }) })
    })
  })
  return Layer.merge(engine, InngestWakeups.layer(client))
}
