import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Fiber, Layer, Option, Ref } from "effect"
import {
  Acquirer,
  Auth,
  CallbackTransport,
  Config,
  Events,
  LedgerRepository,
  IdempotencyStore,
  Operator,
  OutboxRepository,
  PaydeskConfig,
  PaymentRepository,
  Payments,
  PayoutRepository,
  PlanRepository,
  Payouts,
  SessionRepository,
  Subscriptions,
  SubscriptionRepository,
  TestClocks,
  Work
} from "@paydesk/core"
import {
  AcquirerEmulator,
  AesGcmSecretCipher,
  HmacTokenIssuer,
  Kit,
  ManualClock,
  MemoryRateSource,
  PayoutNetworkEmulator,
  Pbkdf2PasswordHasher,
  RecordingCallbackTransport,
  TestEntropy
} from "@paydesk/testkit"
import * as PgStore from "../src/PgStore.js"
import * as Harness from "./PgHarness.js"
import { freshDatabase, targets } from "./PgHarness.js"

const anchor = Date.parse("2026-01-31T07:00:00.000Z")

/** The kit on a fresh database with 20 connections. */
const kitOn = (url: string) => Harness.kitOn(url, 20)

/** Runs `body` with a manual wall clock at `anchor` (sleeps stay real: the pool needs them). */
const timed = <A, E, R>(body: (clock: ManualClock.ManualClock) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(ManualClock.make(anchor), (clock) => Effect.provideService(body(clock), Clock.Clock, clock.clock))

const setup = Effect.gen(function*() {
  const merchant = yield* Kit.provisionMerchant()
  const plans = yield* Kit.provisionPlans(merchant.terminal.id)
  const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
  return { merchant, plans, principal }
})

const all = { concurrency: "unbounded" } as const

for (const target of targets) {
  describe(`Postgres concurrency (${target.name})`, () => {
    it.live("50 concurrent subscription creations with one key and one body give one subscription", () =>
      timed((clock) => Effect.gen(function*() {
        const { merchant, plans, principal } = yield* setup
        const body = { terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "100" }
        const results = yield* Effect.forEach(Array.from({ length: 50 }, () => body), (b) =>
          Subscriptions.create(principal, { idempotencyKey: "one-key", ...b }), all)
        assert.strictEqual(new Set(results.map((r) => r.subscription.id)).size, 1)
        assert.strictEqual(results.filter((r) => r.created).length, 1)
        const listed = yield* (yield* SubscriptionRepository).list({ terminalIds: [merchant.terminal.id], providerState: null }, { limit: 100, offset: 0 })
        assert.strictEqual(listed.total, 1)
      })).pipe(Effect.provide(kitOn(target.url))), 60_000)

    it.live("with two bodies on one key, one body wins and every request of the other gets 409", () =>
      timed((clock) => Effect.gen(function*() {
        const { merchant, plans, principal } = yield* setup
        const bodies = Array.from({ length: 50 }, (_, i) => ({
          terminalId: merchant.terminal.id,
          planId: plans.ceilingMonthly.id,
          amount: i % 2 === 0 ? "100" : "200"
        }))
        const results = yield* Effect.forEach(bodies, (b) =>
          Effect.result(Subscriptions.create(principal, { idempotencyKey: "two-bodies", ...b })), all)
        const ok = results.flatMap((r) => r._tag === "Success" ? [r.success] : [])
        const conflicts = results.filter((r) => r._tag === "Failure" && r.failure._tag === "IdempotencyConflict")
        assert.strictEqual(ok.length + conflicts.length, 50)
        assert.strictEqual(new Set(ok.map((r) => r.subscription.id)).size, 1)
        assert.strictEqual(ok.length, 25)
        const listed = yield* (yield* SubscriptionRepository).list({ terminalIds: [merchant.terminal.id], providerState: null }, { limit: 100, offset: 0 })
        assert.strictEqual(listed.total, 1)
      })).pipe(Effect.provide(kitOn(target.url))), 60_000)

    // Live payments look the order_id up before the acquirer call; sandbox ones rely on the unique rule alone.
    for (const test of [false, true]) {
      it.live(`50 concurrent ${test ? "sandbox" : "live"} payment creations with one order_id give one payment`, () =>
        timed((clock) => Effect.gen(function*() {
          const { merchant, principal } = yield* setup
          const results = yield* Effect.forEach(Array.from({ length: 50 }, () => 0), () =>
            Payments.create(principal, { amount: "10.00", orderId: "same-order", test }), all)
          assert.strictEqual(new Set(results.map((r) => r.payment.id)).size, 1)
          assert.strictEqual(results.filter((r) => r.created).length, 1)
          const listed = yield* Payments.list(principal, { environment: "all" })
          assert.strictEqual(listed.total, 1)
          const events = yield* (yield* OutboxRepository).listEvents({ terminalId: merchant.terminal.id })
          assert.strictEqual(events.length, 1)
          assert.strictEqual(events[0]!.sequence, 1)
          // A different body under the same order_id is a conflict, after the first attempt found the order taken.
          const other = yield* Effect.flip(Payments.create(principal, { amount: "11.00", orderId: "same-order", test }))
          assert.strictEqual(other._tag, "OrderIdConflict")
        })).pipe(Effect.provide(kitOn(target.url))), 60_000)
    }

    it.live("50 concurrent payouts that together exceed the balance never overdraw it", () =>
      timed((clock) => Effect.gen(function*() {
        const { merchant, principal } = yield* setup
        const { payment } = yield* Payments.create(principal, { amount: "9500", orderId: "fund" })
        yield* Payments.settle(payment.id, "paid")
        const results = yield* Effect.forEach(Array.from({ length: 50 }, () => 0), () =>
          Effect.result(Payouts.create(principal, { amountUsdt: "30", walletAddress: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" })), all)
        assert.strictEqual(results.filter((r) => r._tag === "Success").length, 3)
        assert.isTrue(results.every((r) => r._tag === "Success" || r.failure._tag === "InsufficientBalance"))
        const balance = yield* (yield* LedgerRepository).balance(merchant.terminal.id)
        assert.deepStrictEqual(balance, { rubPending: 0n, usdtAvailable: 10_000_000n, usdtHold: 90_000_000n })
      }).pipe(Effect.provideService(PaydeskConfig, { ...Config.defaults, maxActivePayouts: 100 }))).pipe(Effect.provide(kitOn(target.url))), 60_000)

    it.live("an approval while the terminal's disable is being committed waits for it and is refused", () =>
      timed(() => Effect.gen(function*() {
        const { merchant, principal } = yield* setup
        const { payment } = yield* Payments.create(principal, { amount: "9500", orderId: "fund" })
        yield* Payments.settle(payment.id, "paid")
        const { payout } = yield* Payouts.create(principal, { amountUsdt: "30", walletAddress: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" })
        // The operator's disable, not yet committed when the approval starts: the approval waits for the
        // terminal's row, then sees it disabled (read unlocked, it saw "active" and approved).
        const approval = yield* Harness.underLock(
          (sql) => sql`UPDATE terminals SET status = 'disabled' WHERE id = ${merchant.terminal.id}`,
          Effect.gen(function*() {
            const fiber = yield* Effect.forkChild(Effect.result(Payouts.approve(payout.id)))
            yield* Harness.lockWaits(1)
            return fiber
          })
        )
        const result = yield* Fiber.join(approval)
        assert.isTrue(result._tag === "Failure" && result.failure._tag === "OperationNotAllowed", JSON.stringify(result))
        assert.strictEqual(Option.getOrThrow(yield* (yield* PayoutRepository).get(payout.id)).status, "created")
      })).pipe(Effect.provide(kitOn(target.url))), 60_000)

    it.live("a new plan version made while another one's check ran is seen by it: no terminal loses its plan unchecked", () =>
      Effect.gen(function*() {
        const [a, b, c, d] = yield* Effect.all([Kit.provisionMerchant(), Kit.provisionMerchant(), Kit.provisionMerchant(), Kit.provisionMerchant()])
        const code = `race-${a!.terminal.id.slice(0, 8)}`
        const terms = { name: "Monthly", interval: "month", capAmountRub: "100", consentText: "Согласен", policyVersion: "1" }
        yield* Operator.createPlan({ ...terms, code, terminalIds: [a!.terminal.id, b!.terminal.id] })
        const real = yield* PlanRepository
        // The second creation is held right after it read the active versions (only v1, on A and B),
        // while the first makes v2 on A, B and C.
        const read = yield* Deferred.make<void>()
        const made = yield* Deferred.make<void>()
        const held = PlanRepository.of({
          ...real,
          activeVersions: (code) => Effect.tap(real.activeVersions(code), () => Effect.andThen(Deferred.succeed(read, undefined), Deferred.await(made)))
        })
        const second = yield* Effect.forkChild(Effect.result(
          Operator.createPlan({ ...terms, code, terminalIds: [a!.terminal.id, b!.terminal.id, d!.terminal.id] }).pipe(Effect.provideService(PlanRepository, held))
        ))
        yield* Deferred.await(read)
        assert.strictEqual((yield* Operator.createPlan({ ...terms, code, terminalIds: [a!.terminal.id, b!.terminal.id, c!.terminal.id] })).version, 2)
        yield* Deferred.succeed(made, undefined)
        const result = yield* Fiber.join(second)
        // Its version's number was taken: tried again, it sees v2 on C, which it does not name.
        assert.isTrue(result._tag === "Failure" && result.failure._tag === "InvalidRequest" && result.failure.message.includes(`also offered on terminal ${c!.terminal.id}`), JSON.stringify(result))
        assert.deepStrictEqual((yield* real.activeVersions(code)).map((p) => [p.version, [...p.terminalIds].sort()]), [[2, [a!.terminal.id, b!.terminal.id, c!.terminal.id].sort()]])
      }).pipe(Effect.provide(kitOn(target.url))), 60_000)

    it.live("the same nonce sent 20 times at once is accepted once", () =>
      timed((clock) => Effect.gen(function*() {
        const { merchant } = yield* setup
        const results = yield* Effect.forEach(Array.from({ length: 20 }, () => "n-1"), (n) =>
          Effect.result(Auth.apiKey(merchant.apiKey, n)), all)
        assert.strictEqual(results.filter((r) => r._tag === "Success").length, 1)
        assert.isTrue(results.every((r) => r._tag === "Success" || r.failure.message === "nonce already used"))
      })).pipe(Effect.provide(kitOn(target.url))), 60_000)

    for (const racer of ["login", "refresh"] as const) {
      it.live(`a password change waits for a ${racer} that wrote its new session (${racer === "login" ? "under the user's lock" : "under its family's lock"}), then ends it`, () =>
        timed(() => Effect.gen(function*() {
          const { merchant } = yield* setup
          const owner = yield* Effect.flatMap(Auth.login(merchant.ownerEmail, Kit.ownerPassword), (p) => Auth.bearer(p.accessToken))
          const earlier = yield* Auth.login(merchant.ownerEmail, Kit.ownerPassword)
          const sessions = yield* SessionRepository
          const inserted = yield* Deferred.make<void>()
          const gate = yield* Deferred.make<void>()
          // The racer's new session is written, uncommitted, until the gate opens.
          const held = SessionRepository.of({
            ...sessions,
            insert: (session) => Effect.andThen(sessions.insert(session), Effect.andThen(Deferred.succeed(inserted, undefined), Deferred.await(gate)))
          })
          const race: Effect.Effect<Auth.TokenPair, unknown, Effect.Services<ReturnType<typeof Auth.login>> | Effect.Services<ReturnType<typeof Auth.refresh>>> =
            racer === "login" ? Auth.login(merchant.ownerEmail, Kit.ownerPassword) : Auth.refresh(earlier.refreshToken)
          const raced = yield* Effect.forkChild(race.pipe(Effect.provideService(SessionRepository, held)))
          yield* Deferred.await(inserted)
          const change = yield* Effect.forkChild(Auth.changePassword(owner, { currentPassword: Kit.ownerPassword, newPassword: "a new password" }))
          // Not done while the racer's transaction is open (without the lock it would miss the session).
          yield* Effect.sleep("300 millis")
          assert.isUndefined(change.pollUnsafe())
          yield* Deferred.succeed(gate, undefined)
          const issued = yield* Fiber.join(raced)
          const pair = yield* Fiber.join(change)
          assert.strictEqual((yield* Effect.flip(Auth.bearer(issued.accessToken)))._tag, "Unauthenticated")
          assert.strictEqual((yield* Effect.flip(Auth.refresh(issued.refreshToken)))._tag, "Unauthenticated")
          yield* Auth.bearer(pair.accessToken)
        })).pipe(Effect.provide(kitOn(target.url))), 60_000)
    }

    it.live("of two password changes at once one wins; the other writes nothing", () =>
      timed(() => Effect.gen(function*() {
        const { merchant } = yield* setup
        const users = yield* Effect.forEach([1, 2], () => Effect.flatMap(Auth.login(merchant.ownerEmail, Kit.ownerPassword), (p) => Auth.bearer(p.accessToken)))
        const results = yield* Effect.forEach(users, (user, i) =>
          Effect.result(Auth.changePassword(user, { currentPassword: Kit.ownerPassword, newPassword: `new password ${i}` })), all)
        const won = results.flatMap((r, i) => r._tag === "Success" ? [i] : [])
        assert.strictEqual(won.length, 1)
        yield* Auth.login(merchant.ownerEmail, `new password ${won[0]}`)
        assert.strictEqual((yield* Effect.flip(Auth.login(merchant.ownerEmail, `new password ${1 - won[0]!}`)))._tag, "InvalidCredentials")
      })).pipe(Effect.provide(kitOn(target.url))), 60_000)

    it.live("two workers running due charges at once charge each cycle once", () =>
      timed((clock) => Effect.gen(function*() {
        const db = yield* freshDatabase(target.url)
        // One bank for both workers; two separate pools on one database.
        const bank = AcquirerEmulator.make()
        const worker = () =>
          Layer.mergeAll(
            PgStore.layer(db, { maxConnections: 5 }),
            TestEntropy.layerCrypto,
            Pbkdf2PasswordHasher.layer(),
            HmacTokenIssuer.layer(),
            AesGcmSecretCipher.layer(),
            MemoryRateSource.layer(),
            RecordingCallbackTransport.layer,
            PayoutNetworkEmulator.layer,
            Layer.succeed(AcquirerEmulator.AcquirerEmulator)(bank),
            Layer.succeed(Acquirer)(bank.acquirer)
          ).pipe(Layer.fresh)
        const ids = yield* Effect.gen(function*() {
          const { merchant, plans, principal } = yield* setup
          const created: Array<string> = []
          for (let i = 0; i < 10; i++) {
            const { subscription } = yield* Subscriptions.create(principal, {
              idempotencyKey: `k-${i}`,
              terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "100"
            })
            const { firstPayment } = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
            yield* Payments.settle(Option.getOrThrow(firstPayment).id, "paid")
            created.push(subscription.id)
          }
          return created
        }).pipe(Effect.provide(worker()))
        for (const due of ["2026-02-28", "2026-03-31"].map((d) => Date.parse(`${d}T07:00:00.000Z`))) {
          yield* clock.set(due)
          yield* Effect.all([Work.runDue().pipe(Effect.provide(worker())), Work.runDue().pipe(Effect.provide(worker()))], all)
        }
        assert.strictEqual(bank.charges.length, 20)
        assert.strictEqual(new Set(bank.charges.map((c) => c.idempotencyKey)).size, 20)
        const cycles = yield* Effect.forEach(ids, (id) =>
          Effect.flatMap(SubscriptionRepository, (r) => r.get(id)).pipe(Effect.map((s) => Option.getOrThrow(s).successfulCycles)))
          .pipe(Effect.provide(worker()))
        assert.deepStrictEqual(cycles, Array(10).fill(3))
      })), 120_000)

    it.live("10 concurrent advances of one test clock: one runs, every other is 409 test clock is advancing", () =>
      timed(() => Effect.gen(function*() {
        const { principal } = yield* setup
        const clock = yield* TestClocks.create(principal, { frozenTime: "2026-01-31T10:00:00+03:00" })
        // A payment on the clock: its payment.created callback holds the winning advance until all others answered.
        yield* Payments.create(principal, { amount: "10", orderId: "on-clock", test: true, testClock: clock.id })
        const entered = yield* Deferred.make<void>()
        const gate = yield* Deferred.make<void>()
        const answered = yield* Ref.make(0)
        const held = CallbackTransport.of({
          post: () => Effect.andThen(Deferred.succeed(entered, undefined), Effect.as(Deferred.await(gate), { statusCode: 200, latencyMs: 1 }))
        })
        const release = Effect.gen(function*() {
          yield* Deferred.await(entered)
          while ((yield* Ref.get(answered)) < 9) yield* Effect.sleep("10 millis")
          yield* Deferred.succeed(gate, undefined)
        })
        const [results] = yield* Effect.all([
          Effect.forEach(Array.from({ length: 10 }, (_, i) => i), (i) =>
            Effect.result(TestClocks.advance(principal, clock.id, `2026-02-${String(i + 1).padStart(2, "0")}T12:00:00Z`)).pipe(
              Effect.tap((r) => r._tag === "Failure" ? Ref.update(answered, (n) => n + 1) : Effect.void),
              Effect.provideService(CallbackTransport, held)
            ), all),
          release
        ], all)
        const won = results.flatMap((r) => r._tag === "Success" ? [r.success] : [])
        assert.strictEqual(won.length, 1)
        assert.strictEqual(won[0]!.status, "ready")
        assert.deepStrictEqual(results.filter((r) => r._tag === "Failure").map((r) => r._tag === "Failure" ? r.failure._tag : ""), Array(9).fill("TestClockAdvancing"))
        assert.strictEqual((yield* TestClocks.get(principal, clock.id)).frozenTime, won[0]!.frozenTime)
      })).pipe(Effect.provide(kitOn(target.url))), 60_000)

    it.live("a resend of a clock's event holds the clock in the database: an advance meanwhile waits and does not send it again", () =>
      timed(() => Effect.gen(function*() {
        const { principal } = yield* setup
        const clock = yield* TestClocks.create(principal, { frozenTime: "2026-01-31T10:00:00+03:00" })
        yield* Payments.create(principal, { amount: "10", orderId: "resent", test: true, testClock: clock.id })
        yield* Work.drain()
        const [created] = (yield* Events.list(principal, { environment: "sandbox" })).items
        const id = `evt_${created!.event.id}`
        const sent: Array<string> = []
        const entered = yield* Deferred.make<void>()
        const gate = yield* Deferred.make<void>()
        const held = CallbackTransport.of({
          post: (request) =>
            Effect.andThen(Effect.sync(() => sent.push(request.headers["x-event-id"]!)),
              Effect.andThen(Deferred.succeed(entered, undefined), Effect.as(Deferred.await(gate), { statusCode: 200, latencyMs: 1 })))
        })
        const resend = yield* Effect.forkChild(Events.resend(principal, id).pipe(Effect.provideService(CallbackTransport, held)))
        yield* Deferred.await(entered)
        // The resend's delivery is leased on the clock's time: an advance stepping past that lease, with
        // nothing in this process's memory to stop it (as another process), would claim and send it again.
        const advance = yield* Effect.forkChild(TestClocks.advance(principal, clock.id, "2026-02-02T00:00:00Z").pipe(Effect.provideService(CallbackTransport, held)))
        yield* Effect.sleep("500 millis")
        assert.deepStrictEqual(sent, [id])
        assert.strictEqual((yield* TestClocks.get(principal, clock.id)).status, "ready")
        yield* Deferred.succeed(gate, undefined)
        assert.strictEqual((yield* Fiber.join(resend)).attempt?.statusCode, 200)
        assert.strictEqual((yield* Fiber.join(advance)).status, "ready")
        const expired = (yield* Events.list(principal, { environment: "sandbox", type: "payment.expired" })).items.map((i) => `evt_${i.event.id}`)
        assert.deepStrictEqual(sent, [id, ...expired])
      })).pipe(Effect.provide(kitOn(target.url))), 60_000)

    it.live("a use case that fails after its first write leaves no row behind", () =>
      timed((clock) => Effect.gen(function*() {
        const { merchant, principal } = yield* setup
        // The idempotency record fails after the payment with its event and delivery were written.
        const failingKeys = IdempotencyStore.of({ ...(yield* IdempotencyStore), insert: () => Effect.die(new Error("disk full")) })
        const exit = yield* Effect.exit(
          Payments.create(principal, { amount: "10", orderId: "half", idempotencyKey: "half-key" }).pipe(Effect.provideService(IdempotencyStore, failingKeys))
        )
        assert.strictEqual(exit._tag, "Failure")
        assert.isTrue(Option.isNone(yield* (yield* PaymentRepository).findByOrderId(merchant.terminal.id, "prod", "half")))
        const { created } = yield* Payments.create(principal, { amount: "10", orderId: "half" })
        assert.isTrue(created)
      })).pipe(Effect.provide(kitOn(target.url))), 60_000)
  })
}
