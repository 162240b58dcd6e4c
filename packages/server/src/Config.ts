/**
 * The reference server's settings, read from the environment with Effect `Config` and checked as a
 * whole before anything starts (no database, no port): every problem is reported at once, each one
 * naming its variable. Secrets are `Redacted`.
 *
 * | variable | meaning | default |
 * |---|---|---|
 * | `PORT`, `HOST` | listen address (`PORT=0`: any free port) | `8080`, `127.0.0.1` |
 * | `DATABASE_URL` | external PostgreSQL | unset: embedded PostgreSQL in the data directory |
 * | `PAYDESK_DATA_DIR` | embedded PostgreSQL and the generated secret key | `.data` |
 * | `PAYDESK_DB_POOL` | connections of the server's pool (1 to 200) | `10` |
 * | `PAYDESK_PUBLIC_URL` | origin of the payer pages | `http://HOST:PORT` |
 * | `PAYDESK_ADMIN_TOKEN` | bearer token of the operator API and `/metrics` | generated and printed at start |
 * | `PAYDESK_SECRET_KEY` | 32-byte key (base64 or hex) for secrets at rest and tokens | generated once into the data directory |
 * | `PAYDESK_PREVIOUS_SECRET_KEYS` | earlier keys, comma-separated: secrets are read with them and written again with the secret key (a rotation) | none |
 * | `PAYDESK_NEXT_SECRET_KEY` | the key the other processes of a fleet are about to write with: read with, never written with | none |
 * | `PAYDESK_CLOCK`, `PAYDESK_CLOCK_START` | `system` or `manual` (tests, demos), and the manual clock's start | `system` |
 * | `PAYDESK_ENGINE` | `local`, `inngest` or `off` | `local` |
 * | `PAYDESK_WORK_INTERVAL_MS`, `PAYDESK_WORK_BATCH_SIZE` | the local worker's interval, records per kind per pass | `1000`, `100` |
 * | `PAYDESK_INITIAL_RATE` | USDT/RUB rate stored when none is | `95.00` |
 * | `PAYDESK_SIGNING_SECRET_OVERLAP_HOURS` | hours a rotated-out signing secret still signs `X-Signature` (0: none) | `24` |
 * | `PAYDESK_EVENT_RETENTION_DAYS` | days callback events (and their delivery history) are kept for the events API | `30` |
 * | `PAYDESK_SHUTDOWN_TIMEOUT_MS` | how long shutdown waits for in-flight requests | `10000` |
 * | `PAYDESK_REQUEST_TIMEOUT_MS` | how long a request may take to arrive whole, headers and body (then 408; 0: no limit) | `30000` |
 * | `PAYDESK_CALLBACK_ALLOW_PRIVATE` | `1`: callbacks may go to loopback and private addresses (development) | `0` |
 * | `PAYDESK_LOGIN_LIMIT_PER_EMAIL`, `_PER_ADDRESS` | login attempts per minute | `10`, `30` |
 * | `PAYDESK_EVENT_SENDS_PER_MINUTE` | resends and test events per minute per terminal (API key) or account (dashboard user) | `30` |
 * | `PAYDESK_TRUST_PROXY` | reverse proxies whose `X-Forwarded-For` is believed: addresses and CIDR ranges (`loopback`, `linklocal`, `uniquelocal`) | unset: none, the client is the TCP peer |
 * | `INNGEST_DEV`, `INNGEST_SIGNING_KEY`, `INNGEST_EVENT_KEY`, `INNGEST_BASE_URL` | the Inngest engine's client | |
 * | `INNGEST_SERVE_ORIGIN` | the origin Inngest calls the server at (`/api/inngest`) | `PAYDESK_PUBLIC_URL` |
 * | `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME` | export traces over OTLP/HTTP to this endpoint | unset: no export; `paydesk` |
 * | `LOG_LEVEL` | `fatal` `error` `warn` `info` `debug` `trace` `silent` | `info` |
 *
 * Off loopback (`HOST` not 127.0.0.0/8, ::1 or localhost) an operator token shorter than 32
 * characters is refused, and a manual clock is reported in `warnings`.
 *
 * `PAYDESK_ENGINE=inngest` needs `INNGEST_SIGNING_KEY` (Inngest Cloud or a self-hosted Inngest:
 * every call to `/api/inngest` is signed) and the origin Inngest calls (`INNGEST_SERVE_ORIGIN` or
 * `PAYDESK_PUBLIC_URL`: taken from the request's `Host`, an unsigned sync would register whatever
 * host the caller names), or `INNGEST_DEV=1` (a local dev server: nothing is signed), never both:
 * the dev mode turns the signature check off.
 */
