/**
 * A callback that gets no answer records its real cause: the system error (`ECONNREFUSED`), a
 * connection closed before the answer, the DNS failure, the TLS error of an https URL whose server
 * does not speak TLS; the same text is stored with the attempt in the delivery log.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Config, PaydeskConfig } from "@paydesk/core"
import { CallbackTransport } from "@paydesk/core"
import { Effect, Layer, Logger } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { createServer as createTcpServer, type Socket } from "node:net"
import * as HttpCallbackTransport from "../src/HttpCallbackTransport.js"
import { startServer } from "./ServerHarness.js"

/** A port nothing listens on (bound, read, closed). */
const closedPort = async () => {
  const server = createTcpServer()
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((ok) => server.close(() => ok()))
  return port
}

const post = (url: string) =>
  Effect.runPromise(Effect.gen(function*() {
    return yield* (yield* CallbackTransport).post({ url, headers: { "content-type": "application/json" }, body: "{}", timeoutMs: 5_000 })
  }).pipe(
    Effect.flip,
    Effect.provide(HttpCallbackTransport.layer),
    Effect.provideService(PaydeskConfig, { ...Config.defaults, allowPrivateCallbacks: true })
  ))

describe("HttpCallbackTransport failures", () => {
  let resetting: Server
  let resettingUrl = ""
  beforeAll(async () => {
    // Takes the request, then drops the connection without a word.
    resetting = createServer((request) => request.socket.destroy())
    await new Promise<void>((ok) => resetting.listen(0, "127.0.0.1", ok))
    resettingUrl = `http://127.0.0.1:${(resetting.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((ok) => resetting.close(() => ok())))

  it("names the cause: refused, reset, TLS, DNS", async () => {
    const port = await closedPort()
    expect((await post(`http://127.0.0.1:${port}/cb`)).message).toBe(`connect ECONNREFUSED 127.0.0.1:${port}`)
    expect((await post(`${resettingUrl}/cb`)).message).toBe("connection closed before an answer: other side closed")
    // https to a server that answers plain HTTP: the TLS handshake fails.
    expect((await post(`${resettingUrl.replace("http:", "https:")}/cb`)).message).toBe("ERR_SSL_WRONG_VERSION_NUMBER: TLS: wrong version number")
    const dns = await new Promise<string>((ok, fail) =>
      HttpCallbackTransport.send(
        { url: "http://nowhere.invalid/cb", headers: {}, body: "{}", timeoutMs: 5_000 },
        true,
        (hostname, done) => done(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), [])
      ).then(() => fail(new Error("answered")), (error) => ok(HttpCallbackTransport.describeFailure(error))))
    expect(dns).toBe("getaddrinfo ENOTFOUND nowhere.invalid")
  })

  it("an informational answer is not the answer: early hints and then a reset fail as a reset", async () => {
    const hinting = createServer((request, response) => {
      response.writeEarlyHints({ link: "</style.css>; rel=preload" }, () => request.socket.destroy())
    })
    await new Promise<void>((ok) => hinting.listen(0, "127.0.0.1", ok))
    try {
      const failure = await HttpCallbackTransport.send(
        { url: `http://127.0.0.1:${(hinting.address() as AddressInfo).port}/cb`, headers: {}, body: "{}", timeoutMs: 5_000 },
        true
      ).then((answer) => new Error(`answered ${answer.statusCode}`), (error: Error) => error)
      expect(HttpCallbackTransport.describeFailure(failure)).toBe("connection closed before an answer: other side closed")
    } finally {
      await new Promise<void>((ok) => hinting.close(() => ok()))
    }
  })

  it("a request still waiting for its connection fails with the timeout when it runs out", async () => {
    // Accepts TCP connections and says nothing: an https request never gets past the TLS handshake.
    const sockets = new Set<Socket>()
    const silent = createTcpServer((socket) => void sockets.add(socket))
    await new Promise<void>((ok) => silent.listen(0, "127.0.0.1", ok))
    try {
      const started = performance.now()
      const failure = await HttpCallbackTransport.send(
        { url: `https://127.0.0.1:${(silent.address() as AddressInfo).port}/cb`, headers: {}, body: "{}", timeoutMs: 300 },
        true
      ).then(() => new Error("answered"), (error: Error) => error)
      expect(HttpCallbackTransport.describeFailure(failure)).toBe("timeout: no answer within 300 ms")
      // At the timeout, not at the pool's own connect timeout (10 s).
      expect(performance.now() - started).toBeLessThan(3_000)
    } finally {
      // The TLS handshake still in progress (the pool gives up on it after its connect timeout) is cut.
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((ok) => silent.close(() => ok()))
    }
  })

  it("an answer cut off after its status line counts by its status, with what arrived of its body", async () => {
    // 200 with a body announced as 100 bytes, 7 of them sent, then the connection reset.
    const cutting = createTcpServer((socket) => {
      socket.once("data", () => {
        socket.write("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial")
        setTimeout(() => socket.resetAndDestroy(), 50)
      })
    })
    await new Promise<void>((ok) => cutting.listen(0, "127.0.0.1", ok))
    try {
      const url = `http://127.0.0.1:${(cutting.address() as AddressInfo).port}/cb`
      expect(await HttpCallbackTransport.send({ url, headers: {}, body: "{}", timeoutMs: 5_000 }, true)).toEqual({ statusCode: 200, body: "partial" })
    } finally {
      await new Promise<void>((ok) => cutting.close(() => ok()))
    }
  })

  it("describes aggregate and plain errors", () => {
    const refused = (address: string) => Object.assign(new Error(`connect ECONNREFUSED ${address}`), { code: "ECONNREFUSED" })
    const aggregate = Object.assign(new AggregateError([refused("127.0.0.1:1"), refused("[::1]:1")], ""), { code: "ECONNREFUSED" })
    expect(HttpCallbackTransport.describeFailure(aggregate)).toBe("connect ECONNREFUSED 127.0.0.1:1; connect ECONNREFUSED [::1]:1")
    expect(HttpCallbackTransport.describeFailure("boom")).toBe("boom")
    // Node's advice to its own user is dropped from a TLS failure.
    const selfSigned = Object.assign(new Error("self-signed certificate; if the root CA is installed locally, try running Node.js with --use-system-ca"), { code: "DEPTH_ZERO_SELF_SIGNED_CERT" })
    expect(HttpCallbackTransport.describeFailure(selfSigned)).toBe("DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate")
    expect(HttpCallbackTransport.describeFailure(new HttpCallbackTransport.DestinationRefused("callback destination refused: x", "x is a loopback address"))).toBe("callback destination refused: x")
  })

  it("stores the cause with the delivery's attempt", async () => {
    const port = await closedPort()
    const srv = await startServer()
    try {
      await srv.setClock("2026-09-01T10:00:00.000Z")
      const m = await srv.merchant(`http://127.0.0.1:${port}/callbacks`)
      const created = await m.api("POST", "/payments", { amount: "10.00", order_id: "refused-1", test: true })
      await srv.work()
      const deliveries = await srv.admin("GET", `/deliveries?payment_id=${created.json.id}`)
      const detail = await srv.admin("GET", `/deliveries/${deliveries.json.items[0].id}`)
      expect(detail.json.attempts[0]).toMatchObject({ status_code: null, error: `connect ECONNREFUSED 127.0.0.1:${port}` })
      expect(detail.json.delivery.last_error).toBe(`connect ECONNREFUSED 127.0.0.1:${port}`)
    } finally {
      await srv.stop()
    }
  }, 60_000)
})

