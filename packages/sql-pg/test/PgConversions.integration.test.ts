/**
 * Conversions of pending roubles on Postgres, on every target. An outside probe found roubles left
 * unconverted for good:
 * - a payment confirmed while its terminal switched from scheduled to instant: the credit read the
 *   old mode (roubles pending), the switch did not see the credit yet (nothing pending, so no
 *   conversion scheduled), and in instant mode no conversion ever ran again;
 * - a run that left payments behind (more than it converts at once, or rows another transaction
 *   held): in instant mode it cleared the next conversion, so they were never converted.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Fiber, Option } from "effect"
import { type Access, LedgerRepository, Payments, Subscriptions, Terminals, TerminalRepository } from "@paydesk/core"
import { Kit, ManualClock } from "@paydesk/testkit"
import { SqlClient } from "effect/sql"
import { kitOn, lockWaits, targets, underLock } from "./PgHarness.js"

/** A merchant whose terminal converts on a schedule, with `count` live payments paid (roubles pending). */
const pendingRoubles = (count: number) =>
  Effect.gen(function*() {
    const merchant = yield* Kit.provisionMerchant({})
    const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
    yield* Terminals.updateSettings(principal, merchant.terminal.id, { conversionMode: "scheduled", conversionTime: "18:00" })
    const paid: Array<string> = []
    for (let i = 0; i < count; i++) {
      const { payment } = yield* Payments.create(principal, { amount: "1000", orderId: `conv-${i}` })
      yield* Payments.settle(payment.id, "paid")
      paid.push(payment.id)
    }
    return { merchant, principal, terminalId: merchant.terminal.id, paid }
  })

const balanceOf = (terminalId: string) => Effect.gen(function*() {
  return yield* (yield* LedgerRepository).balance(terminalId)
})

const nextConversionOf = (terminalId: string) => Effect.gen(function*() {
  return Option.getOrThrow(yield* (yield* TerminalRepository).get(terminalId)).nextConversionAt
})

/**
 * `credit` held at its ledger write (the table locked by another transaction), after it has read
 * the terminal; the switch of the terminal to instant comes meanwhile and must wait for it; then
 * `behind`, when given, queued behind the switch. Releases the table once all of them wait.
 */
const switchWhileCrediting = <A, E, R>(
  principal: Access.Principal,
  terminalId: string,
  credit: Effect.Effect<A, E, R>,
  behind?: Effect.Effect<A, E, R>
) =>
  underLock(
    (sql) => sql`LOCK TABLE ledger_entries IN SHARE MODE`,
    Effect.gen(function*() {
      const crediting = yield* Effect.forkChild(credit)
      yield* lockWaits(1)
      const toInstant = yield* Effect.forkChild(Terminals.updateSettings(principal, terminalId, { conversionMode: "instant" }))
      yield* lockWaits(2)
      const queued = behind === undefined ? undefined : yield* Effect.forkChild(behind)
      if (queued !== undefined) yield* lockWaits(3)
      return { crediting, toInstant, queued }
    })
  )