import { Config, ConfigProvider, Data, Effect, Option, Redacted, Result, Schema } from "effect"
import { Amount, IpAddress, TestClock } from "@paydesk/core"
import { NodeSecurity } from "@paydesk/sql-pg"
import { isIP } from "node:net"
import { resolve } from "node:path"

/** The server's settings. */
export interface ServerConfig {
  /** Listen port; 0 picks a free one at start. */
  readonly port: number
  readonly host: string
  /** External PostgreSQL; none: embedded PostgreSQL in `dataDir`. */
  readonly databaseUrl: Option.Option<Redacted.Redacted<string>>
  /** Absolute data directory. */
  readonly dataDir: string
  /** Connections of the server's pool. */
  readonly dbPool: number
  /** Origin of the payer pages (no trailing slash); none: `http://HOST:PORT` once listening. */
  readonly publicUrl: Option.Option<string>
  /** The operator token; none: generated at start (and printed). */
  readonly adminToken: Option.Option<Redacted.Redacted<string>>
  /** The key of secrets at rest and tokens; none: read from (or generated into) `dataDir/secret.key`. */
  readonly secretKey: Option.Option<Redacted.Redacted<string>>
  /**
   * Earlier keys (a rotation of the secret key): signing secrets and feed cursors are still read
   * with them, never written with them, and the server writes the signing secrets it finds under
   * them again with `secretKey`. Access tokens of an earlier key are not accepted (the key may have
   * leaked; a dashboard renews its token once).
   */
  readonly previousSecretKeys: Redacted.Redacted<ReadonlyArray<string>>
  /**
   * The key other processes of a fleet are about to write with (the first step of a rolling
   * rotation): everything is read with it too, nothing written with it, nothing rewritten.
   */
  readonly nextSecretKey: Option.Option<Redacted.Redacted<string>>
  readonly clock: "system" | "manual"
  /** Start time of the manual clock (epoch ms); none: the system time at start. */
  readonly clockStart: Option.Option<number>
  readonly engine: "local" | "inngest" | "off"
  /** Rate (micro-RUB per USDT) stored at start when the database has none. */
  readonly initialRate: bigint
  readonly workIntervalMs: number
  /** Due records one pass claims per kind of work. */
  readonly workBatchSize: number
  /** Hours a rotated-out signing secret still signs `X-Signature` (`X-Signature-Next` carries the new one). */
  readonly signingSecretOverlapHours: number
  /** Days callback events and their deliveries are kept (then purged by housekeeping). */
  readonly eventRetentionDays: number
  /** How long shutdown waits for in-flight requests before closing their connections. */
  readonly shutdownTimeoutMs: number
  /** How long a request may take to arrive whole (then 408 `request_timeout`); 0: no limit (`App.Options.requestTimeoutMs`). */
  readonly requestTimeoutMs: number
  readonly inngest: {
    readonly isDev: boolean
    readonly signingKey: Option.Option<Redacted.Redacted<string>>
    readonly eventKey: Option.Option<Redacted.Redacted<string>>
    readonly baseUrl: Option.Option<string>
    /** The origin Inngest calls `/api/inngest` at (`INNGEST_SERVE_ORIGIN`, else `PAYDESK_PUBLIC_URL`); none: the request's `Host` (dev mode without either only). */
    readonly serveOrigin: Option.Option<string>
  }
  /** Traces go over OTLP/HTTP to `endpoint` (`/v1/traces` appended) when set. */
  readonly otel: { readonly endpoint: Option.Option<string>; readonly serviceName: string }
  readonly logLevel: LogLevel
  /** Callbacks may go to loopback and private addresses (development, tests). */
  readonly callbackAllowPrivate: boolean
  /** Login attempts per minute per e-mail and per client address. */
  readonly loginLimits: { readonly perEmail: number; readonly perAddress: number }
  /** Resends and test events per minute per terminal (API key) or account (dashboard user), together. */
  readonly eventSendsPerMinute: number
  /**
   * Addresses and CIDR ranges of the reverse proxies in front of the server (Fastify's `trustProxy`);
   * empty: none, the client address is the TCP peer. With proxies, the client address (login limits,
   * logs) is the nearest address in `X-Forwarded-For` that is not a trusted proxy.
   */
  readonly trustProxy: ReadonlyArray<string>
  /** Settings that work but deserve a look (logged at start). */
  readonly warnings: ReadonlyArray<string>
}

