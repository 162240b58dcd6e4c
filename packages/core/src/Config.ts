/**
 * Settings of the core that an embedding host may change, with the defaults the
 * reference server uses. Provide them checked with `Config.layer({ ... })` (the defaults with the
 * host's changes; a setting out of range fails the layer's build), or as they are with
 * `Layer.succeed(PaydeskConfig)(...)` or `Effect.provideService(PaydeskConfig, ...)`.
 */
import { Context, Data, Effect, Layer } from "effect"
import * as Callback from "./Callback.js"

/** Core settings. Durations in milliseconds. */
export interface Settings {
  /**
   * Origin of the public payer pages, without trailing slash. Not read by the core's use cases: the
   * links in answers take the HTTP adapter's own (`App.build`'s `publicUrl`); kept for hosts that read it.
   */
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

/** Settings out of their range (`problems`: one sentence per setting), refused by `make` and `layer`. */
export class InvalidSettings extends Data.TaggedError("InvalidSettings")<{
  readonly message: string
  readonly problems: ReadonlyArray<string>
}> {}

/** Durations that must be positive (milliseconds). */
const positiveDurations = [
  "paymentLifetimeMs",
  "nonceWindowMs",
  "idempotencyRetentionMs",
  "moneyIdempotencyRetentionMs",
  "accessTokenTtlMs",
  "refreshTokenTtlMs",
  "leaseMs",
  "eventRetentionMs"
] as const

/** The largest `batchSize`: a batch is one statement's rows and one pass's work in memory. */
export const maxBatchSize = 10_000

/** The longest duration a setting takes (3,650 days: the reference server's longest retention); longer ones pass JavaScript's dates. */
export const maxDurationMs = 3_650 * 24 * 3_600_000

/**
 * The shortest `leaseMs`: twice a callback's timeout. A lease is how long a claimed delivery, charge or
 * payout is left to its worker; a shorter one lets another worker claim a callback still being sent
 * and send it again.
 */
export const minLeaseMs = 2 * Callback.timeoutMs

/**
 * What is wrong with `settings`, one sentence per setting (empty: nothing). A value out of range
 * does not fail loudly where it is used: a `batchSize` of 0 claims nothing, so every callback,
 * charge and payout silently waits; a negative `paymentLifetimeMs` makes every payment expire at once.
 */
export const problems = (settings: Settings): ReadonlyArray<string> => {
  const found: Array<string> = []
  const whole = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n)
  const days = (ms: number) => `${ms / 86_400_000} days`
  for (const key of positiveDurations) {
    const value: unknown = settings[key]
    if (!whole(value) || value <= 0 || value > maxDurationMs) found.push(`${key} must be a whole number of milliseconds above 0, at most ${days(maxDurationMs)} (got ${String(value)})`)
  }
  if (whole(settings.leaseMs) && settings.leaseMs > 0 && settings.leaseMs < minLeaseMs) {
    found.push(`leaseMs must be at least ${minLeaseMs} (twice a callback's ${Callback.timeoutMs / 1000} s timeout: a shorter lease lets another worker send a callback still in flight again) (got ${settings.leaseMs})`)
  }
  const overlap: unknown = settings.signingSecretOverlapMs
  if (!whole(overlap) || overlap < 0 || overlap > maxDurationMs) found.push(`signingSecretOverlapMs must be a whole number of milliseconds, 0 or more, at most ${days(maxDurationMs)} (got ${String(overlap)})`)
  const batch: unknown = settings.batchSize
  if (!whole(batch) || batch < 1 || batch > maxBatchSize) found.push(`batchSize must be a whole number from 1 to ${maxBatchSize} (got ${String(batch)})`)
  const payouts: unknown = settings.maxActivePayouts
  if (!whole(payouts) || payouts < 1) found.push(`maxActivePayouts must be a whole number above 0 (got ${String(payouts)})`)
  if (typeof settings.allowPrivateCallbacks !== "boolean") found.push(`allowPrivateCallbacks must be true or false (got ${String(settings.allowPrivateCallbacks)})`)
  const url: unknown = settings.publicUrl
  const parsed = typeof url === "string" && URL.canParse(url) ? new URL(url) : null
  if (parsed === null || (parsed.protocol !== "http:" && parsed.protocol !== "https:") || (url as string).endsWith("/")) {
    found.push(`publicUrl must be an absolute http or https URL without a trailing slash (got ${JSON.stringify(url)})`)
  }
  return found
}

/** A host's changes to the defaults: a setting left out, or given as `undefined`, keeps its default. */
export type Overrides = { readonly [K in keyof Settings]?: Settings[K] | undefined }

/** The defaults with `overrides` (one given as undefined keeps its default), checked (`problems`): `InvalidSettings` names every setting out of range. */
export const make = (overrides: Overrides = {}): Effect.Effect<Settings, InvalidSettings> =>
  Effect.suspend(() => {
    // An override given as undefined keeps the default (a host without exactOptionalPropertyTypes
    // may write `batchSize: env.BATCH === undefined ? undefined : Number(env.BATCH)`).
    const given = Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined))
    const settings: Settings = { ...defaults, ...given }
    const found = problems(settings)
    return found.length === 0
      ? Effect.succeed(settings)
      : Effect.fail(new InvalidSettings({ message: `invalid Paydesk settings: ${found.join("; ")}`, problems: found }))
  })

/**
 * `PaydeskConfig` from the defaults with `overrides`, checked: a setting out of range fails the layer's
 * build. (`PaydeskConfig` is a reference with the defaults, so the layer adds no requirement to its type.)
 */
export const layer = (overrides: Overrides = {}): Layer.Layer<never, InvalidSettings> =>
  Layer.effect(PaydeskConfig)(make(overrides))
