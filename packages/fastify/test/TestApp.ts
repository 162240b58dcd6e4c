/**
 * Test harness of the HTTP host: the app on the in-memory kit, with provisioning and
 * request helpers. Each `make()` is a fresh service.
 */
import { Effect, type Layer, ManagedRuntime, Schema } from "effect"
import * as net from "node:net"
import { expect } from "vitest"
import type { FastifyInstance } from "fastify"
import { Kit } from "@paydesk/testkit"
import * as App from "../src/App.js"
import { responses } from "../src/ResponseSchemas.js"

export const publicUrl = "http://pay.test"
export const adminToken = "test-admin-token"

/** A fresh app on a fresh kit (or on `layer`: the kit with some services replaced). */
export const make = async (options: Partial<App.Options> = {}, layer: Layer.Layer<Kit.Services> = Kit.layer) => {
  const runtime = ManagedRuntime.make(layer)
  // Every answer is checked against its operation's declaration.
  const app = await App.build({ runtime, publicUrl, adminToken, checkResponses: true, ...options })
  const run = <A, E>(effect: Effect.Effect<A, E, Kit.Services>) => runtime.runPromise(effect)
  return {
    app,
    runtime,
    run,
    /** A merchant with callback URL, terminal, key and secret. */
    merchant: (options: Parameters<typeof Kit.provisionMerchant>[0] = {}) => run(Kit.provisionMerchant(options)),
    plans: (terminalId: string) => run(Kit.provisionPlans(terminalId)),
    close: async () => {
      await app.close()
      await runtime.dispose()
    }
  }
}

/** Headers of an API-key request with a fresh nonce. */
export const keyHeaders = (apiKey: string, extra: Record<string, string> = {}) => ({
  "x-api-key": apiKey,
  "x-nonce": crypto.randomUUID(),
  ...extra
})

type Method = "GET" | "POST" | "PUT" | "DELETE"

/** Requests to the merchant API (`/api/v1`) with `apiKey` and a fresh nonce each. */
export const keyCalls = (app: FastifyInstance, apiKey: () => string) =>
  (method: Method, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    app.inject({ method, url: `/api/v1${url}`, headers: keyHeaders(apiKey(), headers), ...(payload === undefined ? {} : { payload: payload as object }) })

/** Requests to the operator API (`/admin/v1`) with the operator token. */
export const adminCalls = (app: FastifyInstance) => (method: Method, url: string, payload?: unknown) =>
  app.inject({ method, url: `/admin/v1${url}`, headers: { authorization: `Bearer ${adminToken}` }, ...(payload === undefined ? {} : { payload: payload as object }) })

/** JSON body of a response. */
export const json = (response: { body: string }) => JSON.parse(response.body)

/** Decodes a response body with its documented schema; excess fields are errors. */
export const shape = <K extends keyof typeof responses>(name: K, body: unknown) =>
  Schema.decodeUnknownSync(responses[name] as Schema.Codec<unknown>, { onExcessProperty: "error" })(body)

/** Asserts an error response: status, documented body, code, request id and message. */
export const expectError = (
  response: { statusCode: number; body: string; headers: Record<string, unknown> },
  status: number,
  code: string,
  message?: string | RegExp
) => {
  expect(response.statusCode).toBe(status)
  const body = json(response)
  shape("Error", body)
  expect(body.error.code).toBe(code)
  expect(body.error.request_id).toBe(response.headers["x-request-id"])
  if (typeof message === "string") expect(body.error.message).toBe(message)
  if (message instanceof RegExp) expect(body.error.message).toMatch(message)
  return body.error as { code: string; message: string; field?: string }
}

/** A route answering after `ms` (for a client that leaves while it is handled): when it started, when its handler returned. */
export const slowRoute = (app: FastifyInstance, ms: number) => {
  const signal = () => {
    let resolve = () => {}
    const promise = new Promise<void>((ok) => void (resolve = ok))
    return { promise, resolve }
  }
  const started = signal()
  const finished = signal()
  app.post("/test-only/slow", async (_request, reply) => {
    started.resolve()
    await new Promise((resolve) => setTimeout(resolve, ms))
    setImmediate(finished.resolve)
    return reply.code(204).send()
  })
  return { started: () => started.promise, finished: () => finished.promise }
}

/** The whole request of `slowRoute`. */
export const slowRequestHead = "POST /test-only/slow HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"

/** A payment creation whose body stops after its first bytes (a client leaving mid-body). */
export const halfBodyHead = "POST /api/v1/payments HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{\"amount\":"

/**
 * Sends `bytes` in one write on a fresh connection to the app listening at `address`, and answers
 * everything the server sent until it closed the connection (`closed` false: still open after `waitMs`).
 */
export const untilClosed = async (address: string, bytes: string, waitMs = 5_000): Promise<{ readonly received: string; readonly closed: boolean }> => {
  const socket = net.connect({ host: "127.0.0.1", port: Number(new URL(address).port) })
  await new Promise((resolve) => socket.once("connect", resolve))
  let received = ""
  socket.on("data", (chunk) => void (received += chunk.toString("latin1")))
  socket.on("error", () => {})
  socket.write(bytes)
  const closed = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), waitMs)
    socket.once("close", () => {
      clearTimeout(timer)
      resolve(true)
    })
  })
  socket.destroy()
  return { received, closed }
}

/** Sends `head` (and no more) on a fresh connection to the app listening at `address`, and returns the socket. */
export const rawRequest = async (address: string, head: string) => {
  const { port } = new URL(address)
  const socket = net.connect({ host: "127.0.0.1", port: Number(port) })
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
  socket.write(head)
  return socket
}

/** One raw HTTP answer (the last of `received` from `from` on): its status, a header by name, its JSON body and error. */
export const rawAnswer = (received: string, from = 0) => {
  const [head, body] = received.slice(from).split("\r\n\r\n") as [string, string]
  const json = JSON.parse(body)
  return {
    status: Number(head.split(" ")[1]),
    header: (name: string) => new RegExp(`^${name}: (.*)$`, "im").exec(head)?.[1],
    body: json as unknown,
    error: json.error as { code: string; message: string; request_id: string; field?: string }
  }
}

export type TestApp = Awaited<ReturnType<typeof make>>
export type { FastifyInstance }
