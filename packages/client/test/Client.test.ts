/**
 * The client's transport and calls against local stand-ins of the API (no Paydesk server): the
 * payout idempotency key given in the body, a timeout or a cut connection while the answer's body
 * arrives, cancelling a call with a signal, and a dashboard session after logout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import {
  Paydesk,
  PaydeskAbortError,
  PaydeskApiError,
  PaydeskConnectionError,
  PaydeskError,
  PaydeskSessionEndedError,
  type PayoutCreate
} from "../src/index.js"

/** One request the stand-in received. */
interface Seen {
  readonly method: string
  readonly url: string
  readonly headers: { readonly [name: string]: string | undefined }
  readonly body: string
}

/** A `fetch` that answers from `answer` and records every request. */
const stub = (answer: (seen: Seen, index: number) => Response) => {
  const seen: Array<Seen> = []
  const fetcher: typeof fetch = async (input, init) => {
    const headers = Object.fromEntries(Object.entries((init?.headers ?? {}) as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]))
    const request: Seen = { method: init?.method ?? "GET", url: String(input), headers, body: typeof init?.body === "string" ? init.body : "" }
    seen.push(request)
    return answer(request, seen.length - 1)
  }
  return { seen, fetcher }
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } })

const payout = (key: string | null) => ({
  id: "po_1",
  terminal_id: "t",
  amount_usdt: "1",
  wallet_address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE",
  network: "TRC-20",
  status: "created",
  idempotency_key: key,
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z"
})

describe("Client: payout idempotency key in the body", () => {
  // Typed as the SDK's PayoutCreate: the spec's optional body field is part of it.
  const request: PayoutCreate = { amount_usdt: "1", wallet_address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20", idempotency_key: "nightly-2026-11-29" }

  it("sends the body's key as the Idempotency-Key header too, the same on every retry (a new nonce each time)", async () => {
    const { seen, fetcher } = stub((_, i) => (i === 0 ? json(503, { error: { code: "service_unavailable", message: "busy" } }) : json(200, payout("nightly-2026-11-29"))))
    const client = new Paydesk({ apiKey: "k", fetch: fetcher, retryDelayMs: 1 })
    const created = await client.payouts.create(request)
    expect(created.idempotency_key).toBe("nightly-2026-11-29")
    expect(seen).toHaveLength(2)
    for (const attempt of seen) {
      expect(attempt.headers["idempotency-key"]).toBe("nightly-2026-11-29")
      expect(JSON.parse(attempt.body)).toEqual(request)
    }
    expect(seen[0]!.headers["x-nonce"]).not.toBe(seen[1]!.headers["x-nonce"])
  })

  it("takes the body's key equal to the idempotencyKey option, refuses two different keys unsent, and generates one key per call otherwise", async () => {
    const { seen, fetcher } = stub((_, i) => (i === 1 ? json(502, {}) : json(200, payout(null))))
    const client = new Paydesk({ apiKey: "k", fetch: fetcher, retryDelayMs: 1 })
    await client.payouts.create(request, { idempotencyKey: "nightly-2026-11-29" })
    expect(seen[0]!.headers["idempotency-key"]).toBe("nightly-2026-11-29")
    await expect(client.payouts.create(request, { idempotencyKey: "other" })).rejects.toThrow(/idempotency_key and the idempotencyKey option differ/)
    expect(seen).toHaveLength(1)
    const { idempotency_key: _, ...keyless } = request
    await client.payouts.create(keyless)
    expect(seen).toHaveLength(3)
    expect(seen[1]!.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/)
    expect(seen[2]!.headers["idempotency-key"]).toBe(seen[1]!.headers["idempotency-key"])
    expect(JSON.parse(seen[2]!.body)).toEqual(keyless)
    // A null key (the schema allows it) is no key: one is generated for the header.
    await client.payouts.create({ ...keyless, idempotency_key: null })
    expect(seen[3]!.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/)
    expect(seen[3]!.headers["idempotency-key"]).not.toBe(seen[2]!.headers["idempotency-key"])
  })
})

describe("Client: a 503 that no retry changes", () => {
  const notConfigured = (message: string) => json(503, { error: { code: "recurring_not_configured", message, request_id: "req_1" } })

  it("answers recurring_not_configured at once, without retries; a write so refused did nothing", async () => {
    const { seen, fetcher } = stub(() => notConfigured("recurring plans not configured"))
    const client = new Paydesk({ apiKey: "k", terminalId: "t", fetch: fetcher, retryDelayMs: 1 })
    const error = await client.plans.list().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PaydeskApiError)
    expect([(error as PaydeskApiError).status, (error as PaydeskApiError).code, (error as PaydeskApiError).message]).toEqual([503, "recurring_not_configured", "recurring plans not configured"])
    expect(seen).toHaveLength(1)
    const write = stub(() => notConfigured("subscriptions not configured"))
    const writer = new Paydesk({ apiKey: "k", terminalId: "t", fetch: write.fetcher, retryDelayMs: 1 })
    const refused = await writer.subscriptions.create({ plan_id: "basic" }).catch((e: unknown) => e)
    expect((refused as PaydeskApiError).code).toBe("recurring_not_configured")
    expect((refused as PaydeskApiError).outcomeUnknown).toBe(false)
    expect(write.seen).toHaveLength(1)
  })

  it("retries the other 503s as any 5xx (busy, the provider), and then the answer may have been acted on", async () => {
    const { seen, fetcher } = stub((_, i) => i < 2 ? json(503, { error: { code: i === 0 ? "service_busy" : "provider_unavailable", message: "wait" } }) : json(200, { items: [] }))
    const client = new Paydesk({ apiKey: "k", terminalId: "t", fetch: fetcher, retryDelayMs: 1 })
    expect(await client.plans.list()).toEqual([])
    expect(seen).toHaveLength(3)
    // A write answered 503 service_busy, then recurring_not_configured: the first attempt's outcome stays unknown.
    const write = stub((_, i) => i === 0 ? json(503, { error: { code: "service_busy", message: "wait" } }) : notConfigured("subscriptions not configured"))
    const writer = new Paydesk({ apiKey: "k", terminalId: "t", fetch: write.fetcher, retryDelayMs: 1 })
    const refused = await writer.subscriptions.create({ plan_id: "basic" }).catch((e: unknown) => e)
    expect([(refused as PaydeskApiError).code, (refused as PaydeskApiError).outcomeUnknown, write.seen.length]).toEqual(["recurring_not_configured", true, 2])
  })
})

