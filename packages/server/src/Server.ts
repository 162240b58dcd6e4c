/**
 * The composition root of the reference deployment, as one layer graph:
 *
 *   Telemetry (OpenTelemetry tracer when exporting)
 *   └ Http: the Fastify app over a `Runner` of the services below; listen on build, close on release
 *     └ Engine: local worker fiber | Inngest | off (chosen by swapping layers), with its `Wakeups`
 *       (and the local engine's `DeliveryHandoff`)
 *       └ the core's ports: PostgreSQL store (migrated), rate, production security, the callback
 *         transport (measured and logged), the acquirer emulator on its PostgreSQL charge book (a pool
 *         of its own) and the sandbox acquirer on the same book, the payout network emulator, core settings, the initial rate, metrics
 *         └ Secrets (the secret key, checked against the secrets the database holds, and the operator
 *           token), after the migrations
 *           └ the server's pool (`PAYDESK_DB_POOL`)
 *             └ Database (external, or embedded PostgreSQL started and stopped here), the clock (system or manual)
 *
 * Resources are acquired in that order from the bottom and released in reverse when the scope
 * closes: the HTTP server stops taking requests and drains the ones in flight (then cuts connections
 * after `PAYDESK_SHUTDOWN_TIMEOUT_MS`), the worker finishes its round, the callbacks handed off to
 * the local engine are sent, the pools close, the embedded
 * database stops, the tracer flushes. `main.ts` runs the graph with `NodeRuntime.runMain`; `start`
 * builds it in a scope for tests and embedding.
 */
