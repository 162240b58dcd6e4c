/**
 * Security of callbacks against the real server (in process, PostgreSQL): the callback URL rule on
 * write through the merchant API and the operator API (SSRF matrix), the check of resolved addresses
 * at send time (a name resolving to loopback, DNS answers handed to the socket), and a receiver
 * answering 64 MiB, of which the server keeps a 1 KiB excerpt and reads little more.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createServer } from "node:http"
import { HttpCallbackTransport } from "../src/index.js"
import { startServer } from "./ServerHarness.js"
import { database } from "./ServerProcess.js"

type Srv = Awaited<ReturnType<typeof startServer>>

/** Every disguise of an internal destination; none may be stored as a callback URL. */
const internal = [
  "http://127.0.0.1/cb",
  "http://127.0.0.1:8080/admin/v1/clock",
  "http://localhost/cb",
  "http://localhost./cb",
  "http://api.localhost/cb",
  "http://0x7f000001/cb",
  "http://2130706433/cb",
  "http://0177.0.0.1/cb",
  "http://127.1/cb",
  "http://0x7f.1/cb",
  "http://%31%32%37.0.0.1/cb",
  "http://0/cb",
  "http://0.0.0.0/cb",
  "http://[::1]/cb",
  "http://[::]/cb",
  "http://[::ffff:127.0.0.1]/cb",
  "http://[0:0:0:0:0:ffff:7f00:1]/cb",
  "http://[::ffff:169.254.169.254]/cb",
  "http://10.0.0.1/cb",
  "http://172.16.5.4/cb",
  "http://192.168.1.1/cb",
  "http://100.64.0.1/cb",
  "http://169.254.169.254/latest/meta-data/",
  "http://[fe80::1]/cb",
  "http://[fd00:ec2::254]/latest/meta-data/",
  "http://[64:ff9b::a9fe:a9fe]/cb",
  "http://[2002:7f00:1::]/cb",
  "http://224.0.0.1/cb",
  "http://255.255.255.255/cb",
  "http://metadata.google.internal/computeMetadata/v1/",
  "http://intranet/cb",
  "http://printer.local/cb",
  "http://user:pass@merchant.example/cb"
]

/** Allowed with PAYDESK_CALLBACK_ALLOW_PRIVATE=1 (development); the rest stays refused even then. */
const privateOnly = new Set([
  "http://127.0.0.1/cb", "http://127.0.0.1:8080/admin/v1/clock", "http://localhost/cb", "http://localhost./cb", "http://api.localhost/cb",
  "http://0x7f000001/cb", "http://2130706433/cb", "http://0177.0.0.1/cb", "http://127.1/cb", "http://0x7f.1/cb", "http://%31%32%37.0.0.1/cb",
  "http://[::1]/cb", "http://[::ffff:127.0.0.1]/cb", "http://[0:0:0:0:0:ffff:7f00:1]/cb", "http://10.0.0.1/cb", "http://172.16.5.4/cb",
  "http://192.168.1.1/cb", "http://100.64.0.1/cb", "http://[fd00:ec2::254]/latest/meta-data/", "http://[2002:7f00:1::]/cb",
  "http://metadata.google.internal/computeMetadata/v1/", "http://intranet/cb", "http://printer.local/cb"
])

const publicUrls = ["https://merchant.example/callbacks", "http://93.184.216.34/cb", "https://[2606:2800:220:1:248:1893:25c8:1946]/cb", "https://shop.example:8443/paydesk?x=1"]

