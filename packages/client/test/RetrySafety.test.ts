/**
 * What the errors of a call say about the attempts it sent (against a `fetch` stand-in, no server):
 * the `Idempotency-Key` a payout or a subscription was sent with, also a generated one, so that
 * repeating the call replays it instead of paying out twice; `attempts` and `outcomeUnknown` after an
 * attempt without an answer; `events.recover` not retried (its count does not replay); a test clock's
 * deletion retried, its repeat after a lost answer a 404 with `outcomeUnknown`; `Retry-After`
 * as delay-seconds or an HTTP-date, on the error and in the wait before a retry.
 */
import { describe, expect, it, vi } from "vitest"
import {
  Paydesk,
  PaydeskAbortError,
  PaydeskApiError,
  PaydeskConnectionError,
  PaydeskSessionEndedError,
  type PayoutCreate
} from "../src/index.js"
import { retryAfterMs } from "../src/Http.js"
import { createServer } from "node:net"
import type { AddressInfo } from "node:net"

/** One request the stand-in received. */
interface Seen {
  readonly method: string
  readonly path: string
  readonly headers: { readonly [name: string]: string | undefined }
  readonly body: string
}

/** A `fetch` that answers from `answer` (a throw is a request without an answer) and records every request. */
const stub = (answer: (seen: Seen, index: number, signal: AbortSignal) => Response | Promise<Response>) => {
  const seen: Array<Seen> = []
  const fetcher: typeof fetch = async (input, init) => {
    const headers = Object.fromEntries(Object.entries((init?.headers ?? {}) as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]))
    const request: Seen = { method: init?.method ?? "GET", path: new URL(String(input)).pathname, headers, body: typeof init?.body === "string" ? init.body : "" }
    seen.push(request)
    return answer(request, seen.length - 1, init!.signal!)
  }
  return { seen, fetcher }
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } })

const busy = (headers: Record<string, string> = {}) => json(503, { error: { code: "service_unavailable", message: "busy" } }, headers)

/** The network lost the answer (or the request): what `fetch` throws then. */
const noAnswer = (): never => {
  throw new TypeError("fetch failed", { cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }) })
}

const wallet = "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"
const request: PayoutCreate = { amount_usdt: "1", wallet_address: wallet, network: "TRC-20" }

/**
 * A payouts endpoint as the server keeps it: one payout per `Idempotency-Key` (the same key answers
 * the same payout again, 200); `drop` says which requests it does the work for and then loses the answer.
 */
const payoutServer = (drop: (index: number) => boolean) => {
  const byKey = new Map<string, { readonly id: string }>()
  const stand = stub((seen, index) => {
    const key = seen.headers["idempotency-key"]!
    const known = byKey.get(key)
    const payout = known ?? { id: `po_${byKey.size + 1}` }
    byKey.set(key, payout)
    if (drop(index)) return noAnswer()
    return json(known === undefined ? 201 : 200, { ...payout, terminal_id: "t", ...request, status: "created", idempotency_key: null })
  })
  return { ...stand, payouts: () => byKey.size }
}

