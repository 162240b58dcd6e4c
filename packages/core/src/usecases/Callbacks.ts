/**
 * Callback delivery: sends due outbox deliveries to the terminal's `callback_url`, signed over
 * the exact stored body, and applies the spec's retry policy; plus the operator's view of
 * deliveries and their attempt log.
 *
 * A delivery is claimed with a lease before the HTTP call and recorded after it, so a worker
 * crash re-sends only deliveries that were in flight. Before the call the delivery is stamped
 * (committed; a pass stamps the deliveries of a batch in the statement that claims them); the
 * re-send of an attempt a crash cut short reuses a stamp younger than `Callback.stampReuseMs`, so it
 * carries the same body, `X-Timestamp` and signature.
 */
import { Clock, Deferred, Effect, Option, Stream } from "effect"
import * as Callback from "../Callback.js"
import { PaydeskConfig } from "../Config.js"
import * as Access from "../Access.js"
import { InvalidRequest, NotFound } from "../Errors.js"
import { isUuid } from "../Id.js"
import { toUnixSeconds } from "../Instant.js"
import { sign } from "../Signature.js"
import * as StandardWebhooks from "../StandardWebhooks.js"
import type { Terminal } from "../Terminal.js"
import { CallbackTransport } from "../ports/CallbackTransport.js"
import { DeliveryHandoff, type Handed } from "../ports/DeliveryHandoff.js"
import { Entropy } from "../ports/Entropy.js"
import { type DeliveryFilter, OutboxRepository } from "../ports/OutboxRepository.js"
import { SecretCipher } from "../ports/SecretCipher.js"
import { TerminalRepository } from "../ports/TerminalRepository.js"
import * as TestClock from "../TestClock.js"
import type { Wakeup } from "../ports/Wakeups.js"
import { atomic, wakeup, wakeups } from "./Atomic.js"
import * as Shares from "./CallbackShares.js"
import { CallbackShares } from "./CallbackShares.js"
import * as CallbacksInFlight from "./CallbacksInFlight.js"
import { InFlight } from "./CallbacksInFlight.js"
import { claimedBatches } from "./Jobs.js"
import * as Traced from "../Traced.js"

/** Deliveries sent at once by one run (different payments; one payment's events stay in order). */
export const concurrency = 32

/**
 * The headers of a callback request: the spec's (`X-Signature`, `X-Timestamp`, `X-Test-Mode`), the
 * event's id and sequence, and Standard Webhooks' (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`). During a signing-secret rotation's overlap `X-Signature` is still signed
 * with the previous secret (the one receivers have) and `X-Signature-Next` with the new one.
 * Callbacks of objects on a test clock carry `X-Test-Clock` (the clock's id) and `X-Test-Clock-Time` (the
 * clock's time of the attempt, Unix seconds); their `X-Timestamp` is the wall time of sending, as any.
 */
export const headersFor = (input: {
  readonly signature: string
  readonly nextSignature?: string | null | undefined
  readonly timestamp: number
  readonly test: boolean
  readonly eventId?: string | undefined
  readonly sequence?: number | undefined
  readonly webhookSignature?: string | undefined
  readonly testClockId?: string | null | undefined
  readonly testClockTime?: number | undefined
}): Record<string, string> => ({
  "content-type": "application/json",
  "x-signature": input.signature,
  "x-timestamp": String(input.timestamp),
  ...(input.test ? { "x-test-mode": "true" } : {}),
  ...(input.testClockId === null || input.testClockId === undefined ? {} : { "x-test-clock": input.testClockId }),
  ...(input.testClockTime === undefined ? {} : { "x-test-clock-time": String(input.testClockTime) }),
  ...(input.nextSignature === null || input.nextSignature === undefined ? {} : { "x-signature-next": input.nextSignature }),
  ...(input.eventId === undefined ? {} : { "x-event-id": input.eventId, "webhook-id": input.eventId }),
  ...(input.sequence === undefined ? {} : { "x-event-sequence": String(input.sequence) }),
  ...(input.webhookSignature === undefined ? {} : { "webhook-timestamp": String(input.timestamp), "webhook-signature": input.webhookSignature })
})

/**
 * The secrets that sign a callback sent at `now`: the current one, and the previous one while the
 * rotation's overlap lasts (`PaydeskConfig.signingSecretOverlapMs` after `signingSecretRotatedAt`).
 */
