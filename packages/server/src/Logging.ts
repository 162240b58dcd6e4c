/**
 * The server's log: one JSON line per entry on stdout, in the shape of Fastify's request log (pino:
 * `level` as a number, `time` in epoch ms, `msg`, then the entry's annotations), so one stream holds
 * both and `pino-pretty` renders both (`./run dev`). `LOG_LEVEL` filters both; the lifecycle lines
 * (starting, listening, stopping, stopped) print at `info` even when `LOG_LEVEL` is higher, and not at
 * all when it is `silent`.
 */
import { Effect, Layer, Logger, References } from "effect"
import type { LogLevel as EffectLevel } from "effect"
import type { LogLevel } from "./Config.js"

const pinoLevels: Readonly<Record<string, number>> = { TRACE: 10, DEBUG: 20, INFO: 30, WARN: 40, ERROR: 50, FATAL: 60 }

const effectLevels: Readonly<Record<LogLevel, EffectLevel.LogLevel>> = {
  trace: "Trace",
  debug: "Debug",
  info: "Info",
  warn: "Warn",
  error: "Error",
  fatal: "Fatal",
  silent: "None"
}

/**
 * The entry as a pino-shaped line. `time` is the wall clock's: the entry's own timestamp is the
 * fiber's clock, which is a test clock's time in its work (an outside probe found a quarter of a
 * day's lines stamped up to 34 days ahead, or years back, which collectors misorder or drop) and the
 * manual clock under `PAYDESK_CLOCK=manual`. When that clock is elsewhere it is kept as `clock_time`.
 */
export const format = (entry: {
  readonly level: string
  readonly timestamp: string
  readonly message: unknown
  readonly cause: string | undefined
  readonly annotations: Record<string, unknown>
}, now: number = Date.now()): string => {
  const clock = Date.parse(entry.timestamp)
  return JSON.stringify({
    level: pinoLevels[entry.level] ?? 30,
    time: now,
    ...(Number.isFinite(clock) && Math.abs(clock - now) > 1_000 ? { clock_time: entry.timestamp } : {}),
    pid: process.pid,
    msg: typeof entry.message === "string" ? entry.message : JSON.stringify(entry.message),
    ...entry.annotations,
    ...(entry.cause === undefined ? {} : { err: entry.cause })
  })
}

/** Writes the entries to stdout. */
export const jsonLines: Logger.Logger<unknown, void> = Logger.map(Logger.formatStructured, (entry) => {
  process.stdout.write(`${format(entry)}\n`)
})

/** The logger and minimum level for `LOG_LEVEL`. */
export const layer = (level: LogLevel): Layer.Layer<never> =>
  Layer.merge(Logger.layer([jsonLines]), Layer.succeed(References.MinimumLogLevel, effectLevels[level]))

/** A lifecycle line: at `info`, shown unless the log is silent. */
export const lifecycle = (message: string, annotations: Record<string, unknown> = {}): Effect.Effect<void> =>
  Effect.gen(function*() {
    const minimum = yield* References.MinimumLogLevel
    if (minimum === "None") return
    yield* Effect.logInfo(message).pipe(Effect.annotateLogs(annotations), Effect.provideService(References.MinimumLogLevel, "Info"))
  })