describe("callback URLs refused on write (SSRF)", () => {
  let strict: Srv
  let relaxed: Srv

  beforeAll(async () => {
    strict = await startServer({ PAYDESK_CALLBACK_ALLOW_PRIVATE: "0" })
    relaxed = await startServer({ PAYDESK_CALLBACK_ALLOW_PRIVATE: "1" })
  }, 120_000)

  afterAll(async () => {
    await strict?.stop()
    await relaxed?.stop()
  })

  it(`refuses ${internal.length} internal forms through PUT /api/v1/terminals/{id}, the operator's POST /admin/v1/terminals and PUT /admin/v1/terminals/{id}, and keeps the stored URL`, async () => {
    const m = await strict.merchant("https://merchant.example/callbacks")
    const account = await strict.admin("POST", "/accounts", { name: "Probe", owner_email: `probe-${Date.now()}@x.example`, owner_password: "correct horse" })
    for (const url of internal) {
      const put = await m.api("PUT", `/terminals/${m.terminalId}`, { callback_url: url })
      expect([url, put.status, put.json?.error?.field]).toEqual([url, 400, "callback_url"])
      const created = await strict.admin("POST", "/terminals", { account_id: account.json.account_id, name: "Probe", callback_url: url })
      expect([url, created.status, created.json?.error?.field]).toEqual([url, 400, "callback_url"])
      const operatorPut = await strict.admin("PUT", `/terminals/${m.terminalId}`, { callback_url: url })
      expect([url, operatorPut.status, operatorPut.json?.error?.field]).toEqual([url, 400, "callback_url"])
    }
    expect((await strict.admin("GET", `/terminals/${m.terminalId}`)).json.callback_url).toBe("https://merchant.example/callbacks")
    for (const url of publicUrls) {
      const operatorPut = await strict.admin("PUT", `/terminals/${m.terminalId}`, { callback_url: url })
      expect([url, operatorPut.status, operatorPut.json.callback_url]).toEqual([url, 200, url])
      const put = await m.api("PUT", `/terminals/${m.terminalId}`, { callback_url: url })
      expect([url, put.status, put.json.callback_url]).toEqual([url, 200, url])
    }
    const credentials = await m.api("PUT", `/terminals/${m.terminalId}`, { callback_url: "https://user:secret@merchant.example/cb" })
    expect(credentials.json.error.message).toMatch(/credentials/)
    const metadata = await m.api("PUT", `/terminals/${m.terminalId}`, { callback_url: "http://169.254.169.254/" })
    expect(metadata.json.error.message).toBe("callback_url must not point to a link-local address (169.254.169.254)")
    const operatorMetadata = await strict.admin("PUT", `/terminals/${m.terminalId}`, { callback_url: "http://169.254.169.254/" })
    expect(operatorMetadata.json.error.message).toBe("callback_url must not point to a link-local address (169.254.169.254)")
    const unspecified = await m.api("PUT", `/terminals/${m.terminalId}`, { callback_url: "http://0.0.0.0/" })
    expect(unspecified.json.error.message).toBe("callback_url must not point to an unspecified address (0.0.0.0)")
    const operatorCredentials = await strict.admin("PUT", `/terminals/${m.terminalId}`, { callback_url: "https://user:secret@merchant.example/cb" })
    expect(operatorCredentials.json.error.message).toMatch(/credentials/)
    const unchanged = await m.api("PUT", `/terminals/${m.terminalId}`, {})
    expect(unchanged.json.callback_url).toBe(publicUrls.at(-1))
  }, 60_000)

  it("with PAYDESK_CALLBACK_ALLOW_PRIVATE=1 accepts loopback and private targets, never metadata, unspecified, multicast or credentials", async () => {
    const m = await relaxed.merchant("http://127.0.0.1:9/cb")
    for (const url of internal) {
      const put = await m.api("PUT", `/terminals/${m.terminalId}`, { callback_url: url })
      expect([url, put.status]).toEqual([url, privateOnly.has(url) ? 200 : 400])
      const operatorPut = await relaxed.admin("PUT", `/terminals/${m.terminalId}`, { callback_url: url })
      expect([url, "operator", operatorPut.status]).toEqual([url, "operator", privateOnly.has(url) ? 200 : 400])
    }
  }, 60_000)
})