export const secretsAt = Effect.fnUntraced(function*(terminal: Terminal, now: number) {
  const cipher = yield* SecretCipher
  const { signingSecretOverlapMs } = yield* PaydeskConfig
  const current = yield* cipher.decrypt(terminal.signingSecretEncrypted)
  const overlapping = terminal.previousSigningSecretEncrypted !== null && terminal.signingSecretRotatedAt !== null &&
    now < terminal.signingSecretRotatedAt + signingSecretOverlapMs
  const previous = overlapping ? yield* cipher.decrypt(terminal.previousSigningSecretEncrypted!) : null
  return { current, previous }
})

/**
 * Signs one callback: the spec's signature (previous secret during an overlap), the next one, and
 * Standard Webhooks'. `X-Timestamp` is the time of sending on the wall clock, which receivers
 * compare with their own to refuse replays: for a callback of a test clock's object (whose attempt
 * runs, and is stamped, at the clock's time) it is the wall time now, as is the rotation's overlap;
 * the clock's time of the attempt goes in `X-Test-Clock-Time` (not for the feed: `attempt` false).
 */
export const signCallback = Effect.fnUntraced(function*(terminal: Terminal, event: Callback.OutboxEvent, stamp: number, attempt = true) {
  const sentAt = event.testClockId === null ? stamp : yield* TestClock.wallTime
  const timestamp = toUnixSeconds(sentAt)
  const { current, previous } = yield* secretsAt(terminal, sentAt)
  const id = Callback.eventId(event.id)
  return headersFor({
    signature: yield* sign({ secret: previous ?? current, timestamp, body: event.body }),
    nextSignature: previous === null ? null : yield* sign({ secret: current, timestamp, body: event.body }),
    timestamp,
    test: event.test,
    eventId: id,
    sequence: event.sequence,
    testClockId: event.testClockId,
    testClockTime: event.testClockId === null || !attempt ? undefined : toUnixSeconds(stamp),
    webhookSignature: yield* StandardWebhooks.signatureHeader({
      secrets: previous === null ? [current] : [current, previous],
      id,
      timestamp,
      body: event.body
    })
  })
})

/** What of an answer's body is kept: at most `responseExcerptBytes` characters, without NUL (text columns refuse it). */
const excerpt = (body: string): string => body.slice(0, Callback.responseExcerptBytes).replaceAll("\u0000", "\ufffd")

/** What `attemptShared` did: the attempt made (none when another worker recorded it first), or none: deferred until `until`. */
export type Outcome =
  | { readonly _tag: "Done"; readonly attempt: Option.Option<Callback.Attempt> }
  | { readonly _tag: "Deferred"; readonly until: number }

/**
 * Sends one claimed delivery now and records the attempt; returns the recorded attempt (none when
 * another worker recorded it first). Outside the terminals' shares of the sending: for a send a
 * request asks for (a resend, a test event).
 */
export const attempt = (delivery: Callback.Delivery, event: Callback.OutboxEvent, known?: Option.Option<Terminal>, stamped?: number) =>
  Effect.map(attemptShared(delivery, event, known, stamped, false), (outcome) => outcome._tag === "Done" ? outcome.attempt : Option.none<Callback.Attempt>())

/**
 * `attempt` within the terminal's share of the sending (`CallbackShares`) when `shared`: the passes'
 * and the hand-off engine's sends. A send the share does not take now is deferred (its lease moved to
 * `until`, no attempt made).
 */
