/**
 * The events API over HTTP against the real server (in process, PostgreSQL, manual clock): a
 * receiver down for a day gets every failed event once more after `recover`, in sequence order per
 * payment and with the same ids; a signing-secret rotation's overlap verified by a verifier written
 * from the spec alone and by the `standardwebhooks` package; a resend outside the 8 attempts; the
 * endpoint's health; the `ping` test event; terminal access rules (403 across terminals); and bad
 * input answered 400 without any change.
 */
import { describe, expect, it } from "vitest"
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { Webhook } from "standardwebhooks"
import { type Receiver, serverWithReceiver, type StartedServer } from "./ServerHarness.js"

type Srv = StartedServer

/** The spec's check, written from the spec alone: hex HMAC-SHA256 of `X-Timestamp + "." + raw body`. */
const specVerifies = (secret: string, body: string, headers: Record<string, unknown>, header = "x-signature"): boolean => {
  const given = String(headers[header] ?? "")
  const expected = createHmac("sha256", secret).update(`${String(headers["x-timestamp"])}.${body}`).digest("hex")
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected))
}

/** The `whsec_` form of a secret (Standard Webhooks: base64 of the key bytes). */
const whsec = (secret: string) => `whsec_${Buffer.from(secret).toString("base64")}`

/** An account with its owner signed in on `srv`, and a terminal delivering to `callbackUrl`. */
const merchantOn = async (srv: Srv, callbackUrl: string) => {
  const email = `owner-${randomBytes(4).toString("hex")}@shop.example`
  const account = await srv.admin("POST", "/accounts", { name: "Shop", owner_email: email, owner_password: "correct horse" })
  const terminal = await srv.admin("POST", "/terminals", { account_id: account.json.account_id, name: "Shop", callback_url: callbackUrl })
  const session = (await srv.call("POST", "/api/v1/auth/login", { body: { email, password: "correct horse" } })).json
  const apiKey: string = terminal.json.api_key
  return {
    terminalId: terminal.json.terminal_id as string,
    apiKey,
    signingSecret: terminal.json.signing_secret as string,
    api: (method: string, path: string, body?: unknown) =>
      srv.call(method, `/api/v1${path}`, { headers: { "x-api-key": apiKey, "x-nonce": crypto.randomUUID() }, ...(body === undefined ? {} : { body }) }),
    owner: (method: string, path: string, body?: unknown) =>
      srv.call(method, `/api/v1${path}`, { headers: { authorization: `Bearer ${session.access_token}` }, ...(body === undefined ? {} : { body }) })
  }
}

