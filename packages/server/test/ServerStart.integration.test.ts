/**
 * A start that fails half-way undoes what it started: here the listen fails (port taken) after
 * the embedded database, the bank's pool, the runtime and the worker are up; a second start on
 * the same data directory then works, so the embedded PostgreSQL was stopped.
 */
import { describe, expect, it } from "vitest"
import { createServer } from "node:net"
import { randomBytes } from "node:crypto"
import * as Config from "../src/Config.js"
import * as Server from "../src/Server.js"
import { dataDir } from "./ServerProcess.js"

describe("Server.start", () => {
  it("undoes a half-done start, so the same data directory starts cleanly afterwards", async () => {
    const blocker = createServer()
    await new Promise<void>((ok) => blocker.listen(0, "127.0.0.1", ok))
    const taken = (blocker.address() as { port: number }).port
    const env = { PAYDESK_DATA_DIR: dataDir(), PAYDESK_ADMIN_TOKEN: "t", PAYDESK_SECRET_KEY: randomBytes(32).toString("base64"), LOG_LEVEL: "silent" }
    const base: NodeJS.ProcessEnv = { ...process.env, ...env }
    delete base.DATABASE_URL
    try {
      await expect(Server.start(Config.load({ ...base, PORT: String(taken) }))).rejects.toThrow(/EADDRINUSE/)
    } finally {
      await new Promise<void>((ok) => blocker.close(() => ok()))
    }
    const running = await Server.start(Config.load({ ...base, PORT: "0" }))
    try {
      expect((await fetch(`${running.url}/openapi.json`)).status).toBe(200)
    } finally {
      await running.stop()
    }
  }, 120_000)
})