export const attemptShared = Traced.fn("Callbacks.attempt")(function*(
  delivery: Callback.Delivery,
  event: Callback.OutboxEvent,
  /** The delivery's terminal when the caller has just read it (a pass reads each terminal once). */
  known: Option.Option<Terminal> | undefined,
  /** The stamp in force when the caller has just stamped the delivery (a pass's claim stamps the deliveries it takes). */
  stamped: number | undefined,
  shared: boolean,
  /** Whether a deferral wakes the engine when the delivery is due again (a pass wakes it once for all of its own). */
  wake = true
) {
  const terminal = known ?? (yield* (yield* TerminalRepository).get(delivery.terminalId))
  const now = yield* Clock.currentTimeMillis
  const url = Option.isSome(terminal) ? terminal.value.callbackUrl : null
  let statusCode: number | null = null
  let latencyMs = 0
  let error: string | null = null
  let responseBody: string | null = null
  /** Whether a request went out (false when the terminal's share recorded the attempt as not sent). */
  let requested = true
  if (url === null || Option.isNone(terminal)) {
    error = "terminal has no callback_url"
  } else {
    // Stamped and committed before the request (one statement, so no transaction of its own): a
    // re-send after a crash repeats a fresh stamp. The pass's stamp is the one stamping now would
    // keep, while it is fresh.
    const keepFrom = now - Callback.stampReuseMs
    const stamp = stamped !== undefined && stamped >= keepFrom
      ? stamped
      : yield* (yield* OutboxRepository).stampSending(delivery.id, now, keepFrom)
    const signed = yield* Effect.exit(signCallback(terminal.value, event, stamp))
    if (signed._tag === "Failure") {
      yield* Effect.logError(`callback not signed (signing secret unavailable): the signing secret of terminal ${delivery.terminalId} cannot be decrypted (event ${Callback.eventId(event.id)})`, signed.cause)
      error = "signing secret unavailable"
    }
    const post = Effect.result((yield* CallbackTransport).post({ url, headers: signed._tag === "Failure" ? {} : signed.value, body: event.body, timeoutMs: Callback.timeoutMs }))
    // In the terminal's share of the sending (`CallbackShares`; not a test clock's delivery, whose
    // passes have their own bounded time): sent in a slot, or deferred without an attempt.
    const ran = signed._tag === "Failure"
      ? null
      : !shared || delivery.testClockId !== null
      ? { _tag: "Sent" as const, value: yield* post, nowFailing: false }
      : yield* (yield* CallbackShares).run(delivery.terminalId, post, (r) =>
        r._tag === "Success" ? Callback.isSuccess(r.success.statusCode) || r.success.latencyMs < Shares.slowMs : r.failure.latencyMs < Shares.slowMs)
    if (ran !== null && ran._tag === "Defer") {
      const until = (yield* Clock.currentTimeMillis) + ran.forMs
      yield* defer(delivery, until, wake)
      return { _tag: "Deferred", until } as const
    }
    if (ran?._tag === "Sent" && ran.nowFailing) {
      yield* Effect.logWarning(`callbacks of terminal ${delivery.terminalId} fail slowly: ${Shares.failingPerTerminal} sent at a time, the others recorded as failed attempts without being sent, until one answers`)
    }
    const result = ran === null || ran._tag === "Unsent" ? null : ran.value
    if (ran?._tag === "Unsent") {
      // The endpoint is failing: a failed attempt without a request (the retries go on as for one).
      requested = false
      error = `not sent: the endpoint's last ${ran.failures} attempts failed slowly (no answer within ${Callback.timeoutMs / 1000} s, or an error after ${Shares.slowMs / 1000} s or more); ${Shares.failingPerTerminal} are sent at a time until one answers`
    } else if (result === null) {
      // Not sent: recorded below as a failed attempt.
    } else if (result._tag === "Success") {
      statusCode = result.success.statusCode
      latencyMs = result.success.latencyMs
      responseBody = result.success.body === undefined ? null : excerpt(result.success.body)
      if (!Callback.isSuccess(statusCode)) error = `HTTP ${statusCode}`
    } else {
      latencyMs = result.failure.latencyMs
      error = result.failure.message
    }
  }
  // One guarded write: the attempt and the delivery's next state from the delivery as claimed.
  // When another worker recorded an attempt meanwhile (only when a lease lapsed while this one was
  // in flight), this request still happened: it is recorded after that one, from the stored state,
  // so a success ends the delivery whichever worker answered first.
  const outbox = yield* OutboxRepository
  const after = yield* Clock.currentTimeMillis
  const ok = error === null
  const recordOn = (base: Callback.Delivery) =>
    Effect.gen(function*() {
      const attempts = base.attempts + 1
      const recorded: Callback.Attempt = {
        id: yield* (yield* Entropy).uuid,
        deliveryId: delivery.id,
        attemptNumber: attempts,
        at: now,
        url: url ?? "",
        statusCode,
        latencyMs,
        error,
        responseBody
      }
      const delay = Callback.retryDelayMs(attempts, base.kind)
      // The spec's delay runs from the failure (the answer, or the 10 s running out), not from the
      // attempt's start: a receiver that timed out got its next attempt 20 s after, not 30 s.
      const nextAttemptAt = ok || delay === null ? null : after + delay
      const stored = yield* outbox.recordAttempt(recorded, {
        ...base,
        attempts,
        status: ok ? "delivered" : delay === null ? "failed" : "pending",
        nextAttemptAt,
        sendingAt: null,
        lastStatusCode: statusCode,
        lastError: error,
        deliveredAt: ok ? after : null,
        updatedAt: after
      }, base.attempts)
      return stored ? Option.some({ recorded, nextAttemptAt }) : Option.none<{ recorded: Callback.Attempt; nextAttemptAt: number | null }>()
    })
  let done = yield* recordOn(delivery)
  // A request that was made is recorded after another worker's record of the same delivery; one not
  // made (`Unsent`) is not: it would only use up one more of the delivery's attempts.
  for (let tries = 0; requested && Option.isNone(done) && tries < 3; tries++) {
    const current = yield* outbox.getDelivery(delivery.id)
    if (Option.isNone(current) || current.value.status !== "pending") return { _tag: "Done", attempt: Option.none<Callback.Attempt>() } as const
    done = yield* recordOn(current.value)
  }
  if (Option.isNone(done)) return { _tag: "Done", attempt: Option.none<Callback.Attempt>() } as const
  if (done.value.nextAttemptAt !== null) yield* wakeup({ kind: "delivery", deliveryId: delivery.id, at: done.value.nextAttemptAt })
  return { _tag: "Done", attempt: Option.some(done.value.recorded) } as const
})

