/**
 * A start that fails half-way undoes what it started: here the listen fails (port taken) after
 * the embedded database, the bank's pool, the runtime and the worker are up; a second start on
 * the same data directory then works, so the embedded PostgreSQL was stopped.
 */
import { describe, expect, it } from "vitest"
import { connect, createServer } from "node:net"
import { randomBytes } from "node:crypto"
import * as Config from "../src/Config.js"
import * as Server from "../src/Server.js"
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { EmbeddedPostgres } from "@paydesk/sql-pg"
import { freshDatabase } from "./ServerHarness.js"
import { dataDir, request, spawnServer } from "./ServerProcess.js"

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

describe("the operator token when none is given", () => {
  it("is generated once into the data directory (mode 600), kept across restarts, and never printed: the log says where it is", async () => {
    const dir = dataDir()
    const databaseUrl = await freshDatabase()
    const port = await EmbeddedPostgres.freePort()
    const env = { PORT: String(port), DATABASE_URL: databaseUrl, PAYDESK_DATA_DIR: dir, PAYDESK_ADMIN_TOKEN: undefined, LOG_LEVEL: "info", PAYDESK_ENGINE: "off" }
    const file = join(dir, "admin-token")
    const first = await spawnServer(env)
    const token = readFileSync(file, "utf8").trim()
    try {
      expect(token).toMatch(/^adm_[A-Za-z0-9_-]{32}$/)
      expect(statSync(file).mode & 0o777).toBe(0o600)
      // Only JSON lines, none with the token (an outside probe found it printed into the log stream).
      const lines = first.output().split("\n").filter((line) => line.trim() !== "")
      for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow()
      expect(first.output()).not.toContain(token)
      expect(first.output()).toContain(`kept in ${file}; export PAYDESK_ADMIN_TOKEN=$(cat ${file})`)
      const base = `http://127.0.0.1:${port}`
      expect((await request(base, "GET", "/admin/v1/accounts", { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
    } finally {
      expect(await first.kill()).toBe(0)
    }
    // The same token after a restart (as `./run dev` restarts on every change); a file others may read is warned about.
    chmodSync(file, 0o644)
    const second = await spawnServer(env)
    try {
      expect(readFileSync(file, "utf8").trim()).toBe(token)
      expect(second.output()).not.toContain(token)
      expect(second.output()).toContain(`operator token file ${file}: other users may read it (mode 644): chmod 600 it`)
      expect((await request(`http://127.0.0.1:${port}`, "GET", "/admin/v1/accounts", { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
    } finally {
      await second.kill()
    }
    // A file edited by hand is held to a generated token's rules (a re-probe's one-letter token was taken on 0.0.0.0).
    for (const bad of ["x", "a".repeat(31), `${"a".repeat(20)} ${"b".repeat(20)}`]) {
      writeFileSync(file, `${bad}\n`)
      const refused = await Server.start(Config.load({ ...env, PAYDESK_ADMIN_TOKEN: undefined, HOST: "0.0.0.0", LOG_LEVEL: "silent", PAYDESK_PUBLIC_URL: "https://pay.example" }))
        .then(async (running) => (await running.stop(), "started"), (error: Error) => error.message)
      expect(refused, bad).toBe(`operator token file ${file}: the token must be at least 32 visible characters without spaces: remove the file, and a new one is written (or give PAYDESK_ADMIN_TOKEN)`)
    }
  }, 120_000)
})

describe("a stop whose requests outlast PAYDESK_SHUTDOWN_TIMEOUT_MS", () => {
  it("cuts them and says so (it said they had finished)", async () => {
    const port = await EmbeddedPostgres.freePort()
    const server = await spawnServer({
      PORT: String(port), DATABASE_URL: await freshDatabase(), PAYDESK_DATA_DIR: dataDir(), PAYDESK_ADMIN_TOKEN: "cut-admin-token",
      PAYDESK_SHUTDOWN_TIMEOUT_MS: "300", PAYDESK_ENGINE: "off", LOG_LEVEL: "info",
      // A misspelt setting is named at start (it was ignored without a word).
      PAYDESK_SHUTDOWN_TIMEOUT: "5"
    })
    expect(server.output()).toContain("warning: PAYDESK_SHUTDOWN_TIMEOUT is no setting of the server and is ignored (did you mean PAYDESK_SHUTDOWN_TIMEOUT_MS?)")
    // A request whose body never comes: in flight until the stop cuts it.
    const socket = connect({ host: "127.0.0.1", port })
    socket.on("error", () => {})
    await new Promise((resolve) => socket.once("connect", resolve))
    socket.write("POST /api/v1/payments HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{")
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(await server.kill("SIGTERM")).toBe(0)
    socket.destroy()
    expect(server.output()).toContain("requests still in flight after 300 ms: closing their connections")
    expect(server.output()).toContain("HTTP server closed: the requests still in flight after 300 ms were cut (their clients learn no outcome)")
    expect(server.output()).not.toContain("in-flight requests finished")
  }, 120_000)
})
