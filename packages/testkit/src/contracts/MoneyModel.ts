/**
 * A model-based test of the money paths: fast-check drives the real use cases through random
 * interleavings — subscriptions of both plan modes created, consented and paid (or failed,
 * expired, paid late), due charges answered paid, failed, unknown or slowly (the answer held
 * while other commands run), stops at any moment (also while a bank call is in flight, failing
 * or unreachable), resumes, the bank settling unknown charges, one-off payments, refunds and
 * chargebacks, payouts approved or rejected, clock jumps across Moscow month ends, and two
 * workers running due work at once.
 *
 * After every command it checks the invariants: every charge the bank counts as paid has exactly
 * one paid payment and its ledger credit; no cycle is charged twice at the bank; a booked charge
 * agrees with the bank; `successful_cycles` counts the paid charges; available + hold is the sum
 * of what the ledger holds for each payment and payout, and hold is what active payouts hold;
 * every paid payment has exactly one `payment.paid`; subscriptions and payments only move along
 * their tables. At the end of each run no charge is left open without a way to finish: after the
 * held answers arrive and the bank settles every unknown charge, the background passes and the
 * operator's resume book them all. fast-check prints the seed and the shrunk commands of a failure.
 *
 * `suite(name, layer)` runs it on any store: the memory kit in the default run, PostgreSQL with
 * fewer runs.
 */
import { describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Fiber, Layer, Logger, ManagedRuntime, Option } from "effect"
import * as fc from "fast-check"
import {
  Acquirer,
  Amount,
  Config,
  ChargeRepository,
  Operator,
  Instant,
  LedgerRepository,
  OutboxRepository,
  Payment,
  PaymentRepository,
  Payments,
  PayoutRepository,
  Payouts,
  StateMachine,
  Subscription,
  SubscriptionRepository,
  Subscriptions,
  Work
} from "@paydesk/core"
import type { Charge, Payout, Services } from "@paydesk/core"
import { AcquirerEmulator, ManualClock } from "@paydesk/emulators"
import * as Kit from "../Kit.js"
import * as RecordingCallbackTransport from "../RecordingCallbackTransport.js"

/** What the suite needs: the service on some store, with the kit's emulators around it. */
export type Requirements = Services | Kit.Surroundings

/** 31 January 2026, 10:00 Moscow time: the next months end on the 28th, 31st, 30th. */
const start = Date.parse("2026-01-31T07:00:00.000Z")
const leaseMs = 60_000

type Runtime = ManagedRuntime.ManagedRuntime<Requirements, unknown>

/** A bank call in flight: its answer is held until released. */
interface Held {
  readonly subscriptionId: string
  readonly release: () => Promise<void>
  readonly done: Promise<unknown>
}

/**
 * How often the runs reached the situations the test exists for, summed over a suite's runs; the
 * suite fails if one was never reached (so the model cannot quietly stop exercising them).
 */
interface Coverage {
  /** A held bank answer arrived after the subscription began stopping. */
  answersAfterStop: number
  /** Charges booked paid on a subscription stopped before the booking. */
  paidAfterStop: number
  /** Charges booked `stop` (refused after the stop, or voided unsent). */
  stopCharges: number
  /** Charges the bank left unknown that were later booked. */
  unknownsSettled: number
  /** Subscriptions charged at least twice by schedule. */
  renewed: number
  /** Payouts completed. */
  payoutsCompleted: number
  /** Payments refunded or charged back. */
  reversed: number
  /** Subscriptions that stopped themselves at `max_cycles`. */
  cycleLimits: number
  /** Attempts voided at the bank (never sent before the stop). */
  voided: number
}

const emptyCoverage = (): Coverage => ({
  answersAfterStop: 0,
  paidAfterStop: 0,
  stopCharges: 0,
  unknownsSettled: 0,
  renewed: 0,
  payoutsCompleted: 0,
  reversed: 0,
  cycleLimits: 0,
  voided: 0
})

/** The system under test and what the test remembers of it. */
interface Real {
  readonly run: <A, E>(effect: Effect.Effect<A, E, Requirements>) => Promise<A>
  readonly fork: <A, E>(effect: Effect.Effect<A, E, Requirements>) => Fiber.Fiber<A, unknown>
  readonly clock: ManualClock.ManualClock
  readonly merchant: Kit.Merchant
  readonly plans: Kit.Plans
  readonly subs: Array<string>
  readonly oneOff: Array<string>
  readonly payouts: Array<string>
  readonly held: Array<Held>
  /** Unknown charges the bank settled since: key -> outcome. */
  readonly resolved: Map<string, "paid" | "failed">
  readonly seenSubscription: Map<string, Subscription.State>
  readonly seenPayment: Map<string, Payment.Status>
  readonly coverage: Coverage
  /** The plan with `max_cycles` 3 (ceiling, calendar months). */
  readonly limitedPlan: string
  /** Broken rules seen while commands ran (a new charge sent on a stopping subscription, a move off the spec's tables, an error logged). */
  readonly violations: Array<string>
  keys: number
}

/** What the commands need to know to apply. */
interface Model {
  subs: number
  oneOff: number
  payouts: number
  held: number
}

type Cmd = fc.AsyncCommand<Model, Real>

/** Runs `effect`; a failure whose tag is in `allowed` is an expected refusal, anything else fails the test. */
const attempt = async <A, E>(real: Real, effect: Effect.Effect<A, E, Requirements>, allowed: ReadonlyArray<string>): Promise<A | undefined> => {
  const result = await real.run(Effect.result(effect))
  if (result._tag === "Success") return result.success
  const tag = (result.failure as { _tag?: string })._tag ?? "?"
  if (allowed.includes(tag)) return undefined
  throw new Error(`unexpected ${tag}: ${String((result.failure as { message?: string }).message)}`)
}

const pick = <A>(items: ReadonlyArray<A>, i: number): A => items[i % items.length]!

const principal = (real: Real) => Kit.apiKeyPrincipal(real.merchant, crypto.randomUUID())

const subscription = (id: string) => Effect.map(Effect.flatMap(SubscriptionRepository, (r) => r.get(id)), Option.getOrThrow)

// ---------------------------------------------------------------------------------------------
// Commands

const simple = (
  name: string,
  applies: (m: Model) => boolean,
  body: (real: Real) => Promise<void>,
  update: (m: Model) => void = () => {}
): Cmd => ({
  check: applies,
  run: async (m, real) => {
    if (process.env["MONEY_MODEL_TRACE"] !== undefined) console.log(name)
    await body(real)
    update(m)
    syncHeld(m, real)
    await checkInvariants(real)
  },
  toString: () => name
})

const syncHeld = (m: Model, real: Real) => {
  m.held = real.held.length
}