describe("callback destinations checked at send time", () => {
  let srv: Srv
  let receiver: ReturnType<typeof createServer>
  let port = 0
  let hits = 0

  beforeAll(async () => {
    srv = await startServer({ PAYDESK_CALLBACK_ALLOW_PRIVATE: "0" })
    receiver = createServer((request, response) => {
      hits++
      request.resume()
      request.on("end", () => response.writeHead(200).end("ok"))
    })
    await new Promise<void>((ok) => receiver.listen(0, "127.0.0.1", ok))
    port = (receiver.address() as { port: number }).port
  }, 120_000)

  afterAll(async () => {
    receiver?.closeAllConnections()
    receiver?.close()
    await srv?.stop()
  })

  it("a stored URL whose name resolves to loopback is not called; the attempt records why", async () => {
    await srv.setClock("2026-05-01T10:00:00.000Z")
    const m = await srv.merchant("https://merchant.example/callbacks")
    // A row written before the rule existed (or a name that resolved elsewhere when it was stored).
    const db = database(srv.databaseUrl)
    await db.query("UPDATE terminals SET callback_url = $1 WHERE id = $2", [`http://localhost:${port}/cb`, m.terminalId])
    const created = await m.api("POST", "/payments", { amount: "10.00", order_id: "ssrf-1", test: true })
    expect(created.status).toBe(201)
    await srv.work()
    const deliveries = await srv.admin("GET", `/deliveries?payment_id=${created.json.id}`)
    const detail = await srv.admin("GET", `/deliveries/${deliveries.json.items[0].id}`)
    expect(detail.json.attempts).toHaveLength(1)
    expect(detail.json.attempts[0]).toMatchObject({ status_code: null, response_body: null })
    // The merchant is not told which address the name resolved to (the operator's log is).
    expect(detail.json.attempts[0].error).toBe("callback destination refused: localhost resolves to an address callbacks may not go to")
    expect(hits).toBe(0)
    await db.close()
  }, 60_000)

  it("the socket connects to the address the check saw, resolved once per connection", async () => {
    const resolved: Array<string> = []
    // A rebinding name: the receiver on loopback at first, the metadata address on every later answer.
    const rebinding: HttpCallbackTransport.Resolver = (hostname, done) => {
      resolved.push(hostname)
      done(null, [{ address: resolved.length === 1 ? "127.0.0.1" : "169.254.169.254", family: 4 }])
    }
    const request = { url: `http://rebind.example:${port}/cb`, headers: { "content-type": "application/json" }, body: "{}", timeoutMs: 2000 }
    // Development mode allows loopback: the request goes to the address that was checked.
    const answer = await HttpCallbackTransport.send(request, true, rebinding)
    expect([answer.statusCode, answer.body, hits]).toEqual([200, "ok", 1])
    // The next connection resolves again; its answer is checked before any connect, and refused.
    await expect(HttpCallbackTransport.send(request, true, rebinding)).rejects.toMatchObject({
      message: "callback destination refused: rebind.example resolves to an address callbacks may not go to",
      detail: "rebind.example resolves to a link-local address (169.254.169.254)"
    })
    expect(hits).toBe(1)
    expect(resolved).toEqual(["rebind.example", "rebind.example"])
    // Without development mode the loopback answer itself is refused.
    await expect(HttpCallbackTransport.send(request, false, (_name, done) => done(null, [{ address: "127.0.0.1", family: 4 }])))
      .rejects.toMatchObject({ detail: "rebind.example resolves to a loopback address (127.0.0.1)" })
    // A name with one bad address among good ones is refused as a whole.
    await expect(HttpCallbackTransport.send(request, true, (_name, done) =>
      done(null, [{ address: "127.0.0.1", family: 4 }, { address: "::ffff:169.254.169.254", family: 6 }]))).rejects.toMatchObject({ detail: expect.stringMatching(/link-local/) })
    expect(hits).toBe(1)
  }, 30_000)
})

describe("callback answers are kept up to 1 KiB", () => {
  let srv: Srv
  let receiver: ReturnType<typeof createServer>
  let url = ""
  const size = 64 * 1024 * 1024
  let written = 0

  beforeAll(async () => {
    srv = await startServer()
    const chunk = Buffer.alloc(1024 * 1024, "x")
    receiver = createServer((request, response) => {
      request.resume()
      request.on("end", () => {
        response.writeHead(200, { "content-type": "text/plain", "content-length": String(size) })
        const pump = () => {
          while (written < size) {
            written += chunk.length
            if (!response.write(chunk)) return void response.once("drain", pump)
          }
          response.end()
        }
        response.on("close", () => response.removeAllListeners("drain"))
        pump()
      })
    })
    await new Promise<void>((ok) => receiver.listen(0, "127.0.0.1", ok))
    url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/cb`
  }, 120_000)

  afterAll(async () => {
    receiver?.closeAllConnections()
    receiver?.close()
    await srv?.stop()
  })

  it("a receiver answering 64 MiB costs the server a bounded amount of memory, and the attempt is recorded with the first KiB", async () => {
    await srv.setClock("2026-05-02T10:00:00.000Z")
    const m = await srv.merchant(url)
    const created = await m.api("POST", "/payments", { amount: "10.00", order_id: "big-answer", test: true })
    global.gc?.()
    const before = process.memoryUsage()
    let peak = before.rss
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5)
    await srv.work()
    clearInterval(sampler)
    const detail = await srv.admin("GET", `/deliveries?payment_id=${created.json.id}`)
    const attempts = (await srv.admin("GET", `/deliveries/${detail.json.items[0].id}`)).json.attempts
    expect(detail.json.items[0].status).toBe("delivered")
    expect(attempts).toHaveLength(1)
    expect(attempts[0].status_code).toBe(200)
    expect(attempts[0].response_body).toBe("x".repeat(1024))
    // The connection was dropped after the excerpt (the answer announced more than reuseBytes): most
    // of the 64 MiB was never sent (socket buffers hold a few MiB).
    expect(written).toBeLessThan(size / 4)
    expect(peak - before.rss).toBeLessThan(size / 2)
  }, 60_000)
})
