import { afterEach, describe, expect, it, vi } from "vitest"
import { Clock, Effect } from "effect"
import { ManualClock } from "@paydesk/emulators"
import * as Logging from "../src/Logging.js"

afterEach(() => vi.restoreAllMocks())

/** The lines `effect` writes through the server's logger. */
const linesOf = async (effect: Effect.Effect<void>) => {
  const written: Array<string> = []
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (written.push(String(chunk)), true))
  await Effect.runPromise(effect.pipe(Effect.provide(Logging.layer("info"))))
  vi.restoreAllMocks()
  return written.map((line) => JSON.parse(line) as Record<string, unknown>)
}

describe("Logging", () => {
  it("stamps a line with the wall clock, also in work on another clock (a test clock's, the manual one), which it keeps as clock_time", async () => {
    const clockAt = Date.parse("2099-12-15T10:00:00.000Z")
    const manual = await Effect.runPromise(ManualClock.make(clockAt))
    const before = Date.now()
    const [line] = await linesOf(Effect.log("callback attempt failed").pipe(Effect.provideService(Clock.Clock, manual.clock)))
    const after = Date.now()
    expect(line!.time).toBeGreaterThanOrEqual(before)
    expect(line!.time).toBeLessThanOrEqual(after)
    expect(line!.clock_time).toBe("2099-12-15T10:00:00.000Z")
    expect(line!.msg).toBe("callback attempt failed")
  })

  it("writes no clock_time when the fiber's clock is the wall clock", async () => {
    const [line] = await linesOf(Effect.log("paydesk ready"))
    expect(Math.abs((line!.time as number) - Date.now())).toBeLessThan(5_000)
    expect(line).not.toHaveProperty("clock_time")
  })
})
