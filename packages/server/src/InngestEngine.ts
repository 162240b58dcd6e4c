/**
 * The Inngest engine (loaded by `Engine.layerInngest` only when `PAYDESK_ENGINE=inngest`): the
 * client from the `INNGEST_*` settings, wakeups sent as Inngest events after each commit, and the
 * functions (cron sweeps and sleep-until flows over the same use cases) served at `/api/inngest`.
 */
import { Layer, Option, Redacted } from "effect"
import type { Wakeups } from "@paydesk/core"
import { InngestClient, InngestFunctions, InngestPlugin, InngestWakeups } from "@paydesk/inngest"
import type { ServerConfig } from "./Config.js"
import type { Engine as EngineService, WorkServices } from "./Engine.js"
import * as Engine from "./Engine.js"

/** The engine and its `Wakeups`. */
export const layer = (config: ServerConfig["inngest"]): Layer.Layer<EngineService | Wakeups, never, WorkServices> => {
  const client = InngestClient.makeClient({
    isDev: config.isDev,
    ...Option.match(config.signingKey, { onNone: () => ({}), onSome: (key) => ({ signingKey: Redacted.value(key) }) }),
    ...Option.match(config.eventKey, { onNone: () => ({}), onSome: (key) => ({ eventKey: Redacted.value(key) }) }),
    ...Option.match(config.baseUrl, { onNone: () => ({}), onSome: (baseUrl) => ({ baseUrl }) })
  })
  const engine = Engine.layerWithoutWorker("inngest", "inngest: functions served at /api/inngest", (app, runner) =>
    InngestPlugin.register(app, { client, functions: InngestFunctions.makeFunctions(client, runner).all }))
  return Layer.merge(engine, InngestWakeups.layer(client))
}