describe("RetrySafety: the idempotency key on the error", () => {
  it("a payout without a key whose attempts all fail names its generated key; the same call with it replays, one payout", async () => {
    const server = payoutServer((i) => i < 3)
    const client = new Paydesk({ apiKey: "k", fetch: server.fetcher, retryDelayMs: 1 })
    const error = await client.payouts.create(request).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PaydeskConnectionError)
    const key = server.seen[0]!.headers["idempotency-key"]!
    expect(key).toMatch(/^[0-9a-f-]{36}$/)
    expect(server.seen.map((s) => s.headers["idempotency-key"])).toEqual([key, key, key])
    expect(error).toMatchObject({ attempts: 3, outcomeUnknown: true, idempotencyKey: key })
    expect(server.payouts()).toBe(1)

    // The merchant repeats the same call with the error's key: the first payout, not a second one.
    const replayed = await client.payouts.create(request, { idempotencyKey: (error as PaydeskConnectionError).idempotencyKey! })
    expect(replayed.id).toBe("po_1")
    expect(server.seen[3]!.headers["idempotency-key"]).toBe(key)
    // The body field is the same key.
    expect((await client.payouts.create({ ...request, idempotency_key: key })).id).toBe("po_1")
    expect(server.payouts()).toBe(1)
    // What the key prevents: the same call without it is a new payout.
    expect((await client.payouts.create(request)).id).toBe("po_2")
  })

  it("a payout given a key, a 5xx after the retries, and a cancel while in flight name the key too", async () => {
    const failing = stub(() => busy())
    const client = new Paydesk({ apiKey: "k", fetch: failing.fetcher, retryDelayMs: 1 })
    const refused = await client.payouts.create(request, { idempotencyKey: "nightly-7" }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(PaydeskApiError)
    expect(refused).toMatchObject({ status: 503, attempts: 3, outcomeUnknown: true, idempotencyKey: "nightly-7" })

    // Sent, then cancelled before any answer came.
    const controller = new AbortController()
    const hanging = stub((_, _i, signal) => {
      setTimeout(() => controller.abort(), 20)
      return new Promise<Response>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)))
    })
    const cancelling = new Paydesk({ apiKey: "k", fetch: hanging.fetcher })
    const cancelled = await cancelling.payouts.create(request, { signal: controller.signal }).catch((e: unknown) => e)
    expect(cancelled).toBeInstanceOf(PaydeskAbortError)
    expect(cancelled).toMatchObject({ attempts: 1, outcomeUnknown: true, idempotencyKey: hanging.seen[0]!.headers["idempotency-key"] })
    expect((cancelled as PaydeskAbortError).idempotencyKey).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("a subscription without a key names its generated key; a payment names its order_id", async () => {
    const { seen, fetcher } = stub(() => noAnswer())
    const client = new Paydesk({ apiKey: "k", fetch: fetcher, retryDelayMs: 1, terminalId: "t" })
    const error = await client.subscriptions.create({ plan_id: "p", amount: "100" }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PaydeskConnectionError)
    expect(error).toMatchObject({ attempts: 3, outcomeUnknown: true, idempotencyKey: seen[0]!.headers["idempotency-key"] })
    expect(seen.every((s) => s.headers["idempotency-key"] === (error as PaydeskConnectionError).idempotencyKey)).toBe(true)

    const payment = await client.payments.create({ amount: "10", order_id: "ord-1" }).catch((e: unknown) => e)
    expect(payment).toMatchObject({ name: "PaydeskConnectionError", orderId: "ord-1", idempotencyKey: undefined, outcomeUnknown: true })
  })

  it("a session that ends between two attempts names the key and the attempt that may have been done", async () => {
    vi.useFakeTimers({ toFake: ["Date"] })
    try {
      const { seen, fetcher } = stub((s) => {
        if (s.path === "/api/v1/auth/refresh") return json(401, { error: { code: "unauthenticated", message: "refresh token is invalid" } })
        // The first attempt gets no answer, and meanwhile the access token comes due: the retry renews it, refused.
        vi.setSystemTime(Date.now() + 3_600_000)
        return noAnswer()
      })
      const client = new Paydesk({
        accessToken: "a1",
        refreshToken: "r1",
        accessTokenExpiresAt: Math.floor(Date.now() / 1000) + 900,
        baseUrl: "http://paydesk.test",
        fetch: fetcher,
        retryDelayMs: 1
      })
      const error = await client.payouts.create(request).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(PaydeskSessionEndedError)
      expect(seen.map((s) => s.path)).toEqual(["/api/v1/payouts", "/api/v1/auth/refresh"])
      expect(error).toMatchObject({ attempts: 1, outcomeUnknown: true, idempotencyKey: seen[0]!.headers["idempotency-key"] })
    } finally {
      vi.useRealTimers()
    }
  })
})