const createSub = (mode: "ceiling" | "fixed" | "limited", amount: number) =>
  simple(`createSub(${mode}, ${amount})`, () => true, async (real) => {
    const key = `k-${++real.keys}`
    const planId = mode === "ceiling" ? real.plans.ceilingMonthly.id : mode === "fixed" ? real.plans.fixed30Days.id : real.limitedPlan
    const created = await real.run(Effect.flatMap(principal(real), (who) =>
      Subscriptions.create(who, {
        idempotencyKey: key,
        terminalId: real.merchant.terminal.id,
        planId,
        ...(mode === "fixed" ? { payerId: `payer-${key}` } : { amount: `${amount}.00` })
      })))
    real.subs.push(created.subscription.id)
  }, (m) => void m.subs++)

const confirm = (i: number) =>
  simple(`confirm(${i})`, (m) => m.subs > 0, async (real) => {
    const sub = await real.run(subscription(pick(real.subs, i)))
    await attempt(real, Subscriptions.confirm(sub.payToken, sub.csrfToken), [])
  })

const firstPayment = (i: number, outcome: Payments.Outcome) =>
  simple(`firstPayment(${i}, ${outcome})`, (m) => m.subs > 0, async (real) => {
    const sub = await real.run(subscription(pick(real.subs, i)))
    if (sub.firstPaymentId === null) return
    await attempt(real, Payments.settle(sub.firstPaymentId, outcome), ["InvalidTransition"])
  })

/** Consent and the first payment paid (through processing): the usual way to an active subscription. */
const activate = (i: number) =>
  simple(`activate(${i})`, (m) => m.subs > 0, async (real) => {
    const sub = await real.run(subscription(pick(real.subs, i)))
    await attempt(real, Subscriptions.confirm(sub.payToken, sub.csrfToken), [])
    const after = await real.run(subscription(sub.id))
    if (after.firstPaymentId === null) return
    await attempt(real, Payments.settle(after.firstPaymentId, "processing"), ["InvalidTransition"])
    await attempt(real, Payments.settle(after.firstPaymentId, "paid"), ["InvalidTransition"])
  })

const programCharges = (i: number, outcomes: ReadonlyArray<AcquirerEmulator.ChargeProgram>) =>
  simple(`programCharges(${i}, ${outcomes.join(",")})`, (m) => m.subs > 0, async (real) => {
    await real.run(Effect.flatMap(AcquirerEmulator.AcquirerEmulator, (e) => e.programCharges(pick(real.subs, i), outcomes)))
  })

const runDue = (workers: 1 | 2) =>
  simple(`runDue(${workers})`, () => true, async (real) => {
    await real.run(Effect.all(Array.from({ length: workers }, () => Work.runDue()), { concurrency: "unbounded" }))
  })

/** Charges subscription i (moving the clock to its due time) with the bank's answer held. */
const slowCharge = (i: number) =>
  simple(`slowCharge(${i})`, (m) => m.subs > 0, async (real) => {
    const id = pick(real.subs, i)
    const sub = await real.run(subscription(id))
    if (!Subscription.isChargeable(sub) || sub.nextChargeAt === null) return
    const now = await real.run(real.clock.now)
    if (sub.nextChargeAt > now) await real.run(real.clock.set(sub.nextChargeAt))
    const arrived = await real.run(Deferred.make<void>())
    const release = await real.run(Deferred.make<void>())
    const gated = Effect.map(Acquirer, (acquirer) =>
      Acquirer.of({
        ...acquirer,
        charge: (input) =>
          Effect.gen(function*() {
            const answer = yield* acquirer.charge(input)
            yield* Deferred.succeed(arrived, undefined)
            yield* Deferred.await(release)
            return answer
          })
      }))
    const fiber = real.fork(Effect.flatMap(gated, (acquirer) => Effect.provideService(Subscriptions.chargeOne(id), Acquirer, acquirer)))
    // Either the call reaches the bank (and waits there), or the charge ends without one (nothing was due).
    const reached = await real.run(Effect.raceFirst(Effect.as(Deferred.await(arrived), true), Effect.as(Fiber.await(fiber), false)))
    const done = real.run(Fiber.join(fiber))
    if (reached) real.held.push({ subscriptionId: id, release: () => real.run(Effect.asVoid(Deferred.succeed(release, undefined))), done })
    else await done
  })

/** The worker dies during subscription i's due charge, before the bank hears of it or after it charged. */
const crash = (i: number, when: "before" | "after") =>
  simple(`crash(${i}, ${when} the bank)`, (m) => m.subs > 0, async (real) => {
    const id = pick(real.subs, i)
    const sub = await real.run(subscription(id))
    if (!Subscription.isChargeable(sub) || sub.nextChargeAt === null) return
    const now = await real.run(real.clock.now)
    if (sub.nextChargeAt > now) await real.run(real.clock.set(sub.nextChargeAt))
    const dying = Effect.map(Acquirer, (acquirer) =>
      Acquirer.of({
        ...acquirer,
        charge: (input) =>
          Effect.gen(function*() {
            if (when === "after") yield* acquirer.charge(input)
            return yield* Effect.die("worker killed during the bank call")
          })
      }))
    const exit = await real.run(Effect.exit(Effect.flatMap(dying, (acquirer) => Effect.provideService(Subscriptions.chargeOne(id), Acquirer, acquirer))))
    if (exit._tag === "Failure" && !String(exit.cause).includes("worker killed")) throw new Error(`crash(${i}): ${String(exit.cause)}`)
  })

/** The worker dies during subscription i's charge and the merchant stops it before any pass retries. */
const crashThenStop = (i: number, when: "before" | "after") => {
  const dies = crash(i, when)
  const stopping = stop(i)
  return simple(`crashThenStop(${i}, ${when} the bank)`, (m) => m.subs > 0, async (real) => {
    await dies.run({ subs: real.subs.length, oneOff: 0, payouts: 0, held: 0 }, real)
    await stopping.run({ subs: real.subs.length, oneOff: 0, payouts: 0, held: 0 }, real)
  })
}

/** A stop lands while subscription i's charge is at the bank (the answer stays held for a later release). */
const stopDuringCall = (i: number, outcome: AcquirerEmulator.ChargeProgram) => {
  const program = programCharges(i, [outcome])
  const charge = slowCharge(i)
  const stopping = stop(i)
  return simple(`stopDuringCall(${i}, ${outcome})`, (m) => m.subs > 0, async (real) => {
    await program.run({ subs: real.subs.length, oneOff: 0, payouts: 0, held: 0 }, real)
    await charge.run({ subs: real.subs.length, oneOff: 0, payouts: 0, held: 0 }, real)
    await stopping.run({ subs: real.subs.length, oneOff: 0, payouts: 0, held: 0 }, real)
  })
}