describe("HttpCallbackTransport's keep-alive pool", () => {
  it("sends one after another over the connections it keeps open", async () => {
    let connections = 0
    const receiver = createServer((request, response) => {
      request.resume()
      request.on("end", () => response.writeHead(200).end("ok"))
    })
    receiver.on("connection", () => connections++)
    await new Promise<void>((ok) => receiver.listen(0, "127.0.0.1", ok))
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/cb`
    try {
      for (let i = 0; i < 10; i++) {
        expect(await HttpCallbackTransport.send({ url, headers: {}, body: "{}", timeoutMs: 5_000 }, true)).toEqual({ statusCode: 200, body: "ok" })
      }
      // One connection per send without keep-alive; the pool may open a second while the first is released.
      expect(connections).toBeLessThanOrEqual(2)
    } finally {
      receiver.closeAllConnections()
      await new Promise<void>((ok) => receiver.close(() => ok()))
    }
  })

  /**
   * A receiver answering 200 with `body` in pieces of 1 KiB a few milliseconds apart (as an answer
   * arrives over a network: in several reads), with its content-length unless `chunked`, and to its
   * end unless `end` is false; it counts its connections and the ones closed.
   */
  const answering = async (body: Buffer, options: { readonly chunked?: boolean; readonly end?: boolean } = {}) => {
    const seen = { connections: 0, closed: 0 }
    const end = options.end ?? true
    const receiver = createServer((request, response) => {
      request.resume()
      request.on("end", () => {
        response.writeHead(200, options.chunked === true || !end ? {} : { "content-length": String(body.length) })
        const piece = (at: number) => {
          if (response.destroyed) return
          if (at >= body.length) return void (end && response.end())
          response.write(body.subarray(at, at + 1024))
          setTimeout(() => piece(at + 1024), at < 8 * 1024 ? 3 : 0)
        }
        piece(0)
      })
    })
    receiver.on("connection", (socket) => {
      seen.connections++
      socket.on("close", () => seen.closed++)
    })
    await new Promise<void>((ok) => receiver.listen(0, "127.0.0.1", ok))
    return {
      seen,
      send: (timeoutMs = 10_000) =>
        HttpCallbackTransport.send({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/cb`, headers: {}, body: "{}", timeoutMs }, true),
      close: async () => {
        receiver.closeAllConnections()
        await new Promise<void>((ok) => receiver.close(() => ok()))
      }
    }
  }

  it("keeps the connection after an answer of a few KiB, whose first KiB it keeps", async () => {
    // A framework's default page: 1 KiB of "a", then 3 KiB of "b".
    const receiver = await answering(Buffer.from("a".repeat(1024) + "b".repeat(3072)))
    try {
      for (let i = 0; i < 10; i++) expect(await receiver.send()).toEqual({ statusCode: 200, body: "a".repeat(1024) })
      // Dropped after the excerpt, each send would open a connection of its own.
      expect(receiver.seen.connections).toBeLessThanOrEqual(2)
      expect(receiver.seen.closed).toBe(0)
    } finally {
      await receiver.close()
    }
  })

  it("reads answers of up to reuseBytes to keep their connection, and drops longer ones, announced or not", async () => {
    const longest = await answering(Buffer.alloc(HttpCallbackTransport.reuseBytes, "x"))
    const announced = await answering(Buffer.alloc(HttpCallbackTransport.reuseBytes + 1, "x"))
    const chunked = await answering(Buffer.alloc(HttpCallbackTransport.reuseBytes + 1, "x"), { chunked: true })
    try {
      for (let i = 0; i < 3; i++) {
        for (const receiver of [longest, announced, chunked]) expect(await receiver.send()).toEqual({ statusCode: 200, body: "x".repeat(1024) })
      }
      expect(longest.seen.connections).toBeLessThanOrEqual(2)
      expect(longest.seen.closed).toBe(0)
      for (const receiver of [announced, chunked]) {
        expect(receiver.seen.connections).toBe(3)
        await expect.poll(() => receiver.seen.closed).toBe(3)
      }
    } finally {
      await Promise.all([longest.close(), announced.close(), chunked.close()])
    }
  })

  it("an answer that does not end within the timeout ends the send then, with its excerpt, and its connection is dropped", async () => {
    // 2 KiB, then nothing more, never the end of the body.
    const receiver = await answering(Buffer.alloc(2048, "y"), { end: false })
    try {
      const started = performance.now()
      expect(await receiver.send(1_000)).toEqual({ statusCode: 200, body: "y".repeat(1024) })
      // The send held its connection (and its place among a pass's sends in flight) until the timeout.
      expect(performance.now() - started).toBeGreaterThanOrEqual(990)
      await expect.poll(() => receiver.seen.closed).toBe(1)
    } finally {
      await receiver.close()
    }
  })
})

