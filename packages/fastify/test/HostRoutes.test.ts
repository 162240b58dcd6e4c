/**
 * The deployment's routes and request tracing: liveness, readiness from the host's checks (503
 * naming the failed one, or the probe's error), `/metrics` behind the operator token, every
 * request observed once with its route pattern (499 when its client left before the answer), the
 * requests in flight counted, and each request a server span that parents its use case's spans (a
 * `traceparent` header continues the caller's trace) when the host records spans, and none when it
 * does not.
 */
import { afterEach, describe, expect, it, vi } from "vitest"
import { Layer, ManagedRuntime, Option, References, Tracer } from "effect"
import { Kit, RecordingTracer } from "@paydesk/testkit"
import * as App from "../src/App.js"
import type { Readiness } from "../src/HostRoutes.js"
import { adminToken, halfBodyHead, json, keyHeaders, make, publicUrl, rawAnswer, rawRequest, slowRequestHead, slowRoute, type TestApp } from "./TestApp.js"

let closers: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const close of closers) await close()
  closers = []
})

const fresh = async (options: Partial<App.Options>): Promise<TestApp> => {
  const t = await make(options)
  closers.push(t.close)
  return t
}

describe("health and metrics routes", () => {
  it("answers liveness, and readiness from the host's checks", async () => {
    let readiness: Readiness = { checks: { database: { ok: true, detail: "reachable" }, worker: { ok: true, detail: "running" } } }
    const t = await fresh({ host: { ready: async () => readiness } })
    const live = await t.app.inject({ method: "GET", url: "/health/live" })
    expect([live.statusCode, json(live), live.headers["cache-control"]]).toEqual([200, { status: "ok" }, "no-store"])
    const ready = await t.app.inject({ method: "GET", url: "/health/ready" })
    expect([ready.statusCode, json(ready)]).toEqual([200, { status: "ready", checks: readiness.checks }])
    readiness = { checks: { ...readiness.checks, worker: { ok: false, detail: "stopped" } } }
    const notReady = await t.app.inject({ method: "GET", url: "/health/ready" })
    expect([notReady.statusCode, json(notReady).status, json(notReady).checks.worker]).toEqual([503, "not_ready", { ok: false, detail: "stopped" }])

    // A host that cannot serve again until restarted fails liveness, with why.
    let why: string | null = null
    const breaking = await fresh({ host: { broken: () => why } })
    expect((await breaking.app.inject({ method: "GET", url: "/health/live" })).statusCode).toBe(200)
    why = "the embedded PostgreSQL (process 42) has exited"
    const dead = await breaking.app.inject({ method: "GET", url: "/health/live" })
    expect([dead.statusCode, json(dead), dead.headers["cache-control"]]).toEqual([503, { status: "failing", detail: why }, "no-store"])

    const failing = await fresh({ host: { ready: () => Promise.reject(new Error("connection refused")) } })
    const broken = await failing.app.inject({ method: "GET", url: "/health/ready" })
    expect([broken.statusCode, json(broken).checks.probe]).toEqual([503, { ok: false, detail: "connection refused" }])
  })

  it("serves /metrics behind the operator token; 501 when the host exports no metrics", async () => {
    const t = await fresh({ host: { metrics: { contentType: "text/plain; version=0.0.4", render: async () => "paydesk_up 1\n" } } })
    expect((await t.app.inject({ method: "GET", url: "/metrics" })).statusCode).toBe(401)
    expect((await t.app.inject({ method: "GET", url: "/metrics", headers: { authorization: "Bearer nope" } })).statusCode).toBe(401)
    const scraped = await t.app.inject({ method: "GET", url: "/metrics", headers: { authorization: `Bearer ${adminToken}` } })
    expect([scraped.statusCode, scraped.body, scraped.headers["content-type"]]).toEqual([200, "paydesk_up 1\n", "text/plain; version=0.0.4"])
    const without = await fresh({})
    const missing = await without.app.inject({ method: "GET", url: "/metrics", headers: { authorization: `Bearer ${adminToken}` } })
    expect([missing.statusCode, missing.json().error.code]).toEqual([501, "not_implemented"])
    expect((await without.app.inject({ method: "GET", url: "/metrics" })).statusCode).toBe(401)
  })

  it("observes every request with its route pattern, status and duration", async () => {
    const samples: Array<App.Sample> = []
    const t = await fresh({ observe: (sample) => samples.push(sample) })
    const merchant = await t.merchant()
    await t.app.inject({ method: "GET", url: `/api/v1/payments/pay_${crypto.randomUUID()}`, headers: keyHeaders(merchant.apiKey) })
    await t.app.inject({ method: "GET", url: "/nowhere" })
    expect(samples.map(({ method, route, status }) => ({ method, route, status }))).toEqual([
      { method: "GET", route: "/api/v1/payments/:paymentID", status: 404 },
      { method: "GET", route: "unmatched", status: 404 }
    ])
    for (const s of samples) expect(s.seconds).toBeGreaterThanOrEqual(0)
  })

  it("observes a request its client left once, with status 499, and counts the requests in flight", async () => {
    const samples: Array<App.Sample> = []
    const t = await fresh({ observe: (sample) => samples.push(sample) })
    const slow = slowRoute(t.app, 300)
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" })
    expect(App.requestsInFlight(t.app)).toBe(0)
    const answered = await fetch(`${address}/health/live`)
    expect(answered.status).toBe(200)
    await vi.waitFor(() => expect(samples).toHaveLength(1))
    expect(App.requestsInFlight(t.app)).toBe(0)

    // Left while it is handled: in flight until the client leaves, then one sample, 499.
    const impatient = await rawRequest(address, slowRequestHead)
    await slow.started()
    expect(App.requestsInFlight(t.app)).toBe(1)
    impatient.destroy()
    await vi.waitFor(() => expect(samples).toHaveLength(2))
    expect(samples[1]).toMatchObject({ method: "POST", route: "/test-only/slow", status: App.abortedStatus })
    expect(samples[1]!.seconds).toBeGreaterThanOrEqual(0)
    expect(App.requestsInFlight(t.app)).toBe(0)
    // The handler ends later and answers a closed connection: not observed again.
    await slow.finished()
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(samples).toHaveLength(2)

    // Left while its body comes in: the same.
    const halfway = await rawRequest(address, halfBodyHead)
    await vi.waitFor(() => expect(App.requestsInFlight(t.app)).toBe(1))
    halfway.destroy()
    await vi.waitFor(() => expect(samples).toHaveLength(3))
    expect(samples[2]).toMatchObject({ method: "POST", route: "/api/v1/payments", status: 499 })
    expect(App.requestsInFlight(t.app)).toBe(0)

    // Answered requests, over inject too, are observed once with their status, and none stays in flight.
    const injected = await Promise.all([1, 2, 3].map(() => t.app.inject({ method: "GET", url: "/nowhere" })))
    expect(injected.map((answer) => answer.statusCode)).toEqual([404, 404, 404])
    await new Promise((resolve) => setImmediate(resolve))
    expect(samples.slice(3).map((sample) => sample.status)).toEqual([404, 404, 404])
    expect(App.requestsInFlight(t.app)).toBe(0)
  })

  it("an observer that throws on a request its client left is logged, and the request leaves the count in flight", async () => {
    const lines: Array<string> = []
    const t = await fresh({
      observe: () => { throw new Error("observer broke") },
      logger: { level: "info", stream: { write: (line: string) => void lines.push(line) } }
    })
    const slow = slowRoute(t.app, 200)
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" })
    const impatient = await rawRequest(address, slowRequestHead)
    await slow.started()
    impatient.destroy()
    await vi.waitFor(() => expect(lines.some((line) => line.includes("observing an aborted request failed"))).toBe(true))
    expect(lines.filter((line) => line.includes("request aborted"))).toHaveLength(1)
    expect(App.requestsInFlight(t.app)).toBe(0)
    await slow.finished()
  })
})

