/**
 * The composition root of the reference deployment: PostgreSQL (external or embedded), the
 * production security adapters, the HTTP callback transport, the acquirer and payout-network
 * emulators (ports ready for a real bank), the clock (system or manual), the Fastify app and the
 * local background worker. `start(config)` returns a handle whose `stop()` shuts down in order:
 * stop accepting requests and let in-flight ones finish, stop the worker, close the pool, stop
 * the embedded database.
 */
import { Clock, Effect, Layer, ManagedRuntime, Result } from "effect"
import type { FastifyInstance } from "fastify"
import { Acquirer, Amount, Config, HmacTokenIssuer, PaydeskConfig, type Services, Work } from "@paydesk/core"
import { App } from "@paydesk/fastify"
import { InngestClient, InngestFunctions, InngestPlugin, InngestWakeups } from "@paydesk/inngest"
import { EmbeddedPostgres, NodeSecurity, PgRateSource, PgStore } from "@paydesk/sql-pg"
import { AcquirerEmulator, ManualClock, PayoutNetworkEmulator } from "@paydesk/testkit"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import { join } from "node:path"
import type { ServerConfig } from "./Config.js"
import * as HttpCallbackTransport from "./HttpCallbackTransport.js"
import * as LocalWakeups from "./LocalWakeups.js"
import * as LocalWorker from "./LocalWorker.js"
import * as PgChargeBook from "./PgChargeBook.js"

/** A running server. */
export interface Running {
  readonly app: FastifyInstance
  readonly url: string
  readonly config: ServerConfig
  stop(): Promise<void>
}

/** Starts everything; `log` receives startup lines (not secrets other than a generated admin token). */
export const start = async (given: ServerConfig, log: (line: string) => void = () => {}): Promise<Running> => {
  // Port 0 picks a free port now, so the default public URL can name it.
  const port = given.port === 0 ? await EmbeddedPostgres.freePort() : given.port
  const config: ServerConfig = {
    ...given,
    port,
    publicUrl: given.publicUrlDefaulted ? `http://${given.host.includes(":") ? `[${given.host}]` : given.host}:${port}` : given.publicUrl
  }
  // What has been started so far, undone in reverse when a later step fails.
  const undo: Array<() => Promise<unknown>> = []
  try {
    let databaseUrl = config.databaseUrl
    let stopDatabase = async () => {}
    if (databaseUrl === null) {
      const dataDir = join(config.dataDir, "postgres")
      log(`starting embedded PostgreSQL in ${dataDir}`)
      const embedded = await EmbeddedPostgres.start({ dataDir })
      databaseUrl = embedded.url
      stopDatabase = () => embedded.stop()
      undo.push(stopDatabase)
    }

    const manual = config.clock === "manual" ? await Effect.runPromise(ManualClock.make(config.clockStart ?? Date.now())) : null
    // The emulated bank keeps its charge book in the database: it survives restarts and is shared.
    const bank = await PgChargeBook.open(databaseUrl)
    undo.push(() => bank.close())
    const acquirer = AcquirerEmulator.make(bank.book)
    const key = NodeSecurity.parseKey(config.secretKey)
    const tokenKey = createHash("sha256").update("paydesk-access-tokens").update(key).digest("base64")
    const store = PgStore.layer(databaseUrl)
    const layer = Layer.mergeAll(
      PgRateSource.layer,
      NodeSecurity.layerCryptoEntropy,
      NodeSecurity.layerScryptPasswordHasher(),
      NodeSecurity.layerAesGcmSecretCipher(key),
      HmacTokenIssuer.layer(tokenKey),
      HttpCallbackTransport.layer,
      Layer.succeed(AcquirerEmulator.AcquirerEmulator)(acquirer),
      Layer.succeed(Acquirer)(acquirer.acquirer),
      PayoutNetworkEmulator.layer,
      manual === null ? Layer.empty : Layer.succeed(Clock.Clock)(manual.clock),
      Layer.succeed(PaydeskConfig)({ ...Config.defaults, batchSize: config.workBatchSize })
    ).pipe(Layer.provideMerge(store))
    // Post-commit wakeups (hints; the sweeps stay the guarantee): with Inngest, the flows' events;
    // with the local engine, the worker wakes when work falls due (attached once it runs).
    const inngest = config.engine === "inngest"
      ? InngestClient.makeClient({
        isDev: config.inngest.isDev,
        ...(config.inngest.signingKey === null ? {} : { signingKey: config.inngest.signingKey }),
        ...(config.inngest.eventKey === null ? {} : { eventKey: config.inngest.eventKey }),
        ...(config.inngest.baseUrl === null ? {} : { baseUrl: config.inngest.baseUrl })
      })
      : null
    const localWakeups = config.engine === "local" ? LocalWakeups.make() : null
    const wakeups = inngest !== null ? InngestWakeups.layer(inngest) : localWakeups?.layer ?? Layer.empty
    const runtime = ManagedRuntime.make(Layer.merge(layer, wakeups)) as unknown as ManagedRuntime.ManagedRuntime<Services | SqlClient.SqlClient, never>
    undo.push(() => runtime.dispose())

    // A rate must exist before live payments settle in instant mode.
    const rate = Amount.parseRate(config.initialRate)
    if (Result.isFailure(rate)) throw new Error(`PAYDESK_INITIAL_RATE: ${rate.failure.message}`)
    await runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`SELECT 1 FROM rates WHERE scope = ${PgRateSource.general}`.pipe(Effect.orDie)
      if (rows.length === 0) yield* PgRateSource.setRate(PgRateSource.general, rate.success, Date.now())
    }))

    const worker = config.engine === "local"
      ? LocalWorker.start(runtime, config.workIntervalMs, (error) => log(`background work failed: ${String(error)}`))
      : null
    if (worker !== null) localWakeups?.attach(worker)
    if (worker !== null) undo.push(() => worker.stop())

    const app = await App.build({
      runtime,
      publicUrl: config.publicUrl,
      adminToken: config.adminToken,
      logger: {
        level: config.logLevel,
        redact: ["req.headers.authorization", "req.headers[\"x-api-key\"]", "req.headers[\"x-nonce\"]"]
      },
      operator: {
        setRate: (value) =>
          runtime.runPromise(Effect.flatMap(Clock.currentTimeMillis, (now) => PgRateSource.setRate(PgRateSource.general, value, now))),
        programCharges: (subscriptionId, outcomes) => Effect.runPromise(acquirer.programCharges(subscriptionId, outcomes)),
        runWork: () => worker === null ? runtime.runPromise(Work.drain()) : worker.runNow(),
        ...(manual === null ? {} : {
          setClock: async (now: number) => {
            await Effect.runPromise(manual.set(now))
            worker?.wake()
          }
        })
      }
    })
    undo.push(() => app.close())
    if (inngest !== null) {
      // Inngest calls /api/inngest; cron sweeps and sleep-until flows run the same use cases.
      InngestPlugin.register(app, { client: inngest, functions: InngestFunctions.makeFunctions(inngest, runtime).all })
    }
    if (localWakeups !== null) app.addHook("onClose", async () => localWakeups.close())
    const url = await app.listen({ port: config.port, host: config.host })

    let stopping: Promise<void> | null = null
    const stop = () =>
      stopping ??= (async () => {
        await app.close()
        await worker?.stop()
        await runtime.dispose()
        await bank.close()
        await stopDatabase()
      })()
    return { app, url, config, stop }
  } catch (error) {
    for (const step of undo.reverse()) await step().catch(() => undefined)
    throw error
  }
}
