/**
 * The reference server on its embedded PostgreSQL, killed (`kill -9`, the OOM killer): its
 * PostgreSQL outlives it and keeps the data directory locked. The next start stops that PostgreSQL
 * and goes on with the data; before, it waited for ever. A second server on a data directory whose
 * server still runs is refused at once, naming it. A PostgreSQL killed under a running server is
 * logged as an error, and the server's stop no longer waits for ever for its exit.
 */
import { afterEach, describe, expect, it } from "vitest"
import { EmbeddedPostgres } from "@paydesk/sql-pg"
import { randomBytes } from "node:crypto"
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { dataDir, request, type ServerProcess, spawnServer } from "./ServerProcess.js"

const alive = EmbeddedPostgres.alive

const running: Array<ServerProcess> = []
const dirs: Array<string> = []
afterEach(async () => {
  for (const server of running.splice(0)) await server.kill("SIGKILL")
  for (const dir of dirs.splice(0)) {
    // A PostgreSQL a failed test left behind.
    try {
      const pid = Number.parseInt(readFileSync(join(dir, "postgres", "postmaster.pid"), "utf8"), 10)
      if (alive(pid)) process.kill(pid, "SIGQUIT")
    } catch {
      // none
    }
    rmSync(dir, { recursive: true, force: true })
  }
})

describe("the server on its embedded PostgreSQL", () => {
  it("starts again after a kill -9, stopping the PostgreSQL the killed server left running; a second server on a data directory in use is refused", async () => {
    const dir = dataDir()
    dirs.push(dir)
    const adminToken = "restart-admin-token"
    const port = await EmbeddedPostgres.freePort()
    const base = `http://127.0.0.1:${port}`
    const env = {
      PORT: String(port),
      PAYDESK_DATA_DIR: dir,
      PAYDESK_ADMIN_TOKEN: adminToken,
      PAYDESK_SECRET_KEY: randomBytes(32).toString("base64"),
      DATABASE_URL: undefined
    }
    const admin = { authorization: `Bearer ${adminToken}` }
    const first = await spawnServer(env, 120_000)
    running.push(first)
    const created = await request(base, "POST", "/admin/v1/accounts", {
      headers: admin,
      body: { name: "Kept", owner_email: "kept@example.com", owner_password: "correct horse battery" }
    })
    expect(created.status).toBe(201)
    const postmaster = Number.parseInt(readFileSync(join(dir, "postgres", "postmaster.pid"), "utf8"), 10)

    // Another server on the same data directory while the first runs: refused, not left waiting.
    const second = await spawnServer({ ...env, PORT: String(await EmbeddedPostgres.freePort()) }, 60_000).then(
      (server) => {
        running.push(server)
        return "started"
      },
      (error: Error) => error.message
    )
    expect(second).toMatch(/in use by the program that started it \(process \d+\)/)
    expect(alive(postmaster)).toBe(true)

    await first.kill("SIGKILL")
    running.splice(running.indexOf(first), 1)
    // The killed server's PostgreSQL runs on, holding the data directory.
    expect(alive(postmaster)).toBe(true)

    const third = await spawnServer(env, 120_000)
    running.push(third)
    expect(third.output()).toContain(`stopping the PostgreSQL left running in`)
    expect(alive(postmaster)).toBe(false)
    const accounts = await request(base, "GET", "/admin/v1/accounts", { headers: admin })
    expect(accounts.status).toBe(200)
    expect(JSON.stringify(accounts.json)).toContain(created.json.id ?? created.json.account_id)
    expect(await third.kill("SIGTERM")).toBe(0)
    running.splice(running.indexOf(third), 1)
  }, 300_000)

  it("its PostgreSQL killed under it: an error names it, and SIGTERM still stops the server (it waited for ever)", async () => {
    const dir = dataDir()
    dirs.push(dir)
    const port = await EmbeddedPostgres.freePort()
    const server = await spawnServer({
      PORT: String(port),
      PAYDESK_DATA_DIR: dir,
      PAYDESK_ADMIN_TOKEN: "death-admin-token",
      PAYDESK_SECRET_KEY: randomBytes(32).toString("base64"),
      DATABASE_URL: undefined
    }, 120_000)
    running.push(server)
    const postmaster = Number.parseInt(readFileSync(join(dir, "postgres", "postmaster.pid"), "utf8"), 10)
    process.kill(postmaster, "SIGKILL")
    for (const until = Date.now() + 10_000; !server.output().includes("has exited: every request that needs the database fails") && Date.now() < until;) {
      await new Promise((ok) => setTimeout(ok, 100))
    }
    // Liveness fails, so that an orchestrator restarts the server.
    const live = await request(`http://127.0.0.1:${port}`, "GET", "/health/live")
    expect([live.status, live.json]).toEqual([503, { status: "failing", detail: expect.stringMatching(new RegExp(`\\(process ${postmaster}\\) has exited$`)) }])
    const code = await Promise.race([server.kill("SIGTERM"), new Promise<string>((ok) => setTimeout(() => ok("still running 20 s after SIGTERM"), 20_000))])
    expect(code).toBe(0)
    running.splice(running.indexOf(server), 1)
    expect(server.output()).toMatch(new RegExp(`the embedded PostgreSQL in .* \\(process ${postmaster}\\) has exited`))
    expect(server.output()).toContain(`(process ${postmaster}) had exited before its stop (killed): nothing to stop`)
    expect(server.output()).toContain("embedded PostgreSQL stopped")
    expect(server.output()).toContain("paydesk stopped")
  }, 120_000)
})