import { Cause, Clock, Context, Data, Duration, Effect, Exit, Layer, Option, Redacted, Schedule, Scope } from "effect"
import type { FastifyInstance } from "fastify"
import { Callback, CallbackTransport, Config as CoreConfig, HmacTokenIssuer, PaydeskConfig, Runner, type Services, Views } from "@paydesk/core"
import { App } from "@paydesk/fastify"
import { AcquirerEmulator, ManualClock, PayoutNetworkEmulator, PgChargeBook, PgPayoutBook } from "@paydesk/emulators"
import { EmbeddedPostgres, NodeSecurity, PgRateSource, PgStore } from "@paydesk/sql-pg"
import type { SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { SqlClient, type SqlError } from "effect/sql"
import { createHash, randomBytes } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"
import { minAdminTokenLength, type ServerConfig } from "./Config.js"
import * as Dashboard from "./Dashboard.js"
import { Engine } from "./Engine.js"
import * as Engines from "./Engine.js"
import * as HttpCallbackTransport from "./HttpCallbackTransport.js"
import * as FailureLog from "./FailureLog.js"
import * as PublicDetail from "./PublicDetail.js"
import * as Logging from "./Logging.js"
import * as Metrics from "./Metrics.js"
import * as Telemetry from "./Telemetry.js"

/** The message of an error-like value, with the messages of its causes. */
const messageOf = (error: unknown, depth = 0): string => {
  if (typeof error !== "object" || error === null || !("message" in error)) return String(error)
  const own = String(error.message)
  const cause = "cause" in error && depth < 4 ? messageOf(error.cause, depth + 1) : ""
  return cause === "" || cause === "undefined" || own.includes(cause) ? own : `${own}: ${cause}`
}

/** A step of the start failed (the database did not start, the port is taken...). */
export class StartError extends Data.TaggedError("StartError")<{ readonly step: string; readonly cause: unknown }> {
  override get message() {
    return `${this.step}: ${messageOf(this.cause)}`
  }
}

/** What can stop the server from starting. */
export type StartFailure = StartError | SqlError.SqlError

/** The database the server uses. */
export class Database extends Context.Service<Database, {
  readonly url: Redacted.Redacted<string>
  readonly embedded: boolean
  /** Why the database cannot come back without a restart (the embedded PostgreSQL exited), or null. */
  readonly gone: () => string | null
}>()(
  "@paydesk/server/Database"
) {}

/** The secret key (secrets at rest, tokens) and the operator token, as given or generated. */
export class Secrets extends Context.Service<Secrets, {
  readonly key: Buffer
  /** `PAYDESK_PREVIOUS_SECRET_KEYS`: signing secrets and cursors read with them, and written again with `key`. */
  readonly previousKeys: ReadonlyArray<Buffer>
  /** `PAYDESK_NEXT_SECRET_KEY` (none or one): everything read with it too, nothing written or rewritten. */
  readonly nextKeys: ReadonlyArray<Buffer>
  readonly adminToken: Redacted.Redacted<string>
  /** Where the operator token was kept when none was given (generated once into the data directory), else null. */
  readonly adminTokenFile: string | null
}>()("@paydesk/server/Secrets") {}

/** The manual clock, when `PAYDESK_CLOCK=manual`. */
export class ManualTime extends Context.Service<ManualTime, Option.Option<ManualClock.ManualClock>>()("@paydesk/server/ManualTime") {}

/** The running HTTP server. */
export class Http extends Context.Service<Http, {
  readonly app: FastifyInstance
  /** The address it listens on. */
  readonly url: string
  /** Origin of the payer pages. */
  readonly publicUrl: string
  readonly adminToken: Redacted.Redacted<string>
  /** Where the operator token is kept when none was given, else null (`Secrets.adminTokenFile`). */
  readonly adminTokenFile: string | null
}>()("@paydesk/server/Http") {}

/** `application_name` of the server's pool (per process, for the pool metric). */
export const poolName = `paydesk-${process.pid}`

// ---------------------------------------------------------------------------------------------
// The layers

/** Why the secret key was refused at start: it cannot decrypt the secrets the database holds. */
const keyMismatch = (problem: string) =>
  new Error(
    `the database already holds terminal signing secrets encrypted with another key: ${problem}` +
      "; give this server the key the database was written with, as PAYDESK_SECRET_KEY or as the secret.key of the data directory it was made with" +
      " (operations.md: keep it with the database backups); starting with another key would lose every callback"
  )

/** Why the start was refused: some terminals' secrets were written with a key this server lacks. */
const keysMissing = (unreadable: number, terminals: number) =>
  new Error(
    `${unreadable} of the ${terminals} terminals' signing secrets were written with a key this server does not have (a rotation of the secret key not finished?)` +
      "; give that key in PAYDESK_PREVIOUS_SECRET_KEYS if it is an earlier key, or in PAYDESK_NEXT_SECRET_KEY if other processes have moved to it (operations.md, \"Rotating the secret key\"); starting without it would lose their callbacks"
  )

/**
 * Whether `key` (or one of `others`) decrypts what the database holds (`PgStore.checkSecretCipher`:
 * none stored, a fresh database, is nothing to check).
 */
const keyDecryptsDatabase = (key: Buffer, others: ReadonlyArray<Buffer>) =>
  PgStore.checkSecretCipher.pipe(Effect.provide(NodeSecurity.layerAesGcmSecretCipher(key, others)))

/**
 * The secret key (given, or kept in `dataDir/secret.key`) and the operator token (given, or
 * generated). Built after the migrations: a key that cannot decrypt the secrets the database holds
 * (a database written with another key: a move to a new host, a backup restored without its
 * `secret.key`, a wrong `PAYDESK_SECRET_KEY`) stops the start, and no key is generated for a
 * database that already holds secrets. A generated key is written exclusively: of two starts at
 * once on one data directory, the second reads the first one's key.
 */
export const layerSecrets = (config: ServerConfig): Layer.Layer<Secrets, StartError, SqlClient.SqlClient> =>
  Layer.effect(
    Secrets,
    Effect.gen(function*() {
      const file = join(config.dataDir, "secret.key")
      const parse = (text: string, source: string) =>
        Effect.try({ try: () => NodeSecurity.parseKey(text), catch: (cause) => new StartError({ step: source, cause }) })
      const readFile = Effect.try({
        try: () => existsSync(file) ? readFileSync(file, "utf8").trim() : null,
        catch: (cause) => new StartError({ step: `secret key file ${file}`, cause })
      })
      const listedPrevious = yield* Effect.forEach(
        Redacted.value(config.previousSecretKeys),
        (text) => parse(text, "PAYDESK_PREVIOUS_SECRET_KEYS")
      )
      const listedNext = yield* Effect.forEach(
        Option.toArray(config.nextSecretKey),
        (text) => parse(Redacted.value(text), "PAYDESK_NEXT_SECRET_KEY")
      )
      /** The keys besides `key` (previous, then next), each once, without `key` itself. */
      const othersOf = (key: Buffer) => {
        const distinct = (keys: ReadonlyArray<Buffer>, not: ReadonlyArray<Buffer>) =>
          keys.filter((each, i) => !not.some((other) => other.equals(each)) && keys.findIndex((other) => other.equals(each)) === i)
        const previous = distinct(listedPrevious, [key])
        return { previous, next: distinct(listedNext, [key, ...previous]) }
      }
      const check = (key: Buffer) => {
        const { previous, next } = othersOf(key)
        return keyDecryptsDatabase(key, [...previous, ...next]).pipe(Effect.mapError((cause) => new StartError({ step: "secret key check", cause })))
      }
      /** The refusal for a key that opens some terminals' secrets and not others', or none. */
      const refusal = (checked: { readonly terminals: number; readonly unreadable: number }, step: string, none: string) =>
        new StartError({ step, cause: checked.unreadable < checked.terminals ? keysMissing(checked.unreadable, checked.terminals) : keyMismatch(none) })
      const given: Option.Option<{ readonly text: string; readonly source: string; readonly step: string }> = Option.isSome(config.secretKey)
        ? Option.some({ text: Redacted.value(config.secretKey.value), source: "PAYDESK_SECRET_KEY", step: "PAYDESK_SECRET_KEY" })
        : Option.map(Option.fromNullishOr(yield* readFile), (text) => ({ text, source: `the key in ${file}`, step: `secret key file ${file}` }))
      let key: Buffer
      if (Option.isSome(given)) {
        key = yield* parse(given.value.text, given.value.step)
        const checked = yield* check(key)
        if (!checked.decrypts) {
          const others = othersOf(key)
          const also = [...(others.previous.length > 0 ? ["PAYDESK_PREVIOUS_SECRET_KEYS"] : []), ...(others.next.length > 0 ? ["PAYDESK_NEXT_SECRET_KEY"] : [])]
          return yield* refusal(checked, given.value.step, `${given.value.source}${also.length > 0 ? ` (nor ${also.join(" nor ")})` : ""} cannot decrypt them`)
        }
      } else {
        const generated = randomBytes(32)
        if ((yield* check(generated)).stored) {
          return yield* new StartError({ step: "secret key", cause: keyMismatch(`this server has no key (PAYDESK_SECRET_KEY is not set and ${file} does not exist), and a new one could never decrypt them, so none was generated${listedPrevious.length + listedNext.length > 0 ? " (PAYDESK_PREVIOUS_SECRET_KEYS and PAYDESK_NEXT_SECRET_KEY are only read with: the key in force is still needed)" : ""}`) })
        }
        key = yield* writeKeyFile(file, config.dataDir, generated)
        // Another start on this data directory wrote its key first: that one is checked like any read key.
        if (key !== generated) {
          const checked = yield* check(key)
          if (!checked.decrypts) return yield* refusal(checked, `secret key file ${file}`, `the key in ${file} cannot decrypt them`)
        }
      }
      const { previous, next } = othersOf(key)
      // The key every process on this database shares: the first start's (a marker it wrote).
      const claimed = yield* PgStore.claimSecretKey.pipe(
        Effect.provide(NodeSecurity.layerAesGcmSecretCipher(key, [...previous, ...next])),
        Effect.mapError((cause) => new StartError({ step: "secret key check", cause }))
      )
      if (!claimed.matches) {
        return yield* new StartError({
          step: Option.isSome(given) ? given.value.step : `secret key file ${file}`,
          cause: new Error(
            "the database was first started with another secret key (another process on it, or an earlier start, had a key of its own)" +
              `; every process on one database needs the same key: give this one that key as PAYDESK_SECRET_KEY${Option.isSome(given) ? "" : ` (it generated ${file})`}` +
              ". If no process runs with that key any more and no terminal was made yet, delete the marker (DELETE FROM secret_key_marker) and start again"
          )
        })
      }
      if (previous.length + next.length < listedPrevious.length + listedNext.length) {
        yield* Effect.logWarning("secret key: PAYDESK_PREVIOUS_SECRET_KEYS or PAYDESK_NEXT_SECRET_KEY repeats a key (or the secret key itself); the repeats are ignored")
      }
      // None given: generated once into the data directory (mode 600, beside the secret key) and read
      // from it at every later start, never printed into the log (an outside probe found it in the
      // JSON log stream), and the same across `./run dev`'s restarts.
      const tokenFile = join(config.dataDir, "admin-token")
      const adminToken = Option.isSome(config.adminToken)
        ? config.adminToken.value
        : Redacted.make(yield* keptAdminToken(tokenFile, config.dataDir))
      return Secrets.of({ key, previousKeys: previous, nextKeys: next, adminToken, adminTokenFile: Option.isSome(config.adminToken) ? null : tokenFile })
    })
  )

/**
 * Writes `generated` to `file` unless it exists (`wx`: exclusive): the key in force, ours or the one
 * another start on the same data directory wrote first (read back).
 */
const writeKeyFile = (file: string, dataDir: string, generated: Buffer): Effect.Effect<Buffer, StartError> =>
  Effect.gen(function*() {
    const step = `secret key file ${file}`
    const text = yield* writeOnce(file, dataDir, generated.toString("base64"), step)
    return text === generated.toString("base64")
      ? generated
      : yield* Effect.try({ try: () => NodeSecurity.parseKey(text), catch: (cause) => new StartError({ step, cause }) })
  })

/**
 * The operator token kept in `file` (generated into it the first time). A file edited by hand is held
 * to what a generated token is, at least 32 visible ASCII characters without spaces (a re-probe's
 * one-letter file was taken on 0.0.0.0, where the same token given as PAYDESK_ADMIN_TOKEN is
 * refused); a file other users may read is started with, and warned about.
 */
const keptAdminToken = (file: string, dataDir: string): Effect.Effect<string, StartError> =>
  Effect.gen(function*() {
    const step = `operator token file ${file}`
    const token = yield* writeOnce(file, dataDir, `adm_${randomBytes(24).toString("base64url")}`, step)
    if (!/^[\x21-\x7e]+$/.test(token) || token.length < minAdminTokenLength) {
      return yield* new StartError({
        step,
        cause: new Error(`the token must be at least ${minAdminTokenLength} visible characters without spaces: remove the file, and a new one is written (or give PAYDESK_ADMIN_TOKEN)`)
      })
    }
    const mode = yield* Effect.try({ try: () => statSync(file).mode & 0o777, catch: (cause) => new StartError({ step, cause }) })
    if ((mode & 0o077) !== 0) yield* Effect.logWarning(`operator token file ${file}: other users may read it (mode ${mode.toString(8)}): chmod 600 it`)
    return token
  })

/**
 * Writes `text` to `file` (mode 600) unless it exists (`wx`: exclusive), and answers the text in
 * force: ours, or the one already there (an earlier start's, or another start's on the same data
 * directory at the same moment, read back).
 */
const writeOnce = (file: string, dataDir: string, text: string, step: string): Effect.Effect<string, StartError> =>
  Effect.gen(function*() {
    const written = yield* Effect.try({
      try: () => {
        mkdirSync(dataDir, { recursive: true })
        try {
          writeFileSync(file, `${text}\n`, { mode: 0o600, flag: "wx" })
          return true
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
          throw error
        }
      },
      catch: (cause) => new StartError({ step, cause })
    })
    if (written) return text
    // The other start's: its file may be created and not yet written (a few microseconds).
    for (let tries = 0; ; tries++) {
      const kept = yield* Effect.try({ try: () => readFileSync(file, "utf8").trim(), catch: (cause) => new StartError({ step, cause }) })
      if (kept !== "") return kept
      if (tries >= 40) return yield* new StartError({ step, cause: new Error("the file is empty: remove it, and a new one is written") })
      // Not `Effect.sleep`: the clock in context may be the manual one.
      yield* Effect.promise(() => new Promise<void>((ok) => setTimeout(ok, 50)))
    }
  })

/** `DATABASE_URL`, or an embedded PostgreSQL in `dataDir/postgres`, started here and stopped on release. */
export const layerDatabase = (config: ServerConfig): Layer.Layer<Database, StartError> =>
  Option.match(config.databaseUrl, {
    onSome: (url) => Layer.succeed(Database)({ url, embedded: false, gone: () => null }),
    onNone: () =>
      Layer.effect(
        Database,
        Effect.gen(function*() {
          const dataDir = join(config.dataDir, "postgres")
          yield* Logging.lifecycle(`starting embedded PostgreSQL in ${dataDir}`)
          const log = Effect.runSyncWith(yield* Effect.context<never>())
          const embedded = yield* Effect.acquireRelease(
            Effect.tryPromise({
              try: () => EmbeddedPostgres.start({ dataDir, notice: (message) => log(Effect.logWarning(message)) }),
              catch: (cause) => new StartError({ step: `embedded PostgreSQL in ${dataDir}`, cause })
            }),
            (running) => Effect.promise(() => running.stop()).pipe(Effect.andThen(Logging.lifecycle("embedded PostgreSQL stopped")))
          )
          // Killed under the server (`kill -9`, the OOM killer): nothing here restarts it, so say so once,
          // as an error, and fail liveness, so that an orchestrator restarts the server.
          let gone: string | null = null
          yield* Effect.forkScoped(Effect.flatMap(Effect.promise(() => embedded.exited), ({ pid }) =>
            Effect.suspend(() => {
              gone = `the embedded PostgreSQL in ${dataDir} (process ${pid}) has exited`
              return Effect.logError(
                `${gone}: every request that needs the database fails until this server is restarted (its data is kept; stop and start the server)`
              ).pipe(Effect.annotateLogs({ component: "database" }))
            })))
          return { url: Redacted.make(embedded.url), embedded: true, gone: () => gone }
        })
      )
  })

/** The system clock, or a manual one starting at `PAYDESK_CLOCK_START` (or now). */
export const layerClock = (config: ServerConfig): Layer.Layer<ManualTime> =>
  config.clock === "system"
    ? Layer.succeed(ManualTime)(Option.none())
    : Layer.effectContext(
      Effect.map(
        ManualClock.make(Option.getOrElse(config.clockStart, () => Date.now())),
        (manual) => Context.make(ManualTime, Option.some(manual)).pipe(Context.add(Clock.Clock, manual.clock))
      )
    )

/** A pool of `size` connections to the `Database` in context. */
const layerPool = (size: number, name: string) =>
  Layer.unwrap(Effect.map(Database, (db) => PgStore.layerClient(db.url, { maxConnections: size, applicationName: name })))

/**
 * The HTTP callback transport, each attempt measured, and a failed one logged: the first to a
 * destination in a minute, then the count of those left out (`FailureLog`).
 */
const layerTransport: Layer.Layer<CallbackTransport, never, Metrics.Metrics> = Layer.effect(
  CallbackTransport,
  Effect.gen(function*() {
    const inner = yield* CallbackTransport
    const metrics = yield* Metrics.Metrics
    const failures = FailureLog.make()
    const warn = (destination: string, message: string, annotations: Record<string, unknown>) =>
      FailureLog.logNoted(failures, destination, message, (line) => Effect.logWarning(line), { component: "callbacks", ...annotations })
    return CallbackTransport.of({
      post: (request) => {
        const destination = URL.canParse(request.url) ? new URL(request.url).origin : "invalid URL"
        return inner.post(request).pipe(
          Effect.tap((answer) => {
            const delivered = Callback.isSuccess(answer.statusCode)
            metrics.observeAttempt(delivered, answer.latencyMs / 1000)
            return delivered
              ? Effect.void
              : warn(destination, `callback to ${destination} answered HTTP ${answer.statusCode}`, { status: answer.statusCode, latency_ms: answer.latencyMs })
          }),
          Effect.tapError((failure) => {
            metrics.observeAttempt(false, failure.latencyMs / 1000)
            return warn(destination, `callback to ${destination} failed: ${failure.message}`, { latency_ms: failure.latencyMs })
          })
        )
      }
    })
  })
).pipe(Layer.provide(HttpCallbackTransport.layer))

/** Stores `rate` as the general rate when the database has none (live payments need one to settle). */
const layerInitialRate = (rate: bigint): Layer.Layer<never, StartError, SqlClient.SqlClient> =>
  Layer.effectDiscard(Effect.flatMap(Clock.currentTimeMillis, (now) => PgRateSource.setRateIfNone(PgRateSource.general, rate, now)).pipe(
    Effect.mapError((cause) => new StartError({ step: "initial rate", cause }))
  ))

/** The access tokens' HMAC key, derived from a secret key. */
const tokenKeyOf = (key: Buffer) => createHash("sha256").update("paydesk-access-tokens").update(key).digest("base64")

/**
 * Access tokens issued with the secret key and verified with it or the next key (a fleet's rolling
 * rotation: a process not yet writing with the new key reads the tokens of one that does). Not with
 * a previous key: a rotation may be for a leaked key, which could mint tokens (a review); a token of
 * the previous key is refused once, and the dashboard renews it with its refresh token.
 */
const layerTokens = (key: Buffer, next: ReadonlyArray<Buffer>) => HmacTokenIssuer.layer(tokenKeyOf(key), next.map(tokenKeyOf))

/** Production security adapters on the secret key (and the previous and next ones, read with only). */
const layerSecurity = Layer.unwrap(Effect.map(Secrets, ({ key, previousKeys, nextKeys }) =>
  Layer.mergeAll(
    NodeSecurity.layerCryptoEntropy,
    NodeSecurity.layerScryptPasswordHasher(),
    NodeSecurity.layerSyncDigest,
    NodeSecurity.layerKeccak256,
    NodeSecurity.layerAesGcmSecretCipher(key, [...previousKeys, ...nextKeys]),
    layerTokens(key, nextKeys),
    layerReencryption(key, previousKeys, nextKeys)
  )))

/** "1 terminal", "2 terminals". */
const terminalsText = (n: number) => `${n} terminal${n === 1 ? "" : "s"}`

/** How often a process given previous secret keys writes what it finds under them again (it also does at start). */
export const reencryptEveryMs = 3_600_000

/**
 * With previous secret keys: the terminals' signing secrets still under them are written again with
 * the secret key, at start and every `reencryptEveryMs` (a process of the fleet still writing with an
 * earlier key during a rolling change leaves some), sweeping again while a sweep wrote any. What the
 * next key opens is left alone (another process's, mid-rotation). Logs how many it wrote, and that
 * none is left each time a pass finds none after finding some (or at start).
 */
const layerReencryption = (key: Buffer, previous: ReadonlyArray<Buffer>, next: ReadonlyArray<Buffer>): Layer.Layer<never, never, SqlClient.SqlClient> =>
  previous.length === 0 ? Layer.empty : Layer.effectDiscard(Effect.gen(function*() {
    const current = NodeSecurity.aesGcmSecretCipher(key, next)
    const readable = NodeSecurity.aesGcmSecretCipher(key, [...previous, ...next])
    let toldNoneLeft = false
    const sweeps = Effect.gen(function*() {
      let written = 0
      let unreadable = 0
      for (let sweep = 0; sweep < 5; sweep++) {
        const swept = yield* PgStore.reencryptSigningSecrets(current, readable)
        written += swept.reencrypted
        unreadable = swept.unreadable
        if (swept.reencrypted === 0) return { written, unreadable, left: unreadable > 0 }
      }
      // Still writing after five sweeps (another process writing with an earlier key): the next pass goes on.
      return { written, unreadable, left: true }
    })
    const once = sweeps.pipe(
      Effect.flatMap(({ written, unreadable, left }) =>
        Effect.gen(function*() {
          if (written > 0) yield* Effect.logInfo(`secret key: the signing secrets of ${terminalsText(written)} written again with the secret key`)
          if (unreadable > 0) yield* Effect.logWarning(`secret key: no key of this server opens the signing secret of ${terminalsText(unreadable)}`)
          if (left || written > 0) toldNoneLeft = false
          if (!left && !toldNoneLeft) {
            toldNoneLeft = true
            yield* Effect.logInfo(
              "secret key: no terminal signing secret is left under PAYDESK_PREVIOUS_SECRET_KEYS; once every process runs with this PAYDESK_SECRET_KEY and one of them, started last, says so too, the previous keys can be removed"
            )
          }
        })),
      Effect.onInterrupt(() => Effect.logInfo("secret key: writing the signing secrets again was stopped with the server; the next start goes on")),
      Effect.catchCause((cause) => Effect.logWarning("secret key: writing the signing secrets again failed; tried again later", cause)),
      Effect.annotateLogs({ component: "secrets" })
    )
    yield* Effect.forkScoped(Effect.repeat(once, Schedule.spaced(Duration.millis(reencryptEveryMs))))
  }))

/** Every port of the core, migrated, on the server's pool, with metrics; plus database, secrets and clock. */
export const layerCore = (config: ServerConfig) => {
  const store = Layer.effectDiscard(PgStore.migrate.pipe(
    Effect.mapError((cause) => new StartError({ step: "migrations", cause })),
    // A database a newer build migrated (a rollback, or this process beside newer ones in a rolling
    // upgrade): this build runs on, as the migrations only add, but says so.
    Effect.andThen(Effect.flatMap(Effect.orDie(PgStore.unknownMigrations), (unknown) =>
      unknown.length === 0 ? Effect.void : Effect.logWarning(
        `the database has migrations this build does not know (${unknown.join(", ")}): a newer build migrated it; this one runs on, but may miss what they added`
      )))
  )).pipe(
    Layer.provideMerge(PgStore.layerRepositories)
  )
  // The emulated bank: its charge book on a pool of its own, so its writes never join a core transaction.
  // Sandbox subscriptions are charged by an emulator of their own over the same durable book (its
  // keys and programs are per subscription, so live and sandbox never meet).
  // The emulated payout network keeps its answers on the same pool, so a payout sent before a crash
  // is answered the same after it, never sent twice.
  const client = `${hostname()}:${process.pid}`
  const bank = Layer.mergeAll(AcquirerEmulator.layerOnBook, AcquirerEmulator.sandboxLayerOnBook, PayoutNetworkEmulator.layerOnBook).pipe(
    Layer.provide(Layer.merge(PgChargeBook.layer({ client }), PgPayoutBook.layer({ client }))),
    Layer.provide(layerPool(4, `${poolName}-bank`))
  )
  // Checked by the core as well (the environment's checks come first, with the variables' names).
  const settings = Layer.effect(PaydeskConfig)(CoreConfig.make({
    batchSize: config.workBatchSize,
    eventRetentionMs: config.eventRetentionDays * 24 * 3_600_000,
    signingSecretOverlapMs: config.signingSecretOverlapHours * 3_600_000,
    allowPrivateCallbacks: config.callbackAllowPrivate
  }).pipe(Effect.mapError((cause) => new StartError({ step: "settings", cause }))))
  return Layer.mergeAll(PgRateSource.layer, layerSecurity, layerTransport, bank, settings, layerInitialRate(config.initialRate)).pipe(
    // The key, checked against the secrets the database holds (so after the migrations).
    Layer.provideMerge(layerSecrets(config)),
    // Migrated before anything reads the schema.
    Layer.provideMerge(store),
    Layer.provideMerge(Metrics.layer({ poolName, poolMax: config.dbPool })),
    Layer.provideMerge(layerPool(config.dbPool, poolName)),
    Layer.provideMerge(Layer.mergeAll(layerDatabase(config), layerClock(config)))
  )
}

/** What the HTTP app runs and reads. */
type HttpServices = Services | SqlClient.SqlClient

const checkOf = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  ok: (a: A) => { readonly ok: boolean; readonly detail: string },
  failed: (error: E) => string = messageOf
) =>
  effect.pipe(
    Effect.timeout(Duration.seconds(3)),
    Effect.match({
      onSuccess: ok,
      onFailure: (error) => ({ ok: false, detail: Cause.isTimeoutError(error) ? "no answer within 3 s" : failed(error as E) })
    })
  )

