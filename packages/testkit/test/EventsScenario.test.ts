import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect } from "effect"
import { TestClock } from "effect/testing"
import { Webhook } from "standardwebhooks"
import { Auth, Callback, CallbackTransport, Credentials, Events, Operator, Payments, Signature, StandardWebhooks, Work } from "@paydesk/core"
import { Kit, RecordingCallbackTransport } from "@paydesk/testkit"

// Standard Webhooks' verifier checks timestamps against the real clock: run the kit's clock at it.
const now = () => Math.floor(Date.now() / 1000) * 1000

const setup = Effect.gen(function*() {
  yield* TestClock.setTime(now())
  const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/callbacks" })
  const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
  return { merchant, principal }
})

const transport = RecordingCallbackTransport.RecordingCallbackTransport

/** A sandbox payment paid (payment.created, then payment.paid), its callbacks sent. */
const paidPayment = (principal: Parameters<typeof Payments.create>[0], orderId: string) =>
  Effect.gen(function*() {
    const { payment } = yield* Payments.create(principal, { amount: "10", orderId, test: true })
    yield* Payments.simulate(payment.payToken, { outcome: "paid", csrfToken: payment.csrfToken })
    return payment
  })

describe("Events: ids, order and signatures", () => {
  it.effect("every callback carries its event id and sequence, the spec's signature and Standard Webhooks' (verified by the standardwebhooks package)", () =>
    Effect.gen(function*() {
      const { merchant, principal } = yield* setup
      const payment = yield* paidPayment(principal, "o-1")
      yield* Work.drain()
      const sent = (yield* transport).requests
      assert.deepStrictEqual(sent.map((r) => JSON.parse(r.body).event_type), ["payment.created", "payment.paid"])
      const listed = yield* Events.list(principal, { environment: "sandbox" })
      assert.deepStrictEqual(listed.items.map((i) => [i.event.eventType, i.event.sequence]), [["payment.paid", 2], ["payment.created", 1]])
      // `[created_from, created_to)`, as the payments' filters: an event at created_to is the next range's.
      // An empty or reversed range is refused, not an empty page.
      const at = listed.items[1]!.event.createdAt
      for (const createdTo of [at - 1, at]) {
        const refused = yield* Effect.flip(Events.list(principal, { environment: "sandbox", createdFrom: at, createdTo }))
        assert.deepStrictEqual([refused._tag, (refused as { field?: string }).field, refused.message], ["InvalidRequest", "created_to", "created_to must be later than created_from"])
      }
      const ids = (range: { readonly createdFrom?: number; readonly createdTo?: number }) =>
        Effect.map(Events.list(principal, { environment: "sandbox", ...range }), (page) => page.items.map((i) => i.event.id))
      const created = listed.items[1]!.event.id
      assert.include(yield* ids({ createdFrom: at, createdTo: at + 1 }), created)
      assert.notInclude(yield* ids({ createdFrom: at - 1, createdTo: at }), created)
      assert.notInclude(yield* ids({ createdTo: at }), created)
      const webhook = new Webhook(StandardWebhooks.whsecOf(merchant.signingSecret))
      for (const [i, request] of sent.entries()) {
        const event = listed.items[1 - i]!.event
        assert.strictEqual(request.headers["x-event-id"], Callback.eventId(event.id))
        assert.strictEqual(request.headers["webhook-id"], Callback.eventId(event.id))
        assert.strictEqual(request.headers["x-event-sequence"], String(i + 1))
        assert.strictEqual(request.headers["webhook-timestamp"], request.headers["x-timestamp"])
        assert.strictEqual(request.headers["x-test-mode"], "true")
        assert.isUndefined(request.headers["x-signature-next"])
        // The spec's check and Standard Webhooks' both accept it.
        assert.deepStrictEqual(yield* Signature.verify({
          secret: merchant.signingSecret, timestamp: request.headers["x-timestamp"], body: request.body,
          signature: request.headers["x-signature"], nowSeconds: Number(request.headers["x-timestamp"])
        }), { ok: true })
        assert.deepStrictEqual(webhook.verify(request.body, request.headers), JSON.parse(request.body))
      }
      // The body is the spec's, unchanged: no id or sequence fields in it.
      assert.deepStrictEqual(Object.keys(JSON.parse(sent[1]!.body)), ["event_type", "payment_id", "order_id", "status", "amount", "currency", "test"])
      assert.strictEqual(payment.id, JSON.parse(sent[1]!.body).payment_id.replace("pay_", ""))
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a rotated secret overlaps for 24 hours: X-Signature keeps the previous secret, X-Signature-Next and webhook-signature carry both", () =>
    Effect.gen(function*() {
      const { merchant, principal } = yield* setup
      const owner = yield* Auth.bearer((yield* Auth.login(merchant.ownerEmail, Kit.ownerPassword)).accessToken)
      const rotated = yield* Credentials.rotateSigningSecret(owner, merchant.terminal.id)
      yield* paidPayment(principal, "o-rot")
      yield* Work.drain()
      const during = (yield* transport).requests.at(-1)!
      const check = (secret: string, signature: string | undefined) =>
        Signature.verify({ secret, timestamp: during.headers["x-timestamp"], body: during.body, signature, nowSeconds: Number(during.headers["x-timestamp"]) })
      // A receiver that still has the old secret and checks only X-Signature accepts it.
      assert.deepStrictEqual(yield* check(merchant.signingSecret, during.headers["x-signature"]), { ok: true })
      assert.deepStrictEqual(yield* check(rotated.signingSecret, during.headers["x-signature-next"]), { ok: true })
      assert.strictEqual(during.headers["webhook-signature"]!.split(" ").length, 2)
      for (const secret of [merchant.signingSecret, rotated.signingSecret]) {
        assert.deepStrictEqual(new Webhook(StandardWebhooks.whsecOf(secret)).verify(during.body, during.headers), JSON.parse(during.body))
      }
      // After the overlap: X-Signature is the new secret's, and only it signs.
      yield* (yield* transport).clearRequests()
      yield* TestClock.adjust("25 hours")
      const later = now() + 25 * 3_600_000
      yield* paidPayment(principal, "o-after")
      yield* Work.drain()
      const after = (yield* transport).requests.at(-1)!
      assert.isAtLeast(Number(after.headers["x-timestamp"]) * 1000, later - 1000)
      assert.deepStrictEqual(yield* Signature.verify({
        secret: rotated.signingSecret, timestamp: after.headers["x-timestamp"], body: after.body,
        signature: after.headers["x-signature"], nowSeconds: Number(after.headers["x-timestamp"])
      }), { ok: true })
      assert.isUndefined(after.headers["x-signature-next"])
      assert.strictEqual(after.headers["webhook-signature"]!.split(" ").length, 1)
    }).pipe(Effect.provide(Kit.layer)))
})

describe("Retiring the previous secret", () => {
  it.effect("ends the overlap at once: X-Signature is the new secret's, nothing signs with the old one", () =>
    Effect.gen(function*() {
      const { merchant, principal } = yield* setup
      const owner = yield* Auth.bearer((yield* Auth.login(merchant.ownerEmail, Kit.ownerPassword)).accessToken)
      const rotated = yield* Credentials.rotateSigningSecret(owner, merchant.terminal.id)
      assert.strictEqual(rotated.signingSecretWhsec, StandardWebhooks.whsecOf(rotated.signingSecret))
      assert.strictEqual(rotated.previousSecretExpiresAt, rotated.rotatedAt + 24 * 3_600_000)
      assert.strictEqual((yield* Credentials.previousSecretExpiresAt(rotated.terminal)), rotated.previousSecretExpiresAt)
      const retired = yield* Credentials.retirePreviousSecret(owner, merchant.terminal.id)
      assert.isNull(yield* Credentials.previousSecretExpiresAt(retired))
      yield* paidPayment(principal, "o-retired")
      yield* Work.drain()
      const sent = (yield* transport).requests.at(-1)!
      assert.isUndefined(sent.headers["x-signature-next"])
      assert.deepStrictEqual(yield* Signature.verify({
        secret: rotated.signingSecret, timestamp: sent.headers["x-timestamp"], body: sent.body,
        signature: sent.headers["x-signature"], nowSeconds: Number(sent.headers["x-timestamp"])
      }), { ok: true })
      assert.strictEqual(sent.headers["webhook-signature"]!.split(" ").length, 1)
      // An API key cannot retire it.
      assert.strictEqual((yield* Effect.flip(Credentials.retirePreviousSecret(principal, merchant.terminal.id))).message, "account owner access required")
    }).pipe(Effect.provide(Kit.layer)))
})

describe("Events API", () => {
  it.effect("resend makes one attempt now, outside the 8; its 2xx ends the event's own delivery, which is not sent again", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const recording = yield* transport
      yield* recording.failAlways({ status: 500 })
      const payment = yield* paidPayment(principal, "o-resend")
      yield* Work.drain()
      const [paid] = (yield* Events.list(principal, { environment: "sandbox", type: "payment.paid" })).items
      assert.strictEqual(paid!.delivery!.attempts, 1)
      yield* recording.succeed()
      const resent = yield* Events.resend(principal, Callback.eventId(paid!.event.id))
      assert.deepStrictEqual([resent.delivery.kind, resent.delivery.status, resent.attempt?.statusCode], ["resend", "delivered", 200])
      const detail = yield* Events.get(principal, paid!.event.id)
      // "After a 2xx the event is not sent again": the scheduled delivery, which was to retry in 30 s,
      // is ended with its one attempt (an outside probe saw it deliver the event a second time).
      assert.deepStrictEqual(detail.deliveries.map((d) => [d.delivery.kind, d.delivery.status, d.delivery.attempts, d.attempts.length, d.delivery.nextAttemptAt]),
        [["scheduled", "delivered", 1, 1, null], ["resend", "delivered", 1, 1, null]])
      const paidSent = () => recording.requests.filter((r) => JSON.parse(r.body).event_type === "payment.paid").length
      const sentBefore = paidSent()
      yield* TestClock.adjust("30 seconds")
      yield* Work.drain()
      assert.strictEqual(paidSent(), sentBefore)
      // Every copy carries the same event id.
      const ids = new Set(recording.requests.filter((r) => JSON.parse(r.body).event_type === "payment.paid").map((r) => r.headers["webhook-id"]))
      assert.deepStrictEqual([...ids], [Callback.eventId(paid!.event.id)])
      // A later resend that fails leaves the event delivered: listed so, not among the failed ones.
      yield* recording.failAlways({ status: 503 })
      assert.strictEqual((yield* Events.resend(principal, Callback.eventId(paid!.event.id))).delivery.status, "failed")
      const listed = (yield* Events.list(principal, { environment: "sandbox", type: "payment.paid" })).items[0]!
      assert.deepStrictEqual([listed.delivery?.kind, listed.delivery?.status], ["resend", "delivered"])
      assert.strictEqual((yield* Events.list(principal, { environment: "sandbox", deliveryStatus: "failed" })).items.length, 0)
      assert.strictEqual((yield* Events.list(principal, { environment: "sandbox", deliveryStatus: "delivered", type: "payment.paid" })).items.length, 1)
      assert.strictEqual(payment.status, "created")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("resends at once each record their attempt: a 2xx of one does not end another in flight unrecorded", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      yield* (yield* transport).failAlways({ status: 500 })
      yield* paidPayment(principal, "o-resends")
      yield* Work.drain()
      const [paid] = (yield* Events.list(principal, { environment: "sandbox", type: "payment.paid" })).items
      // The receiver answers 200 once three resends are in flight at once (an outside probe's five
      // parallel resends left three delivered with no attempt recorded).
      let arrived = 0
      const together = yield* Deferred.make<void>()
      const receiver = CallbackTransport.of({
        post: () =>
          Effect.gen(function*() {
            if (++arrived === 3) yield* Deferred.succeed(together, undefined)
            yield* Deferred.await(together)
            return { statusCode: 200, latencyMs: 1 }
          })
      })
      const resent = yield* Effect.forEach([1, 2, 3], () => Events.resend(principal, Callback.eventId(paid!.event.id)), { concurrency: "unbounded" }).pipe(
        Effect.provideService(CallbackTransport, receiver)
      )
      assert.deepStrictEqual(resent.map((r) => [r.delivery.status, r.attempt?.statusCode]), [["delivered", 200], ["delivered", 200], ["delivered", 200]])
      const detail = yield* Events.get(principal, paid!.event.id)
      assert.deepStrictEqual(detail.deliveries.map((d) => [d.delivery.kind, d.delivery.status, d.delivery.attempts, d.attempts.length]), [
        ["scheduled", "delivered", 1, 1],
        ["resend", "delivered", 1, 1],
        ["resend", "delivered", 1, 1],
        ["resend", "delivered", 1, 1]
      ])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("an event still being retried stays pending when a resend of it fails: not listed failed, not recovered beside its retries", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const recording = yield* transport
      const start = yield* Clock.currentTimeMillis
      yield* recording.failAlways({ status: 500 })
      yield* paidPayment(principal, "o-retrying")
      yield* Work.drain()
      const [paid] = (yield* Events.list(principal, { environment: "sandbox", type: "payment.paid" })).items
      assert.deepStrictEqual([paid!.delivery?.kind, paid!.delivery?.status], ["scheduled", "pending"])
      assert.strictEqual((yield* Events.resend(principal, Callback.eventId(paid!.event.id))).delivery.status, "failed")
      // Its scheduled delivery still retries: the event is pending, in the list and in its own read.
      const listed = (yield* Events.list(principal, { environment: "sandbox", type: "payment.paid" })).items[0]!
      assert.deepStrictEqual([listed.delivery?.kind, listed.delivery?.status], ["scheduled", "pending"])
      assert.strictEqual((yield* Events.list(principal, { environment: "sandbox", deliveryStatus: "failed" })).items.length, 0)
      yield* recording.succeed()
      // An outside probe's recover queued it beside its retries: the receiver got it twice with a 2xx.
      assert.strictEqual((yield* Events.recover(principal, { since: start, environment: "sandbox" })).requeued, 0)
      yield* recording.clearRequests()
      yield* TestClock.adjust("30 seconds")
      yield* Work.drain()
      yield* TestClock.adjust("10 minutes")
      yield* Work.drain()
      assert.deepStrictEqual(recording.requests.map((r) => JSON.parse(r.body).event_type).sort(), ["payment.created", "payment.paid"])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a receiver down for a day: recover re-queues every failed event, sent again in sequence order with the same ids", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const recording = yield* transport
      const start = yield* Clock.currentTimeMillis
      yield* recording.failAlways("refused")
      for (const order of ["a", "b", "c"]) yield* paidPayment(principal, `o-${order}`)
      for (let hour = 0; hour < 24; hour++) {
        yield* Work.drain()
        yield* TestClock.adjust("1 hour")
      }
      const failed = yield* Events.list(principal, { environment: "sandbox", deliveryStatus: "failed" })
      assert.strictEqual(failed.items.length, 6)
      assert.isTrue(failed.items.every((i) => i.delivery?.attempts === 8))
      yield* recording.succeed()
      yield* recording.clearRequests()
      const { requeued } = yield* Events.recover(principal, { since: start, environment: "sandbox" })
      assert.strictEqual(requeued, 6)
      yield* Work.drain()
      const got = recording.requests.map((r) => ({ id: r.headers["webhook-id"]!, seq: Number(r.headers["x-event-sequence"]), body: JSON.parse(r.body) }))
      assert.strictEqual(got.length, 6)
      assert.deepStrictEqual(new Set(got.map((g) => g.id)), new Set(failed.items.map((i) => Callback.eventId(i.event.id))))
      // Per payment: created (1) before paid (2).
      for (const order of ["o-a", "o-b", "o-c"]) {
        assert.deepStrictEqual(got.filter((g) => g.body.order_id === order).map((g) => g.seq), [1, 2])
      }
      assert.strictEqual((yield* Events.list(principal, { environment: "sandbox", deliveryStatus: "failed" })).items.length, 0)
      // A second recovery finds nothing failed.
      assert.strictEqual((yield* Events.recover(principal, { since: start, environment: "sandbox" })).requeued, 0)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("lists with filters and a cursor; live and sandbox kept apart; another merchant's events are 404, another terminal's of the account 403", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      for (let i = 0; i < 5; i++) {
        yield* paidPayment(principal, `p-${i}`)
        yield* TestClock.adjust("1 second")
      }
      yield* Payments.create(principal, { amount: "10", orderId: "live-1" })
      const first = yield* Events.list(principal, { environment: "sandbox", limit: 4 })
      assert.strictEqual(first.items.length, 4)
      assert.isNotNull(first.nextCursor)
      const second = yield* Events.list(principal, { environment: "sandbox", limit: 4, cursor: first.nextCursor! })
      const third = yield* Events.list(principal, { environment: "sandbox", limit: 4, cursor: second.nextCursor! })
      assert.deepStrictEqual([second.items.length, third.items.length, third.nextCursor], [4, 2, null])
      const all = [...first.items, ...second.items, ...third.items]
      assert.strictEqual(new Set(all.map((i) => i.event.id)).size, 10)
      assert.isTrue(all.every((i) => i.event.test))
      const live = yield* Events.list(principal, {})
      assert.deepStrictEqual(live.items.map((i) => i.event.eventType), ["payment.created"])
      assert.strictEqual((yield* Events.list(principal, { environment: "all" })).items.length, 11)
      const paymentId = all[0]!.event.paymentId!
      assert.strictEqual((yield* Events.list(principal, { environment: "sandbox", objectId: `pay_${paymentId}` })).items.length, 2)
      assert.strictEqual((yield* Effect.flip(Events.list(principal, { type: "payment.failed" })))._tag, "InvalidRequest")
      assert.strictEqual((yield* Effect.flip(Events.list(principal, { cursor: "nonsense" })))._tag, "InvalidRequest")
      assert.strictEqual((yield* Effect.flip(Events.list(principal, { limit: 101 })))._tag, "InvalidRequest")
      // Another merchant's key: 404, as for an event that does not exist (an event id tells nothing of another merchant).
      const other = yield* Kit.provisionMerchant()
      const stranger = yield* Kit.apiKeyPrincipal(other, crypto.randomUUID())
      const hidden = [
        yield* Effect.flip(Events.get(stranger, all[0]!.event.id)),
        yield* Effect.flip(Events.resend(stranger, all[0]!.event.id))
      ]
      for (const error of hidden) assert.deepStrictEqual([error._tag, error.message], ["NotFound", "event not found"])
      // The key of another terminal of the same account: the spec's 403.
      const merchant = yield* Kit.provisionMerchant()
      const sibling = yield* Operator.createTerminal({ accountId: merchant.accountId, name: "sibling", h2h: false, callbackUrl: null })
      const siblingKey = yield* Kit.apiKeyPrincipal({ ...merchant, terminal: sibling.terminal, apiKey: sibling.apiKey, signingSecret: sibling.signingSecret }, crypto.randomUUID())
      const ownKey = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
      yield* Payments.create(ownKey, { amount: "10", orderId: "sibling-probe", test: true })
      const [ownEvent] = (yield* Events.list(ownKey, { environment: "sandbox" })).items
      const denied = [
        yield* Effect.flip(Events.get(siblingKey, ownEvent!.event.id)),
        yield* Effect.flip(Events.resend(siblingKey, ownEvent!.event.id))
      ]
      for (const error of denied) assert.deepStrictEqual([error._tag, error.message], ["AccessDenied", "terminal access denied"])
      const foreign = yield* Effect.flip(Events.list(stranger, { terminalId: all[0]!.event.terminalId }))
      assert.strictEqual(foreign.message, "terminal access denied")
      assert.strictEqual((yield* Effect.flip(Events.get(principal, "evt_nope")))._tag, "NotFound")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("events are kept 30 days: older ones are neither listed nor found, and housekeeping purges them", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      yield* paidPayment(principal, "old")
      yield* Work.drain()
      const [event] = (yield* Events.list(principal, { environment: "sandbox" })).items
      yield* TestClock.adjust("31 days")
      assert.deepStrictEqual((yield* Events.list(principal, { environment: "sandbox" })).items, [])
      assert.strictEqual((yield* Effect.flip(Events.get(principal, event!.event.id)))._tag, "NotFound")
      const purged = yield* Work.housekeeping()
      assert.strictEqual(purged.events, 2)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("an event past its 30 days that is still being delivered stays readable and can be resent", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const recording = yield* transport
      yield* recording.failAlways({ status: 500 })
      yield* paidPayment(principal, "late")
      yield* Work.drain()
      const [event] = (yield* Events.list(principal, { environment: "sandbox", type: "payment.paid" })).items
      // 31 days without a pass (the service was down): its delivery is still pending, with 7 attempts left.
      yield* TestClock.adjust("31 days")
      assert.strictEqual((yield* Work.housekeeping()).events, 0)
      const found = yield* Events.get(principal, event!.event.id)
      assert.deepStrictEqual(found.deliveries.map((d) => [d.delivery.status, d.delivery.attempts]), [["pending", 1]])
      yield* recording.succeed()
      assert.strictEqual((yield* Events.resend(principal, Callback.eventId(event!.event.id))).delivery.status, "delivered")
      // Delivered now, it is past its retention: no longer found.
      assert.strictEqual((yield* Effect.flip(Events.get(principal, event!.event.id)))._tag, "NotFound")
    }).pipe(Effect.provide(Kit.layer)))
})

describe("Callback endpoint health and ping", () => {
  it.effect("healthy after a delivered callback, failing (since its first failure, with the last error) while attempts fail; ping tests it", () =>
    Effect.gen(function*() {
      const { merchant, principal } = yield* setup
      assert.strictEqual((yield* Events.health(merchant.terminal.id)).status, "unknown")
      const pong = yield* Events.ping(principal, merchant.terminal.id)
      assert.deepStrictEqual([pong.event.eventType, pong.attempt?.statusCode], ["ping", 200])
      const sent = (yield* transport).requests.at(-1)!
      assert.deepStrictEqual(JSON.parse(sent.body).event_type, "ping")
      assert.deepStrictEqual(new Webhook(StandardWebhooks.whsecOf(merchant.signingSecret)).verify(sent.body, sent.headers), JSON.parse(sent.body))
      const healthy = yield* Events.health(merchant.terminal.id)
      assert.deepStrictEqual([healthy.status, healthy.lastError, healthy.failingSince], ["healthy", null, null])
      yield* (yield* transport).failAlways({ status: 503 })
      yield* TestClock.adjust("1 second")
      const firstFailure = yield* Clock.currentTimeMillis
      yield* paidPayment(principal, "sick")
      yield* Work.drain()
      yield* TestClock.adjust("30 seconds")
      yield* Work.drain()
      const failing = yield* Events.health(merchant.terminal.id)
      assert.deepStrictEqual([failing.status, failing.lastError, failing.failingSince], ["failing", "HTTP 503", firstFailure])
      // Without a callback URL there is nothing to ping.
      const bare = yield* Kit.provisionMerchant({ callbackUrl: null })
      const barePrincipal = yield* Kit.apiKeyPrincipal(bare, crypto.randomUUID())
      assert.strictEqual((yield* Effect.flip(Events.ping(barePrincipal, bare.terminal.id)))._tag, "InvalidRequest")
    }).pipe(Effect.provide(Kit.layer)))
})