/** Moves a claimed delivery's lease to `until` (no attempt), while it still holds its lease, and (with `wake`) wakes the engine then. */
const defer = (delivery: Callback.Delivery, until: number, wake: boolean) =>
  Effect.gen(function*() {
    if (delivery.nextAttemptAt !== null && (yield* (yield* OutboxRepository).renewLease(delivery.id, delivery.nextAttemptAt, until)) && wake) {
      yield* wakeup({ kind: "delivery", deliveryId: delivery.id, at: until })
    }
  })

/**
 * A delivery handed off with less of its lease left than this renews its lease before it is sent: its
 * attempt (at most `Callback.timeoutMs`) and record must end before a pass may claim it.
 */
export const handoffMarginMs = 2 * Callback.timeoutMs

/**
 * Sends a delivery handed off after the commit that wrote it leased (`DeliveryHandoff`), as a pass
 * sends one it claimed, with the terminal and the stamp its writer had; answers whether it was sent.
 * One whose lease is nearly over (it waited long in the engine) first renews its lease, only while it
 * still holds it (`OutboxRepository.renewLease`); one a pass has claimed meanwhile is left to that pass
 * (which sends the payment's events in order), so it is never sent twice at once.
 */
export const sendHanded = Traced.fn("Callbacks.sendHanded")(function*(
  handed: Handed,
  /** Runs once the lease is sure and just before the attempt starts (the engine's `sending` set). */
  starting: Effect.Effect<void> = Effect.void
) {
  const config = yield* PaydeskConfig
  const now = yield* Clock.currentTimeMillis
  let delivery = handed.delivery
  if (delivery.nextAttemptAt === null) return false
  if (now > delivery.nextAttemptAt - handoffMarginMs) {
    const leaseUntil = now + config.leaseMs
    if (!(yield* (yield* OutboxRepository).renewLease(delivery.id, delivery.nextAttemptAt, leaseUntil))) return false
    delivery = { ...delivery, nextAttemptAt: leaseUntil }
  }
  yield* starting
  const outcome = yield* attemptShared(delivery, handed.event, Option.some(handed.terminal), delivery.sendingAt ?? undefined, true)
  return outcome._tag === "Done"
})

/**
 * `cipher` decrypting each ciphertext once: a pass signs many callbacks with the secrets of a few
 * terminals (as read at the start of the pass), so each is decrypted once per pass, not per attempt.
 */
export const decryptingOnce = (cipher: SecretCipher["Service"]): SecretCipher["Service"] => {
  const decrypted = new Map<string, Effect.Effect<string>>()
  return SecretCipher.of({
    encrypt: cipher.encrypt,
    decrypt: (ciphertext) =>
      Effect.suspend(() => {
        const known = decrypted.get(ciphertext)
        if (known !== undefined) return known
        // Two fibers missing at once may each decrypt once; the first entry stays.
        return Effect.flatMap(Effect.cached(cipher.decrypt(ciphertext)), (once) => {
          const first = decrypted.get(ciphertext) ?? once
          decrypted.set(ciphertext, first)
          return first
        })
      })
  })
}