describe("RetrySafety: attempts and outcomeUnknown", () => {
  it("an attempt without an answer, then 503s: a PaydeskApiError with attempts 3 and outcomeUnknown", async () => {
    const { seen, fetcher } = stub((_, i) => (i === 0 ? noAnswer() : busy()))
    const client = new Paydesk({ apiKey: "k", fetch: fetcher, retryDelayMs: 1 })
    const error = await client.payouts.create(request, { idempotencyKey: "k-1" }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PaydeskApiError)
    expect(error).toMatchObject({ status: 503, code: "service_unavailable", attempts: 3, outcomeUnknown: true, idempotencyKey: "k-1" })
    expect(seen).toHaveLength(3)
  })

  it("after an attempt without an answer a 429 leaves the outcome unknown; a refusal of the request settles it", async () => {
    const limited = stub((_, i) => (i === 0 ? noAnswer() : json(429, { error: { code: "too_many_requests", message: "slow down" } })))
    const a = await new Paydesk({ apiKey: "k", fetch: limited.fetcher, retryDelayMs: 1 }).payouts.create(request).catch((e: unknown) => e)
    expect(a).toMatchObject({ status: 429, attempts: 2, outcomeUnknown: true })

    const refused = stub((_, i) => (i === 0 ? noAnswer() : json(400, { error: { code: "insufficient_balance", message: "no" } })))
    const b = await new Paydesk({ apiKey: "k", fetch: refused.fetcher, retryDelayMs: 1 }).payouts.create(request).catch((e: unknown) => e)
    expect(b).toMatchObject({ status: 400, attempts: 2, outcomeUnknown: false })

    // A refusal of this attempt only (the key revoked or changed meanwhile, a write conflict) proves nothing about the first.
    for (const [status, code] of [[403, "access_denied"], [409, "write_conflict"], [401, "unauthenticated"]] as const) {
      const other = stub((_, i) => (i === 0 ? noAnswer() : json(status, { error: { code, message: "no" } })))
      const c = await new Paydesk({ apiKey: "k", fetch: other.fetcher, retryDelayMs: 1 }).payouts.create(request).catch((e: unknown) => e)
      expect(c, code).toMatchObject({ status, attempts: 2, outcomeUnknown: true })
    }
    const conflict = stub((_, i) => (i === 0 ? noAnswer() : json(409, { error: { code: "idempotency_conflict", message: "another body" } })))
    const d = await new Paydesk({ apiKey: "k", fetch: conflict.fetcher, retryDelayMs: 1 }).payouts.create(request).catch((e: unknown) => e)
    expect(d).toMatchObject({ status: 409, attempts: 2, outcomeUnknown: false })
  })

  it("a 4xx refusal of a write, and every failure of a read, is not an unknown outcome; a 502 of a write not retried is", async () => {
    const refused = stub(() => json(409, { error: { code: "idempotency_conflict", message: "conflict" } }))
    const client = new Paydesk({ apiKey: "k", fetch: refused.fetcher, retryDelayMs: 1 })
    expect(await client.payouts.create(request, { idempotencyKey: "k-2" }).catch((e: unknown) => e)).toMatchObject({ attempts: 1, outcomeUnknown: false, idempotencyKey: "k-2" })

    const down = stub((_, i) => (i === 0 ? noAnswer() : busy()))
    const reads = new Paydesk({ apiKey: "k", fetch: down.fetcher, retryDelayMs: 1 })
    expect(await reads.balance.get().catch((e: unknown) => e)).toMatchObject({ status: 503, attempts: 3, outcomeUnknown: false, idempotencyKey: undefined })

    const proxy = stub(() => json(502, {}))
    const once = new Paydesk({ apiKey: "k", fetch: proxy.fetcher, retryDelayMs: 1 })
    expect(await once.terminals.testEvent("t").catch((e: unknown) => e)).toMatchObject({ status: 502, code: "http_502", attempts: 1, outcomeUnknown: true })
    expect(proxy.seen).toHaveLength(1)
  })

  it("the errors keep their classes and fields; built by hand they have 1 attempt and a known outcome", () => {
    const error = new PaydeskApiError(400, "invalid_request", "bad", "req_1", "amount")
    expect(error).toMatchObject({ status: 400, code: "invalid_request", message: "bad", requestId: "req_1", field: "amount", attempts: 1, outcomeUnknown: false, retryAfterMs: undefined })
    const cause = new Error("reset")
    expect(new PaydeskConnectionError("m", 2, { cause })).toMatchObject({ attempts: 2, outcomeUnknown: false, cause })
    expect(new PaydeskSessionEndedError()).toMatchObject({ attempts: 0, outcomeUnknown: false })
  })
})