describe("Conversions on Postgres", () => {
  for (const target of targets) {
    it.live(`a payment confirmed while the terminal switches to instant is converted (postgres ${target.name})`, () =>
      Effect.gen(function*() {
        const { principal, terminalId } = yield* pendingRoubles(0)
        const { payment } = yield* Payments.create(principal, { amount: "1000", orderId: "race" })
        // The switch must wait for the credit, and then see its roubles pending.
        const { crediting, toInstant } = yield* switchWhileCrediting(principal, terminalId, Payments.settle(payment.id, "paid"))
        yield* Fiber.join(crediting)
        const terminal = yield* Fiber.join(toInstant)
        assert.strictEqual(terminal.conversionMode, "instant")
        assert.isNotNull(terminal.nextConversionAt)
        assert.strictEqual(yield* Terminals.runDueConversions(), 1)
        const balance = yield* balanceOf(terminalId)
        assert.strictEqual(balance.rubPending, 0n)
        assert.isTrue(balance.usdtAvailable > 0n)
        assert.isNull(yield* nextConversionOf(terminalId))
      }).pipe(Effect.provide(kitOn(target.url))), 60_000)

    it.live(`a confirmation that waited for a switch to instant credits in instant mode (postgres ${target.name})`, () =>
      Effect.gen(function*() {
        const { principal, terminalId } = yield* pendingRoubles(0)
        const { payment: first } = yield* Payments.create(principal, { amount: "1000", orderId: "in-flight" })
        const { payment: second } = yield* Payments.create(principal, { amount: "500", orderId: "behind-the-switch" })
        // A credit in flight (held at its ledger write), the switch waiting for it, and a second
        // confirmation queued behind the switch. The second must read the mode the switch wrote:
        // read in the statement that waited, it saw scheduled and left its roubles pending with no
        // conversion to come (an outside probe's rerun).
        const { crediting, toInstant, queued } = yield* switchWhileCrediting(
          principal,
          terminalId,
          Payments.settle(first.id, "paid"),
          Payments.settle(second.id, "paid")
        )
        yield* Fiber.join(crediting)
        assert.isNotNull((yield* Fiber.join(toInstant)).nextConversionAt)
        const paid = yield* Fiber.join(queued!)
        assert.isNotNull(paid.settlement?.usdt ?? null, "credited in instant mode, converted at once")
        assert.strictEqual((yield* balanceOf(terminalId)).rubPending, 1000_00n)
        assert.strictEqual(yield* Terminals.runDueConversions(), 1)
        assert.strictEqual((yield* balanceOf(terminalId)).rubPending, 0n)
      }).pipe(Effect.provide(kitOn(target.url))), 60_000)

    it.live(`a subscription charge booked while the terminal switches to instant is converted (postgres ${target.name})`, () =>
      Effect.gen(function*() {
        const clock = yield* ManualClock.make(Date.parse("2026-01-31T07:00:00.000Z"))
        return yield* Effect.provideService(
          Effect.gen(function*() {
            const { merchant, principal, terminalId } = yield* pendingRoubles(0)
            const plans = yield* Kit.provisionPlans(merchant.terminal.id)
            const { subscription } = yield* Subscriptions.create(principal, {
              idempotencyKey: "k", terminalId, planId: plans.ceilingMonthly.id, amount: "100"
            })
            const { firstPayment } = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
            yield* Payments.settle(Option.getOrThrow(firstPayment).id, "paid")
            yield* clock.set(Date.parse("2026-02-28T07:00:00.000Z"))
            const before = (yield* balanceOf(terminalId)).rubPending
            // The charge's booking is the credit held at its ledger write.
            const { crediting, toInstant } = yield* switchWhileCrediting(principal, terminalId, Subscriptions.runDueCharges())
            assert.strictEqual(yield* Fiber.join(crediting), 1)
            assert.isNotNull((yield* Fiber.join(toInstant)).nextConversionAt)
            assert.strictEqual((yield* balanceOf(terminalId)).rubPending, before + 100_00n)
            yield* Terminals.runDueConversions()
            assert.strictEqual((yield* balanceOf(terminalId)).rubPending, 0n)
          }),
          Clock.Clock,
          clock.clock
        )
      }).pipe(Effect.provide(kitOn(target.url))), 60_000)

    it.live(`a credit does not wait for a payout, a conversion or a settings change holding the terminal's row (postgres ${target.name})`, () =>
      Effect.gen(function*() {
        const { principal, terminalId } = yield* pendingRoubles(0)
        const { payment } = yield* Payments.create(principal, { amount: "1000", orderId: "busy" })
        // What Payouts.create, a conversion run or a settings change hold while they work.
        const settled = yield* underLock(
          (sql) => sql`SELECT 1 FROM terminals WHERE id = ${terminalId} FOR NO KEY UPDATE`,
          Payments.settle(payment.id, "paid").pipe(Effect.timeout("5 seconds"))
        )
        assert.strictEqual(settled.status, "paid")
        assert.strictEqual((yield* balanceOf(terminalId)).rubPending, 1000_00n)
      }).pipe(Effect.provide(kitOn(target.url))), 60_000)

    it.live(`getForCredit refuses to run outside a transaction, where its lock would hold nothing (postgres ${target.name})`, () =>
      Effect.gen(function*() {
        const { terminalId } = yield* pendingRoubles(0)
        const terminals = yield* TerminalRepository
        const outside = yield* Effect.exit(terminals.getForCredit(terminalId))
        assert.isTrue(outside._tag === "Failure" && String(outside.cause).includes("outside a transaction"))
        const sql = yield* SqlClient.SqlClient
        const inside = yield* sql.withTransaction(terminals.getForCredit(terminalId))
        assert.strictEqual(Option.getOrThrow(inside).id, terminalId)
      }).pipe(Effect.provide(kitOn(target.url))), 60_000)

    it.live(`a run that leaves payments behind converts them later, in instant mode too (postgres ${target.name})`, () =>
      Effect.gen(function*() {
        const { principal, terminalId, paid } = yield* pendingRoubles(4)
        yield* Terminals.updateSettings(principal, terminalId, { conversionMode: "instant" })
        // More than a run converts: the rest goes on at once.
        assert.strictEqual(yield* Terminals.runDueConversions({ perRun: 2 }), 2)
        const now = yield* Clock.currentTimeMillis
        const next = yield* nextConversionOf(terminalId)
        assert.isTrue(next !== null && next <= now, `next conversion ${next} is not due at ${now}`)
        // A payment another transaction holds is skipped, and tried again a minute later.
        const converted = yield* underLock(
          (sql) => sql`SELECT 1 FROM payments WHERE id = ${paid[3]!} FOR UPDATE`,
          Terminals.runDueConversions({ perRun: 2 })
        )
        assert.strictEqual(converted, 1)
        assert.strictEqual((yield* balanceOf(terminalId)).rubPending, 1000_00n)
        const retry = yield* nextConversionOf(terminalId)
        const at = yield* Clock.currentTimeMillis
        assert.isTrue(retry !== null && retry > at && retry <= at + Terminals.conversionRetryMs, `retry at ${retry}, now ${at}`)
        // A minute later (moved here in the database), it is converted and nothing more is scheduled.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE terminals SET next_conversion_at = now() - interval '1 second' WHERE id = ${terminalId}`
        assert.strictEqual(yield* Terminals.runDueConversions({ perRun: 2 }), 1)
        assert.strictEqual((yield* balanceOf(terminalId)).rubPending, 0n)
        assert.isNull(yield* nextConversionOf(terminalId))
      }).pipe(Effect.provide(kitOn(target.url))), 60_000)
  }
})
