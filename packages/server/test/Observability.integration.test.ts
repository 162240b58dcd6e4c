/**
 * The deployment's observability and lifecycle, in process on PostgreSQL: a payment creation is
 * one trace holding the HTTP span, the use case's span and its SQL statements (in-memory
 * exporter); `/metrics` (operator token) shows request latency by route and status, payments by
 * status, callback attempts and deliveries, due-work lag and the pool; readiness names a missing
 * migration; `/metrics` still answers while the database does not (through a TCP proxy that is cut),
 * without the database gauges and with `paydesk_database_up 0`; a shutdown lets the request in flight
 * finish; the local worker, woken by the commit, delivers long before its interval.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as net from "node:net"
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { freshDatabase, type Receiver, startReceiver, startServer } from "./ServerHarness.js"
import { database, request } from "./ServerProcess.js"

type Srv = Awaited<ReturnType<typeof startServer>>

const eventually = async <A>(check: () => Promise<A> | A, timeoutMs = 10_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      return await check()
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise((ok) => setTimeout(ok, 50))
    }
  }
}

describe("traces, metrics and readiness", () => {
  const exporter = new InMemorySpanExporter()
  let srv: Srv
  let receiver: Receiver

  beforeAll(async () => {
    receiver = await startReceiver(() => Date.now())
    srv = await startServer({}, { spanProcessors: [new SimpleSpanProcessor(exporter)] })
    await srv.setClock("2026-08-01T10:00:00.000Z")
  }, 120_000)
  afterAll(async () => {
    await srv?.stop()
    await receiver?.close()
  })

  it("a payment creation is one trace: the HTTP span, the use case and its SQL statements", async () => {
    const m = await srv.merchant(receiver.url)
    exporter.reset()
    const created = await m.api("POST", "/payments", { amount: "150.00", order_id: "trace-1" })
    expect(created.status).toBe(201)
    const spans = await eventually(() => {
      const all = exporter.getFinishedSpans()
      if (!all.some((s) => s.name === "POST /api/v1/payments")) throw new Error("no HTTP span yet")
      return all
    })
    const http = spans.find((s) => s.name === "POST /api/v1/payments")!
    const trace = spans.filter((s) => s.spanContext().traceId === http.spanContext().traceId)
    const attributes = (s: ReadableSpan) => s.attributes as Record<string, unknown>
    expect(attributes(http)).toMatchObject({ "http.request.method": "POST", "http.route": "/api/v1/payments", "http.response.status_code": 201 })
    expect(http.kind).toBe(1) // SERVER
    expect(http.resource.attributes["service.name"]).toBe("paydesk")
    const useCase = trace.find((s) => s.name === "Payments.create")
    expect(useCase).toBeDefined()
    // One statement writes the payment with its event and delivery (a data-modifying CTE).
    const inserts = trace.filter((s) => String(attributes(s)["db.query.text"] ?? "").includes("INSERT INTO payments"))
    expect(inserts).toHaveLength(1)
    expect(inserts[0]!.kind).toBe(2) // CLIENT
    // Every span of the trace hangs under the HTTP span.
    const byId = new Map(trace.map((s) => [s.spanContext().spanId, s]))
    const reachesHttp = (s: ReadableSpan): boolean => {
      const parent = s.parentSpanContext?.spanId
      return parent === http.spanContext().spanId || (parent !== undefined && byId.has(parent) && reachesHttp(byId.get(parent)!))
    }
    expect(reachesHttp(useCase!)).toBe(true)
    expect(reachesHttp(inserts[0]!)).toBe(true)
  })

  it("serves Prometheus metrics behind the operator token", async () => {
    const m = await srv.merchant(receiver.url)
    const created = await m.api("POST", "/payments", { amount: "10.00", order_id: "metrics-1", test: true })
    expect(created.status).toBe(201)
    await srv.work()
    expect((await request(srv.base, "GET", "/metrics")).status).toBe(401)
    const scraped = await srv.call("GET", "/metrics", { headers: { authorization: "Bearer test-admin" } })
    expect(scraped.status).toBe(200)
    const text = scraped.text
    const value = (line: string) => {
      const found = text.split("\n").find((l) => l.startsWith(`${line} `))
      if (found === undefined) throw new Error(`no ${line} in\n${text}`)
      return Number(found.slice(line.length + 1))
    }
    expect(value("paydesk_http_request_duration_seconds_count{method=\"POST\",route=\"/api/v1/payments\",status=\"201\"}")).toBeGreaterThanOrEqual(1)
    expect(value("paydesk_payments{status=\"created\",environment=\"sandbox\"}")).toBeGreaterThanOrEqual(1)
    expect(value("paydesk_callback_attempts_total{result=\"delivered\"}")).toBeGreaterThanOrEqual(1)
    expect(value("paydesk_callback_attempt_duration_seconds_count{result=\"delivered\"}")).toBeGreaterThanOrEqual(1)
    expect(value("paydesk_callback_deliveries{status=\"delivered\"}")).toBeGreaterThanOrEqual(1)
    expect(value("paydesk_due_work_lag_seconds{kind=\"deliveries\"}")).toBe(0)
    expect(value("paydesk_db_pool_max_connections")).toBe(10)
    // The scrape itself is being handled as the gauge is read, and nothing else is.
    expect(value("paydesk_http_requests_in_flight")).toBe(1)
    expect(value("paydesk_db_pool_connections{state=\"idle\"}")).toBeGreaterThanOrEqual(0)
    expect(value("nodejs_eventloop_lag_seconds")).toBeGreaterThanOrEqual(0)
  })

  it("shows the lag of overdue work", async () => {
    const m = await srv.merchant(receiver.url)
    expect((await m.api("POST", "/payments", { amount: "10.00", order_id: "lag-1" })).status).toBe(201)
    // The payment's 30 minutes are over an hour ago on the manual clock, and no pass ran since.
    await srv.setClock("2026-08-01T11:30:00.000Z")
    const scraped = await srv.call("GET", "/metrics", { headers: { authorization: "Bearer test-admin" } })
    const line = scraped.text.split("\n").find((l) => l.startsWith("paydesk_due_work_lag_seconds{kind=\"expiries\"}"))!
    expect(Number(line.split(" ")[1])).toBeGreaterThanOrEqual(3600)
    await srv.work()
  })

  it("leaves a test clock's objects out of the lag: they are due on the clock's time", async () => {
    await srv.work()
    const m = await srv.merchant(receiver.url)
    // A clock frozen 25 years ago: its payment expires, and its callback is due, on that time.
    const clock = await m.api("POST", "/test-clocks", { frozen_time: "2001-01-01T00:00:00Z" })
    expect(clock.status).toBe(201)
    const created = await m.api("POST", "/payments", { amount: "10.00", order_id: "clock-lag-1", test: true, test_clock: clock.json.id })
    expect([created.status, created.json.expires_at]).toEqual([201, "2001-01-01T00:30:00.000Z"])
    const scraped = await srv.call("GET", "/metrics", { headers: { authorization: "Bearer test-admin" } })
    const lag = (kind: string) => Number(scraped.text.split("\n").find((l) => l.startsWith(`paydesk_due_work_lag_seconds{kind="${kind}"}`))!.split(" ")[1])
    expect([lag("expiries"), lag("deliveries"), lag("charges")]).toEqual([0, 0, 0])
  })

  it("is ready with its migrations applied, and names one that is missing", async () => {
    const ready = await srv.call("GET", "/health/ready")
    expect(ready.status).toBe(200)
    expect(ready.json).toEqual({
      status: "ready",
      checks: { database: { ok: true, detail: "reachable" }, migrations: { ok: true, detail: "all applied" }, worker: expect.objectContaining({ ok: true }) }
    })
    const db = database(srv.databaseUrl)
    try {
      await db.query("DELETE FROM paydesk_migrations WHERE migration_id = 4")
      const notReady = await srv.call("GET", "/health/ready")
      expect(notReady.status).toBe(503)
      expect(notReady.json.checks.migrations).toEqual({ ok: false, detail: "pending: 0004_security_hardening" })
      expect(notReady.json.checks.database.ok).toBe(true)
    } finally {
      await db.query("INSERT INTO paydesk_migrations (migration_id, name, created_at) VALUES (4, 'security_hardening', now())")
      await db.close()
    }
    expect((await srv.call("GET", "/health/ready")).status).toBe(200)
    expect((await srv.call("GET", "/health/live")).json).toEqual({ status: "ok" })
  })

  it("stays ready on a database a newer build migrated, and names the migrations it does not know", async () => {
    const db = database(srv.databaseUrl)
    try {
      await db.query("INSERT INTO paydesk_migrations (migration_id, name, created_at) VALUES (9999, 'future_change', now())")
      const ready = await srv.call("GET", "/health/ready")
      expect([ready.status, ready.json.checks.migrations]).toEqual([
        200, { ok: true, detail: "all applied; also applied, unknown to this build (a newer one's): 9999_future_change" }
      ])
    } finally {
      await db.query("DELETE FROM paydesk_migrations WHERE migration_id = 9999")
      await db.close()
    }
    expect((await srv.call("GET", "/health/ready")).json.checks.migrations).toEqual({ ok: true, detail: "all applied" })
  })
})

/**
 * A TCP proxy in front of PostgreSQL: `up` forwards, `down` cuts every connection and refuses new
 * ones at once, `silent` takes new connections and never answers (a network that drops packets).
 */
