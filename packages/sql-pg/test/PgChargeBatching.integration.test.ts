/**
 * Charges in batches on PostgreSQL, observed in the database: a pass of due charges writes each
 * table in a few statements (statement-level triggers count them) and books every charge with its
 * payment, ledger entry and event. Calls made side by side in one transaction (`Atomic.atomicEach`)
 * share statements, and one that a rule refuses fails alone; side by side outside a transaction,
 * a stale version fails only its own write and one subscription written twice is written in order.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Exit, Option } from "effect"
import {
  Acquirer,
  Atomic,
  ChargeRepository,
  Config,
  LedgerRepository,
  OutboxRepository,
  PaydeskConfig,
  Payments,
  Subscriptions,
  SubscriptionRepository,
  TerminalRepository,
  WriteConflict
} from "@paydesk/core"
import { Fixtures, Kit, ManualClock } from "@paydesk/testkit"
import { countStatements, kitOn, targets } from "./PgHarness.js"

const anchor = Date.parse("2026-01-31T07:00:00.000Z")

/** Runs `body` with a manual wall clock at `anchor` (sleeps stay real: the pool needs them). */
const timed = <A, E, R>(body: (clock: ManualClock.ManualClock) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(ManualClock.make(anchor), (clock) => Effect.provideService(body(clock), Clock.Clock, clock.clock))

/** `count` live monthly subscriptions of a fresh merchant, first payment paid; their ids. */
const liveSubscriptions = (count: number) =>
  Effect.gen(function*() {
    const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/cb" })
    const plans = yield* Kit.provisionPlans(merchant.terminal.id)
    const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
    return yield* Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
      Effect.gen(function*() {
        const { subscription } = yield* Subscriptions.create(principal, {
          idempotencyKey: `k-${i}`,
          terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "100"
        })
        const { firstPayment } = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
        yield* Payments.settle(Option.getOrThrow(firstPayment).id, "paid")
        return subscription.id
      }), { concurrency: 10 })
  })