describe("RetrySafety: events.recover", () => {
  it("is not retried after an answer lost or a 5xx (a retry would report only what was left)", async () => {
    const lost = stub(() => noAnswer())
    const client = new Paydesk({ apiKey: "k", fetch: lost.fetcher, retryDelayMs: 1 })
    const error = await client.events.recover({ since: "2026-01-01T00:00:00Z" }).catch((e: unknown) => e)
    expect(error).toMatchObject({ name: "PaydeskConnectionError", attempts: 1, outcomeUnknown: true })
    expect(lost.seen).toHaveLength(1)

    const busyServer = stub(() => busy())
    const again = new Paydesk({ apiKey: "k", fetch: busyServer.fetcher, retryDelayMs: 1 })
    expect(await again.events.recover({ since: "2026-01-01T00:00:00Z" }).catch((e: unknown) => e)).toMatchObject({ status: 503, attempts: 1 })
    expect(busyServer.seen).toHaveLength(1)
  })
})

describe("RetrySafety: testClocks.delete", () => {
  const clockId = "d3f5a7c9-2e4b-4d6f-8a1c-5b7e9d2f4a68"
  const notFound = () => json(404, { error: { code: "not_found", message: "test clock not found", request_id: "req_1" } })

  /** The clock endpoint as the server keeps it: a DELETE deletes the clock once (200), then answers 404; `drop` loses the answers it names. */
  const clockServer = (drop: (index: number) => boolean) => {
    let exists = true
    return stub((seen, index) => {
      if (seen.method !== "DELETE" || seen.path !== `/api/v1/test-clocks/${clockId}`) return json(400, { error: { code: "invalid_request", message: "unexpected" } })
      const answer = exists ? json(200, { id: clockId, deleted: true }) : notFound()
      exists = false
      return drop(index) ? noAnswer() : answer
    })
  }

  it("sends DELETE without a body, with the key and a nonce, and answers { id, deleted: true }", async () => {
    const server = clockServer(() => false)
    const client = new Paydesk({ apiKey: "k", fetch: server.fetcher, retryDelayMs: 1 })
    expect(await client.testClocks.delete(clockId)).toEqual({ id: clockId, deleted: true })
    expect(server.seen).toHaveLength(1)
    expect([server.seen[0]!.body, server.seen[0]!.headers["content-type"], server.seen[0]!.headers["x-api-key"]]).toEqual(["", undefined, "k"])
    expect(server.seen[0]!.headers["x-nonce"]).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("is retried after a lost answer or a 5xx, as the calls a repeat cannot do twice; a retry after the deletion's lost answer is a 404 with outcomeUnknown, a first 404 is not", async () => {
    // The deletion done, its answer lost: the retry finds no clock.
    const lost = clockServer((i) => i === 0)
    const error = await new Paydesk({ apiKey: "k", fetch: lost.fetcher, retryDelayMs: 1 }).testClocks.delete(clockId).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PaydeskApiError)
    expect(error).toMatchObject({ status: 404, code: "not_found", attempts: 2, outcomeUnknown: true })
    expect(lost.seen.map((s) => s.method)).toEqual(["DELETE", "DELETE"])
    expect(lost.seen[0]!.headers["x-nonce"]).not.toBe(lost.seen[1]!.headers["x-nonce"])

    // A 503 before anything was done: the retry deletes it.
    const busyFirst = stub((_, i) => (i === 0 ? busy() : json(200, { id: clockId, deleted: true })))
    expect(await new Paydesk({ apiKey: "k", fetch: busyFirst.fetcher, retryDelayMs: 1 }).testClocks.delete(clockId)).toEqual({ id: clockId, deleted: true })
    expect(busyFirst.seen).toHaveLength(2)

    // No such clock (another terminal's, deleted before): one attempt, a known outcome.
    const absent = stub(() => notFound())
    expect(await new Paydesk({ apiKey: "k", fetch: absent.fetcher, retryDelayMs: 1 }).testClocks.delete(clockId).catch((e: unknown) => e))
      .toMatchObject({ status: 404, attempts: 1, outcomeUnknown: false })
    // While it advances: 409, not retried.
    const advancing = stub(() => json(409, { error: { code: "test_clock_advancing", message: "test clock is advancing" } }))
    expect(await new Paydesk({ apiKey: "k", fetch: advancing.fetcher, retryDelayMs: 1 }).testClocks.delete(clockId).catch((e: unknown) => e))
      .toMatchObject({ status: 409, code: "test_clock_advancing", attempts: 1 })
    expect(advancing.seen).toHaveLength(1)
  })
})

describe("RetrySafety: Retry-After", () => {
  const served = new Date("2026-03-01T10:00:00Z")
  const inSeconds = (s: number) => new Date(served.getTime() + s * 1000).toUTCString()

  it("an HTTP-date is read (from the answer's Date) and exposed as retryAfterMs, like delay-seconds", async () => {
    const dated = stub(() => busy({ date: served.toUTCString(), "retry-after": inSeconds(2) }))
    const client = new Paydesk({ apiKey: "k", fetch: dated.fetcher, retryDelayMs: 1 })
    const error = await client.terminals.testEvent("t").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PaydeskApiError)
    expect(error).toMatchObject({ status: 503, retryAfterMs: 2000 })

    const limited = stub(() => json(429, { error: { code: "too_many_requests", message: "retry in 7 s" } }, { "retry-after": "7" }))
    const reads = new Paydesk({ apiKey: "k", fetch: limited.fetcher, retryDelayMs: 1 })
    expect(await reads.rate.get().catch((e: unknown) => e)).toMatchObject({ status: 429, retryAfterMs: 7000, attempts: 1 })
    // A 429 is not retried, also for a read: the caller decides when to call again.
    expect(limited.seen).toHaveLength(1)
  })

  it("a retry waits for an HTTP-date Retry-After", async () => {
    const now = new Date()
    const { seen, fetcher } = stub((_, i) =>
      i === 0 ? busy({ date: now.toUTCString(), "retry-after": new Date(now.getTime() + 1000).toUTCString() }) : json(200, { rate: "95.00", updated_at: now.toISOString() })
    )
    const client = new Paydesk({ apiKey: "k", fetch: fetcher, retryDelayMs: 1 })
    const started = Date.now()
    expect((await client.rate.get()).rate).toBe("95.00")
    expect(Date.now() - started).toBeGreaterThanOrEqual(950)
    expect(seen).toHaveLength(2)
  })

  it("parses delay-seconds and the three HTTP-date forms; a past date is 0; anything else is no value", () => {
    const date = served.toUTCString()
    expect(retryAfterMs("120", date)).toBe(120_000)
    expect(retryAfterMs(" 1.5 ", date)).toBe(1500)
    expect(retryAfterMs("Sun, 01 Mar 2026 10:00:30 GMT", date)).toBe(30_000)
    expect(retryAfterMs("Sunday, 01-Mar-26 10:00:30 GMT", date)).toBe(30_000)
    expect(retryAfterMs("Sun Mar  1 10:00:30 2026", date)).toBe(30_000)
    expect(retryAfterMs("Sun, 01 Mar 2026 09:59:00 GMT", date)).toBe(0)
    // Without the answer's Date (or an unreadable one) the client's clock counts.
    expect(retryAfterMs(inSeconds(5), null, served.getTime())).toBe(5000)
    expect(retryAfterMs(inSeconds(5), "yesterday", served.getTime())).toBe(5000)
    for (const junk of [null, undefined, "", "-1", "soon", "7 s", "Sun, 99 Foo 2026"]) expect(retryAfterMs(junk, date)).toBeUndefined()
  })
})

