/**
 * The secret key is checked against the database at start: a server whose key cannot decrypt the
 * terminals' signing secrets the database holds (moved to a new host, a backup restored without
 * its `secret.key`, a wrong `PAYDESK_SECRET_KEY`) refuses to start, naming the problem, and
 * generates no key for such a database. Before, it generated a new key, reported ready, and every
 * callback failed "signing secret unavailable" until its delivery was given up (outside probe).
 * A fresh database starts as before, writing the generated key once.
 */
import { afterEach, describe, expect, it, vi } from "vitest"
import { Effect, Exit } from "effect"
import { HmacTokenIssuer } from "@paydesk/core"
import { NodeSecurity } from "@paydesk/sql-pg"
import { spawn } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import * as Config from "../src/Config.js"
import * as Server from "../src/Server.js"
import { freshDatabase } from "./ServerHarness.js"
import { database, dataDir, request } from "./ServerProcess.js"
import { serverProgram } from "./ServerProgram.js"

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

/** A server on `databaseUrl` with data directory `dir` (and `PAYDESK_SECRET_KEY`, `PAYDESK_PREVIOUS_SECRET_KEYS` when given). */
const start = (databaseUrl: string, dir: string, secretKey?: string, previousKeys?: string, nextKey?: string, logLevel = "silent") =>
  Server.start(Config.load({
    PORT: "0",
    DATABASE_URL: databaseUrl,
    PAYDESK_DATA_DIR: dir,
    PAYDESK_ADMIN_TOKEN: adminToken,
    PAYDESK_ENGINE: "off",
    PAYDESK_CALLBACK_ALLOW_PRIVATE: "1",
    LOG_LEVEL: logLevel,
    ...(secretKey === undefined ? {} : { PAYDESK_SECRET_KEY: secretKey }),
    ...(previousKeys === undefined ? {} : { PAYDESK_PREVIOUS_SECRET_KEYS: previousKeys }),
    ...(nextKey === undefined ? {} : { PAYDESK_NEXT_SECRET_KEY: nextKey })
  }))

