/**
 * The background engine, chosen by swapping layers: `local` (the worker fiber and its wakeups),
 * `inngest` (Inngest functions served at `/api/inngest`, wakeups sent as events; loaded only when
 * chosen) or `off` (nothing runs by itself; the operator's `POST /admin/v1/work/run` does a pass).
 * Each provides the core's `Wakeups` port (or none) and `Engine`: how the operator runs due work now,
 * how readiness sees the engine, and what it mounts on the HTTP app. The local engine also provides
 * the `DeliveryHandoff` port: it sends a new payment's first callback itself, after the commit.
 */
import { Context, Effect, Layer } from "effect"
import type { FastifyInstance } from "fastify"
import { type Runner, Work } from "@paydesk/core"
import type { HostRoutes } from "@paydesk/fastify"
import type { DeliveryHandoff, Wakeups } from "@paydesk/core"
import * as LocalHandoff from "./LocalHandoff.js"
import type { ServerConfig } from "./Config.js"
import * as LocalWakeups from "./LocalWakeups.js"
import * as LocalWorker from "./LocalWorker.js"
import type { Metrics } from "./Metrics.js"

/** The engine in use. */
export class Engine extends Context.Service<Engine, {
  readonly name: ServerConfig["engine"]
  /** Runs the work due now (the operator's `work run`) and reports it. */
  readonly runWork: Effect.Effect<Work.Report, Effect.Error<ReturnType<typeof Work.drain>>>
  /** Wakes the engine (after the manual clock moved). */
  readonly wake: Effect.Effect<void>
  /** The `worker` check of readiness. */
  readonly check: Effect.Effect<HostRoutes.Check>
  /** Mounts what the engine serves on the app (Inngest's endpoint). */
  mount(app: FastifyInstance, runner: Runner.Runner): void
}>()("@paydesk/server/Engine") {}

/** What running due work needs. */
export type WorkServices = LocalWorker.WorkServices

/** The local engine: the worker fiber, woken by `LocalWakeups`, and the callbacks handed off to it (`LocalHandoff`). */
export const layerLocal = (intervalMs: number): Layer.Layer<Engine | Wakeups | DeliveryHandoff, never, Metrics | WorkServices> =>
  Layer.effect(
    Engine,
    Effect.gen(function*() {
      const worker = yield* LocalWorker.LocalWorker
      const signal = yield* LocalWakeups.WakeSignal
      return Engine.of({
        name: "local",
        runWork: worker.runNow,
        wake: Effect.sync(() => void signal.openUnsafe()),
        check: worker.check,
        mount: () => {}
      })
    })
  ).pipe(
    // The worker sees the hand-off (its passes wait for a payment's handed-off first callback), and
    // the hand-off the wakeups (a failed attempt's retry wakes the worker); closed in that order.
    Layer.provideMerge(LocalWorker.layer({ intervalMs })),
    Layer.provideMerge(LocalHandoff.layer()),
    Layer.provideMerge(LocalWakeups.layer()),
    Layer.provideMerge(LocalWakeups.WakeSignal.layer)
  )

/** An engine without a worker in this process: the operator's `work run` drains due work here. */
export const layerWithoutWorker = (
  name: "inngest" | "off",
  detail: string,
  mount: (app: FastifyInstance, runner: Runner.Runner) => void
): Layer.Layer<Engine, never, WorkServices> =>
  Layer.effect(
    Engine,
    Effect.map(Effect.context<WorkServices>(), (services) =>
      Engine.of({
        name,
        runWork: Effect.provideContext(Work.drain(), services),
        wake: Effect.void,
        check: Effect.succeed({ ok: true, detail }),
        mount
      }))
  )

/** No engine: due work runs when the operator asks. */
export const layerOff: Layer.Layer<Engine, never, WorkServices> = layerWithoutWorker("off", "engine off: due work runs when the operator asks", () => {})

/** The Inngest engine, its module (and the Inngest SDK) loaded only when chosen. */
export const layerInngest = (config: ServerConfig["inngest"]): Layer.Layer<Engine | Wakeups, never, WorkServices> =>
  Layer.unwrap(Effect.map(Effect.promise(() => import("./InngestEngine.js")), (module) => module.layer(config)))


/** The engine `config` names (the local and Inngest engines also provide `Wakeups`, an optional port). */
export const layer = (config: ServerConfig): Layer.Layer<Engine, never, Metrics | WorkServices> => {
  switch (config.engine) {
    case "local":
      return layerLocal(config.workIntervalMs)
    case "inngest":
      return layerInngest(config.inngest)
    case "off":
      return layerOff
  }
}