/** What a pass groups deliveries by: one payment's (or payout's) go out in order (also `DeliveryHandoff.settled`'s key). */
export const groupKey = (event: Callback.OutboxEvent): string => event.paymentId ?? event.payoutId ?? event.id

/** Batches of `batchSize` deliveries one pass claims at most. */
export const batchesPerPass = 5

/** Deliveries of one payment (or payout) of a claimed batch, sent in order, with what the batch read for them. */
interface Group {
  readonly items: ReadonlyArray<{ readonly delivery: Callback.Delivery; readonly event: Callback.OutboxEvent }>
  readonly terminals: ReadonlyMap<string, Option.Option<Terminal>>
  readonly stamps: ReadonlyMap<string, number>
  /** Done when the same payment's group of an earlier batch of the pass is done (none when there is none). */
  readonly after: Deferred.Deferred<void> | undefined
  /** Done when this group is. */
  readonly done: Deferred.Deferred<void>
}

/**
 * Sends every delivery due now (of the test clock in scope, or of none), in batches of `batchSize`
 * (at most `batchesPerPass`); returns how many attempts were made. Idempotent.
 *
 * At most `concurrency` payments' deliveries are sent at once, each payment's (or payout's) in order,
 * across the batches of the pass too. The next batch is claimed once every payment of the one before
 * has started, while the last of them are still in flight, so the sending does not wait for a claim
 * between batches. A delivery the pass claims again (its lease ran out while it waited behind its
 * payment's earlier ones) is left to the claim that holds it already, so a pass sends it once.
 * With an `InFlight` in context (the local engine's; never for a test clock), a payment's deliveries
 * still being sent after `CallbacksInFlight.waitMs` go on in the background and the pass moves on.
 */
