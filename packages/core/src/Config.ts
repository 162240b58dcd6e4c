/**
 * Settings of the core that an embedding host may change, with the defaults the
 * reference server uses. Provide another value with `Layer.succeed(PaydeskConfig)(...)` or
 * `Effect.provideService(PaydeskConfig, ...)`.
 */
import { Context } from "effect"

/** Core settings. Durations in milliseconds. */
export interface Settings {
  /** Origin of the public payer pages, without trailing slash. */
  readonly publicUrl: string
  /** Lifetime of an unpaid payment. */
  readonly paymentLifetimeMs: number
  /** Maximum of payouts in created, pending or processing per terminal. */
  readonly maxActivePayouts: number
  /** Nonce reuse window (the spec's 10 minutes). */
  readonly nonceWindowMs: number
  /** How long the idempotency keys of subscription creation and payouts are kept (7 days). */
  readonly idempotencyRetentionMs: number
  /** How long the idempotency keys of payments are kept (Stripe's 24 h); an older key is free again. */
  readonly moneyIdempotencyRetentionMs: number
  readonly accessTokenTtlMs: number
  readonly refreshTokenTtlMs: number
  /** How long a worker holds a claimed charge, delivery or payout before another may retry it. */
  readonly leaseMs: number
  /** Rows a due-work use case takes per run. */
  readonly batchSize: number
  /**
   * Whether callback URLs may point to loopback, private and carrier-grade NAT addresses (and local
   * host names). Off in production (SSRF); on for development and tests with local receivers.
   */
  readonly allowPrivateCallbacks: boolean
  /** How long a rotated-out signing secret still signs callbacks beside the new one. */
  readonly signingSecretOverlapMs: number
  /** How long events and their delivery log are kept (and listed by the events API). */
  readonly eventRetentionMs: number
}

/** The defaults, documented in docs/decisions.md. */
export const defaults: Settings = {
  publicUrl: "http://127.0.0.1:8080",
  paymentLifetimeMs: 30 * 60_000,
  maxActivePayouts: 5,
  nonceWindowMs: 10 * 60_000,
  idempotencyRetentionMs: 7 * 24 * 3600_000,
  moneyIdempotencyRetentionMs: 24 * 3600_000,
  accessTokenTtlMs: 15 * 60_000,
  refreshTokenTtlMs: 30 * 24 * 3600_000,
  leaseMs: 60_000,
  batchSize: 100,
  allowPrivateCallbacks: false,
  signingSecretOverlapMs: 24 * 3_600_000,
  eventRetentionMs: 30 * 24 * 3_600_000
}

export class PaydeskConfig extends Context.Reference<Settings>("@paydesk/core/PaydeskConfig", {
  defaultValue: () => defaults
}) {}