describe("while the server closes", () => {
  it("answers a request arriving on a busy kept-alive connection 503 in the API's error body, observed, logged and counted like any answer", async () => {
    const samples: Array<App.Sample> = []
    const lines: Array<string> = []
    const t = await make({
      observe: (sample) => samples.push(sample),
      logger: { level: "info", stream: { write: (line: string) => void lines.push(line) } }
    })
    const slow = slowRoute(t.app, 300)
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" })
    const socket = await rawRequest(address, slowRequestHead)
    let received = ""
    socket.on("data", (chunk) => void (received += chunk.toString("latin1")))
    // Listened for now: the server may end the connection before the close below resolves.
    const ended = new Promise((resolve) => socket.once("end", resolve))
    await slow.started()
    // The connection is busy, so closing does not drop it: the next request on it arrives while the server closes.
    const closed = t.close()
    await vi.waitFor(() => expect(t.app.server.listening).toBe(false))
    socket.write("GET /api/v1/payments HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
    await closed
    // The 503 says `Connection: close`: the server ends the connection after it.
    await ended
    socket.destroy()

    expect(received.startsWith("HTTP/1.1 204")).toBe(true)
    const { header, error } = rawAnswer(received, received.indexOf("HTTP/1.1 503"))
    expect([error.code, error.message, error.request_id]).toEqual(["service_unavailable", "the server is shutting down: retry the request", header("x-request-id")])
    expect([header("connection"), header("retry-after"), header("cache-control"), header("x-content-type-options")]).toEqual(["close", "1", "no-store", "nosniff"])
    expect(samples.map((sample) => [sample.route, sample.status])).toEqual([["/test-only/slow", 204], ["/api/v1/payments", 503]])
    expect(lines.filter((line) => line.includes("request completed")).map((line) => JSON.parse(line).res.statusCode)).toEqual([204, 503])
    expect(App.requestsInFlight(t.app)).toBe(0)
  })

  it("answers a readiness probe arriving then 503 in its own body (the server check failing), and liveness 200, each observed and closing the connection", async () => {
    const samples: Array<App.Sample> = []
    const lines: Array<string> = []
    let asked = 0
    const t = await make({
      host: { ready: async () => (asked++, { checks: { database: { ok: true, detail: "reachable" } } }) },
      observe: (sample) => samples.push(sample),
      logger: { level: "info", stream: { write: (line: string) => void lines.push(line) } }
    })
    // Long enough for the probes to arrive while both requests are still in flight, also on a loaded
    // machine (with 300 ms, a run beside the whole suite once missed it and waited 30 s).
    slowRoute(t.app, 1500)
    const address = await t.app.listen({ port: 0, host: "127.0.0.1" })
    // Two connections kept busy, so that closing drops neither: a probe arrives on each while the server closes.
    const sockets = await Promise.all([rawRequest(address, slowRequestHead), rawRequest(address, slowRequestHead)])
    const received = ["", ""]
    sockets.forEach((socket, i) => socket.on("data", (chunk) => void (received[i] += chunk.toString("latin1"))))
    // Listened for now: a connection may end before the close below resolves (a run in CI waited for
    // an `end` that had already come, until the test's 30 s timeout).
    const ended = Promise.all(sockets.map((socket) => new Promise((resolve) => socket.once("end", resolve))))
    await vi.waitFor(() => expect(App.requestsInFlight(t.app)).toBe(2))
    const closed = t.close()
    await vi.waitFor(() => expect(t.app.server.listening).toBe(false))
    sockets[0]!.write("GET /health/ready HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
    sockets[1]!.write("GET /health/live HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
    await closed
    await ended
    for (const socket of sockets) socket.destroy()

    // Each after its connection's 204.
    const answerOf = (text: string) => rawAnswer(text, text.indexOf("HTTP/1.1", 1))
    expect(received.map((text) => text.startsWith("HTTP/1.1 204"))).toEqual([true, true])
    const ready = answerOf(received[0]!)
    expect([ready.status, ready.body]).toEqual([503, { status: "not_ready", checks: { server: { ok: false, detail: "the server is shutting down" } } }])
    expect([ready.header("connection"), ready.header("cache-control"), ready.header("retry-after")]).toEqual(["close", "no-store", undefined])
    // The host's checks are not asked: the answer is the same whatever they would say.
    expect(asked).toBe(0)
    const live = answerOf(received[1]!)
    expect([live.status, live.body, live.header("connection"), live.header("cache-control")]).toEqual([200, { status: "ok" }, "close", "no-store"])
    expect(samples.map((sample) => `${sample.route} ${sample.status}`).sort()).toEqual(["/health/live 200", "/health/ready 503", "/test-only/slow 204", "/test-only/slow 204"])
    // Probes are logged at `warn` only, during a close as at any time.
    expect(lines.filter((line) => line.includes("request completed")).map((line) => JSON.parse(line).res.statusCode)).toEqual([204, 204])
    expect(App.requestsInFlight(t.app)).toBe(0)
  })

  it("handles a request that arrived before the close, even when the close starts while its span opens", async () => {
    const runtime = ManagedRuntime.make(Kit.layer)
    // A runner without `runSyncExit`: the span opens through a promise, a turn of the loop later.
    const app = await App.build({ runtime: { runPromiseExit: (effect) => runtime.runPromiseExit(effect) }, publicUrl })
    closers.push(() => runtime.dispose())
    let closed: Promise<unknown> | undefined
    const address = await app.listen({ port: 0, host: "127.0.0.1" })
    // Fastify's own listener comes first: the request has arrived (and its hook started) when the close starts.
    app.server.on("request", () => void (closed ??= app.close()))
    const answer = await fetch(`${address}/health/live`, { headers: { connection: "close" } })
    expect([answer.status, await answer.json()]).toEqual([200, { status: "ok" }])
    await closed
  })
})

describe("request spans", () => {
  const recording = RecordingTracer.make

  it("opens a server span per request, parent of the use case's spans, closed with the status", async () => {
    const { spans, layer } = recording()
    const runtime = ManagedRuntime.make(Layer.merge(Kit.layer, layer))
    const app = await App.build({ runtime, publicUrl })
    closers.push(() => app.close(), () => runtime.dispose())
    const merchant = await runtime.runPromise(Kit.provisionMerchant())
    spans.length = 0
    const created = await app.inject({ method: "POST", url: "/api/v1/payments", headers: keyHeaders(merchant.apiKey), payload: { amount: "10", order_id: "o-1" } })
    expect(created.statusCode).toBe(201)
    const server = spans.find((s) => s.name === "POST /api/v1/payments")!
    expect(server.kind).toBe("server")
    expect(Object.fromEntries(server.attributes)).toMatchObject({
      "http.request.method": "POST", "http.route": "/api/v1/payments", "url.path": "/api/v1/payments", "http.response.status_code": 201
    })
    expect(server.status._tag).toBe("Ended")
    const useCase = spans.find((s) => s.name === "Payments.create")!
    expect(useCase.traceId).toBe(server.traceId)
    // The use case runs under the request: its chain of parents reaches the server span.
    const ancestors = (span: Tracer.AnySpan): Array<string> =>
      span._tag === "Span" && Option.isSome(span.parent) ? [span.parent.value.spanId, ...ancestors(span.parent.value)] : []
    expect(ancestors(useCase)).toContain(server.spanId)

    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
    await app.inject({ method: "GET", url: "/health/live", headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } })
    const continued = spans.find((s) => s.name === "GET /health/live")!
    expect([continued.traceId, Option.getOrUndefined(continued.parent)?.spanId]).toEqual([traceId, "00f067aa0ba902b7"])
  })

  it("opens no span, not even a no-op one, when the host records none, and answers as before; a throwing observer still ends the span", async () => {
    const runtime = ManagedRuntime.make(Layer.merge(Kit.layer, Layer.succeed(References.TracerEnabled)(false)))
    const app = await App.build({ runtime, publicUrl })
    const seen: Array<unknown> = []
    app.addHook("onSend", (request, _reply, payload, done) => {
      seen.push(request.paydeskSpan)
      done(null, payload)
    })
    closers.push(() => app.close(), () => runtime.dispose())
    const merchant = await runtime.runPromise(Kit.provisionMerchant())
    const created = await app.inject({ method: "POST", url: "/api/v1/payments", headers: keyHeaders(merchant.apiKey), payload: { amount: "10", order_id: "o-1" } })
    const nul = await app.inject({ method: "POST", url: "/api/v1/payments", headers: keyHeaders(merchant.apiKey), payload: { amount: "10", order_id: "o\u0000" } })
    const form = await app.inject({ method: "POST", url: "/api/v1/payments", headers: { ...keyHeaders(merchant.apiKey), "content-type": "application/x-www-form-urlencoded" }, payload: "amount=10" })
    expect([created.statusCode, nul.statusCode, form.statusCode]).toEqual([201, 400, 415])
    expect([nul.json().error.message, form.json().error.code]).toEqual(["order_id must not contain NUL characters (\\u0000)", "unsupported_media_type"])
    for (const answer of [created, nul, form]) expect([answer.headers["x-request-id"], answer.headers["cache-control"]]).toEqual([expect.stringMatching(/^req_/), "no-store"])
    expect(seen).toEqual([null, null, null])

    // With recording on, an observer that throws does not leave the request's span open.
    const { spans, layer } = recording()
    const traced = ManagedRuntime.make(Layer.merge(Kit.layer, layer))
    const observed = await App.build({ runtime: traced, publicUrl, observe: () => { throw new Error("observer broke") } })
    closers.push(() => observed.close(), () => traced.dispose())
    expect((await observed.inject({ method: "GET", url: "/health/live" })).statusCode).toBe(200)
    const live = spans.find((s) => s.name === "GET /health/live")!
    expect(live.status._tag).toBe("Ended")
  })

  it("ends the span of a request its client left, marked aborted", async () => {
    const { spans, layer } = recording()
    const runtime = ManagedRuntime.make(Layer.merge(Kit.layer, layer))
    const app = await App.build({ runtime, publicUrl })
    const slow = slowRoute(app, 300)
    closers.push(() => app.close(), () => runtime.dispose())
    const address = await app.listen({ port: 0, host: "127.0.0.1" })
    const impatient = await rawRequest(address, slowRequestHead)
    await slow.started()
    const span = spans.find((s) => s.name === "POST /test-only/slow")!
    expect(span.status._tag).toBe("Started")
    impatient.destroy()
    await vi.waitFor(() => expect(span.status._tag).toBe("Ended"))
    const attributes = Object.fromEntries(span.attributes)
    expect(attributes["error.type"]).toBe("aborted")
    expect(attributes["http.response.status_code"]).toBeUndefined()
    expect(App.requestsInFlight(app)).toBe(0)
  })
})
