/**
 * Callback delivery: sends due outbox deliveries to the terminal's `callback_url`, signed over
 * the exact stored body, and applies the spec's retry policy; plus the operator's view of
 * deliveries and their attempt log.
 *
 * A delivery is claimed with a lease before the HTTP call and recorded after it, so a worker
 * crash re-sends only deliveries that were in flight. Just before the call the delivery is
 * stamped (committed); the re-send of an attempt a crash cut short reuses a stamp younger than
 * `Callback.stampReuseMs`, so it carries the same body, `X-Timestamp` and signature.
 */
import { Clock, Effect, Option } from "effect"
import * as Callback from "../Callback.js"
import { PaydeskConfig } from "../Config.js"
import { NotFound } from "../Errors.js"
import { toUnixSeconds } from "../Instant.js"
import { sign } from "../Signature.js"
import { CallbackTransport } from "../ports/CallbackTransport.js"
import { Entropy } from "../ports/Entropy.js"
import { type DeliveryFilter, OutboxRepository } from "../ports/OutboxRepository.js"
import { SecretCipher } from "../ports/SecretCipher.js"
import { TerminalRepository } from "../ports/TerminalRepository.js"
import { atomic, wakeup } from "./Atomic.js"

/** Deliveries sent at once by one run. */
export const concurrency = 8

/** The headers of a callback request. */
export const headersFor = (input: { signature: string; timestamp: number; test: boolean }): Record<string, string> => ({
  "content-type": "application/json",
  "x-signature": input.signature,
  "x-timestamp": String(input.timestamp),
  ...(input.test ? { "x-test-mode": "true" } : {})
})

/** Sends one claimed delivery and records the attempt. */
const attempt = Effect.fn("Callbacks.attempt")(function*(delivery: Callback.Delivery, event: Callback.OutboxEvent) {
  const terminal = yield* (yield* TerminalRepository).get(delivery.terminalId)
  const now = yield* Clock.currentTimeMillis
  const url = Option.isSome(terminal) ? terminal.value.callbackUrl : null
  let statusCode: number | null = null
  let latencyMs = 0
  let error: string | null = null
  if (url === null || Option.isNone(terminal)) {
    error = "terminal has no callback_url"
  } else {
    // Stamped and committed before the request: a re-send after a crash repeats a fresh stamp.
    const stamp = yield* atomic((yield* OutboxRepository).stampSending(delivery.id, now, now - Callback.stampReuseMs))
    const timestamp = toUnixSeconds(stamp)
    const signed = yield* Effect.exit(
      Effect.flatMap((yield* SecretCipher).decrypt(terminal.value.signingSecretEncrypted), (secret) =>
        sign({ secret, timestamp, body: event.body }))
    )
    if (signed._tag === "Failure") {
      yield* Effect.logError("callback not signed: the terminal's signing secret cannot be decrypted", signed.cause)
      error = "signing secret unavailable"
    }
    const signature = signed._tag === "Success" ? signed.value : ""
    const result = error !== null ? null : yield* Effect.result((yield* CallbackTransport).post({
      url,
      headers: headersFor({ signature, timestamp, test: event.test }),
      body: event.body,
      timeoutMs: Callback.timeoutMs
    }))
    if (result === null) {
      // Not sent: recorded below as a failed attempt.
    } else if (result._tag === "Success") {
      statusCode = result.success.statusCode
      latencyMs = result.success.latencyMs
      if (!Callback.isSuccess(statusCode)) error = `HTTP ${statusCode}`
    } else {
      latencyMs = result.failure.latencyMs
      error = result.failure.message
    }
  }
  yield* atomic(Effect.gen(function*() {
    const outbox = yield* OutboxRepository
    const current = yield* outbox.getDelivery(delivery.id)
    if (Option.isNone(current) || current.value.status !== "pending") return
    const attempts = current.value.attempts + 1
    const after = yield* Clock.currentTimeMillis
    yield* outbox.insertAttempt({
      id: yield* (yield* Entropy).uuid,
      deliveryId: delivery.id,
      attemptNumber: attempts,
      at: now,
      url: url ?? "",
      statusCode,
      latencyMs,
      error
    })
    const ok = error === null
    const delay = Callback.retryDelayMs(attempts)
    const nextAttemptAt = ok || delay === null ? null : now + delay
    yield* outbox.updateDelivery({
      ...current.value,
      attempts,
      status: ok ? "delivered" : delay === null ? "failed" : "pending",
      nextAttemptAt,
      sendingAt: null,
      lastStatusCode: statusCode,
      lastError: error,
      deliveredAt: ok ? after : null,
      updatedAt: after
    })
    if (nextAttemptAt !== null) yield* wakeup({ kind: "delivery", deliveryId: delivery.id, at: nextAttemptAt })
  }))
  return error === null
})

/** Sends every delivery due now; returns how many attempts were made. Idempotent. */
export const runDue = Effect.fn("Callbacks.runDue")(function*() {
  const config = yield* PaydeskConfig
  const now = yield* Clock.currentTimeMillis
  const claimed = yield* atomic((yield* OutboxRepository).claimDue(now, now + config.leaseMs, config.batchSize))
  // Events of one payment (or payout) go out in order; different payments in parallel.
  const groups = new Map<string, Array<(typeof claimed)[number]>>()
  for (const item of claimed) {
    const key = item.event.paymentId ?? item.event.payoutId ?? item.event.id
    groups.set(key, [...(groups.get(key) ?? []), item])
  }
  yield* Effect.forEach(
    groups.values(),
    (group) =>
      Effect.forEach(group, ({ delivery, event }) =>
        // One broken delivery must not stop the others; its lease makes it retry later.
        attempt(delivery, event).pipe(Effect.catchCause((cause) => Effect.logError("callback attempt failed", cause))), { discard: true }),
    { concurrency, discard: true }
  )
  return claimed.length
})

/** Operator: deliveries, newest first. */
export const listDeliveries = Effect.fn("Callbacks.listDeliveries")(function*(filter: DeliveryFilter) {
  return yield* (yield* OutboxRepository).listDeliveries(filter)
})

/** Operator: one delivery with its event and attempt log. */
export const getDelivery = Effect.fn("Callbacks.getDelivery")(function*(id: string) {
  const outbox = yield* OutboxRepository
  const delivery = yield* outbox.getDelivery(id)
  if (Option.isNone(delivery)) return yield* NotFound.of("delivery")
  const event = yield* outbox.getEvent(delivery.value.eventId)
  return { delivery: delivery.value, event: Option.getOrNull(event), attempts: yield* outbox.listAttempts(id) }
})
