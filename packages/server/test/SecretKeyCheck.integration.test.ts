/**
 * The secret key is checked against the database at start: a server whose key cannot decrypt the
 * terminals' signing secrets the database holds (moved to a new host, a backup restored without
 * its `secret.key`, a wrong `PAYDESK_SECRET_KEY`) refuses to start, naming the problem, and
 * generates no key for such a database. Before, it generated a new key, reported ready, and every
 * callback failed "signing secret unavailable" until its delivery was given up (outside probe).
 * A fresh database starts as before, writing the generated key once.
 */
import { afterEach, describe, expect, it } from "vitest"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import * as Config from "../src/Config.js"
import * as Server from "../src/Server.js"
import { freshDatabase } from "./ServerHarness.js"
import { dataDir, request } from "./ServerProcess.js"

const serverDir = resolve(import.meta.dirname, "..")
const adminToken = "key-check-admin"
const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const newDir = () => {
  const dir = dataDir()
  dirs.push(dir)
  return dir
}

/** A server on `databaseUrl` with data directory `dir` (and `PAYDESK_SECRET_KEY` when given). */
const start = (databaseUrl: string, dir: string, secretKey?: string) =>
  Server.start(Config.load({
    PORT: "0",
    DATABASE_URL: databaseUrl,
    PAYDESK_DATA_DIR: dir,
    PAYDESK_ADMIN_TOKEN: adminToken,
    PAYDESK_ENGINE: "off",
    PAYDESK_CALLBACK_ALLOW_PRIVATE: "1",
    LOG_LEVEL: "silent",
    ...(secretKey === undefined ? {} : { PAYDESK_SECRET_KEY: secretKey })
  }))

const refused = (promise: Promise<Server.Running>) =>
  promise.then(async (running) => {
    await running.stop()
    return "started"
  }, (error: Error) => error.message)

const mismatch = /the database already holds terminal signing secrets encrypted with another key: .*; give this server the key the database was written with, as PAYDESK_SECRET_KEY or as the secret\.key of the data directory it was made with/

describe("the secret key checked against the database at start", () => {
  it("refuses a key that cannot decrypt the stored secrets (and generates none for such a database); the right key starts", async () => {
    const databaseUrl = await freshDatabase()
    // Host A: a fresh database, no key given: one is generated into its data directory.
    const hostA = newDir()
    const first = await start(databaseUrl, hostA)
    const keyA = readFileSync(join(hostA, "secret.key"), "utf8").trim()
    const admin = { authorization: `Bearer ${adminToken}` }
    const account = await request(first.url, "POST", "/admin/v1/accounts", {
      headers: admin,
      body: { name: "Keyed", owner_email: "keyed@shop.example", owner_password: "correct horse" }
    })
    expect(account.status).toBe(201)
    const terminal = await request(first.url, "POST", "/admin/v1/terminals", {
      headers: admin,
      body: { account_id: account.json.account_id, name: "Shop", callback_url: "http://127.0.0.1:9/cb", h2h: false }
    })
    expect(terminal.status).toBe(201)
    await first.stop()

    // Host B: same database, empty data directory, no key: refused, and no key written.
    const hostB = newDir()
    const moved = await refused(start(databaseUrl, hostB))
    expect(moved).toMatch(mismatch)
    expect(moved).toContain(`this server has no key (PAYDESK_SECRET_KEY is not set and ${join(hostB, "secret.key")} does not exist), and a new one could never decrypt them, so none was generated`)
    expect(existsSync(join(hostB, "secret.key"))).toBe(false)

    // A wrong PAYDESK_SECRET_KEY: refused, naming the variable.
    const wrong = await refused(start(databaseUrl, hostB, randomBytes(32).toString("base64")))
    expect(wrong).toMatch(/^PAYDESK_SECRET_KEY: /)
    expect(wrong).toMatch(mismatch)
    expect(wrong).toContain("another key: PAYDESK_SECRET_KEY cannot decrypt them;")

    // A secret.key from elsewhere in the data directory: refused, naming the file.
    writeFileSync(join(hostB, "secret.key"), `${randomBytes(32).toString("base64")}\n`)
    const foreign = await refused(start(databaseUrl, hostB))
    expect(foreign).toContain(`another key: the key in ${join(hostB, "secret.key")} cannot decrypt them;`)
    rmSync(join(hostB, "secret.key"))

    // The key the database was written with starts, given or in the data directory.
    const given = await start(databaseUrl, hostB, keyA)
    expect((await request(given.url, "GET", "/health/ready")).status).toBe(200)
    await given.stop()
    expect(existsSync(join(hostB, "secret.key"))).toBe(false)
    const again = await start(databaseUrl, hostA)
    expect((await request(again.url, "GET", "/health/ready")).status).toBe(200)
    await again.stop()
    expect(readFileSync(join(hostA, "secret.key"), "utf8").trim()).toBe(keyA)
  }, 120_000)

  it("the server process refuses it with `cannot start` and exit code 1", async () => {
    const databaseUrl = await freshDatabase()
    const hostA = newDir()
    const first = await start(databaseUrl, hostA)
    const account = await request(first.url, "POST", "/admin/v1/accounts", {
      headers: { authorization: `Bearer ${adminToken}` },
      body: { name: "Keyed", owner_email: "keyed@shop.example", owner_password: "correct horse" }
    })
    await request(first.url, "POST", "/admin/v1/terminals", {
      headers: { authorization: `Bearer ${adminToken}` },
      body: { account_id: account.json.account_id, name: "Shop", callback_url: "http://127.0.0.1:9/cb", h2h: false }
    })
    await first.stop()
    const hostB = newDir()
    const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@paydesk/source", "src/main.ts"], {
      cwd: serverDir,
      env: { ...process.env, PORT: "0", DATABASE_URL: databaseUrl, PAYDESK_DATA_DIR: hostB, PAYDESK_ADMIN_TOKEN: adminToken, PAYDESK_SECRET_KEY: undefined, LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    // A server that starts anyway is stopped by the test, not left running.
    const started = setInterval(() => void (stdout.includes("paydesk listening on") && child.kill("SIGKILL")), 100)
    const code = await new Promise<number | null>((ok) => child.once("exit", (c) => ok(c))).finally(() => clearInterval(started))
    expect(code).toBe(1)
    expect(stderr).toMatch(new RegExp("^paydesk: cannot start: secret key: " + mismatch.source, "m"))
    expect(stdout).not.toContain("paydesk listening on")
    expect(existsSync(join(hostB, "secret.key"))).toBe(false)
  }, 120_000)

  it("a fresh database starts with a generated key, written once", async () => {
    const databaseUrl = await freshDatabase()
    const dir = newDir()
    const first = await start(databaseUrl, dir)
    const key = readFileSync(join(dir, "secret.key"), "utf8").trim()
    expect(Buffer.from(key, "base64")).toHaveLength(32)
    await first.stop()
    const second = await start(databaseUrl, dir)
    await second.stop()
    expect(readFileSync(join(dir, "secret.key"), "utf8").trim()).toBe(key)
  }, 120_000)
})