/** The names of address ranges `proxy-addr` (Fastify's `trustProxy`) knows. */
const proxyRangeNames = ["loopback", "linklocal", "uniquelocal"]

/** An IP address, or a CIDR range narrower than everything (`0.0.0.0/0` and `::/0` would trust any client). */
const isProxyAddress = (entry: string): boolean => {
  if (proxyRangeNames.includes(entry)) return true
  const [address = "", prefix, ...rest] = entry.split("/")
  const family = isIP(address)
  if (family === 0 || rest.length > 0) return false
  if (prefix === undefined) return true
  const bits = /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN
  return bits >= 1 && bits <= (family === 4 ? 32 : 128)
}

/**
 * `PAYDESK_TRUST_PROXY`: `0`/`false`/empty (none), or a comma-separated list of the proxies' addresses
 * and CIDR ranges. Not offered: `true` (believe `X-Forwarded-For` from anyone: any client could pick its
 * own address and escape the per-address login limit) and hop counts (Fastify 5.12 ignores them, since
 * a hop count cannot tell a proxy from a client that connects directly).
 */
export const parseTrustProxy = (value: string): Result.Result<ReadonlyArray<string>, string> => {
  const text = value.trim()
  if (text === "" || text === "0" || text === "false") return Result.succeed([])
  const entries = text.split(",").map((entry) => entry.trim())
  return entries.every(isProxyAddress) ? Result.succeed(entries) : Result.fail(text)
}

/** Levels of `LOG_LEVEL` (pino's names). */
export const logLevels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const
export type LogLevel = (typeof logLevels)[number]

/** Shortest operator token accepted when the server listens beyond loopback. */
export const minAdminTokenLength = 32

/** Whether `host` is a loopback listen address (127.0.0.0/8, ::1, localhost). */
export const isLoopbackHost = (host: string): boolean =>
  IpAddress.classify(host) === "loopback" || /^localhost\.?$/i.test(host)

/** The settings are wrong: every problem, each naming its variable. */
export class SettingsError extends Data.TaggedError("SettingsError")<{ readonly problems: ReadonlyArray<string> }> {
  override get message() {
    return `invalid configuration:\n${this.problems.map((p) => `  - ${p}`).join("\n")}`
  }
}

// ---------------------------------------------------------------------------------------------
// One Config per variable; a failure is reported as "NAME <rule>".

interface Setting<A> {
  readonly name: string
  readonly config: Config.Config<A>
  /** What the variable must be, for the error. */
  readonly rule: string
}

const setting = <A>(name: string, config: (name: string) => Config.Config<A>, rule: string): Setting<A> => ({ name, config: config(name), rule })

const filtered = (predicate: (value: string) => boolean) => Schema.String.check(Schema.makeFilter((s: string) => predicate(s) ? undefined : "invalid"))

/**
 * Decimal digits only, as a number: `Number` would also take `0x4650`, `1e3`, `0b1` or blanks around
 * the digits, and a setting read one way by us and another by whoever wrote it is a wrong setting.
 */
const decimal = Schema.String.check(Schema.isPattern(/^[0-9]{1,15}$/)).pipe(Schema.decodeTo(Schema.FiniteFromString))

const integer = (minimum: number, maximum: number) => (name: string) =>
  Config.schema(decimal.check(Schema.isInt(), Schema.isBetween({ minimum, maximum })), name)