const startProxy = async (target: URL) => {
  let mode: "up" | "down" | "silent" = "up"
  const open = new Set<net.Socket>()
  const server = net.createServer((client) => {
    open.add(client)
    client.on("close", () => open.delete(client))
    client.on("error", () => undefined)
    if (mode === "down") return void client.destroy()
    if (mode === "silent") return
    const upstream = net.connect(Number(target.port || 5432), target.hostname)
    open.add(upstream)
    upstream.on("close", () => {
      open.delete(upstream)
      client.destroy()
    })
    upstream.on("error", () => undefined)
    client.on("close", () => upstream.destroy())
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok))
  const port = (server.address() as net.AddressInfo).port
  return {
    url: (database: string) => {
      const url = new URL(database)
      url.hostname = "127.0.0.1"
      url.port = String(port)
      return url.toString()
    },
    set: (next: typeof mode) => {
      mode = next
      for (const socket of open) socket.destroy()
    },
    close: async () => {
      for (const socket of open) socket.destroy()
      await new Promise<void>((ok) => server.close(() => ok()))
    }
  }
}

describe("metrics while the database does not answer", () => {
  it("still answers 200 with everything but the database gauges, and paydesk_database_up 0; as before once it is back", async () => {
    const databaseUrl = await freshDatabase()
    const proxy = await startProxy(new URL(databaseUrl))
    const receiver = await startReceiver(() => Date.now())
    const srv = await startServer({ DATABASE_URL: proxy.url(databaseUrl) })
    try {
      await srv.setClock("2026-08-03T10:00:00.000Z")
      const m = await srv.merchant(receiver.url)
      expect((await m.api("POST", "/payments", { amount: "10.00", order_id: "outage-1", test: true })).status).toBe(201)
      const scrape = async () => {
        const started = Date.now()
        const answer = await srv.call("GET", "/metrics", { headers: { authorization: "Bearer test-admin" } })
        const samples = answer.text.split("\n").filter((line) => line !== "" && !line.startsWith("#"))
        const value = (series: string) => samples.find((line) => line.startsWith(`${series} `))?.split(" ")[1]
        const has = (name: string) => samples.some((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
        return { status: answer.status, seconds: (Date.now() - started) / 1000, value, has }
      }
      const databaseGauges = ["paydesk_payments", "paydesk_callback_deliveries", "paydesk_due_work_lag_seconds", "paydesk_db_pool_connections"]
      const everythingElse = ["process_cpu_user_seconds_total", "process_resident_memory_bytes", "nodejs_eventloop_lag_seconds", "nodejs_heap_size_used_bytes",
        "paydesk_http_request_duration_seconds_count", "paydesk_http_requests_in_flight", "paydesk_db_pool_max_connections", "paydesk_callback_attempts_total", "paydesk_work_passes_total"]

      const before = await scrape()
      expect(before.status).toBe(200)
      expect(before.value("paydesk_database_up")).toBe("1")
      expect(before.value("paydesk_payments{status=\"created\",environment=\"sandbox\"}")).toBe("1")
      for (const name of [...databaseGauges, ...everythingElse]) expect([name, before.has(name)]).toEqual([name, true])

      // The database refuses: the scrape answers at once, without what it reads there.
      proxy.set("down")
      const down = await scrape()
      expect(down.status).toBe(200)
      expect(down.value("paydesk_database_up")).toBe("0")
      for (const name of everythingElse) expect([name, down.has(name)]).toEqual([name, true])
      for (const name of databaseGauges) expect([name, down.has(name)]).toEqual([name, false])
      expect(down.value("paydesk_db_pool_max_connections")).toBe("10")
      expect(down.seconds).toBeLessThan(2)
      // The readiness check (unauthenticated) says the database is unreachable, not where it is (an outside probe).
      const ready = await srv.call("GET", "/health/ready")
      expect(ready.status).toBe(503)
      expect(ready.json.checks.database).toEqual({ ok: false, detail: expect.stringMatching(/^unreachable( \([0-9A-Z]+\))?; the cause is in the server's log$/) })
      // Nor does the migrations check, which reads the database too (a re-probe).
      expect(ready.json.checks.migrations).toEqual({ ok: false, detail: expect.stringMatching(/^not read( \([0-9A-Z]+\))?; the cause is in the server's log$/) })
      expect(ready.text).not.toContain(new URL(proxy.url(databaseUrl)).port)

      // The database never answers: the scrape answers in the same way, by the reads' time limit (3 s)
      // at the latest (sooner when the pool already knows its connections are gone, as in a full run).
      proxy.set("silent")
      const silent = await scrape()
      expect([silent.status, silent.value("paydesk_database_up"), silent.has("paydesk_payments"), silent.has("process_cpu_user_seconds_total")]).toEqual([200, "0", false, true])
      expect(silent.seconds).toBeLessThan(6)

      // Back: the gauges are read again.
      proxy.set("up")
      const back = await eventually(async () => {
        const answer = await scrape()
        if (answer.value("paydesk_database_up") !== "1") throw new Error("the database gauges are not back yet")
        return answer
      })
      expect(back.status).toBe(200)
      expect(back.value("paydesk_payments{status=\"created\",environment=\"sandbox\"}")).toBe("1")
      for (const name of [...databaseGauges, ...everythingElse]) expect([name, back.has(name)]).toEqual([name, true])
    } finally {
      proxy.set("up")
      await srv.stop()
      await proxy.close()
      await receiver.close()
    }
  }, 60_000)
})

describe("lifecycle", () => {
  it("lets the request in flight finish when it stops, and refuses new ones", async () => {
    // The receiver never answers: the operator's work run is in flight until the callback times out (10 s).
    const slow = await startReceiver(() => Date.now())
    const srv = await startServer({ PAYDESK_SHUTDOWN_TIMEOUT_MS: "30000" })
    try {
      await srv.setClock("2026-08-02T10:00:00.000Z")
      const m = await srv.merchant(slow.url)
      slow.answers.push("hang")
      expect((await m.api("POST", "/payments", { amount: "10.00", order_id: "drain-1" })).status).toBe(201)
      const inFlight = srv.work()
      await eventually(() => {
        if (slow.requests.length === 0) throw new Error("the callback is not in flight yet")
      })
      const stopped = srv.stop()
      // A new connection is refused while draining, or (accepted as the close began) its readiness probe answered 503.
      // (Liveness would be 200 then: a drain is no reason to restart the process.)
      const late = await request(srv.base, "GET", "/health/ready").then((r) => r.status, () => "refused")
      expect([503, "refused"]).toContain(late)
      // The hanging receiver is cut off by the callback timeout; the run then answers 200 before the server stops.
      expect(await inFlight).toHaveProperty("callbacks")
      const answeredAt = Date.now()
      await stopped
      // It stopped once the request was answered, not at the 30 s cut-off for requests still in flight.
      expect(Date.now() - answeredAt).toBeLessThan(15_000)
    } finally {
      await slow.close()
    }
  }, 60_000)

  it("the local worker, woken by the commit, delivers long before its interval", async () => {
    const receiver = await startReceiver(() => Date.now())
    const srv = await startServer({ PAYDESK_ENGINE: "local", PAYDESK_CLOCK: "system", PAYDESK_WORK_INTERVAL_MS: "600000" })
    try {
      const m = await srv.merchant(receiver.url)
      const started = Date.now()
      expect((await m.api("POST", "/payments", { amount: "10.00", order_id: "wake-1", test: true })).status).toBe(201)
      await eventually(() => {
        if (receiver.requests.length === 0) throw new Error("no callback yet")
      })
      expect(Date.now() - started).toBeLessThan(10_000)
      expect(JSON.parse(receiver.requests[0]!.body).event_type).toBe("payment.created")
      const ready = await srv.call("GET", "/health/ready")
      expect(ready.json.checks.worker).toMatchObject({ ok: true, detail: expect.stringMatching(/^running/) })
    } finally {
      await srv.stop()
      await receiver.close()
    }
  }, 60_000)
})