describe("answers that are no answer, and requests that never left", () => {
  it("a 2xx whose body is not JSON (a proxy's page) may have done the work: a connection error with outcomeUnknown and the key", async () => {
    for (const body of ["<html>portal</html>", ""]) {
      const { seen, fetcher } = stub(() => new Response(body, { status: 200 }))
      const client = new Paydesk({ apiKey: "k", fetch: fetcher, retryDelayMs: 1 })
      const error = await client.payouts.create(request, { idempotencyKey: "po-portal" }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(PaydeskConnectionError)
      expect(error).toMatchObject({ attempts: 1, outcomeUnknown: true, idempotencyKey: "po-portal" })
      expect((error as Error).message).toMatch(/answered 200 with a body that is not JSON/)
      expect(seen).toHaveLength(1)
      // A read says so too, its outcome not a question.
      const read = await client.payments.get("pay_1").catch((e: unknown) => e)
      expect(read).toMatchObject({ outcomeUnknown: false })
      expect(read).toBeInstanceOf(PaydeskConnectionError)
    }
  })

  it("an idempotency key fetch cannot send (Cyrillic, control characters) is refused before anything is sent", async () => {
    const { seen, fetcher } = stub(() => json(200, {}))
    const client = new Paydesk({ apiKey: "k", fetch: fetcher, retryDelayMs: 1 })
    for (const key of ["ключ-1", "a\nb", "x".repeat(129), "with space", " k", ""]) {
      await expect(client.payouts.create(request, { idempotencyKey: key }), JSON.stringify(key)).rejects.toThrow(/an idempotency key is 1 to 128 printable ASCII characters.*no spaces.*nothing was sent/)
      await expect(client.payments.create({ amount: "1.00", order_id: "o-1" }, { idempotencyKey: key })).rejects.toThrow(TypeError)
    }
    expect(seen).toHaveLength(0)
  })

  it("a refused connection reached no server: retried, then a connection error whose outcome is known (nothing done)", async () => {
    const { seen, fetcher } = stub(() => {
      throw new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }) })
    })
    const client = new Paydesk({ apiKey: "k", fetch: fetcher, retryDelayMs: 1 })
    const error = await client.payouts.create(request).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PaydeskConnectionError)
    expect(error).toMatchObject({ attempts: 3, outcomeUnknown: false })
    expect(seen).toHaveLength(3)
    // Over a real socket: a port nothing listens on any more.
    const closed = await new Promise<number>((ok) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        server.close(() => ok(port))
      })
    })
    const real = await new Paydesk({ apiKey: "k", baseUrl: `http://127.0.0.1:${closed}`, retryDelayMs: 1, maxRetries: 0 }).payouts.create(request).catch((e: unknown) => e)
    expect(real).toMatchObject({ attempts: 1, outcomeUnknown: false })
    // A refusal after an attempt that got no answer leaves the outcome unknown.
    const { fetcher: mixed } = stub((_, index) => index === 0 ? noAnswer() : (() => {
      throw new TypeError("fetch failed", { cause: Object.assign(new Error("refused"), { code: "ECONNREFUSED" }) })
    })())
    expect(await new Paydesk({ apiKey: "k", fetch: mixed, retryDelayMs: 1 }).payouts.create(request).catch((e: unknown) => e)).toMatchObject({ attempts: 3, outcomeUnknown: true })
  })
})
