/**
 * The spec's 10-second answer time, end to end through the reference server's HTTP transport:
 * a receiver answering in 9 s gets its callback delivered; one answering in 11 s is cut off at
 * 10 s, the attempt is recorded as failed and the retry is scheduled 30 s after it.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, Option } from "effect"
import { Callbacks, Config, PaydeskConfig, Payments, Work } from "@paydesk/core"
import { Kit } from "@paydesk/testkit"
import * as HttpCallbackTransport from "../src/HttpCallbackTransport.js"

/** A receiver that answers 200 after `delayMs`, noting whether the sender hung up first. */
const slowReceiver = async (delayMs: number) => {
  const seen: Array<{ readonly answered: boolean; readonly hungUpAfterMs: number | null }> = []
  const server: Server = createServer((request, response) => {
    const started = Date.now()
    const entry = { answered: false, hungUpAfterMs: null as number | null }
    seen.push(entry)
    request.resume()
    const timer = setTimeout(() => {
      entry.answered = true
      response.writeHead(200).end("ok")
    }, delayMs)
    response.on("close", () => {
      if (!entry.answered) {
        entry.hungUpAfterMs = Date.now() - started
        clearTimeout(timer)
      }
    })
  })
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks`,
    seen,
    close: () => new Promise<void>((ok) => server.close(() => ok()))
  }
}

describe("HttpCallbackTransport and the 10-second answer time", () => {
  let fast: Awaited<ReturnType<typeof slowReceiver>>
  let slow: Awaited<ReturnType<typeof slowReceiver>>
  beforeAll(async () => {
    fast = await slowReceiver(9_000)
    slow = await slowReceiver(11_000)
  })
  afterAll(async () => {
    await fast?.close()
    await slow?.close()
  })

  it("delivers to a receiver answering in 9 s and cuts one answering in 11 s off at 10 s, retrying 30 s after the cut", async () => {
    const program = Effect.gen(function*() {
      const created = yield* Effect.forEach([fast.url, slow.url], (callbackUrl) =>
        Effect.gen(function*() {
          const merchant = yield* Kit.provisionMerchant({ callbackUrl })
          const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
          const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "slow-1", test: true })
          return { merchant, payment }
        }))
      yield* Work.runDue()
      return yield* Effect.forEach(created, ({ merchant }) =>
        Effect.gen(function*() {
          const [delivery] = yield* Callbacks.listDeliveries({ terminalId: merchant.terminal.id, limit: 10 })
          return yield* Callbacks.getDelivery(delivery!.id)
        }))
    })
    const [toFast, toSlow] = await Effect.runPromise(
      program.pipe(
        Effect.provide(HttpCallbackTransport.layer),
        Effect.provide(Kit.layer),
        // The receivers are on loopback, as in development (PAYDESK_CALLBACK_ALLOW_PRIVATE=1).
        Effect.provideService(PaydeskConfig, { ...Config.defaults, allowPrivateCallbacks: true })
      )
    )
    expect([toFast!.delivery.status, toFast!.attempts.map((a) => a.statusCode)]).toEqual(["delivered", [200]])
    expect(fast.seen).toEqual([{ answered: true, hungUpAfterMs: null }])

    expect(toSlow!.delivery.status).toBe("pending")
    const attempt = toSlow!.attempts[0]!
    expect([attempt.statusCode, attempt.error]).toEqual([null, "timeout: no answer within 10000 ms"])
    expect(attempt.latencyMs).toBeGreaterThanOrEqual(10_000)
    expect(attempt.latencyMs).toBeLessThan(11_000)
    // The spec's 30 s run from the failure (the cut at 10 s), not from the attempt's start.
    const wait = toSlow!.delivery.nextAttemptAt! - attempt.at - 30_000
    expect(wait).toBeGreaterThanOrEqual(attempt.latencyMs)
    expect(wait).toBeLessThan(attempt.latencyMs + 1_000)
    // The receiver saw the sender hang up before its answer (the close reaches it a moment later).
    for (let i = 0; i < 50 && slow.seen[0]?.hungUpAfterMs === null; i++) await new Promise((ok) => setTimeout(ok, 20))
    expect(slow.seen).toHaveLength(1)
    expect(slow.seen[0]!.answered).toBe(false)
    expect(slow.seen[0]!.hungUpAfterMs).toBeGreaterThanOrEqual(9_900)
    expect(Option.isNone(Option.fromNullishOr(toSlow!.delivery.lastStatusCode))).toBe(true)
  }, 30_000)
})
