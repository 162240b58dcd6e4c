import { describe, expect, it } from "vitest"
import AsyncExitHook from "async-exit-hook"
import * as EmbeddedPostgres from "../src/EmbeddedPostgres.js"

describe("EmbeddedPostgres and process exit", () => {
  it("leaves the exit code to the program: no beforeExit/exit hook, signal hooks kept", () => {
    expect(typeof EmbeddedPostgres.start).toBe("function")
    const hooked = AsyncExitHook.hookedEvents()
    expect(hooked).not.toContain("beforeExit")
    expect(hooked).not.toContain("exit")
    expect(hooked).toEqual(expect.arrayContaining(["SIGINT", "SIGTERM"]))
  })

  it("leaveSignalsToHost hands SIGINT, SIGTERM and SIGHUP to the program", () => {
    EmbeddedPostgres.leaveSignalsToHost()
    expect(AsyncExitHook.hookedEvents().filter((e) => e.startsWith("SIG"))).toEqual([])
  })
})