export const runDue = Traced.fn("Callbacks.runDue")(function*() {
  const config = yield* PaydeskConfig
  const outbox = yield* OutboxRepository
  const terminalRepository = yield* TerminalRepository
  const scope = yield* TestClock.Scope
  let attempted = 0
  let deferrals = 0
  // The engine is woken once for the pass's deferrals (the first and the last due again), not per
  // delivery: under a flood of one terminal's callbacks that would be a wakeup (an Inngest event) each.
  const deferred: Array<Wakeup> = []
  /** Per payment (`groupKey`), until when this pass deferred its events. */
  const deferredGroups = new Map<string, number>()
  const taken = new Set<string>()
  const lastOf = new Map<string, Deferred.Deferred<void>>()
  // A payment's first delivery handed off to this process's engine goes out before the pass sends its later ones.
  const handoff = yield* Effect.serviceOption(DeliveryHandoff)
  // Slow sends left in the background (the local engine's), not for a test clock's pass, which its advance waits for.
  const inFlight = scope === null ? yield* InFlight : null
  const claim = Traced.fn("Callbacks.claimBatch")(function*(batch: number) {
    const now = yield* Clock.currentTimeMillis
    // What this process's engine is sending from hand-offs, before the claim and after it (one it
    // finishes in between was sent all the same).
    const sendingBefore = handoff._tag === "Some" ? handoff.value.sending() : undefined
    // Claimed and stamped in one statement (committed before any is sent): a delivery whose terminal
    // has no callback URL keeps its stamp only until its attempt is recorded.
    // The lease of one left to its group in this process's background (its own ran out while it
    // waited) is noted before the claim commits, so the group never takes it for another process's.
    // (`reclaim` notes only deliveries its groups hold.)
    const noteReclaimed = (claimed: ReadonlyArray<{ readonly delivery: Callback.Delivery }>) =>
      Effect.sync(() => {
        for (const { delivery } of claimed) if (delivery.nextAttemptAt !== null) inFlight?.reclaim(delivery.id, delivery.nextAttemptAt)
      })
    const all = yield* atomic(Effect.tap(outbox.claimDue(now, now + config.leaseMs, config.batchSize, scope, { keepFrom: now - Callback.stampReuseMs }), noteReclaimed))
    const sendingAfter = handoff._tag === "Some" ? handoff.value.sending() : undefined
    // Nor one the engine is sending (its lease ran out during the attempt), nor one an earlier pass left in the background.
    const claimed = all.filter(({ delivery }) =>
      !taken.has(delivery.id) && !(sendingBefore?.has(delivery.id) ?? false) && !(sendingAfter?.has(delivery.id) ?? false) &&
      !(inFlight?.sending().has(delivery.id) ?? false))
    // Each terminal of the batch is read once, now (its URL and secrets as of this batch).
    const terminalIds = [...new Set(claimed.map(({ delivery }) => delivery.terminalId))]
    const terminals = new Map(yield* Effect.forEach(terminalIds, (id) => Effect.map(terminalRepository.get(id), (t) => [id, t] as const)))
    const stamps = new Map(claimed.flatMap(({ delivery }) => delivery.sendingAt === null ? [] : [[delivery.id, delivery.sendingAt] as const]))
    // Events of one payment (or payout) go out in order; different payments in parallel.
    const groups = new Map<string, Array<(typeof claimed)[number]>>()
    for (const item of claimed) {
      const key = groupKey(item.event)
      groups.set(key, [...(groups.get(key) ?? []), item])
    }
    // In the order of their events (the claim's is by due time: an earlier event whose lease ran out
    // sorts after a later one due since).
    for (const items of groups.values()) items.sort((a, b) => a.event.sequence - b.event.sequence)
    for (const { delivery } of claimed) taken.add(delivery.id)
    attempted += claimed.length
    const ready = [...groups].map(([key, items]): Group => {
      const done = Deferred.makeUnsafe<void>()
      const after = lastOf.get(key)
      lastOf.set(key, done)
      return { items, terminals, stamps, after, done }
    })
    const more = all.length === config.batchSize && batch + 1 < batchesPerPass
    return [ready, more ? Option.some(batch + 1) : Option.none<number>()] as const
  })
  // Set once the pass has returned: a group still running in the background then wakes the engine
  // for its own deferrals (the pass's wakeup has gone).
  let passEnded = false
  /**
   * A delivery of a group that may have waited (behind its payment's earlier ones) with its lease
   * renewed when little of it is left (`handoffMarginMs`), as the hand-off engine does, so no claim
   * takes it meanwhile; `"recorded"` when it is no longer pending with its attempts (recorded
   * meanwhile), or, when another process claimed it (its lease ran out while it waited), until when
   * that process holds it (`elsewhere`).
   */
  const leased = (delivery: Callback.Delivery) =>
    Effect.gen(function*() {
      let held = delivery
      for (;;) {
        if (inFlight === null || held.nextAttemptAt === null) return held
        const now = yield* Clock.currentTimeMillis
        if (held.nextAttemptAt - now >= handoffMarginMs) return held
        const until = now + config.leaseMs
        if (yield* outbox.renewLease(held.id, held.nextAttemptAt, until)) return { ...held, nextAttemptAt: until }
        const current = yield* outbox.getDelivery(held.id)
        if (Option.isNone(current) || current.value.status !== "pending" || current.value.attempts !== delivery.attempts) return "recorded" as const
        // Claimed again since: a claim of this process left it to this group (`reclaim`), with the
        // claim's lease (renewed in turn if little is left); under any other lease another process
        // holds it and sends it.
        if (current.value.nextAttemptAt === held.nextAttemptAt || current.value.nextAttemptAt !== inFlight.reclaimed(held.id)) {
          return { elsewhere: current.value.nextAttemptAt ?? now + config.leaseMs }
        }
        held = current.value
      }
    })
  const sendGroup = ({ items, terminals, stamps, after, done }: Group, before: Deferred.Deferred<CallbacksInFlight.DeferredUntil> | undefined) =>
    Effect.gen(function*() {
      const key = groupKey(items[0]!.event)
      if (after !== undefined) yield* Deferred.await(after)
      else if (handoff._tag === "Some") yield* handoff.value.settled(key)
      // After the payment's group an earlier pass left in the background, and deferred as long as it deferred the payment's.
      const deferredBefore = before === undefined ? null : yield* Deferred.await(before)
      // Once one is deferred (its terminal's share of the sending), the payment's later ones are
      // deferred with it, in order, also those of a later batch of the pass (`deferredGroups`); a
      // deferred one leaves the pass's `taken`, so a later batch that claims it again (due again) sends it.
      const now = yield* Clock.currentTimeMillis
      const earlier = Math.max(deferredGroups.get(key) ?? 0, deferredBefore ?? 0)
      let deferredUntil: number | null = earlier > now ? earlier : null
      for (const item of items) {
        // The host is stopping: no new attempt; the rest stays pending under its lease, sent after it.
        if (inFlight?.closing() === true) break
        const delivery = yield* leased(item.delivery).pipe(Effect.catchCause((cause) => Effect.as(Effect.logError("callback lease not renewed", cause), item.delivery)))
        if (delivery === "recorded") continue
        if ("elsewhere" in delivery) {
          // Another process sends it (not sent twice from here); the payment's later ones are deferred
          // as long as it holds it, so none overtakes it (nor this payment's later groups: `deferredUntil`).
          deferredUntil = Math.max(deferredUntil ?? 0, delivery.elsewhere)
          deferredGroups.set(key, deferredUntil)
          continue
        }
        if (deferredUntil !== null) {
          yield* defer(delivery, deferredUntil, passEnded).pipe(Effect.catchCause((cause) => Effect.logError("callback not deferred", cause)))
        } else {
          // One broken delivery must not stop the others; its lease makes it retry later.
          const outcome = yield* attemptShared(delivery, item.event, terminals.get(delivery.terminalId), stamps.get(delivery.id), true, passEnded).pipe(
            Effect.catchCause((cause) => Effect.as(Effect.logError("callback attempt failed", cause), null))
          )
          if (outcome?._tag === "Deferred") {
            deferredUntil = outcome.until
            deferredGroups.set(key, outcome.until)
          }
        }
        if (deferredUntil !== null) {
          taken.delete(delivery.id)
          deferrals++
          deferred.push({ kind: "delivery", deliveryId: delivery.id, at: deferredUntil })
        }
      }
      return deferredUntil
    }).pipe(Effect.ensuring(Deferred.succeed(done, undefined)))
  const send = (group: Group) =>
    inFlight === null
      ? Effect.asVoid(sendGroup(group, undefined))
      : inFlight.run(groupKey(group.items[0]!.event), group.items.map(({ delivery }) => delivery.id), (before) => sendGroup(group, before))
  // The deferrals' wakeup, also when the pass ends early.
  const wakeDeferred = Effect.suspend(() => {
    passEnded = true
    if (deferred.length === 0) return Effect.void
    const byTime = [...deferred].sort((a, b) => a.at - b.at)
    return wakeups(byTime.length === 1 ? byTime : [byTime[0]!, byTime[byTime.length - 1]!])
  })
  // A later batch that cannot be claimed ends the pass (its deliveries are retried after their
  // lease); the first one's failure is the pass's.
  yield* claimedBatches("callback batch not claimed", claim).pipe(
    Stream.mapEffect(send, { concurrency, unordered: true }),
    Stream.runDrain,
    Effect.provideService(SecretCipher, decryptingOnce(yield* SecretCipher)),
    Effect.ensuring(wakeDeferred)
  )
  return attempted - deferrals
})

