/**
 * Group commit on PostgreSQL, observed in the database: statement-level triggers count the
 * statements that insert payments and nonces. Concurrent payment creations are written in far
 * fewer statements than creations, each answered after its commit with its event and delivery;
 * concurrent API-key authentications share statements too, and a nonce sent twice at once is
 * still claimed once. A creation whose text PostgreSQL refuses fails alone; a lone surrogate is
 * stored as a text parameter stores it, and the use cases answer what is stored. Batches stuck on a lock (a row another session holds) hold
 * back the others for `creationStallMs` or `authenticationStallMs`, not until the lock is released.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, Option } from "effect"
import { ApiKeyRepository, OutboxRepository, PaymentRepository, Payments, Subscriptions } from "@paydesk/core"
import { Fixtures, Kit } from "@paydesk/testkit"
import { authenticationBatchesInFlight, authenticationStallMs } from "../src/PgIdentity.js"
import { creationBatchesInFlight, creationStallMs } from "../src/PgPaymentRepository.js"
import { countStatements, kitOn, lockWaits, targets, underLock } from "./PgHarness.js"

/** A creation's payment with its event and delivery. */
const created = (terminalId: string) => {
  const payment = Fixtures.payment(terminalId)
  const event = Fixtures.outboxEvent(terminalId, { paymentId: payment.id })
  return { payment, event, delivery: Fixtures.delivery(event) }
}

/**
 * Under `lock`, `stuck` calls are started one by one, each in a batch of its own that waits for the
 * lock in PostgreSQL (every batch slot taken); then `other` runs, still under the lock. Answers how long
 * `other` took (it fails after `stallMs` and 5 s more) and the stuck calls, joined after the release.
 */
const heldBack = <A, B, E>(
  lock: Parameters<typeof underLock>[0],
  stuck: ReadonlyArray<Effect.Effect<A, E>>,
  other: Effect.Effect<B, E>,
  stallMs: number
) =>
  Effect.gen(function*() {
    const fibers: Array<Fiber.Fiber<A, E>> = []
    const { waited, answer } = yield* underLock(lock, Effect.gen(function*() {
      for (const [i, call] of stuck.entries()) {
        fibers.push(yield* Effect.forkChild(call))
        yield* lockWaits(i + 1)
      }
      const started = Date.now()
      const answer = yield* other.pipe(Effect.timeout(Duration.millis(stallMs + 5_000)))
      return { waited: Date.now() - started, answer }
    }))
    return { waited, answer, stuck: yield* Fiber.joinAll(fibers) }
  })

