/**
 * Security controls of the HTTP app on the in-memory kit: payer-page tokens kept out of the request
 * log, login limits that lift when their window ends (no long lock-out), the strict JSON scanner,
 * constant-time `csrf_token` checks, and the documented shapes of the credential answers.
 */
import { afterEach, describe, expect, it, vi } from "vitest"
import { readdirSync, readFileSync } from "node:fs"
import * as http from "node:http"
import * as net from "node:net"
import { join } from "node:path"
import { Layer, References } from "effect"
import { Kit, RecordingTracer } from "@paydesk/testkit"
import * as App from "../src/App.js"
import * as StrictJson from "../src/StrictJson.js"
import { adminToken, expectError, halfBodyHead, json, keyHeaders, make, rawAnswer, rawRequest, shape, slowRequestHead, slowRoute, type TestApp, untilClosed } from "./TestApp.js"

let t: TestApp | undefined
afterEach(async () => {
  await t?.close()
  t = undefined
})

describe("request log", () => {
  it("shows payer-page paths with the token replaced", async () => {
    const lines: Array<string> = []
    t = await make({ logger: { level: "info", stream: { write: (line: string) => void lines.push(line) } } })
    const merchant = await t.merchant()
    const created = json(await t.app.inject({ method: "POST", url: "/api/v1/payments", headers: keyHeaders(merchant.apiKey), payload: { amount: "10", order_id: "log-1", test: true } }))
    const token = String(created.pay_url).split("/").at(-1)!
    expect((await t.app.inject({ method: "GET", url: `/public/payments/${token}` })).statusCode).toBe(200)
    expect((await t.app.inject({ method: "GET", url: `/public/payments/${token}/status?x=1` })).statusCode).toBe(200)
    await t.app.inject({ method: "GET", url: "/public/subscriptions/some-secret-token" })
    const log = lines.join("")
    expect(log).toContain("\"url\":\"/public/payments/[redacted]\"")
    expect(log).toContain("\"url\":\"/public/payments/[redacted]/status?x=1\"")
    expect(log).toContain("\"url\":\"/public/subscriptions/[redacted]\"")
    expect(log).not.toContain(token)
    expect(log).not.toContain("some-secret-token")
  })

  it("keeps the token out of the log and the request span in every spelling of a payer-page path the router or a 404 sees", async () => {
    const lines: Array<string> = []
    const recording = RecordingTracer.make()
    t = await make({ logger: { level: "info", stream: { write: (line: string) => void lines.push(line) } } }, Layer.merge(Kit.layer, recording.layer))
    const merchant = await t.merchant()
    const created = json(await t.app.inject({ method: "POST", url: "/api/v1/payments", headers: keyHeaders(merchant.apiKey), payload: { amount: "10", order_id: "log-spellings", test: true } }))
    const token = String(created.pay_url).split("/").at(-1)!
    const encoded = [...token].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`).join("")
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" })
    // Sent as written (Node's client does not normalise the path, as `inject` and browsers may).
    const send = (method: string, path: string) => new Promise<number>((resolve, reject) => {
      const sent = http.request({ host: "127.0.0.1", port: Number(new URL(address).port), method, path }, (answer) => {
        answer.resume()
        answer.on("end", () => resolve(answer.statusCode!))
      })
      sent.on("error", reject)
      sent.end()
    })
    lines.length = 0
    recording.spans.length = 0
    const cases = [
      // Routed to the page: the router decodes percent-escapes before it matches.
      ["GET", `/public/payments/${token}`, 200, "/public/payments/[redacted]"],
      ["GET", `/public/%70ayments/${token}`, 200, "/public/payments/[redacted]"],
      ["GET", `/%70ublic/payments/${token}/status`, 200, "/public/payments/[redacted]/status"],
      ["GET", `/public/payments/${encoded}`, 200, "/public/payments/[redacted]"],
      ["GET", `/public/payments/${token}/status?x=%2Fpublic%2F%70ayments%2F${token}&y=1`, 200, "/public/payments/[redacted]/status?x=/public/payments/[redacted]&y=1"],
      ["POST", `/public/pay%6Dents/${token}/simulate`, 400, "/public/payments/[redacted]/simulate"],
      // Not routed: the 404's (or 400's) line and span, any case, any escape, malformed ones too.
      ["GET", `/public/payments/${token}/`, 404, "/public/payments/[redacted]"],
      ["GET", `/PUBLIC/payments/${token}`, 404, "/public/payments/[redacted]"],
      ["GET", `/Public/%2570ayments/${token}/status`, 404, "/public/payments/[redacted]"],
      ["GET", `/public//payments/./${token}`, 404, "/public/payments/[redacted]"],
      ["GET", `/public%2Fpayments%2F${token}`, 404, "/public/payments/[redacted]"],
      ["GET", `/public/payments/${token}%ZZ`, 400, "/public/payments/[redacted]"],
      ["GET", `/public/%73ubscriptions/${token}%C0%AF`, 400, "/public/subscriptions/[redacted]"],
      ["GET", `/no/such/route?next=/%70ublic/payments/${token}`, 404, "/no/such/route?next=/public/payments/[redacted]"],
      // `;` parameters and backslashes (an outside probe found them logged with the token).
      ["GET", `/public/payments;x/${token}`, 404, "/public/payments/[redacted]"],
      ["GET", `/public;v=1/subscriptions;a/${token}`, 404, "/public/subscriptions/[redacted]"],
      ["GET", `/public\\payments\\${token}`, 404, "/public/payments/[redacted]"],
      ["GET", `/public/%5Cpayments%5C${token}`, 404, "/public/payments/[redacted]"]
    ] as const
    for (const [method, path, status, shown] of cases) expect([path, await send(method, path)]).toEqual([path, status])
    const logged = lines.map((line) => JSON.parse(line) as Record<string, any>).filter((entry) => entry.msg === "request completed").map((entry) => entry.req.url)
    expect(logged).toEqual(cases.map(([, , , shown]) => shown))
    expect(lines.join("")).not.toContain(token)
    expect(lines.join("")).not.toContain(encoded)
    // The span's `url.path` (the path without its query) is redacted the same way.
    const paths = recording.spans.filter((span) => span.kind === "server").map((span) => String(span.attributes.get("url.path")))
    // (A path that is not percent-encoded UTF-8 is refused before routing, without a span.)
    expect(paths).toEqual(cases.filter(([, path]) => !/%ZZ|%C0/.test(path)).map(([, , , shown]) => shown.split("?")[0]))
    expect(paths.join(" ")).not.toContain(token)
    expect(App.redactUrl(`/public/payments/${token}/status?x=1`)).toBe("/public/payments/[redacted]?x=1")
    expect(App.redactUrl(`/public/payments/${token}/status?x=1`, "/public/payments/:token/status")).toBe("/public/payments/[redacted]/status?x=1")
    expect(App.redactUrl("/api/v1/payments/pay_1?status=paid")).toBe("/api/v1/payments/pay_1?status=paid")
  })

  it("keeps a credential sent in a query string by mistake out of the log (refused, as before)", async () => {
    const lines: Array<string> = []
    t = await make({ logger: { level: "info", stream: { write: (line: string) => void lines.push(line) } } })
    const merchant = await t.merchant()
    const answers = await Promise.all([
      t.app.inject({ method: "GET", url: `/api/v1/balance?api_key=${merchant.apiKey}&terminal_id=${merchant.terminal.id}` }),
      t.app.inject({ method: "GET", url: `/api/v1/balance?X-API-Key=${merchant.apiKey}` }),
      t.app.inject({ method: "GET", url: `/admin/v1/accounts?access%5Ftoken=${adminToken}` })
    ])
    expect(answers.map((a) => a.statusCode)).toEqual([401, 401, 401])
    const logged = lines.map((line) => JSON.parse(line) as Record<string, any>).filter((entry) => entry.msg === "request completed").map((entry) => entry.req.url)
    expect(logged.toSorted()).toEqual([
      `/api/v1/balance?api_key=[redacted]&terminal_id=${merchant.terminal.id}`,
      "/api/v1/balance?X-API-Key=[redacted]",
      "/admin/v1/accounts?access%5Ftoken=[redacted]"
    ].toSorted())
    expect(lines.join("")).not.toContain(merchant.apiKey)
    expect(lines.join("")).not.toContain(adminToken)
    // The API's own parameters stay readable.
    expect(App.redactUrl("/api/v1/payments?status=paid&cursor=abc&limit=5&order_id=o-1")).toBe("/api/v1/payments?status=paid&cursor=abc&limit=5&order_id=o-1")
  })

  it("is one line per request, written at the answer, with the request, its status and time", async () => {
    const lines: Array<string> = []
    t = await make({ logger: { level: "info", stream: { write: (line: string) => void lines.push(line) } } })
    const merchant = await t.merchant()
    lines.length = 0
    const created = await t.app.inject({ method: "POST", url: "/api/v1/payments", headers: keyHeaders(merchant.apiKey), payload: { amount: "10", order_id: "one-line", test: true } })
    expect(created.statusCode).toBe(201)
    const entries = lines.map((line) => JSON.parse(line) as Record<string, any>)
    const mine = entries.filter((entry) => entry.reqId === created.headers["x-request-id"])
    expect(mine).toHaveLength(1)
    expect(mine[0]).toMatchObject({ level: 30, msg: "request completed", req: { method: "POST", url: "/api/v1/payments" }, res: { statusCode: 201 } })
    expect(mine[0]!.responseTime).toBeGreaterThan(0)
    expect(entries.some((entry) => entry.msg === "incoming request")).toBe(false)
    // A refused request has its line too, with its status.
    lines.length = 0
    const missing = await t.app.inject({ method: "GET", url: "/no/such/route" })
    expect(missing.statusCode).toBe(404)
    const notFound = lines.map((line) => JSON.parse(line) as Record<string, any>).filter((entry) => entry.reqId === missing.headers["x-request-id"])
    expect(notFound).toHaveLength(1)
    expect(notFound[0]).toMatchObject({ msg: "request completed", req: { method: "GET", url: "/no/such/route" }, res: { statusCode: 404 } })
  })

  it("answers what Fastify refuses before routing in the API's error body, with its headers, line and sample", async () => {
    const lines: Array<string> = []
    const samples: Array<{ route: string; status: number }> = []
    t = await make({ observe: (sample) => samples.push(sample), logger: { level: "info", stream: { write: (line: string) => void lines.push(line) } } })
    const merchant = await t.merchant()
    lines.length = 0
    const get = (url: string) => t!.app.inject({ method: "GET", url, headers: keyHeaders(merchant.apiKey) })
    expectError(await get("/api/v1/payments/%ZZ"), 400, "invalid_request", "the path is not valid percent-encoded UTF-8")
    expectError(await get("/public/payments/%C0%AF"), 400, "invalid_request", "the path is not valid percent-encoded UTF-8")
    expectError(await get(`/api/v1/payments/${"a".repeat(2049)}`), 414, "uri_too_long", "a path segment is longer than 2048 characters")
    // A long id that is no id reaches its route, which does not know it (Fastify's own limit was 100 characters: a 414 of its own).
    expectError(await get(`/api/v1/payments/${"a".repeat(101)}`), 404, "not_found")
    const bad = await get("/api/v1/payments/%ZZ")
    expect([bad.headers["x-content-type-options"], bad.headers["cache-control"]]).toEqual(["nosniff", "no-store"])
    const entries = lines.map((line) => JSON.parse(line) as Record<string, any>).filter((entry) => entry.msg === "request completed")
    expect(entries.map((entry) => [entry.req.url.slice(0, 24), entry.res.statusCode])).toEqual([
      ["/api/v1/payments/%ZZ", 400], ["/public/payments/[redact", 400], ["/api/v1/payments/aaaaaaa", 414], ["/api/v1/payments/aaaaaaa", 404], ["/api/v1/payments/%ZZ", 400]
    ])
    expect(samples.slice(-5).map((sample) => [sample.route, sample.status])).toEqual([
      ["unmatched", 400], ["unmatched", 400], ["unmatched", 414], ["/api/v1/payments/:paymentID", 404], ["unmatched", 400]
    ])
  })

  it("answers malformed HTTP, oversized headers or chunk extensions and a request too slow to arrive in the API's error body, logged, the connection closed", async () => {
    const lines: Array<string> = []
    t = await make({ requestTimeoutMs: 600, logger: { level: "info", stream: { write: (line: string) => void lines.push(line) } } })
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" })
    /** What the server answers to `head` before it closes the connection. */
    const answer = async (head: string) => {
      // A client that keeps its side open: the server closes the connection itself.
      const socket = net.connect({ host: "127.0.0.1", port: Number(new URL(address).port), allowHalfOpen: true })
      await new Promise((resolve) => socket.once("connect", resolve))
      socket.write(head)
      let received = ""
      socket.on("data", (chunk) => void (received += chunk.toString("latin1")))
      await new Promise((resolve) => socket.once("end", resolve))
      // The server's side is gone, though this client has not ended its own (after the lingering close's second).
      const connections = () => new Promise<number>((resolve, reject) => t!.app.server.getConnections((error, count) => error ? reject(error) : resolve(count)))
      await vi.waitFor(async () => expect(await connections()).toBe(0), { timeout: App.lingerMs + 2000 })
      socket.destroy()
      return rawAnswer(received)
    }
    const cases = [
      // A DEL byte in a header value (a sloppy client), a request without a well-formed line, a header of 20 KiB, a body that stops.
      ["GET /health/live HTTP/1.1\r\nhost: x\r\nx-nonce: a\x7fb\r\n\r\n", 400, "invalid_request", "malformed HTTP request"],
      ["GET /health live HTTP/1.1\r\nhost: x\r\n\r\n", 400, "invalid_request", "malformed HTTP request"],
      [`GET /health/live HTTP/1.1\r\nhost: x\r\nx-big: ${"a".repeat(20 * 1024)}\r\n\r\n`, 431, "headers_too_large", "the request's headers are larger than 16 KiB"],
      // A chunk extension of 20 KiB (Node's own answer to it is a bare 413).
      [`POST /api/v1/payments HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n2;x=${"a".repeat(20 * 1024)}\r\n{}\r\n0\r\n\r\n`,
        413, "body_too_large", "the request's chunk extensions are larger than 16 KiB"],
      [halfBodyHead, 408, "request_timeout", "the request did not arrive whole within 600 ms"]
    ] as const
    for (const [head, status, code, message] of cases) {
      const got = await answer(head)
      expect([got.status, got.error.code, got.error.message]).toEqual([status, code, message])
      expect([got.header("x-request-id"), got.header("connection"), got.header("x-content-type-options")]).toEqual([got.error.request_id, "close", "nosniff"])
      const line = lines.map((l) => JSON.parse(l) as Record<string, any>).find((entry) => entry.reqId === got.error.request_id)
      expect(line).toMatchObject({ msg: "request refused", res: { statusCode: status }, client: { remoteAddress: "127.0.0.1" } })
    }
  })

  it("never runs a request it answered 408, whatever of its body arrives after the answer", async () => {
    t = await make({ requestTimeoutMs: 1000 })
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" })
    const merchant = await t.merchant()
    const body = JSON.stringify({ amount: "1", order_id: "after-408", test: true })
    const socket = net.connect({ host: "127.0.0.1", port: Number(new URL(address).port), allowHalfOpen: true })
    await new Promise((resolve) => socket.once("connect", resolve))
    let received = ""
    socket.on("data", (chunk) => void (received += chunk.toString("latin1")))
    socket.on("error", () => {})
    socket.write(`POST /api/v1/payments HTTP/1.1\r\nhost: x\r\nx-api-key: ${merchant.apiKey}\r\nx-nonce: ${crypto.randomUUID()}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 5)}`)
    await vi.waitFor(() => expect(received).toMatch(/^HTTP\/1\.1 408 /), { timeout: 5_000 })
    // The rest of the body, as a client that did not read the 408 yet sends it: read by the parser
    // while the connection lingered, it completed the request and the payment was created (a review).
    if (!socket.destroyed) socket.write(body.slice(5))
    await new Promise((resolve) => setTimeout(resolve, 300))
    socket.destroy()
    const lookup = await t.app.inject({ method: "GET", url: "/api/v1/payments/by-order?order_id=after-408", headers: keyHeaders(merchant.apiKey, { "x-test-mode": "true" }) })
    expect(lookup.statusCode).toBe(404)
  })

  it("answers a request too slow to arrive soon after its limit, not up to half the limit later", async () => {
    t = await make({ requestTimeoutMs: 8000 })
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" })
    // Node looks for expired requests at intervals from the start of listening. With a look every half
    // limit (4 s, then at 8 s and 12 s), a request sent at 0.5 s was answered at 12 s (an outside probe
    // saw 44 s for 30 s); with one every 800 ms here, by 9.3 s.
    await new Promise((resolve) => setTimeout(resolve, 500))
    const started = Date.now()
    const { received, closed } = await untilClosed(address, halfBodyHead, 15_000)
    const elapsed = Date.now() - started
    expect([closed, rawAnswer(received).status]).toEqual([true, 408])
    expect(elapsed).toBeGreaterThanOrEqual(7900)
    expect(elapsed).toBeLessThan(10_300)
  }, 20_000)

  it("never answers an earlier request with the refusal of bytes after it: closes the connection instead, and a CONNECT closes it too, every request on it ended", async () => {
    const lines: Array<string> = []
    t = await make({ logger: { level: "info", stream: { write: (line: string) => void lines.push(line) } } })
    slowRoute(t.app, 300)
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" })
    const until = async (bytes: string) => {
      const { received, closed } = await untilClosed(address, bytes)
      expect(closed).toBe(true)
      return received
    }
    // A whole request whose answer is still being made, then a malformed request line: a 400 written now
    // would be read as the first request's answer (Node's own handler and this one wrote it).
    const received = await until(`${slowRequestHead}GET /health live HTTP/1.1\r\nhost: x\r\n\r\n`)
    expect(received).toBe("")
    await vi.waitFor(() => expect(App.requestsInFlight(t!.app)).toBe(0))
    const entries = lines.map((l) => JSON.parse(l) as Record<string, any>)
    expect(entries.filter((entry) => entry.msg === "request refused, connection closed without an answer: an earlier request's answer was pending")).toHaveLength(1)
    expect(entries.find((entry) => entry.msg === "request aborted" && entry.req?.url === "/test-only/slow")).toBeDefined()
    // Bytes after a request that asked to close the connection are no request: ignored, the pending answers sent in order, then the connection closed.
    const closing = await until(`${slowRequestHead}GET /health/live HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\nGET /health/live HTTP/1.1\r\nhost: x\r\n\r\n`)
    expect(closing.match(/HTTP\/1\.1 \d{3}(?= )/g)).toEqual(["HTTP/1.1 204", "HTTP/1.1 200"])
    // Also when more bytes follow while the answers are being made: read and dropped, not left unread (a
    // connection closed with bytes unread is reset, and the answers not yet sent were lost with it).
    {
      const socket = net.connect({ host: "127.0.0.1", port: Number(new URL(address).port) })
      await new Promise((resolve) => socket.once("connect", resolve))
      let received = ""
      let failure: unknown = null
      socket.on("data", (chunk) => void (received += chunk.toString("latin1")))
      socket.on("error", (error) => void (failure = error))
      // Large answers (the OpenAPI document, 0.5 MB each) are still being sent when the connection closes.
      const documents = "GET /openapi.json HTTP/1.1\r\nhost: x\r\n\r\n".repeat(3)
      socket.write(`${slowRequestHead}${documents}GET /health/live HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\njunk\r\n`)
      // More bytes while the answers are being made (until the first, the slow one, is sent: the rest follow at once).
      for (let i = 0; i < 20 && !received.includes("HTTP/1.1 204"); i++) {
        await new Promise((resolve) => setTimeout(resolve, 5))
        if (!socket.destroyed) socket.write("x".repeat(2000))
      }
      await new Promise((resolve) => socket.once("close", resolve))
      expect([failure, received.match(/HTTP\/1\.1 \d{3}(?= )/g)]).toEqual([null, ["HTTP/1.1 204", "HTTP/1.1 200", "HTTP/1.1 200", "HTTP/1.1 200", "HTTP/1.1 200"]])
      expect(received.endsWith('{"status":"ok"}')).toBe(true)
    }
    // Requests pipelined before a CONNECT end with the connection Node closes (a `connect` listener
    // would take the connection from Node, and the queued ones would never end).
    const connected = await until(`GET /health/live HTTP/1.1\r\nhost: x\r\n\r\n${slowRequestHead}GET /health/live HTTP/1.1\r\nhost: x\r\n\r\nCONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\n\r\n`)
    expect(connected).not.toContain("CONNECT")
    await vi.waitFor(() => expect(App.requestsInFlight(t!.app)).toBe(0), { timeout: 3000 })
  })

  it("runs nothing pipelined after a request whose answer closes the connection (HTTP/1.0 with Transfer-Encoding whatever refuses it, an upgrade, an Expect refused)", async () => {
    t = await make()
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" })
    const merchant = await t.merchant()
    /** A payment creation, as a proxy that read the faulty request's body otherwise would pass it on. */
    const smuggled = (orderId: string) => {
      const body = JSON.stringify({ amount: "1", order_id: orderId, test: true })
      return `POST /api/v1/payments HTTP/1.1\r\nhost: x\r\nx-api-key: ${merchant.apiKey}\r\nx-nonce: ${crypto.randomUUID()}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
    }
    const chunked = "Connection: keep-alive\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
    // An HTTP/1.0 request with Transfer-Encoding: its own refusal, and ones that come first (two Host
    // lines, the hook's earlier check; a path Fastify refuses before any hook, `%ff`).
    const teRefusal = "an HTTP/1.0 request cannot use Transfer-Encoding: send Content-Length"
    const cases = [
      [`POST /api/v1/payments HTTP/1.0\r\nHost: x\r\n${chunked}`, 400, teRefusal],
      [`POST /api/v1/payments HTTP/1.0\r\nHost: x\r\nHost: y\r\n${chunked}`, 400, teRefusal],
      [`POST /api/v1/%ff HTTP/1.0\r\nHost: x\r\n${chunked}`, 400, undefined],
      // A request asking to upgrade (answered as a plain one): Node drops the bytes after it, so a
      // pipelined request's answer would be the next one's; the connection closes after it instead.
      ["GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n", 200, undefined],
      // An Expect refused (417).
      ["POST /api/v1/payments HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", 417, undefined]
    ] as const
    for (const [index, [head, status, message]] of cases.entries()) {
      const { received, closed } = await untilClosed(address, `${head}${smuggled(`smuggled-${index}`)}`)
      expect([index, closed, received.match(/HTTP\/1\.[01] \d{3} /g)?.length]).toEqual([index, true, 1])
      const answer = rawAnswer(received)
      expect([index, answer.status, answer.header("connection")]).toEqual([index, status, "close"])
      if (message !== undefined) expect([answer.error.message, answer.error.field]).toEqual([message, "Transfer-Encoding"])
      const lookup = await t.app.inject({ method: "GET", url: `/api/v1/payments/by-order?order_id=smuggled-${index}`, headers: keyHeaders(merchant.apiKey, { "x-test-mode": "true" }) })
      expect([index, lookup.statusCode]).toEqual([index, 404])
    }
    await vi.waitFor(() => expect(App.requestsInFlight(t!.app)).toBe(0))
  })

  it("drops a connection with more than maxPipelined requests not yet answered, and closes one whose answer left before its body arrived", async () => {
    const lines: Array<string> = []
    t = await make({ logger: { level: "info", stream: { write: (line: string) => void lines.push(line) } } })
    slowRoute(t.app, 300)
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" })
    const pipelined = (n: number) => "GET /health/live HTTP/1.1\r\nhost: x\r\n\r\n".repeat(n)
    // As many as allowed: all answered, in order, on a connection kept alive.
    const allowed = await untilClosed(address, pipelined(App.maxPipelined), 1_000)
    expect([allowed.closed, allowed.received.match(/HTTP\/1\.1 200 OK\r\n/g)?.length]).toEqual([false, App.maxPipelined])
    // One more: the connection is dropped, what it had in flight ended.
    const dropped = await untilClosed(address, pipelined(App.maxPipelined + 1))
    expect([dropped.closed, dropped.received]).toEqual([true, ""])
    await vi.waitFor(() => expect(App.requestsInFlight(t!.app)).toBe(0))
    // Requests Fastify refuses before any hook (a bad percent-encoding) count too (dropped: no answer);
    // so do the ones after an Expect refused, which closes the connection and runs none of them.
    for (const one of ["GET /%ff HTTP/1.1\r\nhost: x\r\n\r\n", "POST /api/v1/payments HTTP/1.1\r\nhost: x\r\nexpect: 200-ok\r\ncontent-length: 0\r\n\r\n"]) {
      const refused = await untilClosed(address, slowRequestHead + one.repeat(App.maxPipelined + 1), 3_000)
      expect([one, refused.closed, refused.received.match(/HTTP\/1\.1 \d{3}(?= )/g)?.length ?? 0]).toEqual([one, true, 0])
    }
    await vi.waitFor(() => expect(App.requestsInFlight(t!.app)).toBe(0))
    expect(lines.filter((line) => line.includes(`connection dropped: more than ${App.maxPipelined} requests sent on it without waiting for their answers`))).toHaveLength(2)
    // A body of a type no route reads, refused on arrival while it is still arriving (chunked): the
    // connection closes after the 415, so the rest of the body is never taken for another request.
    const early = await untilClosed(address, "POST /api/v1/payments HTTP/1.1\r\nhost: x\r\ncontent-type: text/xml\r\ntransfer-encoding: chunked\r\n\r\n5\r\n<a/>\n\r\n")
    expect([early.closed, rawAnswer(early.received).status, rawAnswer(early.received).header("connection")]).toEqual([true, 415, "close"])
  })

  it("parses nothing a client sends after the last answer of a connection the server closes, resets one that keeps sending, and drops one with more than maxPipelined requests after its last (a review: one connection held 126,748 requests)", async () => {
    const lines: Array<string> = []
    t = await make({ logger: { level: "info", stream: { write: (line: string) => void lines.push(line) } } })
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" })
    let parsed = 0
    t.app.server.on("request", () => void parsed++)
    const open = async () => {
      const socket = net.connect({ host: "127.0.0.1", port: Number(new URL(address).port), allowHalfOpen: true })
      await new Promise((resolve) => socket.once("connect", resolve))
      const state = { received: "", ended: false, closed: false }
      socket.on("data", (chunk) => void (state.received += chunk.toString("latin1")))
      socket.on("error", () => {})
      // Its side kept open (allowHalfOpen): the server's end (FIN) leaves the connection open here, and
      // only the server's reset closes it.
      socket.once("end", () => void (state.ended = true))
      socket.once("close", () => void (state.closed = true))
      return { socket, state }
    }
    // A body of a type no route reads: 415 before it arrives, and the connection closes after the answer.
    const refusedHead = "POST /api/v1/payments HTTP/1.1\r\nhost: x\r\ncontent-type: text/plain\r\ncontent-length: 10\r\n\r\n"
    const gets = (n: number) => "GET /health/live HTTP/1.1\r\nhost: x\r\n\r\n".repeat(n)
    const { socket, state } = await open()
    socket.write(refusedHead)
    await vi.waitFor(() => expect(state.received).toMatch(/\r\n\r\n\{.*\}$/s))
    expect([rawAnswer(state.received).status, rawAnswer(state.received).header("connection")]).toEqual([415, "close"])
    parsed = 0
    // The body, then requests as fast as the connection takes them, the client's side kept open.
    socket.write("0123456789")
    const started = Date.now()
    let sent = 0
    while (!state.closed && Date.now() - started < App.lingerMs + 3_000) {
      if (socket.writable && socket.writableLength < 1_000_000) {
        socket.write(gets(2_000))
        sent += 2_000
      }
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    expect(state.closed).toBe(true)
    expect(sent).toBeGreaterThan(2_000)
    expect(parsed).toBe(0)
    expect(state.received.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(1)
    socket.destroy()
    // Requests in the same read as one whose answer closes the connection (HTTP/1.0 with Transfer-Encoding)
    // are parsed (Node parses a read whole), never run; past maxPipelined of them the connection is dropped at once.
    const burst = await open()
    const faulty = "POST /api/v1/payments HTTP/1.0\r\nhost: x\r\nconnection: keep-alive\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
    burst.socket.write(`${faulty}${gets(App.maxPipelined + 5)}`)
    await vi.waitFor(() => expect(burst.state.ended || burst.state.closed).toBe(true))
    expect(lines.filter((line) => line.includes(`connection dropped: more than ${App.maxPipelined} requests sent on it after its last one`))).toHaveLength(1)
    burst.socket.destroy()
    await vi.waitFor(() => expect(App.requestsInFlight(t!.app)).toBe(0))
  })

  it("lets a client refused before its body arrived send the rest of it (the body limit and more) while the connection lingers", async () => {
    t = await make()
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" })
    const size = 100_000
    // What the server's side of the connection read before it was gone.
    const serverRead = new Promise<number>((resolve) => t!.app.server.once("connection", (server: net.Socket) => server.once("close", () => resolve(server.bytesRead))))
    // A client that keeps sending after the server's end (allowHalfOpen), as curl does.
    const socket = net.connect({ host: "127.0.0.1", port: Number(new URL(address).port), allowHalfOpen: true })
    await new Promise((resolve) => socket.once("connect", resolve))
    let received = ""
    const errors: Array<string> = []
    socket.on("data", (chunk) => void (received += chunk.toString("latin1")))
    socket.on("error", (error: NodeJS.ErrnoException) => void errors.push(error.code ?? error.message))
    const closed = new Promise((resolve) => socket.once("close", resolve))
    socket.write(`POST /api/v1/payments HTTP/1.1\r\nhost: x\r\ncontent-type: text/plain\r\ncontent-length: ${size}\r\n\r\n`)
    await vi.waitFor(() => expect(received).toMatch(/\r\n\r\n\{.*\}$/s))
    expect(rawAnswer(received).status).toBe(415)
    // The body the server refused still comes, whole, as a client that does not read answers early
    // sends it, in pieces (past a cap under the body's size, the pieces after it met a reset).
    for (let sent = 0; sent < size; sent += 20_000) {
      socket.write(Buffer.alloc(20_000, "x"))
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    socket.end()
    await closed
    expect(errors).toEqual([])
    // Read and dropped whole (a cap at 64 KiB, under the body limit and its framing, ended it midway).
    expect(await serverRead).toBeGreaterThan(size)
  })

  it("keeps a connection alive after an answer sent at once to a request without a body (tracing off, as the reference server runs)", async () => {
    t = await make({ checkResponses: false }, Layer.merge(Kit.layer, Layer.succeed(References.TracerEnabled)(false)))
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" })
    const merchant = await t.merchant()
    // The first request asks whether spans are recorded; the next ones are answered within Node's `request` event.
    expect((await t.app.inject({ method: "GET", url: "/health/live" })).statusCode).toBe(200)
    const body = JSON.stringify({ amount: "1", order_id: "after-404", test: true })
    const payment = `POST /api/v1/payments HTTP/1.1\r\nhost: x\r\nx-api-key: ${merchant.apiKey}\r\nx-nonce: ${crypto.randomUUID()}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
    const { received, closed } = await untilClosed(address, `GET /nope HTTP/1.1\r\nhost: x\r\n\r\n${payment}`, 1_000)
    expect([closed, received.match(/HTTP\/1\.1 \d{3}(?= )/g)]).toEqual([false, ["HTTP/1.1 404", "HTTP/1.1 201"]])
    expect(received).not.toMatch(/connection: close/i)
  })

  it("answers an HTTP/1.1 request without Host, one with two Host lines or a Host that is no host, an HTTP/0.9 request line, and an Expect other than 100-continue in the API's error body (Node's were bare or answered), and routes a target in absolute form", async () => {
    const lines: Array<string> = []
    t = await make({ logger: { level: "info", stream: { write: (line: string) => void lines.push(line) } } })
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" })
    /** The first answer to `head` on a fresh connection. */
    const first = async (head: string) => {
      const socket = net.connect({ host: "127.0.0.1", port: Number(new URL(address).port) })
      await new Promise((resolve) => socket.once("connect", resolve))
      socket.write(head)
      let received = ""
      socket.on("data", (chunk) => void (received += chunk.toString("latin1")))
      // The final answer (after a 100 Continue), whole: its body as long as its content-length says.
      const final = () => received.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, "")
      try {
        await vi.waitFor(() => {
          const [head, body = ""] = final().split("\r\n\r\n")
          expect(Number(/content-length: (\d+)/i.exec(head ?? "")?.[1] ?? -1)).toBe(Buffer.byteLength(body))
        })
      } finally {
        socket.destroy()
      }
      return rawAnswer(final())
    }
    const hostless = await first("GET /health/live HTTP/1.1\r\n\r\n")
    expect([hostless.status, hostless.error.code, hostless.error.message, hostless.error.field]).toEqual([400, "invalid_request", "an HTTP/1.1 request must have a Host header", "Host"])
    expect(hostless.header("x-request-id")).toBe(hostless.error.request_id)
    // HTTP/1.0 needs none.
    expect((await first("GET /health/live HTTP/1.0\r\n\r\n")).status).toBe(200)
    // One Host, and a host (RFC 9112, 3.2): Node kept the first of two and answered.
    const twoHosts = await first("GET /health/live HTTP/1.1\r\nHost: a.example\r\nhost: b.example\r\n\r\n")
    expect([twoHosts.status, twoHosts.error.code, twoHosts.error.message, twoHosts.error.field]).toEqual([400, "invalid_request", "a request must have one Host header, not several", "Host"])
    expect(twoHosts.header("x-request-id")).toBe(twoHosts.error.request_id)
    expect((await first("GET /health/live HTTP/1.0\r\nHost: a.example\r\nHost: a.example\r\n\r\n")).status).toBe(400)
    for (const bad of ["a.example/path", "a b", "user@a.example", "a.example:80x", "[::1", "[::1]x", "a.example?q", "a.example#f"]) {
      const answer = await first(`GET /health/live HTTP/1.1\r\nHost: ${bad}\r\n\r\n`)
      expect([bad, answer.status, answer.error.message]).toEqual([bad, 400, "Host must be a host name or address with an optional port"])
    }
    for (const good of ["a.example", "127.0.0.1:8080", "[::1]:8080", "[fe80::1%25eth0]", "[fe80::1%eth0]:8080", "[v1.fe80::a+en1]", "SHOP.Example:443", ":8080", "shop_1.example.", "xn--e1afmkfd.xn--p1ai", ""]) {
      expect([good, (await first(`GET /health/live HTTP/1.1\r\nHost: ${good}\r\n\r\n`)).status]).toEqual([good, 200])
    }
    // An HTTP/0.9 request line (no version, no headers): Node answered it as a request.
    const ancient = await first("GET /health/live\r\n\r\n")
    expect([ancient.status, ancient.error.code, ancient.error.message]).toEqual([505, "invalid_request", "HTTP/0.9 is not supported: send HTTP/1.1 (or HTTP/1.0)"])
    // So is another major version in an HTTP/1 request line (Node answered it as HTTP/1.1).
    const later = await first("GET /health/live HTTP/2.0\r\nHost: x\r\n\r\n")
    expect([later.status, later.error.message]).toEqual([505, "HTTP/2.0 is not supported: send HTTP/1.1 (or HTTP/1.0)"])
    // One Authorization too: Node kept the first of two (a Basic line hid a Bearer token).
    const twoCredentials = await first("GET /health/live HTTP/1.1\r\nHost: x\r\nAuthorization: Basic eDp5\r\nauthorization: Bearer t\r\n\r\n")
    expect([twoCredentials.status, twoCredentials.error.message, twoCredentials.error.field]).toEqual([400, "a request must have one Authorization header, not several", "Authorization"])
    expect((await first("GET /health/live HTTP/1.1\r\nHost: x\r\nAuthorization: Basic eDp5\r\n\r\n")).status).toBe(200)
    // One Content-Type too (Node kept the first: a proxy reading the last would see another type), in either order.
    for (const [one, two] of [["application/json", "text/plain"], ["text/plain", "application/json"]]) {
      const twoTypes = await first(`POST /api/v1/payments HTTP/1.1\r\nHost: x\r\nContent-Type: ${one}\r\nContent-Type: ${two}\r\ncontent-length: 2\r\n\r\n{}`)
      expect([twoTypes.status, twoTypes.error.message, twoTypes.error.field]).toEqual([400, "a request must have one Content-Type header, not several", "Content-Type"])
    }
    // A target in absolute form (RFC 9112, 3.2.2: a server MUST accept it) is routed by its path and query; it was a 404.
    for (const target of ["http://a.example/health/live", "http://127.0.0.1:8080/health/live", "https://[::1]:443/health/live", "HTTP://a.example/health/live"]) {
      expect([target, (await first(`GET ${target} HTTP/1.1\r\nHost: a.example\r\n\r\n`)).status]).toEqual([target, 200])
    }
    // Its query goes with it: the same 400 as in origin form (the health route takes no parameter).
    const queried = await first("GET http://a.example/health/live?x=1 HTTP/1.1\r\nHost: a.example\r\n\r\n")
    const originQueried = await first("GET /health/live?x=1 HTTP/1.1\r\nHost: a.example\r\n\r\n")
    expect([queried.status, queried.error.message]).toEqual([400, originQueried.error.message])
    const rootless = await first("GET http://a.example?x=1 HTTP/1.1\r\nHost: a.example\r\n\r\n")
    expect([rootless.status, rootless.error.message]).toEqual([404, "no route GET /"])
    // Another scheme, or user information (RFC 9110, 4.2.4: an error), is refused; the userinfo stays out of the log.
    const ftp = await first("GET ftp://alice:hunter2@a.example/api/v1/payments HTTP/1.1\r\nHost: a.example\r\n\r\n")
    expect([ftp.status, ftp.error.message]).toEqual([400, "a request target must be a path or an http(s) URL"])
    const userinfo = await first("GET http://alice:hunter2@a.example/api/v1/payments HTTP/1.1\r\nHost: a.example\r\n\r\n")
    expect([userinfo.status, userinfo.error.message]).toEqual([400, "a request target must not carry user information"])
    await vi.waitFor(() => expect(lines.filter((line) => line.includes(userinfo.error.request_id)).join("\n")).toContain('"url":"/api/v1/payments"'))
    expect(lines.filter((line) => line.includes("hunter2"))).toEqual([])
    const absoluteMerchant = await t.merchant()
    const absoluteBody = JSON.stringify({ amount: "1", order_id: "absolute-form", test: true })
    const absolute = await first(`POST http://a.example/api/v1/payments HTTP/1.1\r\nhost: a.example\r\nx-api-key: ${absoluteMerchant.apiKey}\r\nx-nonce: ${crypto.randomUUID()}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(absoluteBody)}\r\n\r\n${absoluteBody}`)
    expect([absolute.status, (absolute.body as { order_id?: string }).order_id]).toEqual([201, "absolute-form"])
    const expecting = await first("POST /api/v1/payments HTTP/1.1\r\nhost: x\r\nexpect: 200-ok\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}")
    expect([expecting.status, expecting.error.code, expecting.error.message]).toEqual([417, "expectation_failed", "Expect: 200-ok is not supported (only 100-continue)"])
    expect([expecting.header("x-request-id"), expecting.header("connection")]).toEqual([expecting.error.request_id, "close"])
    const line = lines.map((l) => JSON.parse(l) as Record<string, any>).find((entry) => entry.reqId === expecting.error.request_id)
    expect(line).toMatchObject({ msg: "request refused", res: { statusCode: 417 } })
    // 100-continue goes on as before.
    const merchant = await t.merchant()
    const payment = JSON.stringify({ amount: "1", order_id: "go", test: true })
    const continued = await first(`POST /api/v1/payments HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\nx-api-key: ${merchant.apiKey}\r\nx-nonce: ${crypto.randomUUID()}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(payment)}\r\n\r\n${payment}`)
    expect(continued.status).toBe(201)
  })

  it("names the client over a connection closed with the answer, and logs a request its client left", async () => {
    const lines: Array<string> = []
    t = await make({ logger: { level: "info", stream: { write: (line: string) => void lines.push(line) } } })
    // A route that takes its time, for a client that leaves while it is handled.
    slowRoute(t.app, 300)
    const merchant = await t.merchant()
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" })
    const { port } = new URL(address)
    // Connection: close (as a reverse proxy's requests often are): the line names the client. (Here the
    // line is written before the socket closes; the lines after it test the address read on arrival.)
    const body = JSON.stringify({ amount: "10", order_id: "closed-1", test: true })
    const answered = await new Promise<{ status: number; id: string }>((resolve, reject) => {
      const request = http.request({ host: "127.0.0.1", port, method: "POST", path: "/api/v1/payments", agent: false,
        headers: { ...keyHeaders(merchant.apiKey), "content-type": "application/json", "content-length": Buffer.byteLength(body), connection: "close" } }, (response) => {
        response.resume()
        response.on("end", () => resolve({ status: response.statusCode!, id: String(response.headers["x-request-id"]) }))
      })
      request.on("error", reject)
      request.end(body)
    })
    expect(answered.status).toBe(201)
    await vi.waitFor(() => expect(lines.some((line) => line.includes(answered.id))).toBe(true))
    const line = lines.map((l) => JSON.parse(l) as Record<string, any>).find((entry) => entry.reqId === answered.id)!
    expect(line).toMatchObject({ msg: "request completed", req: { method: "POST", url: "/api/v1/payments", remoteAddress: "127.0.0.1" }, res: { statusCode: 201 } })
    expect(line.req.remotePort).toBeGreaterThan(0)
    // A client that leaves before its body is in: no answer, and a line saying so, which names the
    // client although its socket is gone by then (read on arrival).
    lines.length = 0
    const socket = await rawRequest(address, halfBodyHead)
    await new Promise((resolve) => setTimeout(resolve, 50))
    socket.destroy()
    await vi.waitFor(() => expect(lines.some((l) => l.includes("request aborted"))).toBe(true))
    expect(JSON.parse(lines.find((l) => l.includes("request aborted"))!)).toMatchObject({ level: 30, req: { method: "POST", url: "/api/v1/payments", remoteAddress: "127.0.0.1" } })
    expect(lines.some((l) => l.includes("request completed"))).toBe(false)
    // A client that sent its whole request and leaves while it is handled: a line too, once.
    lines.length = 0
    const impatient = await rawRequest(address, slowRequestHead)
    await new Promise((resolve) => setTimeout(resolve, 50))
    impatient.destroy()
    await vi.waitFor(() => expect(lines.some((l) => l.includes("request aborted"))).toBe(true))
    await new Promise((resolve) => setTimeout(resolve, 400))
    const left = lines.map((l) => JSON.parse(l) as Record<string, any>).filter((entry) => entry.req?.url === "/test-only/slow")
    expect(left.map((entry) => entry.msg)).toEqual(["request aborted"])
    expect(left[0]).toMatchObject({ level: 30, req: { method: "POST", remoteAddress: "127.0.0.1" } })
  })
})