const releaseHeld = (k: number) =>
  simple(`release(${k})`, (m) => m.held > 0, async (real) => {
    const [held] = real.held.splice(k % real.held.length, 1)
    if (Subscription.isStopping(await real.run(subscription(held!.subscriptionId)))) real.coverage.answersAfterStop++
    await held!.release()
    await held!.done
  })

const stop = (i: number) =>
  simple(`stop(${i})`, (m) => m.subs > 0, async (real) => {
    await attempt(real, Effect.flatMap(principal(real), (who) => Subscriptions.stop(who, pick(real.subs, i))), ["StopFailed"])
  })

const stopBehaviour = (i: number, outcome: "stopped" | "failed") =>
  simple(`stopBehaviour(${i}, ${outcome})`, (m) => m.subs > 0, async (real) => {
    await real.run(Effect.flatMap(AcquirerEmulator.AcquirerEmulator, (e) => e.programStop(pick(real.subs, i), outcome)))
  })

/** A stop while the acquirer cannot be reached: it stays `stop_pending` until a later pass finishes it. */
const stopWhileUnreachable = (i: number) =>
  simple(`stopWhileUnreachable(${i})`, (m) => m.subs > 0, async (real) => {
    const emulator = await real.run(AcquirerEmulator.AcquirerEmulator)
    await real.run(emulator.setUnavailable(true))
    try {
      await attempt(real, Effect.flatMap(principal(real), (who) => Subscriptions.stop(who, pick(real.subs, i))), ["StopFailed", "ProviderUnavailable"])
    } finally {
      await real.run(emulator.setUnavailable(false))
    }
  })

/** Charges subscription i's next three due cycles (a limited plan reaches its `max_cycles`). */
const renewThrice = (i: number) =>
  simple(`renewThrice(${i})`, (m) => m.subs > 0, async (real) => {
    for (let k = 0; k < 3; k++) {
      const sub = await real.run(subscription(pick(real.subs, i)))
      const now = await real.run(real.clock.now)
      if (sub.nextChargeAt !== null && sub.nextChargeAt > now) await real.run(real.clock.set(sub.nextChargeAt))
      await real.run(Work.runDue())
    }
  })

/** Moves the clock to subscription i's next charge and runs the due work there. */
const chargeDue = (i: number) =>
  simple(`chargeDue(${i})`, (m) => m.subs > 0, async (real) => {
    const sub = await real.run(subscription(pick(real.subs, i)))
    const now = await real.run(real.clock.now)
    if (sub.nextChargeAt !== null && sub.nextChargeAt > now) await real.run(real.clock.set(sub.nextChargeAt))
    await real.run(Work.runDue())
  })

/**
 * The operator resumes subscription i; refused only when it is not in `active/review`, its charge is
 * still unknown at the bank, or the review is a stop the bank refused (not charged on against the
 * merchant's stop: with `stopAgain`, the operator then stops it again, the bank now taking it).
 */
const resumeChecked = async (real: Real, id: string, stopAgain = false) => {
  const before = await real.run(subscription(id))
  const result = await real.run(Effect.result(Subscriptions.resume(id)))
  if (result._tag === "Success") return
  const tag = (result.failure as { _tag?: string })._tag
  const message = String((result.failure as { message?: string }).message)
  const stopRefused = message.endsWith("cannot be resumed: its stop failed; stop it again")
  const state = Subscription.stateOf(before)
  // Not in review at all: a move the state machine does not have (409); in review, refused for its reason.
  const expected = tag === "InvalidTransition"
    ? state !== "active/review" && state !== "new/review"
    : tag === "OperationNotAllowed" && (state === "new/review" || message === "the last charge is still unconfirmed by the acquirer" || stopRefused)
  if (!expected) throw new Error(`resume of ${state} refused: ${tag} ${message}`)
  if (stopRefused && stopAgain) {
    await real.run(Effect.flatMap(AcquirerEmulator.AcquirerEmulator, (emulator) => emulator.programStop(id, "stopped")))
    await real.run(Subscriptions.stopById(id))
  }
}

const resume = (i: number) =>
  simple(`resume(${i})`, (m) => m.subs > 0, async (real) => {
    await resumeChecked(real, pick(real.subs, i))
  })

/** The bank settles the unknown charges of subscription i. */
const resolveUnknown = (i: number, outcome: "paid" | "failed") =>
  simple(`resolveUnknown(${i}, ${outcome})`, (m) => m.subs > 0, async (real) => {
    const id = pick(real.subs, i)
    const emulator = await real.run(AcquirerEmulator.AcquirerEmulator)
    for (const record of emulator.charges) {
      if (record.subscriptionId !== id || bankOutcome(real, record) !== "unknown") continue
      await real.run(emulator.resolveCharge(record.idempotencyKey, outcome))
      real.resolved.set(record.idempotencyKey, outcome)
    }
  })

const oneOff = (rub: number, outcome: Payments.Outcome) =>
  simple(`oneOff(${rub}, ${outcome})`, () => true, async (real) => {
    const created = await attempt(real, Effect.flatMap(principal(real), (who) =>
      Payments.create(who, { amount: `${rub}`, orderId: `order-${++real.keys}` })), [])
    if (created === undefined) return
    real.oneOff.push(created.payment.id)
    await attempt(real, Payments.settle(created.payment.id, outcome), ["InvalidTransition"])
  }, (m) => void m.oneOff++)

/** The operator refunds or charges back a paid payment (one-off or of a subscription). */
const reverse = (k: number, kind: "refund" | "chargeback") =>
  simple(`${kind}(${k})`, () => true, async (real) => {
    const paid = (await listPayments(real)).filter((p) => p.status === "paid")
    if (paid.length === 0) return
    const payment = pick(paid, k)
    await attempt(real, kind === "refund" ? Payments.refund(payment.id) : Payments.chargeback(payment.id), ["InvalidTransition"])
  })

const payout = (thousandths: number) =>
  simple(`payout(${thousandths}/1000 of available)`, () => true, async (real) => {
    const balance = await real.run(Effect.flatMap(LedgerRepository, (l) => l.balance(real.merchant.terminal.id)))
    const amount = (balance.usdtAvailable * BigInt(thousandths)) / 1000n
    if (amount <= 0n) return
    const created = await attempt(real, Effect.flatMap(principal(real), (who) =>
      Payouts.create(who, {
        amountUsdt: `${amount / 1_000_000n}.${(amount % 1_000_000n).toString().padStart(6, "0")}`,
        walletAddress: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE",
        network: "TRC-20",
        idempotencyKey: `po-${++real.keys}`
      })), ["InsufficientBalance", "MaxActivePayouts"])
    if (created !== undefined) real.payouts.push(created.payout.id)
  }, (m) => void m.payouts++)