describe("events API over HTTP", () => {
  let srv: Srv
  let receiver: Receiver
  serverWithReceiver(async () => ({}), (s, r) => {
    srv = s
    receiver = r
  })

  /** An account with its owner signed in, and a terminal delivering to the receiver. */
  const merchant = (callbackUrl: string = receiver.url) => merchantOn(srv, callbackUrl)
  type Merchant = Awaited<ReturnType<typeof merchant>>

  /** A sandbox payment, paid by simulation: `payment.created` (sequence 1) then `payment.paid` (2). */
  const paidPayment = async (m: Merchant, orderId: string) => {
    const created = await m.api("POST", "/payments", { amount: "100.00", order_id: orderId, test: true })
    expect(created.status).toBe(201)
    expect((await m.api("POST", `/payments/${created.json.id}/simulate`, { outcome: "paid" })).status).toBe(200)
    return created.json.id as string
  }

  it("a receiver down for a day: recover sends every failed event once more, in sequence order per payment, with the same ids", async () => {
    const start = Date.parse("2026-07-01T10:00:00.000Z")
    await srv.setClock(new Date(start).toISOString())
    const m = await merchant()
    expect((await m.api("GET", `/terminals/${m.terminalId}`)).json.callback_endpoint).toEqual({ status: "unknown", last_attempt_at: null, last_error: null, failing_since: null })
    const payments = [await paidPayment(m, "down-a"), await paidPayment(m, "down-b"), await paidPayment(m, "down-c")]
    const mine = () => receiver.requests.filter((r) => payments.some((p) => r.body.includes(p)))
    // Down: every attempt of the day gets 503.
    receiver.answers.push(...Array.from({ length: 6 * 8 }, () => 503))
    for (let hour = 0; hour <= 24; hour++) {
      await srv.setClock(new Date(start + hour * 3_600_000).toISOString())
      await srv.work()
    }
    expect(mine()).toHaveLength(6 * 8)
    expect(receiver.answers).toHaveLength(0)
    const failed = await m.api("GET", "/events?environment=sandbox&delivery_status=failed&limit=100")
    expect(failed.status).toBe(200)
    expect(failed.json.items).toHaveLength(6)
    expect(failed.json.items.every((e: any) => e.delivery.status === "failed" && e.delivery.attempts === 8 && e.delivery.last_status_code === 503)).toBe(true)
    const health = (await m.api("GET", `/terminals/${m.terminalId}`)).json.callback_endpoint
    expect(health).toMatchObject({ status: "failing", last_error: "HTTP 503", failing_since: new Date(start).toISOString() })

    // Back up: recover, and the next pass sends each failed event once more.
    const before = mine().length
    const recovered = await m.api("POST", "/events/recover", { since: new Date(start).toISOString(), environment: "sandbox" })
    expect([recovered.status, recovered.json]).toEqual([200, { requeued: 6 }])
    await srv.work()
    const again = mine().slice(before)
    expect(again).toHaveLength(6)
    const ids = again.map((r) => String(r.headers["x-event-id"]))
    expect(new Set(ids)).toEqual(new Set(failed.json.items.map((e: any) => e.id)))
    for (const payment of payments) {
      const copies = again.filter((r) => r.body.includes(payment))
      expect(copies.map((r) => [JSON.parse(r.body).event_type, r.headers["x-event-sequence"]])).toEqual([["payment.created", "1"], ["payment.paid", "2"]])
      // The same ids as the attempts of the day before.
      const first = mine().slice(0, before).filter((r) => r.body.includes(payment))
      expect(new Set(copies.map((r) => r.headers["x-event-id"]))).toEqual(new Set(first.map((r) => r.headers["x-event-id"])))
      expect(copies.every((r) => r.headers["webhook-id"] === r.headers["x-event-id"] && specVerifies(m.signingSecret, r.body, r.headers))).toBe(true)
    }
    expect((await m.api("GET", "/events?environment=sandbox&delivery_status=failed")).json.items).toHaveLength(0)
    expect((await m.api("GET", `/terminals/${m.terminalId}`)).json.callback_endpoint).toMatchObject({ status: "healthy", last_error: null, failing_since: null })
    // A second recovery finds nothing failed, and sends nothing.
    expect((await m.api("POST", "/events/recover", { since: new Date(start).toISOString(), environment: "sandbox" })).json).toEqual({ requeued: 0 })
    await srv.work()
    expect(mine().length).toBe(before + 6)

    // One event with its deliveries: the scheduled one (8 failed attempts) and the recovery.
    const detail = await m.api("GET", `/events/${ids[0]}`)
    expect(detail.status).toBe(200)
    expect(detail.json.deliveries.map((d: any) => [d.kind, d.status, d.attempts, d.attempt_log.length])).toEqual([["scheduled", "failed", 8, 8], ["recover", "delivered", 1, 1]])
    expect(detail.json.deliveries[0].attempt_log[0]).toMatchObject({ attempt: 1, url: receiver.url, status_code: 503, error: "HTTP 503" })
    expect(typeof detail.json.deliveries[0].attempt_log[0].latency_ms).toBe("number")
  }, 120_000)

  it("resend: one attempt now, outside the 8; the event's own delivery keeps its count", async () => {
    await srv.setClock("2026-07-10T10:00:00.000Z")
    const m = await merchant()
    const payment = await paidPayment(m, "resend-1")
    receiver.answersFor = "payment.paid"
    receiver.answers.push(...Array.from({ length: 8 }, () => 500))
    for (let minute = 0; minute <= 6 * 60; minute += 10) {
      await srv.setClock(new Date(Date.parse("2026-07-10T10:00:00.000Z") + minute * 60_000).toISOString())
      await srv.work()
    }
    receiver.answersFor = null
    const listed = await m.api("GET", `/events?environment=sandbox&object_id=${payment}&type=payment.paid`)
    const paid = listed.json.items[0]
    expect(paid).toMatchObject({ type: "payment.paid", object_id: payment, sequence: 2, delivery: { status: "failed", attempts: 8 } })
    const resent = await m.api("POST", `/events/${paid.id}/resend`)
    expect(resent.status).toBe(200)
    expect(resent.json.delivery).toMatchObject({ kind: "resend", status: "delivered", attempts: 1 })
    expect(resent.json.attempt).toMatchObject({ attempt: 1, status_code: 200, error: null })
    const last = receiver.requests.at(-1)!
    expect([last.headers["x-event-id"], last.headers["x-event-sequence"]]).toEqual([paid.id, "2"])
    const detail = (await m.api("GET", `/events/${paid.id}`)).json
    expect(detail.deliveries.map((d: any) => [d.kind, d.status, d.attempts])).toEqual([["scheduled", "failed", 8], ["resend", "delivered", 1]])
    // A resend to a failing endpoint is one failed attempt, never retried.
    receiver.answers.push(502)
    const failing = await m.api("POST", `/events/${paid.id}/resend`)
    expect([failing.status, failing.json.delivery.status, failing.json.attempt.status_code]).toEqual([200, "failed", 502])
    const count = receiver.requests.length
    await srv.setClock("2026-07-11T10:00:00.000Z")
    await srv.work()
    expect(receiver.requests.length).toBe(count)
  }, 120_000)

  it("an event still being retried stays pending when a resend of it fails: not failed, not recovered beside its retries (an outside probe got it twice with a 2xx)", async () => {
    const start = "2026-07-12T10:00:00.000Z"
    await srv.setClock(start)
    const m = await merchant()
    receiver.answersFor = "payment.paid"
    receiver.answers.push(500, 500)
    const payment = await paidPayment(m, "retrying-1")
    await srv.work()
    const paid = (await m.api("GET", `/events?environment=sandbox&object_id=${payment}&type=payment.paid`)).json.items[0]
    expect(paid.delivery).toMatchObject({ status: "pending", attempts: 1 })
    const failing = await m.api("POST", `/events/${paid.id}/resend`)
    expect([failing.status, failing.json.delivery.status]).toEqual([200, "failed"])
    receiver.answersFor = null
    // Listed pending (its retry comes), in the list and in its own read; not among the failed.
    expect((await m.api("GET", `/events?environment=sandbox&object_id=${payment}&type=payment.paid`)).json.items[0].delivery).toMatchObject({ status: "pending", attempts: 1 })
    expect((await m.api("GET", `/events/${paid.id}`)).json.delivery).toMatchObject({ status: "pending", attempts: 1 })
    expect((await m.api("GET", `/events?environment=sandbox&object_id=${payment}&delivery_status=failed`)).json.items).toEqual([])
    expect((await m.api("POST", "/events/recover", { since: start, environment: "sandbox" })).json).toEqual({ requeued: 0 })
    const before = receiver.requests.filter((r) => r.body.includes(payment) && r.body.includes("payment.paid")).length
    await srv.setClock(new Date(Date.parse(start) + 60_000).toISOString())
    await srv.work()
    await srv.setClock(new Date(Date.parse(start) + 3_600_000).toISOString())
    await srv.work()
    // Its retry delivers it, once.
    expect(receiver.requests.filter((r) => r.body.includes(payment) && r.body.includes("payment.paid")).length).toBe(before + 1)
    expect((await m.api("GET", `/events/${paid.id}`)).json.delivery).toMatchObject({ status: "delivered", attempts: 2 })
  }, 120_000)

  it("signing-secret rotation: during the overlap the spec's verifier keeps the previous secret and Standard Webhooks takes either; retire-previous ends it", async () => {
    // Standard Webhooks' library checks the timestamp against the real clock.
    await srv.setClock(new Date().toISOString())
    const m = await merchant()
    const rotated = await m.owner("POST", `/terminals/${m.terminalId}/signing-secret/rotate`)
    expect(rotated.status).toBe(200)
    const fresh: string = rotated.json.signing_secret
    expect(rotated.json.signing_secret_whsec).toBe(whsec(fresh))
    expect(Date.parse(rotated.json.previous_secret_expires_at) - Date.parse(rotated.json.rotated_at)).toBe(24 * 3_600_000)
    expect((await m.api("GET", `/terminals/${m.terminalId}`)).json.previous_secret_expires_at).toBe(rotated.json.previous_secret_expires_at)

    const payment = await paidPayment(m, "rotation-1")
    await srv.work()
    const during = receiver.requests.filter((r) => r.body.includes(payment))
    expect(during).toHaveLength(2)
    for (const r of during) {
      // A merchant who checks only X-Signature and has not deployed the new secret yet never rejects it.
      expect(specVerifies(m.signingSecret, r.body, r.headers)).toBe(true)
      expect(specVerifies(fresh, r.body, r.headers, "x-signature-next")).toBe(true)
      expect(specVerifies(fresh, r.body, r.headers)).toBe(false)
      // Standard Webhooks: two signatures, either secret verifies.
      expect(String(r.headers["webhook-signature"]).split(" ")).toHaveLength(2)
      const headers = { "webhook-id": String(r.headers["webhook-id"]), "webhook-timestamp": String(r.headers["webhook-timestamp"]), "webhook-signature": String(r.headers["webhook-signature"]) }
      expect(new Webhook(whsec(fresh)).verify(r.body, headers)).toEqual(JSON.parse(r.body))
      expect(new Webhook(whsec(m.signingSecret)).verify(r.body, headers)).toEqual(JSON.parse(r.body))
      expect(() => new Webhook(whsec("not-the-secret")).verify(r.body, headers)).toThrow()
    }

    // An API key cannot end the overlap; the owner can.
    expect((await m.api("POST", `/terminals/${m.terminalId}/signing-secret/retire-previous`)).status).toBe(403)
    const retired = await m.owner("POST", `/terminals/${m.terminalId}/signing-secret/retire-previous`)
    expect([retired.status, retired.json.previous_secret_expires_at]).toEqual([200, null])
    const ping = await m.api("POST", `/terminals/${m.terminalId}/test-event`)
    expect(ping.status).toBe(200)
    expect(ping.json).toMatchObject({ event: { type: "ping", object_id: null, sequence: 1, test: false }, delivery: { kind: "scheduled", status: "delivered" }, attempt: { status_code: 200 } })
    const sent = receiver.requests.at(-1)!
    expect(JSON.parse(sent.body)).toMatchObject({ event_type: "ping", terminal_id: m.terminalId, test: false })
    expect(specVerifies(fresh, sent.body, sent.headers)).toBe(true)
    expect(sent.headers["x-signature-next"]).toBeUndefined()
    const headers = { "webhook-id": String(sent.headers["webhook-id"]), "webhook-timestamp": String(sent.headers["webhook-timestamp"]), "webhook-signature": String(sent.headers["webhook-signature"]) }
    expect(new Webhook(whsec(fresh)).verify(sent.body, headers)).toEqual(JSON.parse(sent.body))
    expect(() => new Webhook(whsec(m.signingSecret)).verify(sent.body, headers)).toThrow()
    // The ping is listed among the terminal's (live) events.
    expect((await m.api("GET", "/events?type=ping")).json.items.map((e: any) => e.id)).toEqual([ping.json.event.id])
  }, 120_000)

  it("after the overlap (24 h) X-Signature carries the new secret alone", async () => {
    const start = Date.parse("2026-08-01T10:00:00.000Z")
    await srv.setClock(new Date(start).toISOString())
    const m = await merchant()
    const fresh: string = (await m.owner("POST", `/terminals/${m.terminalId}/signing-secret/rotate`)).json.signing_secret
    await srv.setClock(new Date(start + 24 * 3_600_000 + 1000).toISOString())
    expect((await m.api("GET", `/terminals/${m.terminalId}`)).json.previous_secret_expires_at).toBeNull()
    const payment = await paidPayment(m, "after-overlap")
    await srv.work()
    const sent = receiver.requests.filter((r) => r.body.includes(payment))
    expect(sent).toHaveLength(2)
    expect(sent.every((r) => specVerifies(fresh, r.body, r.headers) && r.headers["x-signature-next"] === undefined)).toBe(true)
    expect(sent.some((r) => specVerifies(m.signingSecret, r.body, r.headers))).toBe(false)
  }, 60_000)

  it("terminal access: another merchant's key and owner get 403 on its terminal, 404 on its events; sandbox and live apart", async () => {
    await srv.setClock("2026-09-01T10:00:00.000Z")
    const a = await merchant()
    const b = await merchant()
    await paidPayment(a, "mine-1")
    const live = await a.api("POST", "/payments", { amount: "10.00", order_id: "live-1" })
    expect(live.status).toBe(201)
    const sandbox = (await a.api("GET", "/events?environment=sandbox")).json.items
    expect(sandbox.map((e: any) => [e.type, e.test])).toEqual([["payment.paid", true], ["payment.created", true]])
    expect((await a.api("GET", "/events")).json.items.map((e: any) => [e.type, e.test, e.object_id])).toEqual([["payment.created", false, live.json.id]])
    expect((await a.api("GET", "/events?environment=all")).json.items).toHaveLength(3)
    const id = sandbox[0].id
    for (const [method, path] of [["GET", `/terminals/${a.terminalId}`], ["POST", `/terminals/${a.terminalId}/test-event`]] as const) {
      const byKey = await b.api(method, path)
      expect([method, path, byKey.status, byKey.json.error.message]).toEqual([method, path, 403, "terminal access denied"])
      const byOwner = await b.owner(method, path)
      expect([method, path, byOwner.status]).toEqual([method, path, 403])
    }
    // Another merchant's event is not found, as one that does not exist (its id tells nothing).
    for (const [method, path] of [["GET", `/events/${id}`], ["POST", `/events/${id}/resend`]] as const) {
      const byKey = await b.api(method, path)
      expect([method, path, byKey.status, byKey.json.error.message]).toEqual([method, path, 404, "event not found"])
      const byOwner = await b.owner(method, path)
      expect([method, path, byOwner.status]).toEqual([method, path, 404])
    }
    expect((await b.api("GET", `/events?terminal_id=${a.terminalId}`)).status).toBe(403)
    expect((await b.api("GET", "/events?environment=all")).json.items).toEqual([])
    expect((await b.api("POST", "/events/recover", { since: "2026-09-01T00:00:00Z", terminal_id: a.terminalId, environment: "all" })).status).toBe(403)
    // The owner of the account sees its terminal's events by token.
    expect((await a.owner("GET", `/events?environment=sandbox&terminal_id=${a.terminalId}`)).json.items).toHaveLength(2)
    expect((await a.owner("GET", `/events/${id}`)).json.id).toBe(id)
    // Unknown ids.
    expect((await a.api("GET", `/events/evt_${crypto.randomUUID()}`)).status).toBe(404)
    expect((await a.api("GET", "/events/not-an-id")).status).toBe(404)
  }, 60_000)

  it("bad input is a 400 naming the field, and changes nothing", async () => {
    await srv.setClock("2026-10-01T10:00:00.000Z")
    const m = await merchant()
    const payment = await paidPayment(m, "bad-1")
    const cases: ReadonlyArray<readonly [string, string, unknown, string]> = [
      ["GET", "/events?created_from=yesterday", undefined, "created_from"],
      ["GET", "/events?created_from=2026-10-01T00:00:00Z&created_to=2026-09-30T23:59:59Z", undefined, "created_to"],
      ["GET", "/events?cursor=nonsense", undefined, "cursor"],
      ["GET", "/events?type=payment.lost", undefined, "type"],
      ["GET", "/events?delivery_status=lost", undefined, "delivery_status"],
      ["GET", "/events?limit=101", undefined, "limit"],
      ["GET", "/events?object_id=ord-1", undefined, "object_id"],
      ["GET", "/events?colour=red", undefined, "colour"],
      ["POST", "/events/recover", {}, "since"],
      ["POST", "/events/recover", { since: "soon" }, "since"],
      ["POST", "/events/recover", { since: "2026-10-01T00:00:00Z", extra: 1 }, "extra"],
      ["GET", "/events/feed?after=nonsense", undefined, "after"]
    ]
    for (const [method, path, body, field] of cases) {
      const answer = await m.api(method, path, body)
      expect([path, answer.status, answer.json.error.field]).toEqual([path, 400, field])
    }
    // None of them queued or sent a callback: the payment's two events went out once each.
    await srv.work()
    expect(receiver.requests.filter((r) => r.body.includes(payment)).map((r) => JSON.parse(r.body).event_type)).toEqual(["payment.created", "payment.paid"])
    const events = (await m.api("GET", "/events?environment=sandbox")).json.items
    expect(events.map((e: any) => [e.type, e.delivery.status])).toEqual([["payment.paid", "delivered"], ["payment.created", "delivered"]])
  }, 60_000)
})