describe("Client: signing-secret rotation", () => {
  const rotation = { terminal_id: "t", signing_secret: "sk_sign_x", signing_secret_whsec: "whsec_x", rotated_at: "2026-01-01T00:00:00.000Z", previous_secret_expires_at: "2026-01-02T00:00:00.000Z" }

  it("sends an Idempotency-Key and retries a lost answer with it (a second rotation would replace the secret unseen); one key per call", async () => {
    const { seen, fetcher } = stub((_, i) => (i === 0 ? json(502, {}) : json(200, rotation)))
    const owner = new Paydesk({ accessToken: "owner", baseUrl: "http://paydesk.test", fetch: fetcher, retryDelayMs: 1, terminalId: "t" })
    expect(await owner.signingSecret.rotate()).toEqual(rotation)
    expect(seen).toHaveLength(2)
    expect(seen[0]!.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/)
    expect(seen[1]!.headers["idempotency-key"]).toBe(seen[0]!.headers["idempotency-key"])
    await owner.signingSecret.rotate({ idempotencyKey: "rotate-2026-03" })
    expect(seen[2]!.headers["idempotency-key"]).toBe("rotate-2026-03")
    await owner.signingSecret.rotate()
    expect(seen[3]!.headers["idempotency-key"]).not.toBe(seen[0]!.headers["idempotency-key"])
  })
})