const decidePayout = (k: number, decision: "approve" | "reject") =>
  simple(`${decision}Payout(${k})`, (m) => m.payouts > 0, async (real) => {
    if (real.payouts.length === 0) return
    const id = pick(real.payouts, k)
    // A negative available balance (a refund after a payout) blocks approval (docs/decisions.md, Security).
    await attempt(real, decision === "approve" ? Payouts.approve(id) : Payouts.reject(id, null), ["InvalidTransition", "InsufficientBalance"])
  })

type Jump = "lease" | "expiry" | "day" | "monthEnd" | "nextCharge" | "month"

const jump = (kind: Jump) =>
  simple(`jump(${kind})`, () => true, async (real) => {
    const now = await real.run(real.clock.now)
    let to = now
    switch (kind) {
      case "lease":
        to = now + leaseMs + 1_000
        break
      case "expiry":
        to = now + 31 * 60_000
        break
      case "day":
        to = now + Instant.DAY_MS
        break
      case "month":
        to = now + 31 * Instant.DAY_MS
        break
      case "monthEnd": {
        // 23:59:59 Moscow time on the last day of the current Moscow month, else one second past it.
        const msk = new Date(now + 3 * 3_600_000)
        const last = Date.UTC(msk.getUTCFullYear(), msk.getUTCMonth() + 1, 0, 23, 59, 59) - 3 * 3_600_000
        to = last > now ? last : now + 1_000
        break
      }
      case "nextCharge": {
        const due = await real.run(Effect.forEach(real.subs, (id) => Effect.map(subscription(id), (s) => s.nextChargeAt)))
        const next = due.filter((t): t is number => t !== null && t > now).sort((a, b) => a - b)[0]
        to = next ?? now
        break
      }
    }
    await real.run(real.clock.set(to))
  })

type Race =
  | { readonly kind: "stopDuringCall"; readonly outcome: AcquirerEmulator.ChargeProgram }
  | { readonly kind: "crashThenStop"; readonly when: "before" | "after" }

/**
 * A new subscription, activated, then a stop racing its first due charge: a stop while the bank
 * call is in flight (the answer held for a later release), or a worker dying around the call and
 * the merchant stopping before any pass retries (an unsent attempt is then voided). The random
 * commands reach these only when an active subscription happens to be due; this one always does.
 */
const freshRace = (mode: "ceiling" | "fixed", race: Race) => {
  const label = race.kind === "stopDuringCall" ? `${race.kind}(${race.outcome})` : `${race.kind}(${race.when})`
  return simple(`freshRace(${mode}, ${label})`, () => true, async (real) => {
    const model = () => ({ subs: real.subs.length, oneOff: 0, payouts: 0, held: 0 })
    await createSub(mode, 500).run(model(), real)
    const i = real.subs.length - 1
    await activate(i).run(model(), real)
    const racing = race.kind === "stopDuringCall" ? stopDuringCall(i, race.outcome) : crashThenStop(i, race.when)
    await racing.run(model(), real)
  }, (m) => void m.subs++)
}

/** A paid one-off payment, a payout of half the available balance, submitted, approved and sent. */
const payoutRound = (rub: number) =>
  simple(`payoutRound(${rub})`, () => true, async (real) => {
    const model = () => ({ subs: real.subs.length, oneOff: real.oneOff.length, payouts: real.payouts.length, held: 0 })
    await oneOff(rub, "paid").run(model(), real)
    const before = real.payouts.length
    await payout(500).run(model(), real)
    if (real.payouts.length === before) return
    await runDue(1).run(model(), real)
    await decidePayout(real.payouts.length - 1, "approve").run(model(), real)
    await runDue(1).run(model(), real)
  }, (m) => {
    m.oneOff++
    m.payouts++
  })

/** A new subscription of the plan with `max_cycles` 3, activated and charged until it stops itself. */
const renewToLimit = (amount: number) =>
  simple(`renewToLimit(${amount})`, () => true, async (real) => {
    const model = () => ({ subs: real.subs.length, oneOff: 0, payouts: 0, held: 0 })
    await createSub("limited", amount).run(model(), real)
    const i = real.subs.length - 1
    await activate(i).run(model(), real)
    await renewThrice(i).run(model(), real)
  }, (m) => void m.subs++)

/** A paid one-off payment, then refunded or charged back by the operator. */
const reversal = (rub: number, kind: "refund" | "chargeback") =>
  simple(`reversal(${rub}, ${kind})`, () => true, async (real) => {
    await oneOff(rub, "paid").run({ subs: real.subs.length, oneOff: real.oneOff.length, payouts: 0, held: 0 }, real)
    const id = real.oneOff.at(-1)!
    await attempt(real, kind === "refund" ? Payments.refund(id) : Payments.chargeback(id), ["InvalidTransition"])
  }, (m) => void m.oneOff++)

/** Whole situations in one command (for stores that afford few runs): the ones the random commands reach only by luck. */
const scenarios = fc.oneof(
  fc.integer({ min: 100, max: 50_000 }).map(payoutRound),
  fc.integer({ min: 1, max: 4000 }).map(renewToLimit),
  fc.tuple(fc.integer({ min: 1, max: 50_000 }), fc.constantFrom("refund" as const, "chargeback" as const)).map(([rub, kind]) => reversal(rub, kind))
)

/**
 * One of each situation the coverage counts, with random parameters: a stop during the bank call
 * for each answer (paid, failed, unknown), a crash before the bank then a stop (its attempt voided),
 * a payout sent, a plan's `max_cycles` reached, a payment reversed. Runs that start with them
 * (`opening: true`) reach every situation whatever the random commands that follow do.
 */
const openingOf = fc.tuple(
  fc.constantFrom("ceiling" as const, "fixed" as const),
  fc.integer({ min: 100, max: 50_000 }),
  fc.integer({ min: 1, max: 4000 }),
  fc.constantFrom("refund" as const, "chargeback" as const)
).map(([mode, rub, amount, kind]) => [
  freshRace(mode, { kind: "stopDuringCall", outcome: "paid" }),
  freshRace(mode, { kind: "stopDuringCall", outcome: "failed" }),
  freshRace(mode, { kind: "stopDuringCall", outcome: "unknown" }),
  freshRace(mode, { kind: "crashThenStop", when: "before" }),
  payoutRound(rub),
  renewToLimit(amount),
  reversal(rub, kind)
])

const races = fc.tuple(
  fc.constantFrom("ceiling" as const, "fixed" as const),
  fc.oneof(
    fc.constantFrom<AcquirerEmulator.ChargeProgram>("paid", "failed", "unknown").map((outcome): Race => ({ kind: "stopDuringCall", outcome })),
    fc.constantFrom("before" as const, "after" as const).map((when): Race => ({ kind: "crashThenStop", when }))
  )
).map(([mode, race]) => freshRace(mode, race))