describe("login limits", () => {
  it("a locked e-mail is free again when the window ends, and the 429 is in the error format with Retry-After", async () => {
    t = await make({ loginLimits: { perEmail: 2, perAddress: 100, windowMs: 400 } })
    const merchant = await t.merchant()
    const login = (password: string) => t!.app.inject({ method: "POST", url: "/api/v1/auth/login", payload: { email: merchant.ownerEmail, password } })
    expect((await login("wrong-1")).statusCode).toBe(401)
    expect((await login("wrong-2")).statusCode).toBe(401)
    const limited = await login(Kit.ownerPassword)
    expectError(limited, 429, "too_many_requests", /^too many login attempts, retry in 1 s$/)
    expect(limited.headers["retry-after"]).toBe("1")
    await new Promise((ok) => setTimeout(ok, 450))
    expect((await login(Kit.ownerPassword)).statusCode).toBe(200)
  })

  it("a locked e-mail stays locked while more than 5,000 other e-mails are tried (each limiter keeps 10,000 keys)", async () => {
    t = await make({ loginLimits: { perEmail: 2, perAddress: 1_000_000 } })
    const merchant = await t.merchant()
    const login = (email: string, password = "guess") => t!.app.inject({ method: "POST", url: "/api/v1/auth/login", payload: { email, password } })
    expect((await login(merchant.ownerEmail)).statusCode).toBe(401)
    expect((await login(merchant.ownerEmail)).statusCode).toBe(401)
    expect((await login(merchant.ownerEmail, Kit.ownerPassword)).statusCode).toBe(429)
    // Each a key of its own in the per-e-mail limiter: with the plugin's 5,000 the victim's was dropped.
    for (let i = 0; i < 5_200; i++) await login(`other-${i}@shop.example`)
    expect((await login(merchant.ownerEmail, Kit.ownerPassword)).statusCode).toBe(429)
  }, 60_000)

  it("behind a trusted proxy (trustProxy) the per-address limit counts the client in X-Forwarded-For; from others the header is ignored", async () => {
    t = await make({ loginLimits: { perEmail: 100, perAddress: 2 }, trustProxy: ["10.0.0.5"] })
    const login = (remoteAddress: string, forwardedFor: string, i: number) =>
      t!.app.inject({ method: "POST", url: "/api/v1/auth/login", remoteAddress, headers: { "x-forwarded-for": forwardedFor }, payload: { email: `nobody-${i}@shop.example`, password: "guess" } })
    // Through the proxy: one client's attempts leave another's alone.
    expect((await login("10.0.0.5", "203.0.113.7", 0)).statusCode).toBe(401)
    expect((await login("10.0.0.5", "203.0.113.7", 1)).statusCode).toBe(401)
    expect((await login("10.0.0.5", "203.0.113.7", 2)).statusCode).toBe(429)
    expect((await login("10.0.0.5", "198.51.100.9", 3)).statusCode).toBe(401)
    // Straight from a client that is not the proxy: the header is not believed.
    expect((await login("192.0.2.1", "198.51.100.10", 4)).statusCode).toBe(401)
    expect((await login("192.0.2.1", "198.51.100.11", 5)).statusCode).toBe(401)
    expect((await login("192.0.2.1", "198.51.100.12", 6)).statusCode).toBe(429)
  })
})