for (const target of targets) {
  describe(`PostgreSQL charges in batches (${target.name})`, () => {
    it.live("a pass of more due charges than are charged at once writes each table in a few statements and books every charge whole", () =>
      timed((clock) =>
        Effect.gen(function*() {
          // More than twice the charges in flight at once: the answers come in several rounds.
          const count = 2 * Subscriptions.chargeConcurrency + 6
          const ids = yield* liveSubscriptions(count)
          yield* clock.set(Date.parse("2026-02-28T07:00:00.000Z"))
          const charges = yield* ChargeRepository
          const acquirer = yield* Acquirer
          // What the database holds of each subscription's cycle 1 when the acquirer hears of the first charge.
          // The first call reads it; the others wait for that read, so no booking comes before it.
          let atFirstCall: ReadonlyArray<ReadonlyArray<string>> | undefined
          let started = false
          const read = yield* Deferred.make<void>()
          const watching = Acquirer.of({
            ...acquirer,
            charge: (input) =>
              Effect.gen(function*() {
                if (!started) {
                  started = true
                  atFirstCall = yield* Effect.forEach(ids, (id) => Effect.map(charges.listForCycle(id, 1), (list) => list.map((c) => c.status)), {
                    concurrency: "unbounded"
                  })
                  yield* Deferred.succeed(read, undefined)
                } else {
                  yield* Deferred.await(read)
                }
                return yield* acquirer.charge(input)
              })
          })
          const counted = yield* countStatements({
            chargeInserts: "INSERT ON charges",
            chargeUpdates: "UPDATE ON charges",
            subscriptionUpdates: "UPDATE ON subscriptions",
            payments: "INSERT ON payments",
            ledger: "INSERT ON ledger_entries"
          })
          assert.strictEqual(yield* Subscriptions.runDueCharges().pipe(Effect.provideService(Acquirer, watching)), count)
          const counts = yield* counted
          // The claimed batch's attempts are all written, in one statement, before the first call
          // (at most chargeConcurrency calls are in flight, so without that only the first round's
          // would be); the answers are written in batches of the ones waiting together (one
          // statement per table each), not one per charge. The claim is one more subscription update.
          assert.deepStrictEqual(atFirstCall, ids.map(() => ["pending"]))
          assert.strictEqual(counts.chargeInserts, 1)
          for (const kind of ["chargeUpdates", "payments", "ledger"] as const) assert.isAtMost(counts[kind], 8, kind)
          assert.isAtMost(counts.subscriptionUpdates, 9)
          const subscriptions = yield* SubscriptionRepository
          const ledger = yield* LedgerRepository
          const outbox = yield* OutboxRepository
          for (const id of ids) {
            const sub = Option.getOrThrow(yield* subscriptions.get(id))
            assert.deepStrictEqual([sub.successfulCycles, sub.chargeLeaseUntil], [2, null])
            const [attempt] = yield* charges.listForCycle(id, 1)
            assert.strictEqual(attempt?.status, "payed")
            const paymentId = attempt!.paymentId!
            assert.deepStrictEqual((yield* ledger.entriesFor(paymentId)).map((e) => [e.kind, e.refId]), [["payment_credit", paymentId]])
            assert.deepStrictEqual((yield* outbox.listEvents({ paymentId })).map((e) => e.eventType), ["payment.paid"])
          }
        })
      ).pipe(Effect.provide(kitOn(target.url))), 60_000)

    it.live("attempts that waited behind slow calls are touched in the database before their own calls", () =>
      timed((clock) =>
        Effect.gen(function*() {
          // The last 8 attempts wait while the first 32 calls take half a lease.
          const count = Subscriptions.chargeConcurrency + 8
          const ids = yield* liveSubscriptions(count)
          yield* clock.set(Date.parse("2026-02-28T07:00:00.000Z"))
          const config = yield* PaydeskConfig
          const charges = yield* ChargeRepository
          const acquirer = yield* Acquirer
          const allInFlight = yield* Deferred.make<void>()
          const slowStretch = yield* Deferred.make<void>()
          // How long before each call its attempt was last written, as the database has it.
          const ages: Array<number> = []
          let calls = 0
          const slow = Acquirer.of({
            ...acquirer,
            charge: (input) =>
              Effect.gen(function*() {
                const [attempt] = yield* charges.listForCycle(input.subscriptionId, input.cycleNumber)
                ages.push((yield* Clock.currentTimeMillis) - attempt!.updatedAt)
                const call = ++calls
                if (call === Subscriptions.chargeConcurrency) yield* Deferred.succeed(allInFlight, undefined)
                if (call === 1) {
                  // Once the first 32 calls are all in flight, half a lease passes.
                  yield* Deferred.await(allInFlight)
                  yield* clock.set(Date.parse("2026-02-28T07:00:00.000Z") + config.leaseMs / 2)
                  yield* Deferred.succeed(slowStretch, undefined)
                } else if (call <= Subscriptions.chargeConcurrency) {
                  yield* Deferred.await(slowStretch)
                }
                return yield* acquirer.charge(input)
              })
          })
          assert.strictEqual(yield* Subscriptions.runDueCharges().pipe(Effect.provideService(Acquirer, slow)), count)
          assert.strictEqual(ages.length, count)
          for (const age of ages) assert.isBelow(age, config.leaseMs / 4)
          for (const id of ids) assert.strictEqual((yield* charges.listForCycle(id, 1))[0]?.status, "payed")
        })
      ).pipe(Effect.provide(kitOn(target.url))), 60_000)

    it.live("a subscription whose next cycle is due already when its charge is booked is charged again by a later batch of the same pass", () =>
      timed((clock) =>
        Effect.gen(function*() {
          const ids = yield* liveSubscriptions(2)
          const repository = yield* SubscriptionRepository
          const cycles = (id: string) => Effect.map(repository.get(id), (s) => Option.getOrThrow(s).successfulCycles)
          let claims = 0
          // Batches of one: the third claim comes once both first charges are booked (their next
          // cycles are due already), as a claim after slow calls of other subscriptions would.
          const waiting = SubscriptionRepository.of({
            ...repository,
            claimDue: (now, leaseUntil, limit, testClockId) =>
              Effect.gen(function*() {
                if (++claims === 3) {
                  for (let i = 0; i < 400 && (yield* cycles(ids[0]!)) + (yield* cycles(ids[1]!)) < 4; i++) yield* Effect.sleep("5 millis")
                }
                return yield* repository.claimDue(now, leaseUntil, limit, testClockId)
              })
          })
          // Two months overdue: the cycles of 28 February and 31 March are both due.
          yield* clock.set(Date.parse("2026-03-31T07:00:00.000Z"))
          const charged = yield* Subscriptions.runDueCharges().pipe(
            Effect.provideService(SubscriptionRepository, waiting),
            Effect.provideService(PaydeskConfig, { ...Config.defaults, batchSize: 1 })
          )
          assert.strictEqual(charged, 4)
          for (const id of ids) {
            const sub = Option.getOrThrow(yield* repository.get(id))
            assert.deepStrictEqual([sub.successfulCycles, sub.chargeLeaseUntil], [3, null])
          }
          assert.strictEqual(yield* Subscriptions.runDueCharges(), 0)
        })
      ).pipe(Effect.provide(kitOn(target.url))), 60_000)

    it.live("in one transaction, calls made side by side share statements, and a write a unique rule refuses fails alone", () =>
      Effect.gen(function*() {
        const { terminal } = yield* Fixtures.seedTerminal()
        const sub = yield* Fixtures.seedSubscription(terminal.id)
        const repo = yield* ChargeRepository
        const taken = Fixtures.charge(sub, { attempt: 3 })
        yield* repo.insert(taken)
        const counted = yield* countStatements({ chargeInserts: "INSERT ON charges" })
        const fresh = [1, 2, 4, 5].map((attempt) => Fixtures.charge(sub, { attempt }))
        // Together: one statement for the four.
        const together = yield* Atomic.atomicEach(fresh, (charge) => repo.insert(charge))
        assert.isTrue(together.every(Exit.isSuccess))
        assert.strictEqual((yield* counted).chargeInserts, 1)
        // With a taken (subscription, cycle, attempt): that one fails with the conflict, the others are stored.
        const more = [6, 3, 7].map((attempt) => Fixtures.charge(sub, { attempt }))
        const exits = yield* Atomic.atomicEach(more, (charge) => repo.insert(charge))
        assert.deepStrictEqual(exits.map((e) => e._tag), ["Success", "Failure", "Success"])
        const failure = exits[1]!
        assert.isTrue(Exit.isFailure(failure) && Option.getOrThrow(Exit.findErrorOption(failure)) instanceof WriteConflict)
        assert.deepStrictEqual((yield* repo.listForCycle(sub.id, 1)).map((c) => c.attempt), [1, 2, 3, 4, 5, 6, 7])
        assert.strictEqual(Option.getOrThrow(yield* repo.get(taken.id)).id, taken.id)
        assert.isTrue(Option.isNone(yield* repo.get(more[1]!.id)))
        // Side by side in one transaction that is not atomicEach's: the conflict stays a conflict
        // (for the caller's atomic to retry, then report), nothing is stored.
        const clash = yield* Effect.exit(Atomic.atomic(Effect.all([
          repo.insert(Fixtures.charge(sub, { attempt: 8 })),
          repo.insert(Fixtures.charge(sub, { attempt: 3 }))
        ], { concurrency: "unbounded" })))
        assert.isTrue(Exit.isFailure(clash) && Option.getOrThrow(Exit.findErrorOption(clash)) instanceof WriteConflict)
        // The same cycle read twice side by side: each caller gets its attempts once.
        const twice = yield* Atomic.atomic(Effect.all([repo.listForCycle(sub.id, 1), repo.listForCycle(sub.id.toUpperCase(), 1)], { concurrency: "unbounded" }))
        assert.deepStrictEqual(twice.map((list) => list.map((c) => c.attempt)), [[1, 2, 3, 4, 5, 6, 7], [1, 2, 3, 4, 5, 6, 7]])
      }).pipe(Effect.provide(kitOn(target.url))))

    it.live("side by side outside a transaction: reads answer each id, a stale version fails only its own write, one row written twice is written in order", () =>
      Effect.gen(function*() {
        const { terminal } = yield* Fixtures.seedTerminal()
        const subs = yield* Effect.forEach([0, 1, 2], () => Fixtures.seedSubscription(terminal.id))
        const repo = yield* SubscriptionRepository
        const counted = yield* countStatements({ subscriptionUpdates: "UPDATE ON subscriptions" })
        const [a, b, c] = subs as [typeof subs[0], typeof subs[0], typeof subs[0]]
        const exits = yield* Effect.all([
          Effect.exit(repo.update({ ...a, description: "a once", version: 2 })),
          // Stale: b is at version 1, so version 3 is refused.
          Effect.exit(repo.update({ ...b, description: "b stale", version: 3 })),
          Effect.exit(repo.update({ ...c, description: "c first", version: 2 })),
          Effect.exit(repo.update({ ...c, description: "c second \u00e9\u{1F600} 'quoted'", version: 3 }))
        ], { concurrency: "unbounded" })
        assert.deepStrictEqual(exits.map((e) => e._tag), ["Success", "Failure", "Success", "Success"])
        // c twice: two rounds; a and b went with c's first write.
        assert.strictEqual((yield* counted).subscriptionUpdates, 2)
        const read = yield* Effect.all([repo.get(a.id), repo.get(b.id), repo.get(c.id), repo.get(Fixtures.uuid()), repo.get("not-a-uuid")], {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(read.map((s) => Option.map(s, (x) => [x.description, x.version])), [
          Option.some(["a once", 2]),
          Option.some([null, 1]),
          Option.some(["c second \u00e9\u{1F600} 'quoted'", 3]),
          Option.none(),
          Option.none()
        ])
        // The whole row round-trips through the batched write (numeric, timestamps, nulls, booleans).
        assert.deepStrictEqual(Option.getOrThrow(read[0]!), { ...a, description: "a once", version: 2 })
        const terminals = yield* TerminalRepository
        assert.deepStrictEqual(Option.getOrThrow(yield* terminals.get(terminal.id)), terminal)
        // An id in capitals names the same row, read alone or side by side.
        const upper = yield* Effect.all([repo.get(a.id.toUpperCase()), repo.getForUpdate(b.id.toUpperCase()), terminals.get(terminal.id.toUpperCase())], {
          concurrency: "unbounded"
        })
        const idOf = (found: Option.Option<{ readonly id: string }>) => Option.map(found, (x) => x.id)
        assert.deepStrictEqual(upper.map(idOf), [Option.some(a.id), Option.some(b.id), Option.some(terminal.id)])
        const charges = yield* ChargeRepository
        const charge = Fixtures.charge(a)
        yield* charges.insert(charge)
        assert.strictEqual(Option.getOrThrow(yield* charges.get(charge.id.toUpperCase())).id, charge.id)
        assert.deepStrictEqual((yield* charges.listForCycle(a.id.toUpperCase(), 1)).map((c) => c.id), [charge.id])
        // Written side by side with its id in capitals, then in small letters: two writes in order, each answered.
        const twice = yield* Effect.all([
          Effect.exit(repo.update({ ...a, id: a.id.toUpperCase(), description: "a capitals", version: 3 })),
          Effect.exit(repo.update({ ...a, description: "a small", version: 4 }))
        ], { concurrency: "unbounded" })
        assert.deepStrictEqual(twice.map((e) => e._tag), ["Success", "Success"])
        assert.deepStrictEqual(Option.map(yield* repo.get(a.id), (x) => [x.description, x.version]), Option.some(["a small", 4]))
        yield* Effect.all([
          charges.update({ ...charge, id: charge.id.toUpperCase(), status: "unconfirmed", updatedAt: charge.updatedAt + 1 }),
          charges.update({ ...charge, status: "unconfirmed", updatedAt: charge.updatedAt + 2 })
        ], { concurrency: "unbounded" })
        assert.strictEqual(Option.getOrThrow(yield* charges.get(charge.id)).updatedAt, charge.updatedAt + 2)
      }).pipe(Effect.provide(kitOn(target.url))))
  })
}
