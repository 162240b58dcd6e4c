import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Exit, Fiber, Option, Scope } from "effect"
import { TestClock } from "effect/testing"
import { CallbackShares, CallbacksInFlight, CallbackTransport, Callbacks, Config, IdempotencyStore, OutboxRepository, PaydeskConfig, TerminalRepository, PaymentRepository, Payments, Terminals, TransportFailure, Work } from "@paydesk/core"
import { Kit, RecordingCallbackTransport } from "@paydesk/testkit"

const start = Date.parse("2026-06-01T12:00:00.000Z")
const offsets = [0, 30, 90, 210, 450, 930, 1890, 3810].map((s) => s * 1000)

const setup = Effect.gen(function*() {
  yield* TestClock.setTime(start)
  const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/cb" })
  const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
  const transport = yield* RecordingCallbackTransport.RecordingCallbackTransport
  /** Requests of `payment.created` only (the unpaid payment also expires after 30 minutes). */
  const created = () => transport.requests.filter((r) => JSON.parse(r.body).event_type === "payment.created")
  return { merchant, principal, transport, created }
})

/** Moves the clock a second at a time through two hours, running due work each minute boundary it passes. */
const runFor = (seconds: number) =>
  Effect.gen(function*() {
    for (let t = 0; t <= seconds; t += 5) {
      yield* TestClock.setTime(start + t * 1000)
      yield* Work.runDue()
    }
  })

