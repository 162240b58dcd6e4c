/**
 * Measuring an effect in the engine benches: its wall time and this process's CPU time
 * (`measured`), and a CPU profile around it (`profiled`).
 */
import { Effect } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"

/** `effect` with its wall time in seconds and this process's CPU time in µs (user, system, and both as `cpuMicros`). */
export const measured = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const started = performance.now()
    const cpu = process.cpuUsage()
    return Effect.map(effect, (result) => {
      const used = process.cpuUsage(cpu)
      return { result, seconds: (performance.now() - started) / 1000, cpu: used, cpuMicros: used.user + used.system }
    })
  })

/** Starts V8's CPU profiler in this process through the inspector; the answer stops it and writes `bench/profiles/NAME.cpuprofile`. */
const startProfiler = async (): Promise<(name: string) => Promise<void>> => {
  const session = new Session()
  session.connect()
  await session.post("Profiler.enable")
  await session.post("Profiler.setSamplingInterval", { interval: Number(process.env.PROFILE_INTERVAL_US ?? 1000) })
  await session.post("Profiler.start")
  return async (name) => {
    const { profile } = await session.post("Profiler.stop")
    session.disconnect()
    const dir = new URL("./profiles/", import.meta.url)
    mkdirSync(dir, { recursive: true })
    writeFileSync(new URL(`${name}.cpuprofile`, dir), JSON.stringify(profile))
  }
}

/**
 * A CPU profile of this process around `effect`, when `PROFILE=1`: started and stopped through the
 * inspector (its start, stop and file are outside the effect, so a measurement inside it does not
 * count them), written to `bench/profiles/NAME.cpuprofile` (Chrome DevTools opens it;
 * `bench/profile-summary.ts` sums it per package). `PROFILE_INTERVAL_US` sets the sampling interval
 * (default 1000 µs; 100 gives ten times the samples of a short drain).
 */
export const profiled = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  if (process.env.PROFILE !== "1") return effect
  return Effect.acquireUseRelease(Effect.promise(startProfiler), () => effect, (stop) => Effect.promise(() => stop(name)))
}

/** `profiled` for a promise: a CPU profile of this process while `run` runs (always; the caller decides when). */
export const profiledPromise = async <A>(name: string, run: () => Promise<A>): Promise<A> => {
  const stop = await startProfiler()
  try {
    return await run()
  } finally {
    await stop(name)
  }
}