/** 0 (off), or an integer from `minimum` to `maximum`. */
const zeroOrInteger = (minimum: number, maximum: number) => (name: string) =>
  Config.schema(decimal.check(Schema.isInt(), Schema.makeFilter((n: number) => n === 0 || (n >= minimum && n <= maximum) ? undefined : "invalid")), name)

const text = (predicate: (value: string) => boolean) => (name: string) => Config.schema(filtered(predicate), name)

const secret = (predicate: (value: string) => boolean) => (name: string) => Config.schema(Schema.Redacted(filtered(predicate)), name)

/** `1`/`true` or `0`/`false`. */
const flag = (name: string) => Config.schema(Schema.Literals(["1", "true", "0", "false"]), name).pipe(Config.map((v) => v === "1" || v === "true"))

const isOrigin = (value: string) => /^https?:\/\/[^\s/?#]+\/*$/.test(value) && URL.canParse(value)
const isKey = (value: string) => Result.isSuccess(Result.try(() => NodeSecurity.parseKey(value)))
/** A comma-separated list of keys (spaces around each ignored, no empty one). */
const keyList = (value: string): ReadonlyArray<string> => value.split(",").map((key) => key.trim())
const isIsoTime = (value: string) => /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value))

const settings = {
  port: setting("PORT", (n) => integer(0, 65535)(n).pipe(Config.withDefault(8080)), "must be a TCP port number (0 to 65535)"),
  host: setting("HOST", (n) => Config.NonEmptyString(n).pipe(Config.withDefault("127.0.0.1")), "must be a host name or address"),
  databaseUrl: setting("DATABASE_URL", (n) => secret((v) => /^postgres(ql)?:\/\//.test(v) && URL.canParse(v))(n).pipe(Config.option), "must be a postgres:// URL"),
  dataDir: setting("PAYDESK_DATA_DIR", (n) => Config.String(n).pipe(Config.withDefault(".data")), "must be a directory"),
  dbPool: setting("PAYDESK_DB_POOL", (n) => integer(1, 200)(n).pipe(Config.withDefault(10)), "must be an integer from 1 to 200 (connections)"),
  publicUrl: setting("PAYDESK_PUBLIC_URL", (n) => text(isOrigin)(n).pipe(Config.option), "must be an http(s) origin such as https://pay.example.com"),
  adminToken: setting("PAYDESK_ADMIN_TOKEN", (n) => secret((v) => /^\S+$/.test(v))(n).pipe(Config.option), "must be a token without spaces"),
  secretKey: setting("PAYDESK_SECRET_KEY", (n) => secret(isKey)(n).pipe(Config.option), "must be a 32-byte key: base64, or 64 hex characters"),
  previousSecretKeys: setting(
    "PAYDESK_PREVIOUS_SECRET_KEYS",
    (n) =>
      secret((v) => keyList(v).length > 0 && keyList(v).every(isKey))(n).pipe(
        Config.map((v) => Redacted.make(keyList(Redacted.value(v)))),
        Config.withDefault(Redacted.make<ReadonlyArray<string>>([]))
      ),
    "must be 32-byte keys (base64, or 64 hex characters), separated by commas"
  ),
  nextSecretKey: setting("PAYDESK_NEXT_SECRET_KEY", (n) => secret(isKey)(n).pipe(Config.option), "must be a 32-byte key: base64, or 64 hex characters"),
  clock: setting("PAYDESK_CLOCK", (n) => Config.Literals(["system", "manual"], n).pipe(Config.withDefault("system" as const)), "must be one of: system, manual"),
  clockStart: setting(
    "PAYDESK_CLOCK_START",
    (n) => text((v) => isIsoTime(v) && TestClock.inRange(Date.parse(v)))(n).pipe(Config.map(Date.parse), Config.option),
    "must be an ISO 8601 date-time from 2000 to 2099"
  ),
  engine: setting("PAYDESK_ENGINE", (n) => Config.Literals(["local", "inngest", "off"], n).pipe(Config.withDefault("local" as const)), "must be one of: local, inngest, off"),
  initialRate: setting(
    "PAYDESK_INITIAL_RATE",
    (n) => text((v) => Result.isSuccess(Amount.parseRate(v)))(n).pipe(Config.withDefault("95.00"), Config.map((v) => Result.getOrThrow(Amount.parseRate(v)))),
    `must be ${Amount.rateRule}`
  ),
  workIntervalMs: setting("PAYDESK_WORK_INTERVAL_MS", (n) => integer(10, 3_600_000)(n).pipe(Config.withDefault(1000)), "must be an integer from 10 to 3600000 (milliseconds: at most an hour)"),
  workBatchSize: setting("PAYDESK_WORK_BATCH_SIZE", (n) => integer(1, 10_000)(n).pipe(Config.withDefault(100)), "must be an integer from 1 to 10000"),
  signingSecretOverlapHours: setting("PAYDESK_SIGNING_SECRET_OVERLAP_HOURS", (n) => integer(0, 720)(n).pipe(Config.withDefault(24)), "must be an integer from 0 to 720 (hours)"),
  eventRetentionDays: setting("PAYDESK_EVENT_RETENTION_DAYS", (n) => integer(1, 3650)(n).pipe(Config.withDefault(30)), "must be an integer from 1 to 3650 (days)"),
  shutdownTimeoutMs: setting("PAYDESK_SHUTDOWN_TIMEOUT_MS", (n) => integer(0, 600_000)(n).pipe(Config.withDefault(10_000)), "must be an integer from 0 to 600000 (milliseconds)"),
  // At least a second: a shorter limit would cut off ordinary clients on slow links (Node looks every half of it).
  requestTimeoutMs: setting(
    "PAYDESK_REQUEST_TIMEOUT_MS",
    (n) => zeroOrInteger(1000, 600_000)(n).pipe(Config.withDefault(30_000)),
    "must be 0 (no limit) or an integer from 1000 to 600000 (milliseconds)"
  ),
  callbackAllowPrivate: setting("PAYDESK_CALLBACK_ALLOW_PRIVATE", (n) => flag(n).pipe(Config.withDefault(false)), "must be 1 or 0 (or true or false)"),
  loginPerEmail: setting("PAYDESK_LOGIN_LIMIT_PER_EMAIL", (n) => integer(1, 100_000)(n).pipe(Config.withDefault(10)), "must be an integer from 1 to 100000 (attempts per minute)"),
  loginPerAddress: setting("PAYDESK_LOGIN_LIMIT_PER_ADDRESS", (n) => integer(1, 100_000)(n).pipe(Config.withDefault(30)), "must be an integer from 1 to 100000 (attempts per minute)"),
  eventSendsPerMinute: setting("PAYDESK_EVENT_SENDS_PER_MINUTE", (n) => integer(1, 100_000)(n).pipe(Config.withDefault(30)), "must be an integer from 1 to 100000 (resends and test events per minute)"),
  trustProxy: setting(
    "PAYDESK_TRUST_PROXY",
    (n) => text((v) => Result.isSuccess(parseTrustProxy(v)))(n).pipe(Config.map((v) => Result.getOrThrow(parseTrustProxy(v))), Config.withDefault([] as ReadonlyArray<string>)),
    "must be 0 (no proxy) or a comma-separated list of the proxies' addresses or CIDR ranges (loopback, linklocal, uniquelocal allowed); true (trust everyone) and hop counts are refused"
  ),
  inngestDev: setting("INNGEST_DEV", (n) => flag(n).pipe(Config.withDefault(false)), "must be 1 or 0 (or true or false)"),
  inngestSigningKey: setting("INNGEST_SIGNING_KEY", (n) => Config.Redacted(n).pipe(Config.option), "must be a string"),
  inngestEventKey: setting("INNGEST_EVENT_KEY", (n) => Config.Redacted(n).pipe(Config.option), "must be a string"),
  inngestBaseUrl: setting("INNGEST_BASE_URL", (n) => text(isOrigin)(n).pipe(Config.option), "must be an http(s) origin"),
  inngestServeOrigin: setting("INNGEST_SERVE_ORIGIN", (n) => text(isOrigin)(n).pipe(Config.option), "must be an http(s) origin such as https://paydesk.example.com"),
  otelEndpoint: setting("OTEL_EXPORTER_OTLP_ENDPOINT", (n) => text((v) => /^https?:\/\//.test(v) && URL.canParse(v))(n).pipe(Config.option), "must be an http(s) URL"),
  otelServiceName: setting("OTEL_SERVICE_NAME", (n) => Config.NonEmptyString(n).pipe(Config.withDefault("paydesk")), "must be a name"),
  logLevel: setting("LOG_LEVEL", (n) => Config.Literals(logLevels, n).pipe(Config.withDefault("info" as const)), `must be one of: ${logLevels.join(", ")}`)
}

type Values = { readonly [K in keyof typeof settings]: (typeof settings)[K] extends Setting<infer A> ? A : never }

/** Reads every variable from `provider`; fails with every problem at once. */
export const read = (provider: ConfigProvider.ConfigProvider): Effect.Effect<ServerConfig, SettingsError> =>
  Effect.gen(function*() {
    const values: Record<string, unknown> = {}
    const problems: Array<string> = []
    for (const [key, { name, config, rule }] of Object.entries(settings) as Array<[string, Setting<unknown>]>) {
      const result = yield* Effect.result(config.parse(provider))
      if (Result.isSuccess(result)) values[key] = result.success
      else problems.push(`${name} ${rule}`)
    }
    if (problems.length > 0) return yield* new SettingsError({ problems })
    const v = values as Values
    const loopback = isLoopbackHost(v.host)
    const token = Option.map(v.adminToken, Redacted.value)
    if (!loopback && Option.isSome(token) && token.value.length < minAdminTokenLength) {
      return yield* new SettingsError({
        problems: [`PAYDESK_ADMIN_TOKEN must be at least ${minAdminTokenLength} characters when HOST (${v.host}) is not loopback`]
      })
    }
    const serveOrigin = Option.map(Option.orElse(v.inngestServeOrigin, () => v.publicUrl), (url) => url.replace(/\/+$/, ""))
    if (v.engine === "inngest") {
      const inngest = v.inngestDev
        ? Option.isSome(v.inngestSigningKey)
          ? ["INNGEST_DEV=1 turns off the signature check of /api/inngest: unset it where INNGEST_SIGNING_KEY is set (a dev setting left in production lets anyone run the engine's functions)"]
          : []
        : [
          ...(Option.isNone(v.inngestSigningKey)
            ? ["PAYDESK_ENGINE=inngest needs INNGEST_SIGNING_KEY (Inngest Cloud or a self-hosted Inngest), or INNGEST_DEV=1 for a local Inngest dev server"]
            : []),
          ...(Option.isNone(serveOrigin)
            ? ["PAYDESK_ENGINE=inngest needs INNGEST_SERVE_ORIGIN (or PAYDESK_PUBLIC_URL): the origin Inngest calls /api/inngest at (from the request's Host, anyone could register another)"]
            : [])
        ]
      if (inngest.length > 0) return yield* new SettingsError({ problems: inngest })
    }
    const warnings = [
      ...(v.clock === "manual" && !loopback
        ? [`PAYDESK_CLOCK=manual on ${v.host}: anyone with the operator token can move this server's time (tests and demos only)`]
        : []),
      ...(v.engine === "inngest" && v.inngestDev && !loopback
        ? [`INNGEST_DEV=1 on ${v.host}: /api/inngest runs the engine's functions for any caller, unsigned (a local Inngest dev server only)`]
        : []),
      ...(v.engine === "inngest" && !v.inngestDev && Option.isNone(v.inngestEventKey)
        ? ["PAYDESK_ENGINE=inngest without INNGEST_EVENT_KEY: no event reaches Inngest, so due work waits for the sweeps (up to a minute)"]
        : []),
      // The payer links' origin is then the address the server listens on, which no payer can open.
      ...(Option.isNone(v.publicUrl) && (v.host === "0.0.0.0" || v.host === "::")
        ? [`PAYDESK_PUBLIC_URL is not set: payment links (pay_url) and the payer pages' links use http://${v.host === "::" ? "[::]" : v.host}:${v.port}, which no payer can open; set it to the origin payers reach this server at`]
        : [])
    ]
    const config: ServerConfig = {
      port: v.port,
      host: v.host,
      databaseUrl: v.databaseUrl,
      dataDir: resolve(v.dataDir),
      dbPool: v.dbPool,
      publicUrl: Option.map(v.publicUrl, (url) => url.replace(/\/+$/, "")),
      adminToken: v.adminToken,
      secretKey: v.secretKey,
      previousSecretKeys: v.previousSecretKeys,
      nextSecretKey: v.nextSecretKey,
      clock: v.clock,
      clockStart: v.clockStart,
      engine: v.engine,
      initialRate: v.initialRate,
      workIntervalMs: v.workIntervalMs,
      workBatchSize: v.workBatchSize,
      eventRetentionDays: v.eventRetentionDays,
      signingSecretOverlapHours: v.signingSecretOverlapHours,
      shutdownTimeoutMs: v.shutdownTimeoutMs,
      requestTimeoutMs: v.requestTimeoutMs,
      inngest: { isDev: v.inngestDev, signingKey: v.inngestSigningKey, eventKey: v.inngestEventKey, baseUrl: v.inngestBaseUrl, serveOrigin },
      otel: { endpoint: v.otelEndpoint, serviceName: v.otelServiceName },
      logLevel: v.logLevel,
      callbackAllowPrivate: v.callbackAllowPrivate,
      loginLimits: { perEmail: v.loginPerEmail, perAddress: v.loginPerAddress },
      eventSendsPerMinute: v.eventSendsPerMinute,
      trustProxy: v.trustProxy,
      warnings
    }
    return config
  })

/** The settings from the process's environment (the `ConfigProvider` in context). */
export const fromEnvironment: Effect.Effect<ServerConfig, SettingsError> = Effect.gen(function*() {
  return yield* read(yield* ConfigProvider.ConfigProvider)
})

/**
 * `PAYDESK_` variables the server does not read but others do: the CLI's and the SDK's examples'
 * (`PAYDESK_URL`, `PAYDESK_API_KEY`, `PAYDESK_TERMINAL_ID`, `PAYDESK_SIGNING_SECRET`) and `./run`'s
 * (`PAYDESK_MAX_HEAP_MB`, `PAYDESK_ALLOCATOR_ENV`), often set in the same shell.
 */
const readElsewhere = ["PAYDESK_URL", "PAYDESK_API_KEY", "PAYDESK_TERMINAL_ID", "PAYDESK_SIGNING_SECRET", "PAYDESK_MAX_HEAP_MB", "PAYDESK_ALLOCATOR_ENV"]

/** Edits (insertions, deletions, substitutions) between two names. */
const distance = (a: string, b: string): number => {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    row = next
  }
  return row[b.length]!
}

/**
 * Warnings for the `PAYDESK_` variables of `env` that no one reads (a misspelt `PAYDESK_ENGIN=off` was
 * ignored without a word, and the server ran its default: an outside probe), naming the setting it
 * is closest to.
 */
export const unknownSettings = (env: Record<string, string | undefined>): ReadonlyArray<string> => {
  const known = [...Object.values(settings).map((each) => each.name).filter((name) => name.startsWith("PAYDESK_")), ...readElsewhere]
  return Object.keys(env)
    .filter((name) => name.startsWith("PAYDESK_") && env[name] !== undefined && !known.includes(name))
    .sort()
    .map((name) => {
      const closest = known.reduce((best, each) => distance(name, each) < distance(name, best) ? each : best)
      return `${name} is no setting of the server and is ignored${distance(name, closest) <= 3 ? ` (did you mean ${closest}?)` : ""}`
    })
}

/** The settings from `env` (tests, tools); throws `SettingsError`. */
export const load = (env: Record<string, string | undefined>): ServerConfig => {
  const defined = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined))
  const result = Effect.runSync(Effect.result(read(ConfigProvider.fromEnv({ env: defined }))))
  if (Result.isFailure(result)) throw result.failure
  return result.success
}