const commands = [
  fc.tuple(fc.constantFrom("ceiling" as const, "fixed" as const, "limited" as const), fc.integer({ min: 1, max: 4000 }))
    .map(([mode, amount]) => createSub(mode, amount)),
  fc.nat().map(activate),
  fc.nat().map(activate),
  fc.nat().map(confirm),
  fc.tuple(fc.nat(), fc.constantFrom<Payments.Outcome>("processing", "paid", "paid", "failed")).map(([i, o]) => firstPayment(i, o)),
  fc.tuple(fc.nat(), fc.array(fc.constantFrom<AcquirerEmulator.ChargeProgram>("paid", "failed", "unknown"), { minLength: 1, maxLength: 3 }))
    .map(([i, o]) => programCharges(i, o)),
  fc.constantFrom<1 | 2>(1, 2).map(runDue),
  fc.constantFrom<1 | 2>(1, 2).map(runDue),
  fc.nat().map(slowCharge),
  fc.tuple(fc.nat(), fc.constantFrom<AcquirerEmulator.ChargeProgram>("paid", "failed", "unknown")).map(([i, o]) => stopDuringCall(i, o)),
  fc.tuple(fc.nat(), fc.constantFrom<AcquirerEmulator.ChargeProgram>("paid", "failed", "unknown")).map(([i, o]) => stopDuringCall(i, o)),
  fc.nat().map(releaseHeld),
  fc.nat().map(releaseHeld),
  fc.tuple(fc.nat(), fc.constantFrom("before" as const, "after" as const)).map(([i, when]) => crash(i, when)),
  fc.tuple(fc.nat(), fc.constantFrom("before" as const, "after" as const)).map(([i, when]) => crashThenStop(i, when)),
  fc.tuple(fc.nat(), fc.constantFrom("before" as const, "after" as const)).map(([i, when]) => crashThenStop(i, when)),
  fc.nat().map(stop),
  fc.tuple(fc.nat(), fc.constantFrom("stopped" as const, "failed" as const)).map(([i, o]) => stopBehaviour(i, o)),
  fc.nat().map(stopWhileUnreachable),
  fc.nat().map(chargeDue),
  fc.nat().map(renewThrice),
  fc.nat().map(renewThrice),
  fc.nat().map(resume),
  fc.tuple(fc.nat(), fc.constantFrom("paid" as const, "failed" as const)).map(([i, o]) => resolveUnknown(i, o)),
  fc.tuple(fc.integer({ min: 1, max: 50_000 }), fc.constantFrom<Payments.Outcome>("paid", "paid", "failed", "processing")).map(([rub, o]) => oneOff(rub, o)),
  fc.tuple(fc.nat(), fc.constantFrom("refund" as const, "chargeback" as const)).map(([k, kind]) => reverse(k, kind)),
  fc.integer({ min: 1, max: 1000 }).map(payout),
  fc.tuple(fc.nat(), fc.constantFrom("approve" as const, "reject" as const)).map(([k, d]) => decidePayout(k, d)),
  fc.constantFrom<Jump>("lease", "expiry", "day", "monthEnd", "nextCharge", "nextCharge", "month").map(jump)
]

// ---------------------------------------------------------------------------------------------
// The spec's tables, written here apart from the code's own machines, checked on every write

/** `billing_status` moves of the spec (and of docs/decisions.md: resume out of review). */
const specBilling: Record<Subscription.BillingStatus, ReadonlyArray<Subscription.BillingStatus>> = {
  consent_pending: ["pending", "stop_pending"],
  pending: ["enabled", "review", "stop_pending"],
  enabled: ["review", "stop_pending"],
  review: ["enabled", "stop_pending"],
  stop_pending: ["stopped", "review"],
  stopped: []
}

/** Payment moves of the spec (refund and chargeback from paid: docs/decisions.md). */
const specPayment: Record<Payment.Status, ReadonlyArray<Payment.Status>> = {
  created: ["processing", "expired"],
  processing: ["paid", "canceled", "expired"],
  expired: ["paid"],
  paid: ["refunded", "chargeback"],
  canceled: [],
  refunded: [],
  chargeback: []
}

/** True when one write may take `from` to `to` along `table` (a use case may make several moves in one write). */
const reaches = <S extends string>(table: Record<S, ReadonlyArray<S>>, from: S, to: S): boolean => {
  const seen = new Set<S>([from])
  const queue = [from]
  while (queue.length > 0) {
    for (const next of table[queue.shift()!]) {
      if (!seen.has(next)) {
        seen.add(next)
        queue.push(next)
      }
    }
  }
  return seen.has(to)
}

/** The binding state that goes with a billing status after activation (`new` before it). */
const providerFits = (s: Pick<Subscription.Subscription, "providerState" | "billingStatus" | "activatedAt">): boolean =>
  s.billingStatus === "stopped"
    ? s.providerState === "stop"
    : s.providerState === (s.activatedAt === null ? "new" : "active")

/**
 * The services the use cases run on, watched: every subscription and payment write is checked
 * against the spec's tables, and a recurring charge the bank has not seen yet must not be sent for
 * a subscription that is stopping or stopped (stopping ends new charges; only a call already at
 * the bank may still be answered).
 */
const watched = (base: {
  readonly acquirer: Acquirer["Service"]
  readonly subscriptions: SubscriptionRepository["Service"]
  readonly payments: PaymentRepository["Service"]
  readonly emulator: AcquirerEmulator.AcquirerEmulator["Service"]
}, violations: Array<string>) => ({
  acquirer: Acquirer.of({
    ...base.acquirer,
    charge: (input) =>
      Effect.gen(function*() {
        const fresh = !base.emulator.charges.some((c) => c.idempotencyKey === input.idempotencyKey)
        const sub = yield* base.subscriptions.get(input.subscriptionId)
        if (fresh && Option.isSome(sub) && Subscription.isStopping(sub.value)) {
          violations.push(`a new charge ${input.idempotencyKey} was sent for a ${Subscription.stateOf(sub.value)} subscription`)
        }
        return yield* base.acquirer.charge(input)
      })
  }),
  subscriptions: SubscriptionRepository.of({
    ...base.subscriptions,
    update: (next) =>
      Effect.gen(function*() {
        const prev = yield* base.subscriptions.get(next.id)
        if (Option.isSome(prev) && !reaches(specBilling, prev.value.billingStatus, next.billingStatus)) {
          violations.push(`subscription ${next.id}: ${prev.value.billingStatus} -> ${next.billingStatus} is not in the spec's table`)
        }
        if (Option.isSome(prev) && prev.value.providerState === "active" && next.providerState === "new") {
          violations.push(`subscription ${next.id}: binding went back from active to new`)
        }
        if (!providerFits(next)) violations.push(`subscription ${next.id}: ${Subscription.stateOf(next)} with activated_at ${next.activatedAt}`)
        return yield* base.subscriptions.update(next)
      })
  }),
  payments: PaymentRepository.of({
    ...base.payments,
    update: (next) =>
      Effect.gen(function*() {
        const prev = yield* base.payments.get(next.id)
        if (Option.isSome(prev) && !reaches(specPayment, prev.value.status, next.status)) {
          violations.push(`payment ${next.id}: ${prev.value.status} -> ${next.status} is not in the spec's table`)
        }
        return yield* base.payments.update(next)
      })
  })
})