/** A failed database check as the readiness check says it (`PublicDetail`: its code, not its text). */
const databaseFailure = (error: unknown): string => PublicDetail.failure("unreachable", messageOf(error))

/** The Fastify app over the services in context: built and listening on build, drained and closed on release. */
export const layerHttp = (config: ServerConfig) =>
  Layer.effect(
    Http,
    Effect.gen(function*() {
      const services = yield* Effect.context<HttpServices>()
      const runner = Runner.fromContext(services)
      const run = async <A, E>(effect: Effect.Effect<A, E, HttpServices>): Promise<A> => {
        const exit = await runner.runPromiseExit(effect)
        if (Exit.isSuccess(exit)) return exit.value
        throw Cause.squash(exit.cause)
      }
      const secrets = yield* Secrets
      const engine = yield* Engine
      const metrics = yield* Metrics.Metrics
      const manual = yield* ManualTime
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      const database = yield* Database
      const sql = yield* SqlClient.SqlClient

      const port = config.port === 0 ? yield* Effect.promise(() => EmbeddedPostgres.freePort()) : config.port
      const publicUrl = Option.getOrElse(config.publicUrl, () => `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`)
      const ready = Effect.all({
        database: checkOf(sql`SELECT 1`, () => ({ ok: true, detail: "reachable" }), databaseFailure),
        migrations: checkOf(Effect.all([PgStore.pendingMigrations, PgStore.unknownMigrations]), ([pending, unknown]) =>
          pending.length > 0
            ? { ok: false, detail: `pending: ${pending.join(", ")}` }
            : { ok: true, detail: unknown.length === 0 ? "all applied" : `all applied; also applied, unknown to this build (a newer one's): ${unknown.join(", ")}` },
          (error) => PublicDetail.failure("not read", messageOf(error))),
        worker: engine.check
      }, { concurrency: "unbounded" })

      const app = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () =>
            App.build({
              runtime: runner,
              publicUrl,
              adminToken: Redacted.value(secrets.adminToken),
              loginLimits: config.loginLimits,
              eventSendsPerMinute: config.eventSendsPerMinute,
              trustProxy: config.trustProxy,
              requestTimeoutMs: config.requestTimeoutMs,
              logger: config.logLevel === "silent" ? false : {
                level: config.logLevel,
                redact: ["req.headers.authorization", "req.headers[\"x-api-key\"]", "req.headers[\"x-nonce\"]"]
              },
              host: {
                ready: async () => ({ checks: await run(ready) }),
                broken: database.gone,
                metrics: { contentType: metrics.registry.contentType, render: () => metrics.registry.metrics() }
              },
              observe: metrics.observeRequest,
              operator: {
                setRate: (value) => run(Effect.flatMap(Clock.currentTimeMillis, (now) => PgRateSource.setRate(PgRateSource.general, value, now))),
                programCharges: (subscriptionId, outcomes) => run(emulator.programCharges(subscriptionId, outcomes)),
                // One book for live and sandbox charges: either emulator settles either's key.
                resolveCharge: (idempotencyKey, outcome) => run(emulator.resolveCharge(idempotencyKey, outcome)),
                runWork: () => run(Effect.map(engine.runWork, Views.workReport)),
                ...Option.match(manual, {
                  onNone: () => ({}),
                  onSome: (clock) => ({ setClock: (now: number) => run(Effect.andThen(clock.set(now), engine.wake)) })
                })
              }
            }),
          catch: (cause) => new StartError({ step: "HTTP app", cause })
        }),
        (app) => close(app, config.shutdownTimeoutMs)
      )
      metrics.countInFlight(() => App.requestsInFlight(app))
      yield* Effect.tryPromise({ try: () => Dashboard.register(app), catch: (cause) => new StartError({ step: "dashboard", cause }) })
      engine.mount(app, runner)
      const url = yield* Effect.tryPromise({
        try: () => app.listen({ port, host: config.host }),
        catch: (cause) => new StartError({ step: `listen on ${config.host}:${port}`, cause })
      })
      yield* Logging.lifecycle(`paydesk listening on ${url} (public ${publicUrl}, clock ${config.clock}, engine ${engine.name})`)
      return Http.of({ app, url, publicUrl, adminToken: secrets.adminToken, adminTokenFile: secrets.adminTokenFile })
    })
  )