/** Events of one feed read at most. */
export const maxFeedLimit = 100

/** What the events feed returns for one event: the stored body, signed now with the terminal's secret, and the cursor after it. */
export interface FeedItem {
  readonly event: Callback.OutboxEvent
  readonly headers: Record<string, string>
  readonly cursor: string
}

/** Longest feed cursor accepted (a sealed one is about 100 characters). */
const maxCursorLength = 512

/**
 * The merchant's events feed (`paydesk listen`): the terminal's callback events in insertion order,
 * from the first one, or after the cursor `after`; `after` = `latest` returns no event and the
 * cursor of the newest, so a listener starts from now. A cursor (each item's, and the answer's
 * `next_after`: the last item's, else one sealed again for the place `after` named) names the event's insertion position, so
 * it stays valid when its event is deleted (a test clock's, or by the retention). Positions are
 * shared by every terminal, so a cursor is the terminal and position sealed with the host's
 * `SecretCipher` (`feed_<ciphertext>`): opaque, bound to its terminal, and unforgeable (the gaps
 * between plain positions would show how many events the other merchants made). The id of an event
 * of the terminal is accepted too (the cursor of earlier versions). Each event carries the headers a
 * delivery would, signed at read time with the terminal's secret. `environment` is `sandbox`
 * (default), `prod` or `all`. Independent of `callback_url` and of deliveries. `nextAfter` is `null`
 * while the terminal has no event (from the first one).
 */
