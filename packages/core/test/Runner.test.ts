import { describe, expect, it } from "vitest"
import { Context, Effect, Exit } from "effect"
import { Runner } from "../src/index.js"

describe("Runner.runExit", () => {
  const runner = Runner.fromContext(Context.empty())

  it("runs an effect that waits for nothing at once, without a promise", () => {
    const exit = Runner.runExit(runner, Effect.succeed(42))
    expect(exit instanceof Promise).toBe(false)
    expect(exit).toEqual(Exit.succeed(42))
    const failed = Runner.runExit(runner, Effect.fail("no"))
    expect(failed instanceof Promise).toBe(false)
    expect(Exit.isFailure(failed as Exit.Exit<never, string>)).toBe(true)
  })

  it("runs an effect that waits as a promise, and a runner without runSyncExit always so", async () => {
    const waiting = Runner.runExit(runner, Effect.as(Effect.sleep("5 millis"), "late"))
    expect(waiting instanceof Promise).toBe(true)
    expect(await waiting).toEqual(Exit.succeed("late"))
    const promiseOnly: Runner.Runner<never> = { runPromiseExit: runner.runPromiseExit }
    const answer = Runner.runExit(promiseOnly, Effect.succeed(1))
    expect(answer instanceof Promise).toBe(true)
    expect(await answer).toEqual(Exit.succeed(1))
  })
})