// ---------------------------------------------------------------------------------------------
// Invariants

const fail = (message: string): never => {
  throw new Error(`invariant: ${message}`)
}

/** The bank's current outcome of a recorded charge (its first answer, or how it settled an unknown one since). */
const bankOutcome = (real: Real, record: AcquirerEmulator.ChargeRecord): "paid" | "failed" | "unknown" => {
  const settled = real.resolved.get(record.idempotencyKey)
  if (settled !== undefined) return settled
  return record.outcome._tag === "Paid" ? "paid" : record.outcome._tag === "Failed" ? "failed" : "unknown"
}

const listPayments = (real: Real) =>
  real.run(Effect.map(
    Effect.flatMap(PaymentRepository, (r) => r.list({ terminalId: real.merchant.terminal.id, environment: "all", recurring: null }, { limit: 100_000, offset: 0 })),
    (page) => page.items
  ))

/** States reachable from `from` along a machine's table (itself included). */
const reachable = <S extends string, E extends string, C extends string>(machine: StateMachine.Machine<S, E, C>, from: S): Set<S> => {
  const seen = new Set<S>([from])
  const queue = [from]
  const edges = StateMachine.edges(machine)
  while (queue.length > 0) {
    const state = queue.shift()!
    for (const edge of edges) {
      if (edge.from === state && !seen.has(edge.to)) {
        seen.add(edge.to)
        queue.push(edge.to)
      }
    }
  }
  return seen
}

const usdtOf = (entries: ReadonlyArray<{ readonly currency: string; readonly amount: bigint }>): bigint =>
  entries.filter((e) => e.currency === "USDT").reduce((sum, e) => sum + e.amount, 0n)

const checkInvariants = async (real: Real): Promise<void> => {
  if (real.violations.length > 0) fail(real.violations.join("; "))
  const emulator = await real.run(AcquirerEmulator.AcquirerEmulator)
  const payments = await listPayments(real)
  const byId = new Map(payments.map((p) => [p.id, p]))
  const bankRecords = emulator.charges.filter((c) => real.subs.includes(c.subscriptionId))
  const bankPaidKeys = new Set(bankRecords.filter((r) => bankOutcome(real, r) === "paid").map((r) => r.idempotencyKey))

  // No cycle of a subscription is paid twice at the bank.
  const paidCycles = new Set<string>()
  for (const record of bankRecords) {
    if (!bankPaidKeys.has(record.idempotencyKey)) continue
    const cycle = `${record.subscriptionId}#${record.cycleNumber}`
    if (paidCycles.has(cycle)) fail(`cycle ${cycle} paid twice at the bank`)
    paidCycles.add(cycle)
  }

  const usedPayments = new Set<string>()
  for (const id of real.subs) {
    const sub = await real.run(subscription(id))
    const state = Subscription.stateOf(sub)
    const before = real.seenSubscription.get(id) ?? "new/consent_pending"
    if (!reachable(Subscription.machine, before).has(state)) fail(`subscription ${id} moved ${before} -> ${state} off its table`)
    real.seenSubscription.set(id, state)
    const charges: ReadonlyArray<Charge.Charge> = await real.run(Effect.flatMap(ChargeRepository, (r) => r.listBySubscription(id, 10_000)))
    const payed = charges.filter((c) => c.status === "payed")
    if (sub.successfulCycles !== payed.length) fail(`subscription ${id}: successful_cycles ${sub.successfulCycles}, paid charges ${payed.length}`)
    if (new Set(payed.map((c) => c.cycleNumber)).size !== payed.length) fail(`subscription ${id}: a cycle booked paid twice`)
    for (const charge of payed) {
      const payment = charge.paymentId === null ? undefined : byId.get(charge.paymentId)
      if (payment === undefined) fail(`paid charge ${charge.id} without its payment`)
      if (usedPayments.has(payment!.id)) fail(`payment ${payment!.id} booked for two charges`)
      usedPayments.add(payment!.id)
      if (payment!.subscriptionId !== id || payment!.amount !== charge.amount) fail(`payment ${payment!.id} does not match charge ${charge.id}`)
      if (!["paid", "refunded", "chargeback"].includes(payment!.status)) fail(`payment ${payment!.id} of a paid charge is ${payment!.status}`)
      if (charge.kind === "recurring" && !bankPaidKeys.has(charge.idempotencyKey)) fail(`charge ${charge.id} booked paid, the bank did not take the money`)
    }
    for (const charge of charges) {
      if (charge.kind !== "recurring" || !bankPaidKeys.has(charge.idempotencyKey)) continue
      if (charge.status !== "payed" && charge.status !== "pending" && charge.status !== "unconfirmed") {
        fail(`charge ${charge.id} booked ${charge.status}, the bank took the money`)
      }
    }
    // Every charge the bank took for this subscription is booked paid, or still open (in flight or awaiting settlement).
    for (const key of bankPaidKeys) {
      const record = bankRecords.find((r) => r.idempotencyKey === key)!
      if (record.subscriptionId !== id) continue
      const booked = charges.filter((c) => c.idempotencyKey === key)
      if (booked.length !== 1) fail(`bank charge ${key} has ${booked.length} attempts`)
    }
  }

  // Payments move along their table; every paid payment has exactly one payment.paid.
  const events = await real.run(Effect.flatMap(OutboxRepository, (o) => o.listEvents({ terminalId: real.merchant.terminal.id })))
  const now = await real.run(real.clock.now)
  for (const payment of payments) {
    const before = real.seenPayment.get(payment.id)
    const from = before === undefined ? Payment.machine.initial : [before]
    if (!from.some((state) => reachable(Payment.machine, state).has(payment.status))) {
      fail(`payment ${payment.id} moved ${before ?? "(new)"} -> ${payment.status} off its table`)
    }
    real.seenPayment.set(payment.id, payment.status)
    // Events are kept for the retention window (30 days) only; older ones are purged.
    if ((payment.paidAt ?? payment.createdAt) < now - Config.defaults.eventRetentionMs) continue
    const paidEvents = events.filter((e) => e.paymentId === payment.id && e.eventType === "payment.paid").length
    const wasPaid = payment.paidAt !== null
    if (paidEvents !== (wasPaid ? 1 : 0)) fail(`payment ${payment.id} (${payment.status}) has ${paidEvents} payment.paid`)
  }

  // The ledger: a paid live payment is credited once, its merchant amount converted at its rate
  // (instant mode); a refund or chargeback takes back exactly that; nothing else holds money.
  const ledger = await real.run(LedgerRepository)
  const termsOf = new Map<string, bigint>()
  for (const id of real.subs) termsOf.set(id, (await real.run(subscription(id))).terms.merchantAmount)
  let expected = 0n
  for (const payment of payments) {
    const entries = await real.run(ledger.entriesFor(payment.id))
    const net = usdtOf(entries)
    const credits = entries.filter((e) => e.kind === "payment_credit")
    if (entries.some((e) => e.currency === "RUB")) fail(`payment ${payment.id} has rouble entries in instant mode`)
    const everPaid = payment.paidAt !== null
    if (!everPaid) {
      if (entries.length > 0 || payment.settlement !== null) fail(`unpaid payment ${payment.id} (${payment.status}) touched the ledger`)
      continue
    }
    const settlement = payment.settlement
    if (settlement === null || settlement.usdt === null || settlement.rate === null) fail(`paid payment ${payment.id} has no settlement`)
    const merchantAmount = payment.subscriptionId === null ? payment.amount : termsOf.get(payment.subscriptionId)
    if (settlement!.merchantAmount !== merchantAmount) fail(`payment ${payment.id} credits ${settlement!.merchantAmount}, expected ${merchantAmount}`)
    if (settlement!.usdt !== Amount.rubToUsdt(settlement!.merchantAmount, settlement!.rate!)) fail(`payment ${payment.id} converted wrongly`)
    if (credits.length !== 1 || credits[0]!.amount !== settlement!.usdt) fail(`payment ${payment.id} has ${credits.length} credits`)
    const reversals = entries.filter((e) => e.kind === "refund" || e.kind === "chargeback")
    const wanted = payment.status === "paid" ? settlement!.usdt! : 0n
    if (net !== wanted || reversals.length !== (payment.status === "paid" ? 0 : 1)) {
      fail(`payment ${payment.id} (${payment.status}) holds ${net} micro-USDT in the ledger, expected ${wanted}`)
    }
    expected += net
  }
  let held = 0n
  for (const id of real.payouts) {
    const found: Payout.Payout = Option.getOrThrow(await real.run(Effect.flatMap(PayoutRepository, (r) => r.get(id))))
    const net = usdtOf(await real.run(ledger.entriesFor(id)))
    const wanted = found.status === "completed" ? -found.amountUsdt : 0n
    if (net !== wanted) fail(`payout ${id} (${found.status}) nets ${net}, expected ${wanted}`)
    expected += net
    if (found.status === "created" || found.status === "pending" || found.status === "processing") held += found.amountUsdt
  }
  const balance = await real.run(ledger.balance(real.merchant.terminal.id))
  if (balance.usdtHold !== held) fail(`hold ${balance.usdtHold}, active payouts hold ${held}`)
  if (balance.usdtAvailable + balance.usdtHold !== expected) {
    fail(`available ${balance.usdtAvailable} + hold ${balance.usdtHold} is not the ledger's ${expected}`)
  }
}

