/**
 * The embedded core: our own fetch transport delivers both callbacks of a sandbox payment, signed
 * so that `@paydesk/client` verifies them with the terminal's secret; it follows no redirect (a
 * receiver's 307 to an internal address is a failed attempt, the address gets nothing), reads a
 * bounded part of an answer, and cancels a post that is interrupted.
 */
import { afterAll, describe, expect, it } from "vitest"
import { createServer, type RequestListener, type Server } from "node:http"
import { Effect, Fiber } from "effect"
import { Callback, CallbackTransport, Callbacks } from "@paydesk/core"
import { webhooks } from "@paydesk/client"
import { fetchTransport, makeRuntime } from "../src/Host.js"
import { firstPayment } from "../src/Scenario.js"

const servers: Array<Server> = []
afterAll(() => servers.forEach((server) => server.close()))

/** A server on 127.0.0.1, and its URL. */
const serve = async (listener: RequestListener): Promise<string> => {
  const server = createServer(listener)
  servers.push(server)
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok))
  const address = server.address()
  return `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
}

/** A receiver recording what it gets, answering `answer`. */
const recorder = async (answer: { status: number; body: string } = { status: 200, body: "ok" }) => {
  const received: Array<{ url: string; headers: Record<string, string | string[] | undefined>; body: string }> = []
  const url = await serve((request, response) => {
    let body = ""
    request.on("data", (chunk: Buffer) => (body += chunk.toString()))
    request.on("end", () => {
      received.push({ url: request.url ?? "", headers: request.headers, body })
      response.writeHead(answer.status).end(answer.body)
    })
  })
  return { url, received }
}

/** A receiver answering every request with a 307 to `location`. */
const redirecting = (location: string) => serve((_request, response) => response.writeHead(307, { location }).end())

const post = (url: string, timeoutMs = Callback.timeoutMs) =>
  Effect.runPromise(Effect.gen(function*() {
    return yield* (yield* CallbackTransport).post({ url, headers: { "content-type": "application/json" }, body: "{\"event\":\"payment.paid\"}", timeoutMs })
  }).pipe(Effect.provide(fetchTransport)))

describe("embed-core", () => {
  it("runs a sandbox payment through its own adapters, delivering signed callbacks", async () => {
    const receiver = await recorder()
    const runtime = makeRuntime({ allowPrivateCallbacks: true })
    try {
      const result = await runtime.runPromise(firstPayment(`${receiver.url}/callbacks`))
      expect(result.payment).toMatchObject({ status: "paid", amount: "1000.50", test: true })
      expect(result.report.callbacks).toBe(2)
      const events = await Promise.all(receiver.received.map((r) => webhooks.verify(r.body, r.headers as Record<string, string>, result.signingSecret)))
      expect(events.map((e) => e.event_type)).toEqual(["payment.created", "payment.paid"])
    } finally {
      await runtime.dispose()
    }
  })

  it("the transport follows no redirect: a 307 to an internal address is the answer, and that address gets nothing", async () => {
    const internal = await recorder({ status: 200, body: "internal secret answer" })
    const answer = await post(`${await redirecting(`${internal.url}/admin/internal`)}/cb`)
    expect(answer.statusCode).toBe(307)
    expect(answer.body).not.toContain("internal secret answer")
    expect(internal.received).toEqual([])
  })

  it("a redirected callback is a failed attempt (HTTP 307) left for a retry; the redirect's target gets nothing", async () => {
    const internal = await recorder({ status: 200, body: "internal secret answer" })
    const url = `${await redirecting(`${internal.url}/admin/internal`)}/callbacks`
    const runtime = makeRuntime({ allowPrivateCallbacks: true })
    try {
      const result = await runtime.runPromise(firstPayment(url))
      const deliveries = await runtime.runPromise(Callbacks.listDeliveries({ terminalId: result.terminalId, limit: 10 }))
      expect(deliveries.length).toBe(2)
      for (const delivery of deliveries) {
        expect(delivery).toMatchObject({ status: "pending", lastStatusCode: 307, lastError: "HTTP 307", deliveredAt: null })
      }
      const { attempts } = await runtime.runPromise(Callbacks.getDelivery(deliveries[0]!.id))
      expect(attempts.map((a) => a.responseBody ?? "")).not.toContain("internal secret answer")
      expect(internal.received).toEqual([])
    } finally {
      await runtime.dispose()
    }
  })

  it("keeps at most Callback.responseExcerptBytes of an answer and does not read a huge one to its end", async () => {
    let written = 0
    const huge = await serve((request, response) => {
      request.resume()
      request.on("end", () => {
        response.writeHead(200, { "content-type": "text/plain" })
        // An endless answer: the transport must stop reading it, well within the timeout.
        const chunk = Buffer.alloc(64 * 1024, "a")
        const more = () => {
          while (!response.destroyed && written < 1024 * 1024 * 1024) {
            written += chunk.length
            if (!response.write(chunk)) return void response.once("drain", more)
          }
        }
        more()
      })
    })
    const started = Date.now()
    const answer = await post(`${huge}/cb`, 5_000)
    expect(answer.statusCode).toBe(200)
    expect(answer.body).toBe("a".repeat(Callback.responseExcerptBytes))
    expect(Date.now() - started).toBeLessThan(4_000)
    expect(written).toBeLessThan(64 * 1024 * 1024)
  })

  it("cancels an interrupted post: the receiver's connection closes at once, not at the timeout", async () => {
    let arrived = () => {}
    const arrival = new Promise<void>((ok) => (arrived = ok))
    let closed = () => {}
    const closing = new Promise<void>((ok) => (closed = ok))
    // A receiver that never answers.
    const silent = await serve((request, response) => {
      request.resume()
      response.on("close", () => closed())
      arrived()
    })
    const sending = Effect.runFork(Effect.gen(function*() {
      return yield* (yield* CallbackTransport).post({ url: `${silent}/cb`, headers: { "content-type": "application/json" }, body: "{}", timeoutMs: 10_000 })
    }).pipe(Effect.provide(fetchTransport)))
    await arrival
    const started = Date.now()
    await Effect.runPromise(Fiber.interrupt(sending))
    await closing
    expect(Date.now() - started).toBeLessThan(5_000)
  })

  it("posts over http and https only", async () => {
    await expect(post("file:///etc/passwd")).rejects.toMatchObject({ _tag: "TransportFailure", message: "unsupported scheme file:" })
  })
})