describe("Client: payouts are live only", () => {
  it("a sandbox client refuses a payout before sending anything (also against a server that would take it); a live client sends it", async () => {
    const { seen, fetcher } = stub(() => json(200, payout(null)))
    const request = { amount_usdt: "1", wallet_address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" } as const
    await expect(new Paydesk({ apiKey: "k", fetch: fetcher, sandbox: true }).payouts.create(request))
      .rejects.toThrow(/^Paydesk: payouts are live only \(real USDT\), and this client was made with sandbox: true; make payouts with a live client\. Nothing was sent$/)
    expect(seen).toHaveLength(0)
    expect((await new Paydesk({ apiKey: "k", fetch: fetcher }).payouts.create(request)).id).toBe("po_1")
    expect(seen).toHaveLength(1)
    expect(seen[0]!.headers["x-test-mode"]).toBeUndefined()
  })
})

/** A local HTTP server whose handler each test sets; counts the requests. */
let server: Server
let base: string
let handler: (request: IncomingMessage, response: ServerResponse) => void = () => undefined
let hits = 0
const held = new Set<ServerResponse>()

beforeAll(async () => {
  server = createServer((request, response) => {
    hits++
    held.add(response)
    response.on("close", () => held.delete(response))
    handler(request, response)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const setUp = (next: typeof handler) => {
  for (const response of held) response.destroy()
  hits = 0
  handler = next
}

/** Answers the first request with `first`, every later one with a rate (200). */
const firstThenRate = (first: (response: ServerResponse) => void) => (_: IncomingMessage, response: ServerResponse) => {
  if (hits === 1) return first(response)
  response.writeHead(200, { "content-type": "application/json" })
  response.end('{"rate":"95.00","updated_at":"2026-01-01T00:00:00.000Z"}')
}

/** Sends the headers and the start of a JSON body, then nothing more. */
const stallBody = (_: IncomingMessage, response: ServerResponse) => {
  response.writeHead(200, { "content-type": "application/json" })
  response.write('{"terminal_id":')
}

describe("Client: the answer's body under the timeout", () => {
  it("a body that stalls after the headers is a PaydeskConnectionError, retried for a read", async () => {
    setUp(stallBody)
    const client = new Paydesk({ apiKey: "k", baseUrl: base, timeoutMs: 200, retryDelayMs: 1 })
    const error = await client.balance.get().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PaydeskConnectionError)
    expect(error).toBeInstanceOf(PaydeskError)
    expect(error).toMatchObject({ attempts: 3, message: expect.stringMatching(/^GET \/api\/v1\/balance: no answer/) })
    expect(hits).toBe(3)
  })

  it("a JSON 503 whose body stalls is retried after a short read, not after the whole timeout", async () => {
    setUp(firstThenRate((response) => {
      response.writeHead(503, { "content-type": "application/json" })
      response.write('{"error":{"code":')
    }))
    const client = new Paydesk({ apiKey: "k", baseUrl: base, timeoutMs: 20_000, retryDelayMs: 1 })
    const started = Date.now()
    expect((await client.rate.get()).rate).toBe("95.00")
    // The read before the retry gives up after 2 s (the attempt's own timeout is 20 s).
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(hits).toBe(2)
  }, 15_000)

  it("a JSON 503 larger than an error body is retried without being read whole", async () => {
    setUp(firstThenRate((response) => {
      response.writeHead(503, { "content-type": "application/json" })
      response.end(`{"error":{"code":"recurring_not_configured","message":"${"x".repeat(100_000)}"}}`)
    }))
    const client = new Paydesk({ apiKey: "k", baseUrl: base, timeoutMs: 2_000, retryDelayMs: 1 })
    expect((await client.rate.get()).rate).toBe("95.00")
    expect(hits).toBe(2)
  })

  it("a write that is not safe to repeat is not retried: one attempt, a PaydeskConnectionError", async () => {
    setUp(stallBody)
    const client = new Paydesk({ apiKey: "k", baseUrl: base, timeoutMs: 200, retryDelayMs: 1 })
    await expect(client.terminals.testEvent("t")).rejects.toMatchObject({ name: "PaydeskConnectionError", attempts: 1 })
    expect(hits).toBe(1)
  })

  it("a connection cut in the middle of the body is retried for a read, and the next answer is taken", async () => {
    setUp(firstThenRate((response) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": "100" })
      response.write('{"rate":')
      setTimeout(() => response.destroy(), 20)
    }))
    const client = new Paydesk({ apiKey: "k", baseUrl: base, timeoutMs: 2_000, retryDelayMs: 1 })
    expect((await client.rate.get()).rate).toBe("95.00")
    expect(hits).toBe(2)
  })
})

describe("Client: cancelling a call", () => {
  it("a signal aborted while the answer is awaited ends the call at once with PaydeskAbortError, not retried", async () => {
    setUp(() => undefined) // never answers
    const client = new Paydesk({ apiKey: "k", baseUrl: base, timeoutMs: 10_000, retryDelayMs: 1 })
    const controller = new AbortController()
    const reason = new Error("user left the page")
    setTimeout(() => controller.abort(reason), 50)
    const started = Date.now()
    const error = await client.rate.get({ signal: controller.signal }).catch((e: unknown) => e)
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(error).toBeInstanceOf(PaydeskAbortError)
    expect(error).toBeInstanceOf(PaydeskError)
    expect(error).toMatchObject({ attempts: 1, cause: reason, message: "GET /api/v1/rate: cancelled by the caller's signal" })
    expect(hits).toBe(1)
  })

  it("a signal aborted while the body arrives, or during the wait before a retry, ends the call too", async () => {
    setUp(stallBody)
    const client = new Paydesk({ apiKey: "k", baseUrl: base, timeoutMs: 10_000, retryDelayMs: 1 })
    const during = new AbortController()
    setTimeout(() => during.abort(), 50)
    await expect(client.payments.get("pay_1", { signal: during.signal })).rejects.toBeInstanceOf(PaydeskAbortError)
    expect(hits).toBe(1)

    setUp((_, response) => {
      response.writeHead(503, { "retry-after": "30", "content-type": "application/json" })
      response.end('{"error":{"code":"service_unavailable","message":"busy"}}')
    })
    const waiting = new AbortController()
    setTimeout(() => waiting.abort(), 100)
    const started = Date.now()
    await expect(client.payouts.create({ amount_usdt: "1", wallet_address: "EQBbpICDZRnZno_y9CuIwQeUIKJVxNwriXTo_Q-Q9nGB5fDX", network: "TON" }, { signal: waiting.signal })).rejects.toBeInstanceOf(PaydeskAbortError)
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(hits).toBe(1)
  })

  it("an already aborted signal sends nothing; paging stops with it too", async () => {
    setUp((_, response) => {
      response.writeHead(200, { "content-type": "application/json" })
      response.end('{"items":[],"total":0,"page":1,"per_page":100,"next_cursor":null}')
    })
    const client = new Paydesk({ apiKey: "k", baseUrl: base })
    const signal = AbortSignal.abort()
    await expect(client.subscriptions.stop("sub_1", { signal })).rejects.toMatchObject({ name: "PaydeskAbortError", attempts: 0 })
    await expect(client.payments.iterate({}, { signal }).next()).rejects.toBeInstanceOf(PaydeskAbortError)
    expect(hits).toBe(0)
    // Without a signal the same calls go through.
    expect(await client.payments.iterate().next()).toEqual({ done: true, value: undefined })
    expect(hits).toBe(1)
  })
})

describe("Client: a dashboard session after logout", () => {
  const pair = (n: number) => ({ access_token: `access-${n}`, refresh_token: `refresh-${n}`, expires_at: Math.floor(Date.now() / 1000) + 900, token_type: "Bearer" })
  const balance = { terminal_id: "t", available_usdt: "0", hold_usdt: "0" }

  it("refuses every later call with PaydeskSessionEndedError, unsent; a second logout is harmless", async () => {
    const { seen, fetcher } = stub((request) =>
      request.url.endsWith("/auth/login") ? json(200, pair(1)) : request.url.endsWith("/auth/logout") ? json(200, { ok: true }) : json(200, balance)
    )
    const owner = await Paydesk.login({ email: "a@example.com", password: "pw", baseUrl: "http://paydesk.test", fetch: fetcher })
    expect(await owner.balance.get()).toEqual(balance)
    expect(seen.at(-1)!.headers["authorization"]).toBe("Bearer access-1")
    expect(await owner.auth.logout()).toEqual({ ok: true })
    const sent = seen.length

    const error = await owner.balance.get().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PaydeskSessionEndedError)
    expect(error).toBeInstanceOf(PaydeskError)
    expect((error as Error).message).toBe("Paydesk: the session has ended; sign in again (Paydesk.login)")
    await expect(owner.payouts.create({ amount_usdt: "1", wallet_address: "EQBbpICDZRnZno_y9CuIwQeUIKJVxNwriXTo_Q-Q9nGB5fDX", network: "TON" })).rejects.toBeInstanceOf(PaydeskSessionEndedError)
    await expect(owner.auth.refresh()).rejects.toBeInstanceOf(PaydeskSessionEndedError)
    expect(await owner.auth.logout()).toEqual({ ok: true })
    expect(seen).toHaveLength(sent)
  })

  it("a refused refresh token ends the session too: that call answers the 401, later ones are refused unsent", async () => {
    const { seen, fetcher } = stub((request) =>
      request.url.endsWith("/auth/refresh")
        ? json(401, { error: { code: "unauthenticated", message: "refresh token is invalid" } })
        : json(401, { error: { code: "unauthenticated", message: "access token expired" } })
    )
    const client = new Paydesk({ accessToken: "stale", refreshToken: "spent", baseUrl: "http://paydesk.test", fetch: fetcher })
    const refused = await client.balance.get().catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(PaydeskApiError)
    expect(refused).toMatchObject({ status: 401, message: "access token expired" })
    expect(await client.balance.get().catch((e: unknown) => e)).toBeInstanceOf(PaydeskSessionEndedError)
    expect(seen.map((s) => new URL(s.url).pathname)).toEqual(["/api/v1/balance", "/api/v1/auth/refresh"])
  })

  it("a password change replaces the pair: a renewal asked for meanwhile waits for it and uses its refresh token", async () => {
    let answerChange: (response: Response) => void = () => undefined
    const { seen, fetcher } = stub((request) => {
      if (request.url.endsWith("/auth/login")) return json(200, pair(1))
      if (request.url.endsWith("/auth/password")) return new Promise<Response>((resolve) => (answerChange = resolve)) as unknown as Response
      if (request.url.endsWith("/auth/refresh")) return json(200, pair(JSON.parse(request.body).refresh_token === "refresh-2" ? 3 : 9))
      return json(200, balance)
    })
    const pairs: Array<string> = []
    const owner = await Paydesk.login({ email: "a@example.com", password: "pw", baseUrl: "http://paydesk.test", fetch: fetcher, onTokens: (p) => pairs.push(p.refresh_token) })
    const change = owner.auth.changePassword({ current_password: "pw", new_password: "a new password" })
    await new Promise((resolve) => setTimeout(resolve, 10))
    const renewal = owner.auth.refresh()
    await new Promise((resolve) => setTimeout(resolve, 10))
    // The change is in flight with the session's token; the renewal has sent nothing yet.
    expect(seen.map((s) => new URL(s.url).pathname)).toEqual(["/api/v1/auth/login", "/api/v1/auth/password"])
    expect(seen[1]!.headers["authorization"]).toBe("Bearer access-1")
    answerChange(json(200, pair(2)))
    expect((await change).refresh_token).toBe("refresh-2")
    expect((await renewal).refresh_token).toBe("refresh-3")
    expect(JSON.parse(seen[2]!.body)).toEqual({ refresh_token: "refresh-2" })
    expect(pairs).toEqual(["refresh-1", "refresh-2", "refresh-3"])
    expect(owner.auth.tokens()?.refreshToken).toBe("refresh-3")
    await owner.balance.get()
    expect(seen.at(-1)!.headers["authorization"]).toBe("Bearer access-3")
  })

  it("a password change refused (401) is not renewed and retried: the answer is the caller's", async () => {
    const { seen, fetcher } = stub((request) =>
      request.url.endsWith("/auth/login") ? json(200, pair(1))
        : request.url.endsWith("/auth/password") ? json(401, { error: { code: "unauthenticated", message: "invalid or expired access token" } })
        : json(200, pair(2))
    )
    const owner = await Paydesk.login({ email: "a@example.com", password: "pw", baseUrl: "http://paydesk.test", fetch: fetcher })
    expect(await owner.auth.changePassword({ current_password: "pw", new_password: "a new password" }).catch((e: unknown) => e))
      .toMatchObject({ status: 401, message: "invalid or expired access token" })
    expect(seen.map((s) => new URL(s.url).pathname)).toEqual(["/api/v1/auth/login", "/api/v1/auth/password"])
    expect(owner.auth.tokens()?.refreshToken).toBe("refresh-1")
  })
})