/** Lets every held answer arrive, the bank settle what it left unknown, and the passes and resume finish. */
const finish = async (real: Real): Promise<void> => {
  for (const held of real.held.splice(0)) {
    if (Subscription.isStopping(await real.run(subscription(held.subscriptionId)))) real.coverage.answersAfterStop++
    await held.release()
    await held.done
  }
  const emulator = await real.run(AcquirerEmulator.AcquirerEmulator)
  await real.run(emulator.setUnavailable(false))
  // Long enough for every open attempt of a stopping subscription to be asked again: one the bank
  // did not know about for long rests up to a day (`Subscriptions.voidBackoff`).
  const settle = async () => {
    await real.run(real.clock.adjust(Subscriptions.maxVoidWaitMs + leaseMs))
    await real.run(Work.drain())
  }
  await settle()
  await checkInvariants(real)
  // What is still open has a way to finish: the operator's resume (review) or the bank's later answer (unknown).
  const open = async () => {
    const result: Array<{ readonly charge: Charge.Charge; readonly state: Subscription.State }> = []
    for (const id of real.subs) {
      const sub = await real.run(subscription(id))
      const charges = await real.run(Effect.flatMap(ChargeRepository, (r) => r.listBySubscription(id, 10_000)))
      for (const charge of charges) {
        if (charge.status === "pending" || charge.status === "unconfirmed") result.push({ charge, state: Subscription.stateOf(sub) })
      }
    }
    return result
  }
  for (const { charge, state } of await open()) {
    const record = emulator.charges.find((r) => r.idempotencyKey === charge.idempotencyKey)
    const unknownAtBank = record !== undefined && bankOutcome(real, record) === "unknown"
    if (state !== "active/review" && !unknownAtBank) fail(`charge ${charge.id} (${charge.status}) of a ${state} subscription has no way to finish`)
  }
  // The bank answers everything it left unknown; the operator resumes what is in review (and stops
  // again what is in review because the bank refused its stop). Resumed
  // subscriptions may be charged again at once (programmed answers included), so repeat until quiet.
  for (let round = 0; round < 20 && (await open()).length > 0; round++) {
    for (const record of emulator.charges) {
      if (real.subs.includes(record.subscriptionId) && bankOutcome(real, record) === "unknown") {
        await real.run(emulator.resolveCharge(record.idempotencyKey, "paid"))
        real.resolved.set(record.idempotencyKey, "paid")
      }
    }
    for (const id of real.subs) await resumeChecked(real, id, true)
    await settle()
    await checkInvariants(real)
  }
  const left = await open()
  if (left.length > 0) fail(`charges still open after the bank answered everything: ${left.map((o) => `${o.charge.status}@${o.state}`).join(", ")}`)
  await checkInvariants(real)
  // What this run reached.
  for (const id of real.subs) {
    const sub = await real.run(subscription(id))
    const charges = await real.run(Effect.flatMap(ChargeRepository, (r) => r.listBySubscription(id, 10_000)))
    real.coverage.stopCharges += charges.filter((c) => c.status === "stop").length
    real.coverage.paidAfterStop += charges.filter((c) => c.status === "payed" && sub.stoppedAt !== null && c.updatedAt >= sub.stoppedAt && c.kind === "recurring").length
    real.coverage.unknownsSettled += charges.filter((c) => real.resolved.has(c.idempotencyKey) && c.status !== "unconfirmed").length
    if (charges.filter((c) => c.kind === "recurring" && c.status === "payed").length >= 2) real.coverage.renewed++
    if (sub.planId === real.limitedPlan && sub.successfulCycles === 3 && sub.billingStatus === "stopped") real.coverage.cycleLimits++
  }
  for (const payment of await listPayments(real)) if (payment.status === "refunded" || payment.status === "chargeback") real.coverage.reversed++
  real.coverage.voided += emulator.voids.length
  for (const id of real.payouts) {
    const found = await real.run(Effect.flatMap(PayoutRepository, (r) => r.get(id)))
    if (Option.isSome(found) && found.value.status === "completed") real.coverage.payoutsCompleted++
  }
  // Every paid payment's callback went out once.
  const requests = (await real.run(RecordingCallbackTransport.RecordingCallbackTransport)).requests
  const paidBodies = requests.map((r) => JSON.parse(r.body) as { event_type: string; payment_id: string }).filter((b) => b.event_type === "payment.paid")
  for (const payment of await listPayments(real)) {
    const count = paidBodies.filter((b) => b.payment_id === `pay_${payment.id}`).length
    if (count !== (payment.paidAt === null ? 0 : 1)) fail(`payment ${payment.id} got ${count} payment.paid callbacks`)
  }
}