for (const target of targets) {
  describe(`PostgreSQL group commit (${target.name})`, () => {
    it.live("concurrent creations are written in a few statements, each with its event and delivery", () =>
      Effect.gen(function*() {
        const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/cb" })
        const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
        const counted = yield* countStatements({ payments: "INSERT ON payments", nonces: "INSERT ON nonces" })
        const count = 40
        // Five order ids are sent twice at once with the same parameters: each is created once and
        // its second request is answered as a replay of the first.
        const orders = [...Array.from({ length: count }, (_, i) => `g-${i}`), "g-0", "g-1", "g-2", "g-3", "g-4"]
        const answers = yield* Effect.forEach(orders, (orderId) => Payments.create(principal, { amount: "10", orderId, test: true }), {
          concurrency: "unbounded"
        })
        assert.strictEqual(answers.filter((a) => a.created).length, count)
        for (const [i, orderId] of orders.slice(count).entries()) {
          const twice = answers.filter((a) => a.payment.orderId === orderId)
          assert.strictEqual(twice.length, 2)
          assert.strictEqual(twice[0]!.payment.id, twice[1]!.payment.id, `order ${i}`)
        }
        // Batched: far fewer statements than creations (the losing repeats retried alone at most).
        assert.isAtMost((yield* counted).payments, count / 4)
        const outbox = yield* OutboxRepository
        for (const { payment } of answers) {
          const events = yield* outbox.listEvents({ paymentId: payment.id })
          assert.deepStrictEqual(events.map((e) => [e.eventType, e.sequence]), [["payment.created", 1]])
          assert.strictEqual((yield* outbox.listDeliveries({ paymentId: payment.id, limit: 5 })).length, 1)
        }
      }).pipe(Effect.provide(kitOn(target.url))))

    it.live("concurrent authentications share statements; a nonce sent twice at once is claimed once", () =>
      Effect.gen(function*() {
        const { terminal } = yield* Fixtures.seedTerminal()
        const repo = yield* ApiKeyRepository
        const key = Fixtures.apiKey(terminal.id)
        const revoked = Fixtures.apiKey(terminal.id, { revokedAt: Fixtures.baseTime })
        yield* repo.insert(key)
        yield* repo.insert(revoked)
        const counted = yield* countStatements({ payments: "INSERT ON payments", nonces: "INSERT ON nonces" })
        const now = Date.now()
        const calls = [
          ...Array.from({ length: 30 }, (_, i) => ({ hash: key.keyHash, nonce: `n-${i}` })),
          ...Array.from({ length: 4 }, () => ({ hash: key.keyHash, nonce: "twice" })),
          { hash: revoked.keyHash, nonce: "n-r" },
          { hash: "0".repeat(64), nonce: "n-unknown" }
        ]
        const answers = yield* Effect.forEach(calls, (c) => repo.authenticate(c.hash, c.nonce, now, now + 600_000), { concurrency: "unbounded" })
        const claimed = answers.map((a) => Option.isSome(a) && a.value.nonceClaimed)
        assert.deepStrictEqual(claimed.slice(0, 30), Array.from({ length: 30 }, () => true))
        assert.strictEqual(claimed.slice(30, 34).filter(Boolean).length, 1)
        assert.isTrue(answers.slice(0, 34).every((a) => Option.isSome(a) && a.value.key.id === key.id && Option.isSome(a.value.terminal)))
        assert.isTrue(Option.isSome(answers[34]!) && answers[34].value.key.id === revoked.id && !answers[34].value.nonceClaimed)
        assert.isTrue(Option.isNone(answers[35]!))
        // The first batch holds each repeated nonce once; its repeats go in later rounds.
        assert.isAtMost((yield* counted).nonces, 10)
        // Once claimed, a nonce is refused until its claim expires.
        assert.isFalse(Option.getOrThrow(yield* repo.authenticate(key.keyHash, "n-0", now + 1, now + 600_001)).nonceClaimed)
        assert.isTrue(Option.getOrThrow(yield* repo.authenticate(key.keyHash, "n-0", now + 600_000, now + 1_200_000)).nonceClaimed)
      }).pipe(Effect.provide(kitOn(target.url))))

    it.live("a creation with text PostgreSQL refuses fails alone; a lone surrogate is stored as a text parameter stores it", () =>
      Effect.gen(function*() {
        const { terminal } = yield* Fixtures.seedTerminal({ callbackUrl: "https://shop.example/cb" })
        const repo = yield* PaymentRepository
        const all = Array.from({ length: 6 }, (_, i) => {
          const payment = Fixtures.payment(terminal.id, { description: i === 2 ? "bad\u0000text" : i === 4 ? "half \ud800 pair" : `fine ${i}` })
          const event = Fixtures.outboxEvent(terminal.id, { paymentId: payment.id })
          return { payment, event, delivery: Fixtures.delivery(event) }
        })
        const exits = yield* Effect.forEach(all, (c) => Effect.exit(repo.insertCreated(c.payment, c.event, c.delivery)), {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(exits.map((e) => Exit.isSuccess(e)), [true, true, false, true, true, true])
        const died = exits[2]!
        assert.isTrue(Exit.isFailure(died) && died.cause.reasons.some((r) => r._tag === "Die" && (r.defect as { _tag?: string })._tag === "UnstorableText"))
        assert.isTrue(Option.isNone(yield* repo.get(all[2]!.payment.id)))
        // The same description through a plain text parameter (`insert`) is stored the same way.
        const plain = Fixtures.payment(terminal.id, { description: "half \ud800 pair" })
        yield* repo.insert(plain)
        const stored = Option.getOrThrow(yield* repo.get(all[4]!.payment.id)).description
        assert.strictEqual(stored, "half \ufffd pair")
        assert.strictEqual(stored, Option.getOrThrow(yield* repo.get(plain.id)).description)
      }).pipe(Effect.provide(kitOn(target.url))))

    it.live("a lone surrogate in a description: the creation answers U+FFFD, what PostgreSQL stores and reads answer; a repeat replays", () =>
      Effect.gen(function*() {
        const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/cb" })
        const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
        const input = { amount: "10", orderId: `ls-${crypto.randomUUID()}`, description: "half \ud800 pair", test: true }
        const { payment } = yield* Payments.create(principal, input)
        assert.strictEqual(payment.description, "half \ufffd pair")
        assert.strictEqual(Option.getOrThrow(yield* (yield* PaymentRepository).get(payment.id)).description, payment.description)
        const again = yield* Payments.create(principal, input)
        assert.deepStrictEqual([again.created, again.payment.id], [false, payment.id])

        const plans = yield* Kit.provisionPlans(merchant.terminal.id)
        const { subscription } = yield* Subscriptions.create(principal, {
          idempotencyKey: `ls-${crypto.randomUUID()}`,
          terminalId: merchant.terminal.id,
          planId: plans.fixedMonthly.id,
          payerId: "payer-1",
          description: "d\udc00"
        })
        assert.strictEqual(subscription.description, "d\ufffd")
        assert.strictEqual((yield* Subscriptions.get(principal, subscription.id)).description, subscription.description)
      }).pipe(Effect.provide(kitOn(target.url))))

    it.live("creations stuck on a terminal's lock hold back another terminal's for creationStallMs, not longer", () =>
      Effect.gen(function*() {
        const repo = yield* PaymentRepository
        const { terminal: locked } = yield* Fixtures.seedTerminal({ callbackUrl: "https://shop.example/cb" })
        const { terminal: other } = yield* Fixtures.seedTerminal({ callbackUrl: "https://other.example/cb" })
        const insert = (c: ReturnType<typeof created>) => repo.insertCreated(c.payment, c.event, c.delivery)
        const stuck = Array.from({ length: creationBatchesInFlight }, () => created(locked.id))
        const free = created(other.id)
        // The payments' foreign key reads their terminal's row, which another session holds.
        const held = yield* heldBack(
          (sql) => sql`SELECT 1 FROM terminals WHERE id = ${locked.id} FOR UPDATE`,
          stuck.map(insert),
          Effect.andThen(insert(free), repo.get(free.payment.id)),
          creationStallMs
        )
        // Committed while the lock was still held, once the stuck batches had stalled.
        assert.isTrue(Option.isSome(held.answer))
        assert.isAtLeast(held.waited, creationStallMs - 500)
        assert.isBelow(held.waited, creationStallMs + 1_500)
        for (const c of [...stuck, free]) assert.isTrue(Option.isSome(yield* repo.get(c.payment.id)))
        assert.strictEqual((yield* (yield* OutboxRepository).listDeliveries({ terminalId: locked.id, limit: 5 })).length, creationBatchesInFlight)
      }).pipe(Effect.provide(kitOn(target.url))))

    it.live("authentications stuck on a nonce's lock hold back another key's for authenticationStallMs, not longer", () =>
      Effect.gen(function*() {
        const repo = yield* ApiKeyRepository
        const { terminal } = yield* Fixtures.seedTerminal()
        const busy = Fixtures.apiKey(terminal.id)
        const calm = Fixtures.apiKey(terminal.id)
        yield* repo.insert(busy)
        yield* repo.insert(calm)
        const now = Date.now()
        const lifetime = 600_000
        // A claim of `busy`'s nonce that has expired: the next ones renew it, updating its row.
        assert.isTrue(Option.getOrThrow(yield* repo.authenticate(busy.keyHash, "held", now - lifetime, now)).nonceClaimed)
        const held = yield* heldBack(
          (sql) => sql`SELECT 1 FROM nonces WHERE api_key_id = ${busy.id} AND nonce = 'held' FOR UPDATE`,
          Array.from({ length: authenticationBatchesInFlight }, () => repo.authenticate(busy.keyHash, "held", now, now + lifetime)),
          repo.authenticate(calm.keyHash, "fresh", now, now + lifetime),
          authenticationStallMs
        )
        assert.isTrue(Option.getOrThrow(held.answer).nonceClaimed)
        assert.isAtLeast(held.waited, authenticationStallMs - 500)
        assert.isBelow(held.waited, authenticationStallMs + 1_500)
        // The renewed claim is given once.
        assert.deepStrictEqual(held.stuck.map((a) => Option.getOrThrow(a).nonceClaimed).sort(), [false, true])
      }).pipe(Effect.provide(kitOn(target.url))))
  })
}