describe("Callback delivery", () => {
  it.effect("a callback failing every time is attempted exactly 8 times at 30 s, 1, 2, 4, 8, 16, 32 min", () =>
    Effect.gen(function*() {
      const { principal, transport, created } = yield* setup
      yield* transport.failAlways({ status: 500 })
      yield* Payments.create(principal, { amount: "10", orderId: "o", test: true })
      yield* runFor(2 * 3600)
      assert.deepStrictEqual(created().map((r) => r.at - start), offsets)
      const delivery = (yield* Callbacks.listDeliveries({ limit: 10 })).at(-1)
      assert.strictEqual(delivery!.status, "failed")
      assert.strictEqual(delivery!.attempts, 8)
      const detail = yield* Callbacks.getDelivery(delivery!.id)
      assert.deepStrictEqual(detail.attempts.map((a) => [a.attemptNumber, a.statusCode, a.error]), offsets.map((_, i) => [i + 1, 500, "HTTP 500"]))
      // Every attempt carries the same body, signed with its own timestamp.
      assert.strictEqual(new Set(created().map((r) => r.body)).size, 1)
      assert.deepStrictEqual(created().map((r) => Number(r.headers["x-timestamp"]) * 1000 - start), offsets)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a receiver failing 7 times then answering 200 gets 8 attempts; timeouts count as failures", () =>
    Effect.gen(function*() {
      const { principal, transport, created } = yield* setup
      yield* transport.failNext(4, "timeout")
      yield* transport.failNext(3, "refused")
      yield* Payments.create(principal, { amount: "10", orderId: "o", test: true })
      yield* runFor(2 * 3600)
      assert.deepStrictEqual(created().map((r) => r.at - start), offsets)
      const delivery = (yield* Callbacks.listDeliveries({ limit: 10 })).at(-1)
      assert.strictEqual(delivery!.status, "delivered")
      assert.strictEqual(delivery!.attempts, 8)
      assert.deepStrictEqual(created().map((r) => r.timeoutMs), Array(8).fill(10_000))
      // A payment living 3 hours: no payment.expired event shares the failure queue.
    }).pipe(Effect.provideService(PaydeskConfig, { ...Config.defaults, paymentLifetimeMs: 3 * 3600_000 }), Effect.provide(Kit.layer)))

  it.effect("a 2xx ends the delivery; one delivery per event; no callback_url means no delivery", () =>
    Effect.gen(function*() {
      const { merchant, principal, transport } = yield* setup
      yield* Payments.create(principal, { amount: "10", orderId: "o", test: true })
      yield* runFor(600)
      assert.strictEqual(transport.requests.length, 1)
      yield* Terminals.updateSettings(principal, merchant.terminal.id, { callbackUrl: null })
      yield* Payments.create(principal, { amount: "10", orderId: "o2", test: true })
      yield* Work.drain()
      assert.strictEqual(transport.requests.length, 1)
      const events = yield* (yield* OutboxRepository).listEvents({ terminalId: merchant.terminal.id })
      assert.strictEqual(events.length, 2)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("the retry delay runs from the failure: a receiver that times out after 10 s is tried again 30 s after that, not 20", () =>
    Effect.gen(function*() {
      const { principal, transport } = yield* setup
      // Each send takes the whole 10 s and times out (the clock moves while it is in flight).
      const slow = CallbackTransport.of({
        post: (request) =>
          Effect.andThen(TestClock.adjust(`${request.timeoutMs} millis`), Effect.fail(new TransportFailure({ message: "timed out", latencyMs: request.timeoutMs })))
      })
      yield* Payments.create(principal, { amount: "10", orderId: "slow", test: true })
      assert.strictEqual(yield* Callbacks.runDue().pipe(Effect.provideService(CallbackTransport, slow)), 1)
      const [delivery] = yield* (yield* OutboxRepository).listDeliveries({ limit: 10 })
      assert.strictEqual(delivery!.nextAttemptAt, start + 10_000 + 30_000)
      yield* TestClock.setTime(start + 39_999)
      assert.strictEqual(yield* Callbacks.runDue(), 0)
      yield* TestClock.setTime(start + 40_000)
      assert.strictEqual(yield* Callbacks.runDue(), 1)
      assert.strictEqual(transport.requests.length, 1)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a retry goes to the terminal's current callback_url", () =>
    Effect.gen(function*() {
      const { merchant, principal, transport } = yield* setup
      yield* transport.respondTo("https://shop.example/cb", { status: 404 })
      yield* Payments.create(principal, { amount: "10", orderId: "o", test: true })
      yield* Work.runDue()
      yield* Terminals.updateSettings(principal, merchant.terminal.id, { callbackUrl: "https://shop.example/fixed" })
      yield* runFor(60)
      assert.deepStrictEqual(transport.requests.map((r) => r.url), ["https://shop.example/cb", "https://shop.example/fixed"])
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a pass sends its due deliveries in batches of batchSize, at most batchesPerPass of them", () =>
    Effect.gen(function*() {
      const { principal, transport } = yield* setup
      yield* Effect.forEach(Array.from({ length: 13 }, (_, i) => i), (i) => Payments.create(principal, { amount: "10", orderId: `o-${i}`, test: true }))
      // Batches of 2: one pass takes 5 of them (10 deliveries), the next the 3 left.
      assert.strictEqual(yield* Callbacks.runDue(), 2 * Callbacks.batchesPerPass)
      assert.strictEqual(transport.requests.length, 10)
      assert.strictEqual(yield* Callbacks.runDue(), 3)
      assert.strictEqual(yield* Callbacks.runDue(), 0)
      assert.strictEqual(new Set(transport.requests.map((r) => JSON.parse(r.body).order_id)).size, 13)
    }).pipe(Effect.provideService(PaydeskConfig, { ...Config.defaults, batchSize: 2 }), Effect.provide(Kit.layer)))

  it.effect("a payment's events go out in order across the batches of a pass", () =>
    Effect.gen(function*() {
      const { principal, transport } = yield* setup
      const a = yield* Payments.create(principal, { amount: "10", orderId: "a", test: false })
      yield* Payments.create(principal, { amount: "10", orderId: "b", test: true })
      yield* TestClock.adjust("1 second")
      // a's payment.paid is due after the two payment.created: it comes in the second batch.
      yield* Payments.settle(a.payment.id, "paid")
      const log: Array<string> = []
      const slow = CallbackTransport.of({
        post: (request) =>
          Effect.gen(function*() {
            const body = JSON.parse(request.body)
            const name = `${body.order_id}.${body.event_type}`
            log.push(`start ${name}`)
            // a's first event takes a while: the second batch is claimed meanwhile.
            if (name === "a.payment.created") for (let i = 0; i < 200; i++) yield* Effect.yieldNow
            const answer = yield* transport.post(request)
            log.push(`end ${name}`)
            return answer
          })
      })
      assert.strictEqual(yield* Callbacks.runDue().pipe(Effect.provideService(CallbackTransport, slow)), 3)
      assert.isBelow(log.indexOf("end a.payment.created"), log.indexOf("start a.payment.paid"), log.join(", "))
    }).pipe(Effect.provideService(PaydeskConfig, { ...Config.defaults, batchSize: 2 }), Effect.provide(Kit.layer)))

  it.effect("a delivery the pass claims again after its lease ran out, while it is still in flight, is sent once by the pass", () =>
    Effect.gen(function*() {
      const { principal, transport } = yield* setup
      const a = yield* Payments.create(principal, { amount: "10", orderId: "a", test: false })
      yield* Payments.settle(a.payment.id, "paid")
      yield* TestClock.adjust("1 second")
      for (const orderId of ["b", "c"]) yield* Payments.create(principal, { amount: "10", orderId, test: true })
      // Batches of 1: a created (its answer held), a paid (waiting behind it), b, c; before the fifth
      // claim the leases run out, so it takes a's first delivery again while it is still in flight.
      const outbox = yield* OutboxRepository
      const fifth = yield* Deferred.make<void>()
      let claims = 0
      const expiring = OutboxRepository.of({
        ...outbox,
        claimDue: (now, leaseUntil, limit, testClockId, stamp) =>
          Effect.gen(function*() {
            if (++claims < 5) return yield* outbox.claimDue(now, leaseUntil, limit, testClockId, stamp)
            yield* TestClock.adjust("61 seconds")
            const later = now + 61_000
            const claimed = yield* outbox.claimDue(later, later + 60_000, limit, testClockId, stamp)
            yield* Deferred.succeed(fifth, undefined)
            return claimed
          })
      })
      const held = CallbackTransport.of({
        post: (request) =>
          Effect.gen(function*() {
            const body = JSON.parse(request.body)
            if (body.order_id === "a" && body.event_type === "payment.created") yield* Deferred.await(fifth)
            return yield* transport.post(request)
          })
      })
      yield* Callbacks.runDue().pipe(Effect.provideService(CallbackTransport, held), Effect.provideService(OutboxRepository, expiring))
      assert.strictEqual(claims, 5)
      const sent = transport.requests.map((r) => JSON.parse(r.body)).map((b) => `${b.order_id}.${b.event_type}`)
      assert.deepStrictEqual([...sent].sort(), ["a.payment.created", "a.payment.paid", "b.payment.created", "c.payment.created"], sent.join(", "))
    }).pipe(Effect.provideService(PaydeskConfig, { ...Config.defaults, batchSize: 1 }), Effect.provide(Kit.layer)))

  it.effect("with an outbox that does not stamp in its claim, each delivery is stamped on its own before it is sent", () =>
    Effect.gen(function*() {
      const { principal, transport } = yield* setup
      for (const orderId of ["a", "b", "c"]) yield* Payments.create(principal, { amount: "10", orderId, test: true })
      const outbox = yield* OutboxRepository
      const stamped: Array<string> = []
      const older = OutboxRepository.of({
        ...outbox,
        claimDue: (now, leaseUntil, limit, testClockId) => outbox.claimDue(now, leaseUntil, limit, testClockId),
        stampSending: (id, now, keepFrom) => Effect.andThen(Effect.sync(() => stamped.push(id)), outbox.stampSending(id, now, keepFrom))
      })
      const started = yield* Clock.currentTimeMillis
      assert.strictEqual(yield* Callbacks.runDue().pipe(Effect.provideService(OutboxRepository, older)), 3)
      const deliveries = yield* outbox.listDeliveries({ limit: 10 })
      assert.sameMembers(stamped, deliveries.map((d) => d.id))
      assert.isTrue(deliveries.every((d) => d.status === "delivered" && d.sendingAt === null))
      assert.deepStrictEqual(transport.requests.map((r) => r.headers["x-timestamp"]), ["a", "b", "c"].map(() => String(Math.floor(started / 1000))))
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("the next batch is claimed and sent while the last deliveries of the one before are still in flight", () =>
    Effect.gen(function*() {
      const { principal, transport } = yield* setup
      yield* Effect.forEach(["a", "b", "c", "d"], (orderId) => Payments.create(principal, { amount: "10", orderId, test: true }))
      // The receiver holds the answers to the first batch (a, b) until the second batch (c, d) has arrived.
      const release = yield* Deferred.make<void>()
      const arrived: Array<string> = []
      const held = CallbackTransport.of({
        post: (request) =>
          Effect.gen(function*() {
            const orderId = JSON.parse(request.body).order_id as string
            arrived.push(orderId)
            if (arrived.length === 4) yield* Deferred.succeed(release, undefined)
            if (orderId === "a" || orderId === "b") yield* Deferred.await(release)
            return yield* transport.post(request)
          })
      })
      assert.strictEqual(yield* Callbacks.runDue().pipe(Effect.provideService(CallbackTransport, held)), 4)
      assert.deepStrictEqual([...arrived].sort(), ["a", "b", "c", "d"])
      assert.strictEqual(transport.requests.length, 4)
    }).pipe(Effect.provideService(PaydeskConfig, { ...Config.defaults, batchSize: 2 }), Effect.provide(Kit.layer)))
})

describe("Callback isolation", () => {
  it.effect("a terminal whose secret cannot be decrypted fails its own attempts and never blocks others", () =>
    Effect.gen(function*() {
      const { merchant, principal, transport } = yield* setup
      const other = yield* Kit.provisionMerchant({ callbackUrl: "https://other.example/cb" })
      const terminals = yield* TerminalRepository
      yield* terminals.update({ ...merchant.terminal, signingSecretEncrypted: "garbage" })
      yield* Payments.create(principal, { amount: "10", orderId: "o", test: true })
      yield* Payments.create(yield* Kit.apiKeyPrincipal(other, crypto.randomUUID()), { amount: "10", orderId: "o", test: true })
      yield* Work.runDue()
      assert.deepStrictEqual(transport.requests.map((r) => r.url), ["https://other.example/cb"])
      const broken = (yield* Callbacks.listDeliveries({ terminalId: merchant.terminal.id, limit: 10 }))[0]!
      assert.deepStrictEqual([broken.status, broken.attempts, broken.lastError], ["pending", 1, "signing secret unavailable"])
    }).pipe(Effect.provide(Kit.layer)))
})

/**
 * Waits (10 s of real time at most) until `done`: the pass decrypts the signing secrets with Web Crypto
 * (Node's thread pool), so a fixed number of yields was not always enough on a loaded machine.
 */
const until = (done: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 2_000 && !done(); i++) {
      yield* Effect.yieldNow
      if (!done()) yield* Effect.promise(() => new Promise((ok) => setTimeout(ok, 5)))
    }
  })

describe("Callback shares", () => {
  it.effect("a merchant whose endpoint never answers holds at most its share of the sending: another merchant's callback goes out meanwhile", () =>
    Effect.gen(function*() {
      const { merchant, principal, transport } = yield* setup
      const other = yield* Kit.provisionMerchant({ callbackUrl: "https://other.example/cb" })
      const shares = CallbackShares.make()
      // The first merchant's endpoint takes each request and answers nothing until the timeout.
      const timeout = yield* Deferred.make<void>()
      const hanging = CallbackTransport.of({
        post: (request) =>
          request.url === "https://shop.example/cb"
            ? Effect.andThen(Deferred.await(timeout), Effect.fail(new TransportFailure({ message: "no answer within 10000 ms", latencyMs: 10_000 })))
            : transport.post(request)
      })
      // A burst of the hanging merchant's payments, then one of the other merchant's.
      for (let i = 0; i < 40; i++) yield* Payments.create(principal, { amount: "10", orderId: `burst-${i}`, test: true })
      yield* TestClock.adjust("1 second")
      yield* Payments.create(yield* Kit.apiKeyPrincipal(other, crypto.randomUUID()), { amount: "10", orderId: "o", test: true })
      const pass = yield* Effect.forkChild(Callbacks.runDue().pipe(Effect.provideService(CallbackTransport, hanging), Effect.provideService(CallbackShares.CallbackShares, shares)))
      yield* until(() => shares.of(merchant.terminal.id).inFlight >= CallbackShares.perTerminal)
      assert.strictEqual(shares.of(merchant.terminal.id).inFlight, CallbackShares.perTerminal)
      // Its sends are now slow: the ones waiting for its slots are deferred and the pass goes on to the other merchant's.
      yield* TestClock.adjust(CallbackShares.slowMs)
      yield* until(() => transport.requests.length > 0)
      assert.deepStrictEqual(transport.requests.map((r) => r.url), ["https://other.example/cb"])
      assert.strictEqual(shares.of(merchant.terminal.id).inFlight, CallbackShares.perTerminal)
      yield* Deferred.succeed(timeout, undefined)
      yield* Fiber.join(pass)
      // 16 attempts made (failed slowly); the other 24 deferred a second, their 8 attempts left.
      const deliveries = yield* Callbacks.listDeliveries({ terminalId: merchant.terminal.id, limit: 100 })
      const now = yield* Clock.currentTimeMillis
      assert.strictEqual(deliveries.filter((d) => d.attempts === 1 && d.lastError === "no answer within 10000 ms").length, CallbackShares.perTerminal)
      const deferred = deliveries.filter((d) => d.attempts === 0)
      assert.strictEqual(deferred.length, 40 - CallbackShares.perTerminal)
      assert.isTrue(deferred.every((d) => d.status === "pending" && d.nextAttemptAt === now + CallbackShares.busyDeferMs), JSON.stringify(deferred.map((d) => d.nextAttemptAt! - now)))
      assert.strictEqual(shares.of(merchant.terminal.id).failures, CallbackShares.perTerminal)
    }).pipe(Effect.provide(Kit.layer)))
})

describe("Callbacks left in flight", () => {
  it.effect("a pass leaves a slow receiver's callbacks running and ends; the next pass sends another merchant's at once; a payment's later event waits for its earlier one", () =>
    Effect.gen(function*() {
      const { merchant, principal, transport } = yield* setup
      const other = yield* Kit.provisionMerchant({ callbackUrl: "https://other.example/cb" })
      const shares = CallbackShares.make()
      // The first merchant's endpoint answers 200, but only when `answer` is done (within the spec's 10 s).
      const answer = yield* Deferred.make<void>()
      const slow = CallbackTransport.of({
        post: (request) => request.url === "https://shop.example/cb" ? Effect.andThen(Deferred.await(answer), transport.post(request)) : transport.post(request)
      })
      const background = yield* Scope.make()
      const inFlight = CallbacksInFlight.make((effect) => Effect.forkIn(effect, background))
      const pass = (withInFlight: boolean) =>
        Callbacks.runDue().pipe(
          Effect.provideService(CallbackTransport, slow),
          Effect.provideService(CallbackShares.CallbackShares, shares),
          withInFlight ? Effect.provideService(CallbacksInFlight.InFlight, inFlight) : (effect) => effect
        )
      const a = yield* Payments.create(principal, { amount: "10", orderId: "a" })
      for (let i = 0; i < 3; i++) yield* Payments.create(principal, { amount: "10", orderId: `slow-${i}`, test: true })
      // Without a background, the pass waits for the slow receiver.
      const waiting = yield* Effect.forkChild(pass(false))
      yield* until(() => shares.of(merchant.terminal.id).inFlight === 4)
      yield* TestClock.adjust(CallbacksInFlight.waitMs * 5)
      assert.isUndefined(waiting.pollUnsafe())
      yield* Fiber.interrupt(waiting)
      assert.strictEqual(shares.of(merchant.terminal.id).inFlight, 0)
      // Their leases ran out meanwhile (nothing was recorded): due again.
      yield* TestClock.adjust("1 minute")

      // With one, the pass waits a second for them and ends, leaving them in flight.
      const first = yield* Effect.forkChild(pass(true))
      yield* until(() => shares.of(merchant.terminal.id).inFlight === 4)
      yield* TestClock.adjust(CallbacksInFlight.waitMs)
      assert.strictEqual(yield* Fiber.join(first), 4)
      assert.deepStrictEqual([shares.of(merchant.terminal.id).inFlight, inFlight.running(), inFlight.sending().size], [4, 4, 4])
      // Another merchant's payment and the slow one's payment.paid of "a": the next pass sends the
      // first at once, while "a"'s payment.paid waits for its payment.created still in flight.
      yield* Payments.create(yield* Kit.apiKeyPrincipal(other, crypto.randomUUID()), { amount: "10", orderId: "o", test: true })
      yield* Payments.settle(a.payment.id, "paid")
      const second = yield* Effect.forkChild(pass(true))
      yield* until(() => transport.requests.length > 0)
      assert.deepStrictEqual(transport.requests.map((r) => [r.url, JSON.parse(r.body).event_type]), [["https://other.example/cb", "payment.created"]])
      yield* TestClock.adjust(CallbacksInFlight.waitMs)
      assert.strictEqual(yield* Fiber.join(second), 2)
      // A pass meanwhile claims nothing of theirs again: the leases hold, and the background sends them.
      assert.strictEqual(yield* pass(true), 0)
      // The receiver answers: the attempts are recorded, "a"'s events in order.
      yield* Deferred.succeed(answer, undefined)
      yield* until(() => inFlight.running() === 0)
      const ofA = transport.requests.filter((r) => JSON.parse(r.body).order_id === "a").map((r) => JSON.parse(r.body).event_type)
      assert.deepStrictEqual(ofA, ["payment.created", "payment.paid"])
      const deliveries = yield* Callbacks.listDeliveries({ terminalId: merchant.terminal.id, limit: 100 })
      assert.deepStrictEqual(deliveries.map((d) => [d.status, d.attempts]), Array(5).fill(["delivered", 1]))
      assert.strictEqual(inFlight.sending().size, 0)
      yield* Scope.close(background, Exit.void)
    }).pipe(Effect.provide(Kit.layer)))
})

describe("Callbacks left in flight, leases run out while waiting", () => {
  /** A live payment paid at once (its created and paid in one group), its created held by the receiver until `answer`, the pass over. */
  const heldInFlight = Effect.gen(function*() {
    const { merchant, principal, transport } = yield* setup
    const answer = yield* Deferred.make<void>()
    const slow = CallbackTransport.of({ post: (request) => Effect.andThen(Deferred.await(answer), transport.post(request)) })
    const background = yield* Scope.make()
    const inFlight = CallbacksInFlight.make((effect) => Effect.forkIn(effect, background))
    const pass = Callbacks.runDue().pipe(Effect.provideService(CallbackTransport, slow), Effect.provideService(CallbacksInFlight.InFlight, inFlight))
    const a = yield* Payments.create(principal, { amount: "10", orderId: "a" })
    yield* Payments.settle(a.payment.id, "paid")
    const first = yield* Effect.forkChild(pass)
    yield* until(() => inFlight.sending().size === 2)
    yield* TestClock.adjust(CallbacksInFlight.waitMs)
    yield* Fiber.join(first)
    return { merchant, principal, transport, answer, background, inFlight, pass, payment: a.payment }
  })
  /** The same, past both leases. */
  const waitedPastLeases = Effect.tap(heldInFlight, () => TestClock.adjust(Config.defaults.leaseMs + 1_000))
  const eventTypes = (transport: RecordingCallbackTransport.RecordingCallbackTransport["Service"]) => transport.requests.map((r) => JSON.parse(r.body).event_type)

  it.effect("a later event another process claimed meanwhile is left to it: not sent from here, nor before its earlier one", () =>
    Effect.gen(function*() {
      const { merchant, transport, answer, background, inFlight } = yield* waitedPastLeases
      // Another process claims both (their leases ran out) and starts sending the created.
      const outbox = yield* OutboxRepository
      const now = yield* Clock.currentTimeMillis
      const elsewhere = yield* outbox.claimDue(now, now + Config.defaults.leaseMs, 10)
      assert.strictEqual(elsewhere.length, 2)
      // The receiver answers this process's created; its group does not go on to the paid.
      yield* Deferred.succeed(answer, undefined)
      yield* until(() => inFlight.running() === 0)
      assert.deepStrictEqual(eventTypes(transport), ["payment.created"])
      const paid = elsewhere.find(({ event }) => event.eventType === "payment.paid")!.delivery
      const stored = yield* outbox.getDelivery(paid.id)
      assert.deepStrictEqual(Option.map(stored, (d): ReadonlyArray<unknown> => [d.status, d.attempts, d.nextAttemptAt]), Option.some(["pending", 0, now + Config.defaults.leaseMs]))
      assert.strictEqual((yield* Callbacks.listDeliveries({ terminalId: merchant.terminal.id, limit: 10 })).filter((d) => d.status === "delivered").length, 1)
      yield* Scope.close(background, Exit.void)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("the payment's later events waiting behind a delivery another process claimed are deferred while it holds it: none overtakes it", () =>
    Effect.gen(function*() {
      // Pass 1 holds a's created (the receiver) and its paid, leased for 60 s.
      const { merchant, transport, answer, background, inFlight, pass, payment } = yield* heldInFlight
      // 45 s later a refund: pass 2 claims its two events, a group waiting behind pass 1's.
      yield* TestClock.adjust("45 seconds")
      yield* Payments.refund(payment.id)
      const second = yield* Effect.forkChild(pass)
      yield* until(() => inFlight.sending().size === 4)
      yield* TestClock.adjust(CallbacksInFlight.waitMs)
      yield* Fiber.join(second)
      // Pass 1's lease runs out: another process claims created and paid.
      yield* TestClock.adjust("15 seconds")
      const outbox = yield* OutboxRepository
      const now = yield* Clock.currentTimeMillis
      const elsewhere = yield* outbox.claimDue(now, now + Config.defaults.leaseMs, 10)
      assert.deepStrictEqual(elsewhere.map(({ event }) => event.eventType), ["payment.created", "payment.paid"])
      yield* Deferred.succeed(answer, undefined)
      yield* until(() => inFlight.running() === 0)
      // Only this process's created went out; the refund's events wait until the other's lease ends.
      assert.deepStrictEqual(transport.requests.map((r) => JSON.parse(r.body).event_type), ["payment.created"])
      const deliveries = yield* Callbacks.listDeliveries({ terminalId: merchant.terminal.id, limit: 10 })
      const pending = deliveries.filter((d) => d.status === "pending")
      assert.strictEqual(pending.length, 3)
      const refundIds = new Set(elsewhere.map(({ delivery }) => delivery.id))
      for (const d of pending.filter((d) => !refundIds.has(d.id))) assert.strictEqual(d.nextAttemptAt, now + Config.defaults.leaseMs)
      yield* Scope.close(background, Exit.void)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a later event a pass of this process claimed meanwhile is sent by its group, once, after its earlier one", () =>
    Effect.gen(function*() {
      const { merchant, transport, answer, background, inFlight, pass } = yield* waitedPastLeases
      // A pass of this process claims both again and leaves them to the group.
      assert.strictEqual(yield* pass, 0)
      yield* Deferred.succeed(answer, undefined)
      yield* until(() => inFlight.running() === 0)
      assert.deepStrictEqual(eventTypes(transport), ["payment.created", "payment.paid"])
      const deliveries = yield* Callbacks.listDeliveries({ terminalId: merchant.terminal.id, limit: 10 })
      assert.deepStrictEqual(deliveries.map((d) => [d.status, d.attempts]), [["delivered", 1], ["delivered", 1]])
      // Nothing due again: the pass sends nothing more.
      yield* TestClock.adjust(Config.defaults.leaseMs + 1_000)
      assert.strictEqual(yield* pass, 0)
      assert.strictEqual(transport.requests.length, 2)
      yield* Scope.close(background, Exit.void)
    }).pipe(Effect.provide(Kit.layer)))
})

describe("Callbacks left in flight, at a stop", () => {
  it.effect("once closed, a group finishes the attempt it is making and starts no other: the payment's later event stays pending", () =>
    Effect.gen(function*() {
      const { merchant, principal, transport } = yield* setup
      const answer = yield* Deferred.make<void>()
      const slow = CallbackTransport.of({ post: (request) => Effect.andThen(Deferred.await(answer), transport.post(request)) })
      const background = yield* Scope.make()
      // As the local worker forks them: uninterruptibly, so closing the scope waits for them.
      const inFlight = CallbacksInFlight.make((effect) => Effect.forkIn(effect, background, { uninterruptible: true }))
      // A live payment paid at once: its payment.created and payment.paid go out in one group, in order.
      const a = yield* Payments.create(principal, { amount: "10", orderId: "a" })
      yield* Payments.settle(a.payment.id, "paid")
      const pass = yield* Effect.forkChild(Callbacks.runDue().pipe(
        Effect.provideService(CallbackTransport, slow),
        Effect.provideService(CallbacksInFlight.InFlight, inFlight)
      ))
      yield* until(() => inFlight.sending().size === 2)
      yield* TestClock.adjust(CallbacksInFlight.waitMs)
      yield* Fiber.join(pass)
      // The host stops: the created in flight is answered and recorded; the paid is not sent.
      inFlight.close()
      yield* Deferred.succeed(answer, undefined)
      yield* Scope.close(background, Exit.void)
      assert.deepStrictEqual(transport.requests.map((r) => JSON.parse(r.body).event_type), ["payment.created"])
      const deliveries = yield* Callbacks.listDeliveries({ terminalId: merchant.terminal.id, limit: 10 })
      assert.deepStrictEqual(deliveries.map((d) => [d.status, d.attempts]).sort(), [["delivered", 1], ["pending", 0]])
      assert.deepStrictEqual([inFlight.running(), inFlight.sending().size], [0, 0])
    }).pipe(Effect.provide(Kit.layer)))
})

describe("Callback shares in a pass", () => {
  it.effect("a deferred event defers the payment's later ones, also those of a later batch of the pass, and no attempt is counted", () =>
    Effect.gen(function*() {
      const { merchant, principal, transport } = yield* setup
      const terminalId = merchant.terminal.id
      const a = yield* Payments.create(principal, { amount: "10", orderId: "a", test: false })
      yield* Payments.settle(a.payment.id, "paid")
      const shares = CallbackShares.make()
      // Busy: all its slots taken by sends running for 2 s.
      const hold = yield* Deferred.make<boolean>()
      const held = yield* Effect.forEach(Array.from({ length: CallbackShares.perTerminal }), () => Effect.forkChild(shares.run(terminalId, Deferred.await(hold), (ok) => ok)))
      yield* Effect.yieldNow
      assert.strictEqual(shares.of(terminalId).inFlight, CallbackShares.perTerminal)
      yield* TestClock.adjust("2 seconds")
      // Once the first event is deferred, the slots come free and the terminal answers again: the
      // payment's next event (a batch of its own) would find a slot, but waits with the first.
      const outbox = yield* OutboxRepository
      const freeing = OutboxRepository.of({
        ...outbox,
        renewLease: (id, heldUntil, leaseUntil) =>
          Effect.gen(function*() {
            const renewed = yield* outbox.renewLease(id, heldUntil, leaseUntil)
            if (yield* Deferred.succeed(hold, true)) yield* Effect.forEach(held, Fiber.join)
            return renewed
          })
      })
      const now = yield* Clock.currentTimeMillis
      const attempted = yield* Callbacks.runDue().pipe(
        Effect.provideService(OutboxRepository, freeing),
        Effect.provideService(CallbackShares.CallbackShares, shares)
      )
      assert.deepStrictEqual(shares.of(terminalId), { inFlight: 0, failures: 0 })
      assert.strictEqual(attempted, 0)
      assert.deepStrictEqual(transport.requests, [])
      const deliveries = yield* outbox.listDeliveries({ terminalId, limit: 10 })
      assert.deepStrictEqual(deliveries.map((d) => [d.status, d.attempts, d.nextAttemptAt]), [
        ["pending", 0, now + 2_000],
        ["pending", 0, now + 2_000]
      ])
    }).pipe(Effect.provideService(PaydeskConfig, { ...Config.defaults, batchSize: 1 }), Effect.provide(Kit.layer)))

  it.effect("a failing terminal's callbacks beyond its two slots are failed attempts without a request: they follow the retry schedule and end failed, none left pending", () =>
    Effect.gen(function*() {
      const { merchant, principal, transport } = yield* setup
      const terminalId = merchant.terminal.id
      const shares = CallbackShares.make()
      // An endpoint that never answers in time: its two slots always taken by sends that end, every
      // 5 s, in a slow failure (which keeps it failing), and are taken again at once.
      for (let i = 0; i < CallbackShares.failingAfter; i++) yield* shares.run(terminalId, Effect.succeed(false), (ok) => ok)
      const hold = Effect.gen(function*() {
        const answer = yield* Deferred.make<boolean>()
        const fibers = yield* Effect.forEach([1, 2], () => Effect.forkChild(shares.run(terminalId, Deferred.await(answer), (ok) => ok)))
        yield* Effect.yieldNow
        return { answer, fibers }
      })
      let held = yield* hold
      for (let i = 0; i < 5; i++) yield* Payments.create(principal, { amount: "10", orderId: `o-${i}`, test: true })
      // Two hours of passes (as in the retry schedule's test above).
      for (let t = 0; t <= 2 * 3600; t += 5) {
        yield* TestClock.setTime(start + t * 1000)
        yield* Work.runDue().pipe(Effect.provideService(CallbackShares.CallbackShares, shares))
        yield* Deferred.succeed(held.answer, false)
        yield* Effect.forEach(held.fibers, Fiber.join)
        held = yield* hold
      }
      assert.deepStrictEqual(transport.requests, [])
      const deliveries = (yield* Callbacks.listDeliveries({ terminalId, limit: 100 })).filter((d) => d.status !== "delivered")
      // Each payment's payment.created, and its payment.expired after 30 minutes unpaid.
      assert.deepStrictEqual(deliveries.map((d) => [d.status, d.attempts]), Array(10).fill(["failed", 8]))
      const detail = yield* Callbacks.getDelivery(deliveries[0]!.id)
      // On the spec's schedule: 30 s, 1, 2, 4, 8, 16, 32 min after each failure.
      assert.deepStrictEqual(detail.attempts.map((a) => a.at - detail.attempts[0]!.at), offsets)
      assert.match(detail.attempts[0]!.error!, /^not sent: the endpoint's last \d+ attempts failed slowly \(no answer within 10 s, or an error after 1 s or more\); 2 are sent at a time until one answers$/)
      assert.deepStrictEqual([detail.attempts[0]!.statusCode, detail.attempts[0]!.url], [null, "https://shop.example/cb"])
    }).pipe(Effect.provide(Kit.layer)))
})

describe("Atomicity", () => {
  it.effect("a use case that fails half-way leaves no trace", () =>
    Effect.gen(function*() {
      const { merchant, principal } = yield* setup
      const payments = yield* PaymentRepository
      // The idempotency record fails after the payment, its event and delivery were written in the
      // same transaction: nothing of the payment may remain.
      const failingKeys = IdempotencyStore.of({
        ...(yield* IdempotencyStore),
        insert: () => Effect.die(new Error("disk full"))
      })
      const exit = yield* Effect.exit(
        Payments.create(principal, { amount: "10", orderId: "half", test: true, idempotencyKey: "half-key" }).pipe(
          Effect.provideService(IdempotencyStore, failingKeys)
        )
      )
      assert.strictEqual(exit._tag, "Failure")
      assert.isTrue(Option.isNone(yield* payments.findByOrderId(merchant.terminal.id, "sandbox", "half")))
      assert.strictEqual((yield* Payments.list(principal, { environment: "all" })).total, 0)
      // The same request succeeds afterwards.
      const { created } = yield* Payments.create(principal, { amount: "10", orderId: "half", test: true })
      assert.isTrue(created)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("two workers with one claimed delivery (a lease lapsed mid-flight): both requests are recorded, and the success ends it", () =>
    Effect.gen(function*() {
      const { principal, transport } = yield* setup
      yield* Payments.create(principal, { amount: "10", orderId: "twice", test: true })
      const [claimed] = yield* (yield* OutboxRepository).claimDue(start, start + 60_000, 10)
      // The second worker answers first with a failure; the first one's request then succeeds.
      yield* transport.failNext(1, "refused")
      const second = yield* Callbacks.attempt(claimed!.delivery, claimed!.event)
      const first = yield* Callbacks.attempt(claimed!.delivery, claimed!.event)
      assert.deepStrictEqual([Option.getOrThrow(second).attemptNumber, Option.getOrThrow(second).error], [1, "connection refused"])
      assert.deepStrictEqual([Option.getOrThrow(first).attemptNumber, Option.getOrThrow(first).statusCode], [2, 200])
      const { delivery, attempts } = yield* Callbacks.getDelivery(claimed!.delivery.id)
      assert.deepStrictEqual([delivery.status, delivery.attempts, attempts.length], ["delivered", 2, 2])
      // A finished delivery records nothing more.
      assert.isTrue(Option.isNone(yield* Callbacks.attempt(claimed!.delivery, claimed!.event)))
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a crash after sending, before the attempt is recorded: the re-send repeats body, timestamp and signature", () =>
    Effect.gen(function*() {
      const { principal, transport, created } = yield* setup
      yield* Payments.create(principal, { amount: "10", orderId: "crash", test: true })
      // The process "dies" right after the request went out: the attempt is never recorded.
      const crashing = CallbackTransport.of({ post: (request) => Effect.andThen(transport.post(request), Effect.die("killed")) })
      yield* Callbacks.runDue().pipe(Effect.provideService(CallbackTransport, crashing))
      assert.strictEqual(created().length, 1)
      const pending = (yield* Callbacks.listDeliveries({ limit: 10 })).at(-1)!
      assert.deepStrictEqual([pending.status, pending.attempts], ["pending", 0])
      // Later (a restarted process), once the lease has run out, the delivery goes again.
      yield* TestClock.setTime(start + 45_000)
      yield* Callbacks.runDue()
      assert.strictEqual(created().length, 1)
      yield* TestClock.setTime(start + 61_000)
      yield* Callbacks.runDue()
      const [first, repeat] = created()
      assert.isDefined(repeat)
      assert.strictEqual(repeat!.body, first!.body)
      assert.strictEqual(repeat!.headers["x-timestamp"], first!.headers["x-timestamp"])
      assert.strictEqual(repeat!.headers["x-signature"], first!.headers["x-signature"])
      const delivered = yield* Callbacks.getDelivery(pending.id)
      assert.deepStrictEqual([delivered.delivery.status, delivered.delivery.attempts, delivered.delivery.sendingAt], ["delivered", 1, null])
      // A re-send long after the cut-short attempt gets a fresh stamp a receiver still accepts.
      yield* Payments.create(principal, { amount: "10", orderId: "late", test: true })
      yield* Callbacks.runDue().pipe(Effect.provideService(CallbackTransport, crashing))
      const cut = created().at(-1)!
      yield* TestClock.setTime(start + 61_000 + 300_000)
      yield* Callbacks.runDue()
      const resent = created().at(-1)!
      assert.strictEqual(resent.body, cut.body)
      assert.strictEqual(Number(resent.headers["x-timestamp"]) - Number(cut.headers["x-timestamp"]), 300)
      const base = created().length
      // An ordinary retry after a recorded failure is stamped anew.
      yield* transport.failNext(1, "refused")
      yield* Payments.create(principal, { amount: "10", orderId: "retry", test: true })
      yield* Callbacks.runDue()
      yield* TestClock.setTime(start + 61_000 + 300_000 + 30_000)
      yield* Callbacks.runDue()
      const retried = created().slice(base)
      assert.strictEqual(retried.length, 2)
      assert.notStrictEqual(retried[0]!.headers["x-timestamp"], retried[1]!.headers["x-timestamp"])
    }).pipe(Effect.provide(Kit.layer)))
})
