/**
 * Settings: the documented defaults, every variable read, secrets redacted, and every problem of a
 * bad environment reported at once, each naming its variable.
 */
import { describe, expect, it } from "vitest"
import { Option, Redacted } from "effect"
import { ConfigProvider, Effect, Exit } from "effect"
import { resolve } from "node:path"
import { load, read, SettingsError, unknownSettings } from "../src/Config.js"

const problemsOf = (env: Record<string, string>): ReadonlyArray<string> => {
  try {
    load(env)
  } catch (error) {
    if (error instanceof SettingsError) return error.problems
    throw error
  }
  throw new Error("the settings were accepted")
}

describe("Config", () => {
  it("has the documented defaults", () => {
    const config = load({})
    expect(config).toMatchObject({
      port: 8080, host: "127.0.0.1", dataDir: resolve(".data"), dbPool: 10, clock: "system", engine: "local",
      initialRate: 95_000_000n, workIntervalMs: 1000, workBatchSize: 100, eventRetentionDays: 30, signingSecretOverlapHours: 24, shutdownTimeoutMs: 10_000, requestTimeoutMs: 30_000, logLevel: "info",
      callbackAllowPrivate: false, loginLimits: { perEmail: 10, perAddress: 30 }, eventSendsPerMinute: 30, trustProxy: [], warnings: [],
      otel: { serviceName: "paydesk" }, inngest: { isDev: false }
    })
    const absent: ReadonlyArray<Option.Option<unknown>> = [config.databaseUrl, config.publicUrl, config.adminToken, config.secretKey, config.clockStart, config.otel.endpoint]
    expect(absent.every(Option.isNone)).toBe(true)
  })

  it("reads every variable, keeping secrets redacted", () => {
    const key = Buffer.alloc(32, 7).toString("base64")
    const config = load({
      PORT: "9000", HOST: "0.0.0.0", DATABASE_URL: "postgres://u:pw@db.example:5432/paydesk", PAYDESK_DATA_DIR: "/tmp/pd",
      PAYDESK_DB_POOL: "25", PAYDESK_PUBLIC_URL: "https://pay.example/", PAYDESK_ADMIN_TOKEN: "adm-0123456789abcdef0123456789abcdef",
      PAYDESK_SECRET_KEY: key, PAYDESK_CLOCK: "manual", PAYDESK_CLOCK_START: "2027-01-31T07:00:00.000Z", PAYDESK_ENGINE: "off",
      PAYDESK_INITIAL_RATE: "90.5", PAYDESK_WORK_INTERVAL_MS: "250", PAYDESK_WORK_BATCH_SIZE: "5", PAYDESK_EVENT_RETENTION_DAYS: "90", PAYDESK_SIGNING_SECRET_OVERLAP_HOURS: "2", PAYDESK_SHUTDOWN_TIMEOUT_MS: "2000",
      PAYDESK_REQUEST_TIMEOUT_MS: "5000",
      PAYDESK_CALLBACK_ALLOW_PRIVATE: "1", PAYDESK_LOGIN_LIMIT_PER_EMAIL: "3", PAYDESK_LOGIN_LIMIT_PER_ADDRESS: "4", PAYDESK_EVENT_SENDS_PER_MINUTE: "7",
      INNGEST_DEV: "true", INNGEST_SIGNING_KEY: "s", INNGEST_EVENT_KEY: "e", INNGEST_BASE_URL: "http://inngest:8288",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SERVICE_NAME: "paydesk-eu", LOG_LEVEL: "warn"
    })
    expect(config).toMatchObject({
      port: 9000, host: "0.0.0.0", dataDir: "/tmp/pd", dbPool: 25, clock: "manual", engine: "off", initialRate: 90_500_000n,
      workIntervalMs: 250, workBatchSize: 5, eventRetentionDays: 90, signingSecretOverlapHours: 2, shutdownTimeoutMs: 2000, requestTimeoutMs: 5000, callbackAllowPrivate: true, loginLimits: { perEmail: 3, perAddress: 4 }, eventSendsPerMinute: 7,
      logLevel: "warn", otel: { serviceName: "paydesk-eu" }, inngest: { isDev: true }
    })
    expect(config.publicUrl).toEqual(Option.some("https://pay.example"))
    expect(config.clockStart).toEqual(Option.some(Date.parse("2027-01-31T07:00:00.000Z")))
    expect(config.otel.endpoint).toEqual(Option.some("http://collector:4318"))
    expect(config.inngest.baseUrl).toEqual(Option.some("http://inngest:8288"))
    const secrets = [config.databaseUrl, config.adminToken, config.secretKey, config.inngest.signingKey, config.inngest.eventKey].map(Option.getOrThrow)
    expect(secrets.map(Redacted.value)).toEqual(["postgres://u:pw@db.example:5432/paydesk", "adm-0123456789abcdef0123456789abcdef", key, "s", "e"])
    // Secrets never show in logs or errors.
    expect(JSON.stringify(config, (_, v) => typeof v === "bigint" ? String(v) : v)).not.toMatch(/pw@|adm-0123|"s"|"e"/)
    expect(String(secrets[0])).toBe("<redacted>")
  })

  it("names the worker interval's range when a value beyond it is refused (an outside probe's 2147483647 was told \"at least 10\")", () => {
    expect(problemsOf({ PAYDESK_WORK_INTERVAL_MS: "2147483647" })).toEqual(["PAYDESK_WORK_INTERVAL_MS must be an integer from 10 to 3600000 (milliseconds: at most an hour)"])
    expect(load({ PAYDESK_WORK_INTERVAL_MS: "3600000" }).workIntervalMs).toBe(3_600_000)
  })

  it("reports every bad variable at once, each by name, before anything starts", () => {
    const problems = problemsOf({
      PORT: "99999", PAYDESK_CLOCK: "fast", PAYDESK_ENGINE: "cron", PAYDESK_SECRET_KEY: "too-short", PAYDESK_DB_POOL: "0",
      PAYDESK_CLOCK_START: "yesterday", PAYDESK_WORK_INTERVAL_MS: "soon", PAYDESK_WORK_BATCH_SIZE: "0", PAYDESK_PUBLIC_URL: "pay.example",
      PAYDESK_INITIAL_RATE: "-1", DATABASE_URL: "mysql://x", OTEL_EXPORTER_OTLP_ENDPOINT: "collector", LOG_LEVEL: "loud",
      PAYDESK_CALLBACK_ALLOW_PRIVATE: "yes", PAYDESK_EVENT_RETENTION_DAYS: "0", PAYDESK_SIGNING_SECRET_OVERLAP_HOURS: "-1", PAYDESK_EVENT_SENDS_PER_MINUTE: "0"
    })
    expect(problems).toEqual([
      "PORT must be a TCP port number (0 to 65535)",
      "DATABASE_URL must be a postgres:// URL",
      "PAYDESK_DB_POOL must be an integer from 1 to 200 (connections)",
      "PAYDESK_PUBLIC_URL must be an http(s) origin such as https://pay.example.com",
      "PAYDESK_SECRET_KEY must be a 32-byte key: base64, or 64 hex characters",
      "PAYDESK_CLOCK must be one of: system, manual",
      "PAYDESK_CLOCK_START must be an ISO 8601 date-time from 2000 to 2099",
      "PAYDESK_ENGINE must be one of: local, inngest, off",
      "PAYDESK_INITIAL_RATE must be a decimal greater than zero and at most 1000000, with at most six decimals",
      "PAYDESK_WORK_INTERVAL_MS must be an integer from 10 to 3600000 (milliseconds: at most an hour)",
      "PAYDESK_WORK_BATCH_SIZE must be an integer from 1 to 10000",
      "PAYDESK_SIGNING_SECRET_OVERLAP_HOURS must be an integer from 0 to 720 (hours)",
      "PAYDESK_EVENT_RETENTION_DAYS must be an integer from 1 to 3650 (days)",
      "PAYDESK_CALLBACK_ALLOW_PRIVATE must be 1 or 0 (or true or false)",
      "PAYDESK_EVENT_SENDS_PER_MINUTE must be an integer from 1 to 100000 (resends and test events per minute)",
      "OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL",
      "LOG_LEVEL must be one of: fatal, error, warn, info, debug, trace, silent"
    ])
    // The message names them too, and no secret value.
    expect(() => load({ PAYDESK_SECRET_KEY: "not-a-key-but-secret" })).toThrow(/invalid configuration:\n {2}- PAYDESK_SECRET_KEY must be/)
    expect(() => load({ PAYDESK_SECRET_KEY: "not-a-key-but-secret" })).not.toThrow(/not-a-key-but-secret/)
    expect(problemsOf({ PAYDESK_DB_POOL: "1.5" })).toEqual(["PAYDESK_DB_POOL must be an integer from 1 to 200 (connections)"])
    // Previous secret keys: keys separated by commas (spaces around each ignored); an empty entry, or
    // one that is not a key, refuses the whole setting without showing it (an empty value is unset,
    // as for every variable).
    const [k1, k2] = [Buffer.alloc(32, 1).toString("base64"), Buffer.alloc(32, 2).toString("hex")]
    expect(Redacted.value(load({ PAYDESK_PREVIOUS_SECRET_KEYS: ` ${k1} ,${k2}` }).previousSecretKeys)).toEqual([k1, k2])
    expect(Redacted.value(load({}).previousSecretKeys)).toEqual([])
    expect(Redacted.value(load({ PAYDESK_PREVIOUS_SECRET_KEYS: "" }).previousSecretKeys)).toEqual([])
    for (const bad of [",", " ", `${k1},`, `${k1},,${k2}`, `${k1},short-secret-value`]) {
      expect(problemsOf({ PAYDESK_PREVIOUS_SECRET_KEYS: bad }), JSON.stringify(bad)).toEqual([
        "PAYDESK_PREVIOUS_SECRET_KEYS must be 32-byte keys (base64, or 64 hex characters), separated by commas"
      ])
    }
    expect(() => load({ PAYDESK_PREVIOUS_SECRET_KEYS: `${k1},short-secret-value` })).not.toThrow(/short-secret-value/)
    expect(Option.map(load({ PAYDESK_NEXT_SECRET_KEY: k2 }).nextSecretKey, Redacted.value)).toEqual(Option.some(k2))
    expect(problemsOf({ PAYDESK_NEXT_SECRET_KEY: `${k1},${k2}` })).toEqual(["PAYDESK_NEXT_SECRET_KEY must be a 32-byte key: base64, or 64 hex characters"])
    // Decimal digits only: what Number() would also read (hex, binary, exponents, blanks) is refused.
    for (const bad of ["0x4650", "0b11", "0o17", "8e3", " 8080", "8080 ", "+8080", "8_080"]) {
      expect(problemsOf({ PORT: bad }), JSON.stringify(bad)).toEqual(["PORT must be a TCP port number (0 to 65535)"])
    }
    expect(load({ PORT: "08080" }).port).toBe(8080)
    expect(problemsOf({ PAYDESK_CLOCK_START: "9999-12-31T23:59:59Z" })).toEqual(["PAYDESK_CLOCK_START must be an ISO 8601 date-time from 2000 to 2099"])
  })

  it("PAYDESK_REQUEST_TIMEOUT_MS: 0 (no limit), or whole milliseconds from 1000 to 600000", () => {
    expect([load({ PAYDESK_REQUEST_TIMEOUT_MS: "0" }), load({ PAYDESK_REQUEST_TIMEOUT_MS: "1000" }), load({ PAYDESK_REQUEST_TIMEOUT_MS: "600000" })].map((c) => c.requestTimeoutMs))
      .toEqual([0, 1000, 600_000])
    const rule = "PAYDESK_REQUEST_TIMEOUT_MS must be 0 (no limit) or an integer from 1000 to 600000 (milliseconds)"
    for (const bad of ["-1", "1", "999", "600001", "1.5", "30s", "soon", "Infinity"]) {
      expect(problemsOf({ PAYDESK_REQUEST_TIMEOUT_MS: bad }), bad).toEqual([rule])
    }
  })

  it("PAYDESK_TRUST_PROXY: off, or proxy addresses and CIDR ranges; never everyone, never a bare hop count", () => {
    expect(load({ PAYDESK_TRUST_PROXY: "0" }).trustProxy).toEqual([])
    expect(load({ PAYDESK_TRUST_PROXY: "false" }).trustProxy).toEqual([])
    expect(load({ PAYDESK_TRUST_PROXY: "10.0.0.0/8, 127.0.0.1,::1,fd00::/8,loopback" }).trustProxy).toEqual(["10.0.0.0/8", "127.0.0.1", "::1", "fd00::/8", "loopback"])
    const rule = "PAYDESK_TRUST_PROXY must be 0 (no proxy) or a comma-separated list of the proxies' addresses or CIDR ranges (loopback, linklocal, uniquelocal allowed); true (trust everyone) and hop counts are refused"
    for (const bad of ["true", "1", "2", "*", "0.0.0.0/0", "::/0", "10.0.0.0/33", "proxy.example", "10.0.0.1,", "1.2.3"]) {
      expect(problemsOf({ PAYDESK_TRUST_PROXY: bad }), bad).toEqual([rule])
    }
  })

  it("PAYDESK_ENGINE=inngest: a signing key and the origin Inngest calls, or the dev mode, never both", () => {
    const engine = { PAYDESK_ENGINE: "inngest" }
    const cloud = { ...engine, INNGEST_SIGNING_KEY: "signkey-prod-00", INNGEST_EVENT_KEY: "e" }
    expect(problemsOf(engine)).toEqual([
      "PAYDESK_ENGINE=inngest needs INNGEST_SIGNING_KEY (Inngest Cloud or a self-hosted Inngest), or INNGEST_DEV=1 for a local Inngest dev server",
      "PAYDESK_ENGINE=inngest needs INNGEST_SERVE_ORIGIN (or PAYDESK_PUBLIC_URL): the origin Inngest calls /api/inngest at (from the request's Host, anyone could register another)"
    ])
    expect(problemsOf(cloud)).toEqual([
      "PAYDESK_ENGINE=inngest needs INNGEST_SERVE_ORIGIN (or PAYDESK_PUBLIC_URL): the origin Inngest calls /api/inngest at (from the request's Host, anyone could register another)"
    ])
    expect(problemsOf({ ...cloud, INNGEST_DEV: "1" })).toEqual([
      "INNGEST_DEV=1 turns off the signature check of /api/inngest: unset it where INNGEST_SIGNING_KEY is set (a dev setting left in production lets anyone run the engine's functions)"
    ])
    expect(problemsOf({ ...cloud, INNGEST_SERVE_ORIGIN: "paydesk.example" })).toEqual([
      "INNGEST_SERVE_ORIGIN must be an http(s) origin such as https://paydesk.example.com"
    ])
    // The origin: INNGEST_SERVE_ORIGIN, else the public URL.
    expect(load({ ...cloud, PAYDESK_PUBLIC_URL: "https://pay.example/" }).inngest.serveOrigin).toEqual(Option.some("https://pay.example"))
    expect(load({ ...cloud, PAYDESK_PUBLIC_URL: "https://pay.example", INNGEST_SERVE_ORIGIN: "https://api.example" }).inngest.serveOrigin).toEqual(Option.some("https://api.example"))
    expect(load({ ...cloud, INNGEST_SERVE_ORIGIN: "https://api.example" }).warnings).toEqual([])
    // Without an event key nothing reaches Inngest: said at start.
    expect(load({ ...engine, INNGEST_SIGNING_KEY: "k", INNGEST_SERVE_ORIGIN: "https://api.example" }).warnings).toEqual([
      "PAYDESK_ENGINE=inngest without INNGEST_EVENT_KEY: no event reaches Inngest, so due work waits for the sweeps (up to a minute)"
    ])
    // The dev mode: on loopback as is, elsewhere with a warning; the rules apply to the Inngest engine only.
    expect(load({ ...engine, INNGEST_DEV: "1" }).warnings).toEqual([])
    expect(load({ ...engine, INNGEST_DEV: "1", HOST: "0.0.0.0", PAYDESK_ADMIN_TOKEN: "x".repeat(40), PAYDESK_PUBLIC_URL: "https://pay.example" }).warnings).toEqual([
      "INNGEST_DEV=1 on 0.0.0.0: /api/inngest runs the engine's functions for any caller, unsigned (a local Inngest dev server only)"
    ])
    expect(load({ PAYDESK_ENGINE: "local", INNGEST_DEV: "1", INNGEST_SIGNING_KEY: "k" }).engine).toBe("local")
  })

  it("warns when the server listens on every address without PAYDESK_PUBLIC_URL: the payer links would name 0.0.0.0 (an outside probe)", () => {
    const token = { PAYDESK_ADMIN_TOKEN: "x".repeat(40) }
    expect(load({ ...token, HOST: "0.0.0.0", PORT: "8080" }).warnings).toEqual([
      "PAYDESK_PUBLIC_URL is not set: payment links (pay_url) and the payer pages' links use http://0.0.0.0:8080, which no payer can open; set it to the origin payers reach this server at"
    ])
    expect(load({ ...token, HOST: "::", PORT: "8080" }).warnings[0]).toContain("use http://[::]:8080")
    expect(load({ ...token, HOST: "0.0.0.0", PAYDESK_PUBLIC_URL: "https://pay.example" }).warnings).toEqual([])
    expect(load({ HOST: "127.0.0.1" }).warnings).toEqual([])
  })

  it("names the PAYDESK_ variables nobody reads, with the setting each is closest to (a misspelt PAYDESK_ENGIN was ignored without a word)", () => {
    expect(unknownSettings({ PAYDESK_ENGIN: "off", PAYDESK_DBPOOL: "5", PAYDESK_ZZZZZZZZZZZZZZZZZZZZ: "1", PAYDESK_ENGINE: "off", PAYDESK_URL: "http://x", PAYDESK_API_KEY: "k", HOME: "/root" })).toEqual([
      "PAYDESK_DBPOOL is no setting of the server and is ignored (did you mean PAYDESK_DB_POOL?)",
      "PAYDESK_ENGIN is no setting of the server and is ignored (did you mean PAYDESK_ENGINE?)",
      "PAYDESK_ZZZZZZZZZZZZZZZZZZZZ is no setting of the server and is ignored"
    ])
    expect(unknownSettings({ PAYDESK_ENGIN: undefined, PAYDESK_MAX_HEAP_MB: "256", PAYDESK_SIGNING_SECRET: "s", PAYDESK_TERMINAL_ID: "t" })).toEqual([])
  })

  it("reads through the ConfigProvider in context", async () => {
    const exit = await Effect.runPromiseExit(read(ConfigProvider.fromEnv({ env: { PAYDESK_DB_POOL: "3", PORT: "0" } })))
    expect(Exit.isSuccess(exit) && [exit.value.dbPool, exit.value.port]).toEqual([3, 0])
  })
})