/** Stops taking requests, waits for the ones in flight (cutting connections after `timeoutMs`), and says so. */
const close = (app: FastifyInstance, timeoutMs: number) =>
  Effect.gen(function*() {
    yield* Logging.lifecycle("paydesk stopping: no new requests, draining the ones in flight")
    const closed = app.close()
    // A keep-alive connection whose request finishes while draining would otherwise hold the close open.
    const closeIdle = Effect.sync(() => app.server.closeIdleConnections()).pipe(Effect.repeat(Schedule.spaced(Duration.millis(50))))
    const inTime = yield* Effect.raceFirst(Effect.promise(() => closed), closeIdle).pipe(Effect.timeoutOption(Duration.millis(timeoutMs)), Effect.timed)
    if (Option.isNone(inTime[1])) {
      yield* Effect.logWarning(`requests still in flight after ${timeoutMs} ms: closing their connections`)
      app.server.closeAllConnections()
      yield* Effect.promise(() => closed)
    }
    yield* Logging.lifecycle(Option.isNone(inTime[1])
      ? `HTTP server closed: the requests still in flight after ${timeoutMs} ms were cut (their clients learn no outcome)`
      : `HTTP server closed: in-flight requests finished (${Math.round(Duration.toMillis(inTime[0]))} ms)`)
  })

