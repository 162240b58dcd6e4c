/**
 * A CPU profile of this process around an effect, when `PROFILE=1`: started and stopped through the
 * inspector (its start, stop and file are outside the effect, so a measurement inside it does not
 * count them), written to `bench/profiles/NAME.cpuprofile` (Chrome DevTools opens it).
 */
import { Effect } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"

export const profiled = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  if (process.env.PROFILE !== "1") return effect
  const session = new Session()
  return Effect.acquireUseRelease(
    Effect.promise(async () => {
      session.connect()
      await session.post("Profiler.enable")
      await session.post("Profiler.start")
    }),
    () => effect,
    () =>
      Effect.promise(async () => {
        const { profile } = await session.post("Profiler.stop")
        session.disconnect()
        const dir = new URL("./profiles/", import.meta.url)
        mkdirSync(dir, { recursive: true })
        writeFileSync(new URL(`${name}.cpuprofile`, dir), JSON.stringify(profile))
      })
  )
}