/** An account named `name` with its owner (`<name>@shop.example`) and a terminal, made through the operator API of `url`. */
const merchantOn = async (url: string, name: string) => {
  const admin = { authorization: `Bearer ${adminToken}` }
  const account = await request(url, "POST", "/admin/v1/accounts", {
    headers: admin,
    body: { name, owner_email: `${name.toLowerCase()}@shop.example`, owner_password: "correct horse" }
  })
  const terminal = await request(url, "POST", "/admin/v1/terminals", {
    headers: admin,
    body: { account_id: account.json.account_id, name, callback_url: "http://127.0.0.1:9/cb", h2h: false }
  })
  return { accountId: account.json.account_id as string, userId: account.json.user_id as string, terminal: terminal.json }
}

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
    // The database's key given only as a previous key: still refused, saying why.
    const previousOnly = await refused(start(databaseUrl, hostB, undefined, keyA))
    expect(previousOnly).toContain("(PAYDESK_PREVIOUS_SECRET_KEYS and PAYDESK_NEXT_SECRET_KEY are only read with: the key in force is still needed)")
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
    const child = spawn(process.execPath, serverProgram("main"), {
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

  it("a rotation of the secret key across two processes: the next key first, then the new key with the earlier one as previous (the signing secrets written again, the same secrets), then the new key alone", async () => {
    const databaseUrl = await freshDatabase()
    const dir = newDir()
    const keyA = randomBytes(32).toString("base64")
    const keyB = randomBytes(32).toString("hex")
    const first = await start(databaseUrl, dir, keyA)
    const admin = { authorization: `Bearer ${adminToken}` }
    const account = await request(first.url, "POST", "/admin/v1/accounts", {
      headers: admin,
      body: { name: "Keyed", owner_email: "rotating@shop.example", owner_password: "correct horse" }
    })
    const terminals = await Promise.all([1, 2, 3].map(async (n) =>
      (await request(first.url, "POST", "/admin/v1/terminals", {
        headers: admin,
        body: { account_id: account.json.account_id, name: `Shop ${n}`, callback_url: "http://127.0.0.1:9/cb", h2h: false }
      })).json))
    // One terminal also holds a previous signing secret (rotated within the overlap).
    const rotated = await request(first.url, "POST", `/admin/v1/terminals/${terminals[0].terminal_id}/signing-secret/rotate`, { headers: admin })
    expect(rotated.status).toBe(200)
    const session = (await request(first.url, "POST", "/api/v1/auth/login", { body: { email: "rotating@shop.example", password: "correct horse" } })).json
    const balance = (url: string, token: string) =>
      request(url, "GET", `/api/v1/balance?terminal_id=${terminals[1].terminal_id}`, { headers: { authorization: `Bearer ${token}` } })
    expect((await balance(first.url, session.access_token)).status).toBe(200)
    await first.stop()

    const db = database(databaseUrl)
    const stored = async () =>
      db.query<{ id: string; secret: string; previous: string | null }>(
        "SELECT id, signing_secret_encrypted AS secret, previous_signing_secret_encrypted AS previous FROM terminals ORDER BY id"
      )
    const before = await stored()
    const opens = async (key: string, ciphertext: string) =>
      Effect.runPromise(Effect.exit(NodeSecurity.aesGcmSecretCipher(NodeSecurity.parseKey(key)).decrypt(ciphertext)))
    /** What `key` alone opens `ciphertext` to, or null. */
    const plainOf = async (key: string, ciphertext: string) => {
      const opened = await opens(key, ciphertext)
      return Exit.isSuccess(opened) ? opened.value : null
    }
    try {
      // The new key alone cannot read what the earlier one wrote: refused, as before.
      expect(await refused(start(databaseUrl, dir, keyB))).toMatch(mismatch)
      // A previous key that is not a key: the settings are refused, naming the variable.
      expect(() => Config.load({ PAYDESK_SECRET_KEY: keyB, PAYDESK_PREVIOUS_SECRET_KEYS: `${keyA},nope` })).toThrow(
        /PAYDESK_PREVIOUS_SECRET_KEYS must be 32-byte keys \(base64, or 64 hex characters\), separated by commas/
      )
      // Step 1 (a fleet): a process given the new key as the next key starts and rewrites nothing.
      const fleetX = await start(databaseUrl, dir, keyA, undefined, keyB)
      expect((await balance(fleetX.url, session.access_token)).status).toBe(200)
      // Step 2: a process on the new key, the earlier one as previous, beside it: it starts, and every
      // signing secret (and the previous one) is written again with the new key, the same secrets.
      const rotating = await start(databaseUrl, dir, keyB, ` ${randomBytes(32).toString("base64")}, ${keyA} `)
      expect((await request(rotating.url, "GET", "/health/ready")).status).toBe(200)
      const allUnderB = async () => {
        for (let tries = 0; tries < 100; tries++) {
          const rows = await stored()
          if ((await Promise.all(rows.map((row) => plainOf(keyB, row.secret)))).every((plain) => plain !== null)) return rows
          await new Promise((ok) => setTimeout(ok, 50))
        }
        throw new Error("the signing secrets were not written again with the new key")
      }
      const after = await allUnderB()
      expect(after.filter((row) => row.previous !== null)).toHaveLength(1)
      for (const row of after) {
        const was = before.find((b) => b.id === row.id)!
        expect(row.secret).not.toBe(was.secret)
        const plain = await plainOf(keyB, row.secret)
        expect(plain).toMatch(/^sk_sign_/)
        expect(plain).toBe(await plainOf(keyA, was.secret))
        if (was.previous !== null) expect(await plainOf(keyB, row.previous!)).toBe(await plainOf(keyA, was.previous))
      }
      expect(await plainOf(keyB, after.find((row) => row.id === terminals[0].terminal_id)!.secret)).toBe(rotated.json.signing_secret)
      // An access token of the earlier key is refused by the new process (the key may have leaked);
      // the refresh token renews it, and the new token is read by both processes.
      expect((await balance(rotating.url, session.access_token)).status).toBe(401)
      const renewed = await request(rotating.url, "POST", "/api/v1/auth/refresh", { body: { refresh_token: session.refresh_token } })
      expect(renewed.status).toBe(200)
      expect((await balance(rotating.url, renewed.json.access_token)).status).toBe(200)
      expect((await balance(fleetX.url, renewed.json.access_token)).status).toBe(200)
      // A terminal made by the process still on the earlier key is under it; a process on the new key
      // alone is refused now, naming the problem; the next pass of one with the previous key writes it again.
      const lateTerminal = await request(fleetX.url, "POST", "/admin/v1/terminals", {
        headers: admin,
        body: { account_id: account.json.account_id, name: "Shop 4", callback_url: "http://127.0.0.1:9/cb", h2h: false }
      })
      const lateRow = (await stored()).find((row) => row.id === lateTerminal.json.terminal_id)!
      expect(await plainOf(keyA, lateRow.secret)).toBe(lateTerminal.json.signing_secret)
      expect(await refused(start(databaseUrl, dir, keyB))).toContain(
        "1 of the 4 terminals' signing secrets were written with a key this server does not have (a rotation of the secret key not finished?); give that key in PAYDESK_PREVIOUS_SECRET_KEYS"
      )
      await fleetX.stop()
      // The first process restarted on the earlier key with the next key: it reads everything and
      // writes nothing back.
      const fleetXAgain = await start(databaseUrl, dir, keyA, undefined, keyB)
      await rotating.stop()
      const rotatingAgain = await start(databaseUrl, dir, keyB, keyA)
      const lastly = await allUnderB()
      expect(await plainOf(keyB, lastly.find((row) => row.id === lateTerminal.json.terminal_id)!.secret)).toBe(lateTerminal.json.signing_secret)
      await fleetXAgain.stop()
      // A new terminal's secret is written with the new key alone.
      const fresh = await request(rotatingAgain.url, "POST", "/admin/v1/terminals", {
        headers: admin,
        body: { account_id: account.json.account_id, name: "Shop 5", callback_url: "http://127.0.0.1:9/cb", h2h: false }
      })
      const freshRow = (await stored()).find((row) => row.id === fresh.json.terminal_id)!
      expect(Exit.isFailure(await opens(keyA, freshRow.secret))).toBe(true)
      expect(await plainOf(keyB, freshRow.secret)).toBe(fresh.json.signing_secret)
      await rotatingAgain.stop()

      // Step 3, the earlier key gone: the new key alone starts, and the renewed session holds.
      const rotatedOnly = await start(databaseUrl, dir, keyB)
      expect((await request(rotatedOnly.url, "GET", "/health/ready")).status).toBe(200)
      expect((await balance(rotatedOnly.url, renewed.json.access_token)).status).toBe(200)
      expect((await balance(rotatedOnly.url, session.access_token)).status).toBe(401)
      await rotatedOnly.stop()
    } finally {
      await db.close()
    }
  }, 120_000)

  it("with previous keys and a next key together, what the next key opens is left as it is and what a previous key opens is written again", async () => {
    const databaseUrl = await freshDatabase()
    const dir = newDir()
    const [keyA, keyB, keyC] = [1, 2, 3].map(() => randomBytes(32).toString("base64")) as [string, string, string]
    const terminalOn = async (url: string, name: string) => (await merchantOn(url, name)).terminal
    const onA = await start(databaseUrl, dir, keyA)
    const first = await terminalOn(onA.url, "First")
    await onA.stop()
    // A process on C that also reads A (C the key it moves to, A its next: only read with).
    const onC = await start(databaseUrl, dir, keyC, undefined, keyA)
    const second = await terminalOn(onC.url, "Second")
    await onC.stop()
    const db = database(databaseUrl)
    try {
      const secretOf = async (id: string) =>
        (await db.query<{ secret: string }>("SELECT signing_secret_encrypted AS secret FROM terminals WHERE id = $1", [id]))[0]!.secret
      const opens = async (key: string, ciphertext: string) =>
        Exit.isSuccess(await Effect.runPromise(Effect.exit(NodeSecurity.aesGcmSecretCipher(NodeSecurity.parseKey(key)).decrypt(ciphertext))))
      const secondBefore = await secretOf(second.terminal_id)
      expect(await opens(keyC, secondBefore)).toBe(true)
      // The key B, A previous, C next.
      const onB = await start(databaseUrl, dir, keyB, keyA, keyC)
      for (let tries = 0; tries < 100 && !(await opens(keyB, await secretOf(first.terminal_id))); tries++) await new Promise((ok) => setTimeout(ok, 50))
      expect(await opens(keyB, await secretOf(first.terminal_id))).toBe(true)
      expect(await secretOf(second.terminal_id)).toBe(secondBefore)
      await onB.stop()
    } finally {
      await db.close()
    }
  }, 120_000)

  it("a process given previous keys says how many signing secrets it wrote again, and when none is left", async () => {
    const databaseUrl = await freshDatabase()
    const dir = newDir()
    const [keyA, keyB] = [1, 2].map(() => randomBytes(32).toString("base64")) as [string, string]
    const onA = await start(databaseUrl, dir, keyA)
    for (const name of ["First", "Second"]) await merchantOn(onA.url, name)
    await onA.stop()
    // The server's own lines (Effect's logger) go through process.stdout.write: kept here, not shown.
    const lines: Array<{ readonly level: number; readonly msg: string; readonly component?: string }> = []
    const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      for (const line of (typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8")).split("\n")) if (line.startsWith("{")) lines.push(JSON.parse(line))
      return true
    })
    const secretLines = () => lines.filter((line) => line.component === "secrets").map((line) => line.msg)
    const until = (text: string) => vi.waitFor(() => expect(secretLines().some((msg) => msg.includes(text))).toBe(true), { timeout: 30_000, interval: 50 })
    const noneLeft = "secret key: no terminal signing secret is left under PAYDESK_PREVIOUS_SECRET_KEYS; once every process runs with this PAYDESK_SECRET_KEY and one of them, started last, says so too, the previous keys can be removed"
    try {
      const rotating = await start(databaseUrl, dir, keyB, keyA, undefined, "info")
      await until("no terminal signing secret is left")
      await rotating.stop()
      expect(secretLines()).toEqual(["secret key: the signing secrets of 2 terminals written again with the secret key", noneLeft])
      // Started again: nothing left to write, said once at start.
      lines.length = 0
      const again = await start(databaseUrl, dir, keyB, keyA, undefined, "info")
      await until("no terminal signing secret is left")
      await again.stop()
      expect(secretLines()).toEqual([noneLeft])
    } finally {
      write.mockRestore()
    }
  }, 60_000)

  it("an access token minted with the key for another user or account over one's own live session is refused", async () => {
    const databaseUrl = await freshDatabase()
    const key = randomBytes(32).toString("base64")
    const server = await start(databaseUrl, newDir(), key)
    try {
      const merchant = async (name: string) => {
        const { accountId, userId, terminal } = await merchantOn(server.url, name)
        const session = (await request(server.url, "POST", "/api/v1/auth/login", { body: { email: `${name}@shop.example`, password: "correct horse" } })).json
        return { accountId, userId, terminalId: terminal.terminal_id as string, session }
      }
      const [mallory, victim] = [await merchant("mallory"), await merchant("victim")]
      const balance = (token: string, terminalId: string) =>
        request(server.url, "GET", `/api/v1/balance?terminal_id=${terminalId}`, { headers: { authorization: `Bearer ${token}` } })
      // The token key as the server derives it from its secret key (what a holder of the key can do).
      const issuer = await Effect.runPromise(HmacTokenIssuer.make(createHash("sha256").update("paydesk-access-tokens").update(NodeSecurity.parseKey(key)).digest("base64")))
      const mint = (claims: { userId: string; accountId: string }) =>
        Effect.runPromise(issuer.issue({ ...claims, role: "owner", familyId: JSON.parse(Buffer.from(mallory.session.access_token.split(".")[0], "base64url").toString()).familyId, expiresAt: Date.now() + 600_000 }))
      // Minted for herself: the same as her own token.
      expect((await balance(await mint({ userId: mallory.userId, accountId: mallory.accountId }), mallory.terminalId)).status).toBe(200)
      // For the victim, or her own user in the victim's account, over her own live family: refused.
      expect((await balance(await mint({ userId: victim.userId, accountId: victim.accountId }), victim.terminalId)).status).toBe(401)
      expect((await balance(await mint({ userId: mallory.userId, accountId: victim.accountId }), victim.terminalId)).status).toBe(401)
      expect((await balance(victim.session.access_token, victim.terminalId)).status).toBe(200)
    } finally {
      await server.stop()
    }
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

  it("processes on one fresh database share the first one's key: two starts at once with keys of their own, one refused; a later one with another key refused before any terminal exists", async () => {
    const databaseUrl = await freshDatabase()
    const keyMarker = /^(PAYDESK_SECRET_KEY|secret key file .*): the database was first started with another secret key .*; every process on one database needs the same key: give this one that key as PAYDESK_SECRET_KEY/
    // Two hosts at once, each generating a key of its own (an outside probe: both ran, and the callbacks
    // of the terminals one made were never signed by the other, which said it was ready).
    const [a, b] = [newDir(), newDir()]
    const both = await Promise.allSettled([start(databaseUrl, a), start(databaseUrl, b)])
    const started = both.flatMap((result) => result.status === "fulfilled" ? [result.value] : [])
    const failed = both.flatMap((result) => result.status === "rejected" ? [(result.reason as Error).message] : [])
    expect(started).toHaveLength(1)
    expect(failed).toHaveLength(1)
    expect(failed[0]).toMatch(keyMarker)
    expect(failed[0]).toContain("(it generated")
    const winner = both[0]!.status === "fulfilled" ? a : b
    const key = readFileSync(join(winner, "secret.key"), "utf8").trim()
    await started[0]!.stop()
    // No terminal yet: another key is refused all the same, given or generated.
    expect(await refused(start(databaseUrl, newDir(), randomBytes(32).toString("base64")))).toMatch(keyMarker)
    expect(await refused(start(databaseUrl, newDir()))).toMatch(keyMarker)
    // The first one's key starts, on any host, and so does the process that was refused once given it.
    const loser = winner === a ? b : a
    const again = await start(databaseUrl, loser, key)
    expect((await request(again.url, "GET", "/health/ready")).status).toBe(200)
    await again.stop()
    const first = await start(databaseUrl, winner)
    await first.stop()
  }, 120_000)
})
