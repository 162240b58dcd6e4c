/**
 * Brute force and login floods against the real server (in process, PostgreSQL, scrypt): login
 * limits per e-mail and per client address (429 with Retry-After in the error format), bounded
 * password hashing (503 past its queue), and API-key requests that keep answering during a flood
 * because their hashing never waits on libuv's thread pool.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { randomBytes, scrypt } from "node:crypto"
import { startServer } from "./ServerHarness.js"

type Srv = Awaited<ReturnType<typeof startServer>>

const login = (srv: Srv, email: string, password: string) => srv.call("POST", "/api/v1/auth/login", { body: { email, password } })

const owner = async (srv: Srv) => {
  const email = `owner-${randomBytes(4).toString("hex")}@shop.example`
  const created = await srv.admin("POST", "/accounts", { name: "Shop", owner_email: email, owner_password: "correct horse" })
  expect(created.status).toBe(201)
  return email
}

const expectTooMany = (answer: Awaited<ReturnType<typeof login>>) => {
  expect(answer.status).toBe(429)
  expect(answer.json.error).toMatchObject({ code: "too_many_requests", message: expect.stringMatching(/^too many login attempts, retry in \d+ s$/) })
  expect(answer.json.error.request_id).toMatch(/^req_/)
}

describe("login limits", () => {
  let srv: Srv
  let perAddress: Srv

  beforeAll(async () => {
    srv = await startServer()
    perAddress = await startServer({ PAYDESK_LOGIN_LIMIT_PER_ADDRESS: "5", PAYDESK_LOGIN_LIMIT_PER_EMAIL: "100" })
  }, 120_000)

  afterAll(async () => {
    await srv?.stop()
    await perAddress?.stop()
  })

  it("ten attempts a minute per e-mail, then 429 with Retry-After of at most a minute, even for the right password", async () => {
    const email = await owner(srv)
    for (let i = 0; i < 10; i++) expect((await login(srv, email, `wrong-${i}`)).status).toBe(401)
    const limited = await fetch(`${srv.base}/api/v1/auth/login`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: ` ${email.toUpperCase()} `, password: "correct horse" })
    })
    expect(limited.status).toBe(429)
    const retryAfter = Number(limited.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expectTooMany({ status: limited.status, json: await limited.json(), text: "", headers: {} })
    // Another e-mail from the same address is not affected.
    const other = await owner(srv)
    expect((await login(srv, other, "correct horse")).status).toBe(200)
  }, 60_000)

  it("thirty attempts a minute per client address whatever the e-mails (here configured to five)", async () => {
    for (let i = 0; i < 5; i++) expect((await login(perAddress, `nobody-${i}@shop.example`, "guess")).status).toBe(401)
    expectTooMany(await login(perAddress, "nobody-6@shop.example", "guess"))
  }, 60_000)
})

describe("login limits behind a reverse proxy (PAYDESK_TRUST_PROXY)", () => {
  let direct: Srv
  let proxied: Srv
  const limits = { PAYDESK_LOGIN_LIMIT_PER_ADDRESS: "3", PAYDESK_LOGIN_LIMIT_PER_EMAIL: "100" }
  const from = (srv: Srv, client: string, i: number) =>
    srv.call("POST", "/api/v1/auth/login", { body: { email: `nobody-${i}@shop.example`, password: "guess" }, headers: { "x-forwarded-for": client } })

  beforeAll(async () => {
    direct = await startServer(limits)
    // The test's requests come from 127.0.0.1: that is the proxy.
    proxied = await startServer({ ...limits, PAYDESK_TRUST_PROXY: "127.0.0.1" })
  }, 120_000)

  afterAll(async () => {
    await direct?.stop()
    await proxied?.stop()
  })

  it("with it, the per-address limit keys on the client in X-Forwarded-For: one client's attempts do not limit another behind the same proxy", async () => {
    for (let i = 0; i < 3; i++) expect((await from(proxied, "203.0.113.7", i)).status).toBe(401)
    expectTooMany(await from(proxied, "203.0.113.7", 3))
    expect((await from(proxied, "198.51.100.9", 4)).status).toBe(401)
    // The proxy's own address appended by a second hop does not make it another client.
    expectTooMany(await from(proxied, "203.0.113.7, 127.0.0.1", 5))
  }, 60_000)

  it("without it, X-Forwarded-For is ignored: a client cannot escape the limit by naming other addresses", async () => {
    for (let i = 0; i < 3; i++) expect((await from(direct, `203.0.113.${10 + i}`, i)).status).toBe(401)
    expectTooMany(await from(direct, "198.51.100.9", 3))
  }, 60_000)
})

describe("login floods", () => {
  let srv: Srv

  beforeAll(async () => {
    srv = await startServer({ PAYDESK_LOGIN_LIMIT_PER_ADDRESS: "10000" })
  }, 120_000)

  afterAll(async () => {
    await srv?.stop()
  })

  it("password hashing is bounded: past two running and sixteen waiting, logins answer 503 at once; an API-key request answers while the flood is still running", async () => {
    const m = await srv.merchant("https://merchant.example/cb")
    let answered = 0
    const flood = Array.from({ length: 40 }, (_, i) =>
      login(srv, `flood-${i}-${randomBytes(3).toString("hex")}@shop.example`, "guess").then((answer) => {
        answered++
        return answer
      }))
    // Let the flood reach the hasher, then ask for the balance with an API key.
    await new Promise((ok) => setTimeout(ok, 150))
    const balance = await m.api("GET", "/balance")
    const answeredWhenBalanceCame = answered
    const answers = await Promise.all(flood)
    expect(balance.status).toBe(200)
    expect(answers.every((a) => a.status === 401 || a.status === 503)).toBe(true)
    const busy = answers.filter((a) => a.status === 503)
    expect(busy.length).toBeGreaterThanOrEqual(10)
    expect(busy[0]!.json.error).toMatchObject({ code: "service_busy", message: "too many sign-ins in progress, retry shortly" })
    // Logins still hashing when the balance came: the API key did not wait behind them.
    expect(40 - answeredWhenBalanceCame).toBeGreaterThanOrEqual(10)
  }, 60_000)

  it("API-key authentication does not use libuv's thread pool: it answers while the pool is saturated", async () => {
    const m = await srv.merchant("https://merchant.example/cb")
    expect((await m.api("GET", "/balance")).status).toBe(200)
    const order: Array<string> = []
    // Eight memory-hard hashes fill the pool's four threads twice over.
    const saturate = Array.from({ length: 8 }, (_, i) =>
      new Promise<void>((ok, fail) =>
        scrypt("x", `salt-${i}`, 32, { N: 2 ** 16, r: 8, p: 1, maxmem: 256 * 1024 * 1024 }, (error) => {
          order.push("scrypt")
          return error ? fail(error) : ok()
        })))
    const balance = await m.api("GET", "/balance")
    order.push("balance")
    await Promise.all(saturate)
    expect(balance.status).toBe(200)
    expect(order[0]).toBe("balance")
  }, 60_000)
})