export const feed = Traced.fn("Callbacks.feed")(function*(
  principal: Access.Principal,
  query: {
    readonly terminalId?: string | null | undefined
    readonly after?: string | null | undefined
    readonly limit?: number | null | undefined
    readonly environment?: "sandbox" | "prod" | "all" | null | undefined
  }
) {
  const terminal = yield* Access.resolveTerminal(principal, query.terminalId, "read")
  const limit = query.limit ?? 50
  if (!Number.isInteger(limit) || limit < 1 || limit > maxFeedLimit) {
    return yield* new InvalidRequest({ field: "limit", message: `limit must be an integer from 1 to ${maxFeedLimit}` })
  }
  const outbox = yield* OutboxRepository
  const cipher = yield* SecretCipher
  // The position padded to 15 digits: a ciphertext's length follows its text's, and would show the count's digits.
  const seal = (position: number) =>
    Effect.map(cipher.encrypt(`feed:${terminal.id}:${String(position).padStart(15, "0")}`), (sealed) => `feed_${sealed}`)
  const badCursor = new InvalidRequest({ field: "after", message: "after must be latest or the next_after of an earlier answer of this feed" })
  const raw = query.after ?? null
  if (raw !== null && raw.toLowerCase() === "latest") {
    const { newest } = yield* outbox.feedPositions(terminal.id)
    return { items: [] as ReadonlyArray<FeedItem>, nextAfter: newest === 0 ? null : yield* seal(newest) }
  }
  const opened = raw === null ? Option.some(0) : yield* openCursor(raw, terminal.id)
  if (Option.isNone(opened)) return yield* badCursor
  const position = opened.value
  const environment = query.environment ?? "sandbox"
  const events = yield* outbox.feedEvents({
    terminalId: terminal.id,
    ...(environment === "all" ? {} : { test: environment === "sandbox" }),
    afterPosition: position,
    limit
  })
  // A position past any ever given is of another database (this one reset, or restored to an
  // earlier point): a listener would otherwise get nothing after it, for ever, and not know.
  if (events.length === 0 && position > (yield* outbox.feedPositions(terminal.id)).issued) return yield* badCursor
  const now = yield* Clock.currentTimeMillis
  // Signed now, with every header a delivery carries (event id, sequence, Standard Webhooks').
  const items = yield* Effect.forEach(events, ({ event, position }) =>
    Effect.zipWith(signCallback(terminal, event, now, false), seal(position), (headers, cursor): FeedItem => ({ event, headers, cursor })))
  // Sealed again rather than the input echoed: a ciphertext the key opens may carry stray characters.
  const nextAfter = items.at(-1)?.cursor ?? (position === 0 ? null : yield* seal(position))
  return { items, nextAfter }
})

/**
 * The position a feed cursor names: a sealed `feed_` cursor of this terminal, or the id of an event
 * of the terminal (an earlier version's cursor); `None` for anything else (made up, another
 * terminal's, sealed with another key, an unknown or deleted event's id).
 */
const openCursor = Effect.fnUntraced(function*(cursor: string, terminalId: string) {
  if (cursor.length > maxCursorLength) return Option.none()
  if (cursor.startsWith("feed_")) {
    // A ciphertext the key did not make dies in the cipher (its contract): here, a refused cursor.
    const opened = yield* Effect.exit((yield* SecretCipher).decrypt(cursor.slice(5)))
    if (opened._tag === "Failure") return Option.none()
    const match = /^feed:([0-9a-f-]{36}):(\d{15})$/.exec(opened.value)
    return match === null || match[1] !== terminalId ? Option.none() : Option.some(Number(match[2]))
  }
  const id = Callback.parseEventId(cursor)
  if (id === null) return Option.none()
  const found = yield* (yield* OutboxRepository).eventPosition(id)
  return Option.flatMap(found, (event) => event.terminalId === terminalId ? Option.some(event.position) : Option.none())
})

/** Operator: deliveries, newest first. */
export const listDeliveries = Traced.fn("Callbacks.listDeliveries")(function*(filter: DeliveryFilter) {
  return yield* (yield* OutboxRepository).listDeliveries(filter)
})

/** Operator: one delivery with its event and attempt log. */
export const getDelivery = Traced.fn("Callbacks.getDelivery")(function*(id: string) {
  const outbox = yield* OutboxRepository
  const delivery = yield* outbox.getDelivery(id)
  if (Option.isNone(delivery)) return yield* NotFound.of("delivery")
  const event = yield* outbox.getEvent(delivery.value.eventId)
  return { delivery: delivery.value, event: Option.getOrNull(event), attempts: yield* outbox.listAttempts(id) }
})