/** Options of a suite: fast-check runs and the longest command sequence. */
export interface Options {
  readonly numRuns: number
  readonly maxCommands: number
  readonly timeout?: number
  /** Fail when a situation of `Coverage` was never reached (default true). */
  readonly requireCoverage?: boolean
  /**
   * Extra weight of `freshRace` (a new active subscription whose due charge races a stop): that
   * many more copies of it among the commands (default 0: one copy, as any command). A store
   * that affords few runs raises it so that every run meets the races.
   */
  readonly raceWeight?: number
  /**
   * Weight of whole scenarios (a payout approved and sent; a limited subscription charged to its
   * `max_cycles`; a payment refunded or charged back), default 0: not among the commands. For
   * stores that afford few runs.
   */
  readonly scenarioWeight?: number
  /**
   * Every run opens with one of each situation of the coverage (`freshRace` for each bank answer
   * and for a crash, a payout sent, `max_cycles` reached, a reversal; random parameters) before its
   * random commands, so the coverage does not depend on luck. Default false.
   */
  readonly opening?: boolean
}

/** Registers the model-based test of the money paths on `layer` (a fresh runtime per run). */
export const suite = <E>(name: string, layer: Layer.Layer<Requirements, E>, options: Options): void => {
  describe(`Money paths under random interleavings (${name})`, () => {
    it("every charge the bank takes is booked once, nothing is charged twice, balances add up, states follow the tables", async () => {
      const coverage = emptyCoverage()
      const weighted = [
        ...commands,
        races,
        ...Array.from({ length: options.raceWeight ?? 0 }, () => races),
        ...Array.from({ length: options.scenarioWeight ?? 0 }, () => scenarios)
      ]
      const missing = () => Object.entries(coverage).filter(([, count]) => count === 0).map(([what]) => what)
      // Batches of random runs until every situation was reached (at most three batches): a batch
      // that by chance misses one does not fail, a model that stopped reaching it does.
      let batches = 0
      do {
        batches++
        await fc.assert(
          fc.asyncProperty(fc.commands(weighted, { maxCommands: options.maxCommands, size: "max" }), options.opening === true ? openingOf : fc.constant([]), async (cmds, opening) => {
            const violations: Array<string> = []
            // Any error a use case or a background pass logs is a failure of the run.
            const errors = Logger.make((entry) => {
              if (entry.logLevel === "Error" || entry.logLevel === "Fatal") violations.push(`error logged: ${String(entry.message)}`)
            })
            const runtime: Runtime = ManagedRuntime.make(Layer.merge(layer, Logger.layer([errors])))
            try {
              const clock = await runtime.runPromise(ManualClock.make(start))
              const base = await runtime.runPromise(Effect.all({
                acquirer: Acquirer,
                subscriptions: SubscriptionRepository,
                payments: PaymentRepository,
                emulator: AcquirerEmulator.AcquirerEmulator
              }))
              const services = watched(base, violations)
              const provide = <A, E2>(effect: Effect.Effect<A, E2, Requirements>) =>
                effect.pipe(
                  Effect.provideService(Acquirer, services.acquirer),
                  Effect.provideService(SubscriptionRepository, services.subscriptions),
                  Effect.provideService(PaymentRepository, services.payments),
                  Effect.provideService(Clock.Clock, clock.clock)
                )
              const run = <A, E2>(effect: Effect.Effect<A, E2, Requirements>) => runtime.runPromise(provide(effect))
              const fork = <A, E2>(effect: Effect.Effect<A, E2, Requirements>) => runtime.runFork(provide(effect))
              const merchant = await run(Kit.provisionMerchant({ callbackUrl: "https://shop.example/callbacks" }))
              const plans = await run(Kit.provisionPlans(merchant.terminal.id, { maxCycles: null }))
              const limited = await run(Operator.createPlan({
                terminalIds: [merchant.terminal.id],
                code: `limited-${merchant.terminal.id.slice(0, 8)}`,
                name: "Three months",
                interval: "month",
                capAmountRub: "4000",
                maxCycles: 3,
                consentText: "Согласен на три списания",
                policyVersion: "1"
              }))
              const real: Real = {
                run,
                fork,
                clock,
                merchant,
                plans,
                subs: [],
                oneOff: [],
                payouts: [],
                held: [],
                resolved: new Map(),
                seenSubscription: new Map(),
                seenPayment: new Map(),
                coverage,
                limitedPlan: limited.id,
                violations,
                keys: 0
              }
              const model = { subs: 0, oneOff: 0, payouts: 0, held: 0 }
              for (const command of opening) await command.run(model, real)
              await fc.asyncModelRun(() => ({ model, real }), cmds)
              await finish(real)
            } finally {
              await runtime.dispose()
            }
          }),
          { numRuns: options.numRuns, verbose: 1 }
        )
        if (missing().length > 0) console.log(`money model (${name}): after batch ${batches} never reached yet: ${missing().join(", ")}`)
      } while (options.requireCoverage !== false && missing().length > 0 && batches < 3)
      console.log(`money model coverage (${name}, ${batches} batch(es) of ${options.numRuns} runs): ${JSON.stringify(coverage)}`)
      if (options.requireCoverage !== false && missing().length > 0) {
        throw new Error(`the runs never reached: ${missing().join(", ")} (raise numRuns or maxCommands)`)
      }
    }, options.timeout ?? 120_000)
  })
}