describe("HttpCallbackTransport refusals", () => {
  it("logs a refused destination (naming its address) once, then at most once a minute a host, not at every attempt", async () => {
    const warnings: Array<string> = []
    const logger = Logger.make<unknown, void>(({ logLevel, message }) => {
      if (logLevel === "Warn") warnings.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
    })
    const failures = await Effect.runPromise(Effect.gen(function*() {
      const transport = yield* CallbackTransport
      const send = (url: string) => Effect.flip(transport.post({ url, headers: { "content-type": "application/json" }, body: "{}", timeoutMs: 2_000 }))
      const out = []
      for (let i = 0; i < 5; i++) out.push(yield* send("http://127.0.0.1:9/cb"))
      out.push(yield* send("http://10.0.0.7/cb"))
      return out
    }).pipe(
      Effect.provide(Layer.merge(HttpCallbackTransport.layer, Logger.layer([logger]))),
      Effect.provideService(PaydeskConfig, { ...Config.defaults, allowPrivateCallbacks: false })
    ))
    // Every attempt fails and says so (without the address); the log has one line per host.
    expect(failures.map((f) => f.message)).toEqual([...Array(5).fill("callback destination refused: 127.0.0.1 is a loopback address"), "callback destination refused: 10.0.0.7 is a private address"])
    expect(warnings).toEqual(["callback destination refused: 127.0.0.1 is a loopback address", "callback destination refused: 10.0.0.7 is a private address"])
  })
})