describe("resends and test events, limited per terminal and account", () => {
  let srv: Srv
  let receiver: Receiver
  serverWithReceiver(async () => ({ PAYDESK_EVENT_SENDS_PER_MINUTE: "3" }), (s, r) => {
    srv = s
    receiver = r
  })

  it("past the minute's 3 (resends and pings together): 429 with Retry-After, nothing sent; another terminal and the owner's account count apart", async () => {
    const a = await merchantOn(srv, receiver.url)
    const b = await merchantOn(srv, receiver.url)
    const ping = await a.api("POST", `/terminals/${a.terminalId}/test-event`)
    expect(ping.status).toBe(200)
    const eventId: string = ping.json.event.id
    for (const _ of [1, 2]) expect((await a.api("POST", `/events/${eventId}/resend`)).status).toBe(200)
    const sentBefore = receiver.requests.length
    const deliveriesBefore = (await a.api("GET", `/events/${eventId}`)).json.deliveries.length
    expect(deliveriesBefore).toBe(3)
    for (const [method, path] of [["POST", `/events/${eventId}/resend`], ["POST", `/terminals/${a.terminalId}/test-event`]] as const) {
      const limited = await a.api(method, path)
      expect([path, limited.status, limited.json.error.code, limited.json.error.message]).toEqual([
        path, 429, "too_many_requests", expect.stringMatching(/^3 resends and test events a minute for this terminal; retry in \d+ s$/)
      ])
      const seconds = Number(limited.headers["retry-after"])
      expect(seconds >= 1 && seconds <= 60).toBe(true)
    }
    // Nothing was sent or recorded for the refused ones.
    expect(receiver.requests.length).toBe(sentBefore)
    expect((await a.api("GET", `/events/${eventId}`)).json.deliveries.length).toBe(deliveriesBefore)
    expect((await a.api("GET", "/events?type=ping")).json.items).toHaveLength(1)
    // Another merchant's terminal has its own budget, and so has the dashboard account of a's owner.
    expect((await b.api("POST", `/terminals/${b.terminalId}/test-event`)).status).toBe(200)
    expect((await a.owner("POST", `/events/${eventId}/resend`)).status).toBe(200)
    expect(receiver.requests.length).toBe(sentBefore + 2)
  }, 60_000)
})
