/**
 * Configuration of the reference server from the environment (see DESIGN.md):
 * PORT, HOST, DATABASE_URL, PAYDESK_DATA_DIR, PAYDESK_PUBLIC_URL, PAYDESK_ADMIN_TOKEN,
 * PAYDESK_CLOCK, PAYDESK_ENGINE, plus PAYDESK_SECRET_KEY (32-byte key for secrets at rest and
 * tokens; generated once into the data directory when unset), PAYDESK_INITIAL_RATE,
 * PAYDESK_WORK_INTERVAL_MS, PAYDESK_WORK_BATCH_SIZE and PAYDESK_CLOCK_START (the manual clock's time at start, ISO 8601),
 * the Inngest engine's INNGEST_* variables and LOG_LEVEL.
 */
import { randomBytes } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"

/** The server's settings. */
export interface ServerConfig {
  readonly port: number
  readonly host: string
  readonly databaseUrl: string | null
  readonly dataDir: string
  readonly publicUrl: string
  /** True when PAYDESK_PUBLIC_URL was not set (the server derives it from its address). */
  readonly publicUrlDefaulted: boolean
  readonly adminToken: string
  readonly adminTokenGenerated: boolean
  readonly clock: "system" | "manual"
  /** Start time of the manual clock (epoch ms); null: the system time at start. */
  readonly clockStart: number | null
  readonly engine: "local" | "inngest" | "off"
  readonly secretKey: string
  readonly initialRate: string
  readonly workIntervalMs: number
  /** Due records one pass claims per kind of work (PAYDESK_WORK_BATCH_SIZE, default 100). */
  readonly workBatchSize: number
  /** The Inngest engine's client: INNGEST_DEV (`1`/`true`), INNGEST_SIGNING_KEY, INNGEST_EVENT_KEY, INNGEST_BASE_URL. */
  readonly inngest: {
    readonly isDev: boolean
    readonly signingKey: string | null
    readonly eventKey: string | null
    readonly baseUrl: string | null
  }
  /** LOG_LEVEL of the HTTP server's log (default `info`). */
  readonly logLevel: string
}

/** A configuration error: the variable and what is wrong. */
export class ConfigError extends Error {}

const choice = <T extends string>(name: string, value: string | undefined, allowed: ReadonlyArray<T>, fallback: T): T => {
  if (value === undefined || value === "") return fallback
  if (!(allowed as ReadonlyArray<string>).includes(value)) throw new ConfigError(`${name} must be one of: ${allowed.join(", ")}`)
  return value as T
}

/** Reads and checks the configuration. */
export const load = (env: NodeJS.ProcessEnv = process.env): ServerConfig => {
  const port = Number(env.PORT ?? 8080)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError("PORT must be a TCP port number")
  const host = env.HOST ?? "127.0.0.1"
  const dataDir = resolve(env.PAYDESK_DATA_DIR ?? ".data")
  const publicUrl = (env.PAYDESK_PUBLIC_URL ?? `http://${host.includes(":") ? `[${host}]` : host}:${port}`).replace(/\/+$/, "")
  if (!/^https?:\/\/\S+$/.test(publicUrl)) throw new ConfigError("PAYDESK_PUBLIC_URL must be an http(s) origin")
  const adminTokenGenerated = env.PAYDESK_ADMIN_TOKEN === undefined || env.PAYDESK_ADMIN_TOKEN === ""
  const adminToken = adminTokenGenerated ? `adm_${randomBytes(24).toString("base64url")}` : env.PAYDESK_ADMIN_TOKEN!
  let secretKey = env.PAYDESK_SECRET_KEY ?? ""
  if (secretKey === "") {
    const file = join(dataDir, "secret.key")
    if (existsSync(file)) {
      secretKey = readFileSync(file, "utf8").trim()
    } else {
      mkdirSync(dataDir, { recursive: true })
      secretKey = randomBytes(32).toString("base64")
      writeFileSync(file, `${secretKey}\n`, { mode: 0o600 })
    }
  }
  const clockStart = env.PAYDESK_CLOCK_START === undefined || env.PAYDESK_CLOCK_START === "" ? null : Date.parse(env.PAYDESK_CLOCK_START)
  if (clockStart !== null && (Number.isNaN(clockStart) || !/^\d{4}-\d{2}-\d{2}T/.test(env.PAYDESK_CLOCK_START!))) {
    throw new ConfigError("PAYDESK_CLOCK_START must be an ISO 8601 date-time")
  }
  const workIntervalMs = Number(env.PAYDESK_WORK_INTERVAL_MS ?? 1000)
  if (!Number.isInteger(workIntervalMs) || workIntervalMs < 10) throw new ConfigError("PAYDESK_WORK_INTERVAL_MS must be an integer of at least 10")
  const workBatchSize = Number(env.PAYDESK_WORK_BATCH_SIZE ?? 100)
  if (!Number.isInteger(workBatchSize) || workBatchSize < 1 || workBatchSize > 10_000) {
    throw new ConfigError("PAYDESK_WORK_BATCH_SIZE must be an integer from 1 to 10000")
  }
  return {
    port,
    host,
    databaseUrl: env.DATABASE_URL === undefined || env.DATABASE_URL === "" ? null : env.DATABASE_URL,
    dataDir,
    publicUrl,
    publicUrlDefaulted: env.PAYDESK_PUBLIC_URL === undefined || env.PAYDESK_PUBLIC_URL === "",
    adminToken,
    adminTokenGenerated,
    clock: choice("PAYDESK_CLOCK", env.PAYDESK_CLOCK, ["system", "manual"], "system"),
    clockStart,
    engine: choice("PAYDESK_ENGINE", env.PAYDESK_ENGINE, ["local", "inngest", "off"], "local"),
    secretKey,
    initialRate: env.PAYDESK_INITIAL_RATE ?? "95.00",
    workIntervalMs,
    workBatchSize,
    inngest: {
      isDev: env.INNGEST_DEV === "1" || env.INNGEST_DEV === "true",
      signingKey: env.INNGEST_SIGNING_KEY || null,
      eventKey: env.INNGEST_EVENT_KEY || null,
      baseUrl: env.INNGEST_BASE_URL || null
    },
    logLevel: env.LOG_LEVEL || "info"
  }
}