/** Options of `layer` and `start`. */
export interface Options {
  /** Span processors besides the OTLP exporter (an embedding host's, or a test's in-memory exporter). */
  readonly spanProcessors?: ReadonlyArray<SpanProcessor>
}

/** The whole server for `config`. */
export const layer = (config: ServerConfig, options: Options = {}): Layer.Layer<Http, StartFailure> =>
  layerHttp(config).pipe(
    Layer.provide(Engines.layer(config).pipe(Layer.provideMerge(layerCore(config)))),
    Layer.provide(Telemetry.layer({
      endpoint: config.otel.endpoint,
      serviceName: config.otel.serviceName,
      ...(options.spanProcessors === undefined ? {} : { processors: options.spanProcessors })
    }))
  )

/** A running server (for tests and embedding hosts). */
export interface Running {
  readonly app: FastifyInstance
  readonly url: string
  readonly publicUrl: string
  readonly adminToken: string
  readonly config: ServerConfig
  /** Stops it: drains requests, stops the worker, closes pools, stops the embedded database. */
  stop(): Promise<void>
}

/** Builds the server in a scope of its own; `stop()` closes the scope (what a failed start acquired is released at once). */
export const start = async (config: ServerConfig, options: Options = {}): Promise<Running> => {
  const scope = Effect.runSync(Scope.make())
  const logging = Logging.layer(config.logLevel)
  const built = await Effect.runPromiseExit(Layer.buildWithScope(layer(config, options), scope).pipe(Effect.provide(logging)))
  const stop = () => Effect.runPromise(Scope.close(scope, Exit.void).pipe(Effect.provide(logging)))
  if (Exit.isFailure(built)) {
    await stop()
    throw Cause.squash(built.cause)
  }
  const http = Context.get(built.value, Http)
  return { app: http.app, url: http.url, publicUrl: http.publicUrl, adminToken: Redacted.value(http.adminToken), config, stop }
}