describe("event sends' limit setting", () => {
  it("is a whole number of at least 1, or the app is not built", async () => {
    for (const bad of [0, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(make({ eventSendsPerMinute: bad })).rejects.toThrow(/^eventSendsPerMinute must be a whole number, 1 or more/)
    }
    t = await make({ eventSendsPerMinute: 1 })
  })
})

describe("credential answers", () => {
  it("match their documented schemas", async () => {
    t = await make()
    const merchant = await t.merchant()
    const pair = json(await t.app.inject({ method: "POST", url: "/api/v1/auth/login", payload: { email: merchant.ownerEmail, password: Kit.ownerPassword } }))
    const headers = { authorization: `Bearer ${pair.access_token}` }
    const base = `/api/v1/terminals/${merchant.terminal.id}`
    const created = await t.app.inject({ method: "POST", url: `${base}/api-keys`, headers, payload: {} })
    expect(created.statusCode).toBe(201)
    shape("CreatedApiKey", json(created))
    shape("ApiKeyList", json(await t.app.inject({ method: "GET", url: `${base}/api-keys`, headers })))
    shape("ApiKey", json(await t.app.inject({ method: "POST", url: `${base}/api-keys/${json(created).id}/revoke`, headers })))
    shape("SigningSecretRotation", json(await t.app.inject({ method: "POST", url: `${base}/signing-secret/rotate`, headers })))
    expect(json(await t.app.inject({ method: "POST", url: "/api/v1/auth/logout", headers }))).toEqual({ ok: true })
    expectError(await t.app.inject({ method: "GET", url: `${base}/api-keys`, headers }), 401, "unauthenticated", "invalid or expired access token")
  })
})

describe("StrictJson", () => {
  it("finds duplicate keys at any depth, decoded, and ignores look-alikes inside strings", () => {
    expect(StrictJson.check(`{"a":1,"b":2}`)).toBeNull()
    expect(StrictJson.check(`{"a":1,"a":2}`)).toEqual({ _tag: "DuplicateKey", key: "a" })
    expect(StrictJson.check(`{"a":{"x":1},"b":{"x":1}}`)).toBeNull()
    expect(StrictJson.check(`[{"x":1},{"x":1}]`)).toBeNull()
    expect(StrictJson.check(`{"a":[{"k":1,"k":2}]}`)).toEqual({ _tag: "DuplicateKey", key: "k" })
    expect(StrictJson.check(`{"\\u0061":1,"a":2}`)).toEqual({ _tag: "DuplicateKey", key: "a" })
    expect(StrictJson.check(`{"a":"{\\"a\\":1,","b":"\\\\","c":"]:,"}`)).toBeNull()
    expect(StrictJson.check(`{"a":"x","b":"a"}`)).toBeNull()
  })

  it("bounds depth without recursing, and finds NUL in keys and values", () => {
    expect(StrictJson.check("[".repeat(32) + "]".repeat(32))).toBeNull()
    expect(StrictJson.check("[".repeat(33) + "]".repeat(33))).toEqual({ _tag: "TooDeep", limit: 32 })
    expect(StrictJson.check("[".repeat(30000) + "]".repeat(30000))).toEqual({ _tag: "TooDeep", limit: 32 })
    expect(StrictJson.findNul({ a: ["x", { b: "y\u0000" }] }, "")).toBe("a.1.b")
    expect(StrictJson.findNul({ ["k\u0000"]: 1 }, "")).toBe("k\\u0000")
    expect(StrictJson.findNul("a\u0000", "")).toBe("")
    expect(StrictJson.findNul({ a: ["x", 1, null, true] }, "")).toBeNull()
  })
})

describe("csrf_token checks", () => {
  it("every use case compares a page's csrf_token in constant time (Signature.timingSafeEqual), never with === or !==", () => {
    const dir = join(import.meta.dirname, "../../core/src/usecases")
    const sources = readdirSync(dir).filter((f) => f.endsWith(".ts")).map((f) => readFileSync(join(dir, f), "utf8"))
    const all = sources.join("\n")
    expect(all).not.toMatch(/[!=]==\s*[\w.]*csrfToken|csrfToken\s*[!=]==/)
    expect(all.match(/timingSafeEqual\([^)]*csrfToken/g)?.length).toBeGreaterThanOrEqual(2)
  })
})
