/**
 * Memory adapters of the recurring-billing ports: plans, subscriptions and charge attempts.
 *
 * Unique keys fail with `WriteConflict`: plan `(code, version)`, subscription `payToken`, charge
 * `(subscriptionId, cycleNumber, attempt)` (and every `id`). Subscription updates are optimistic
 * (`version` must be the stored one plus one). `claimDue` and `claimStopPending` lease the subscriptions
 * they return by setting `chargeLeaseUntil` and bumping `version`, so a second claim skips them
 * until the lease ends. Claims take the rows of the given test clock only (of none by default).
 */
import { Effect, Layer, Option } from "effect"
import { Charge, ChargeRepository, PlanRepository, SubscriptionRepository } from "@paydesk/core"
import type { Subscription } from "@paydesk/core"
import { compareText, earliest, MemoryDatabase, newestFirst, pageOf, writeConflict } from "./MemoryDatabase.js"

/** Memory `PlanRepository`. */
export const layerPlanRepository: Layer.Layer<PlanRepository, never, MemoryDatabase> = Layer.effect(
  PlanRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { plans } = db.tables
    return PlanRepository.of({
      insert: (plan) =>
        db.atomically(Effect.suspend(() => {
          if (plans.has(plan.id)) return Effect.fail(writeConflict("plans_pkey"))
          for (const p of plans.values()) {
            if (p.code === plan.code && p.version === plan.version) return Effect.fail(writeConflict("plans_code_version"))
          }
          plans.set(plan.id, plan)
          return Effect.void
        })),
      get: (id) => db.atomically(Effect.sync(() => Option.fromUndefinedOr(plans.get(id)))),
      latestVersion: (code) =>
        db.atomically(Effect.sync(() => {
          let latest = 0
          for (const p of plans.values()) if (p.code === code && p.version > latest) latest = p.version
          return latest
        })),
      deactivateOlder: (code, version) =>
        db.atomically(Effect.sync(() => {
          for (const p of plans.values()) {
            if (p.code === code && p.version < version && p.active) plans.set(p.id, { ...p, active: false })
          }
        })),
      activeVersions: (code) =>
        db.atomically(Effect.sync(() => [...plans.values()].filter((p) => p.code === code && p.active).sort((a, b) => a.version - b.version))),
      listForTerminal: (terminalId, options) =>
        db.atomically(Effect.sync(() =>
          [...plans.values()]
            .filter((p) => p.terminalIds.includes(terminalId) && (!options.activeOnly || p.active))
            .sort((a, b) => compareText(a.code, b.code) || a.version - b.version)
        ))
    })
  })
)

const unleased = (s: Subscription.Subscription, now: number): boolean =>
  s.chargeLeaseUntil === null || s.chargeLeaseUntil <= now

const isDue = (s: Subscription.Subscription, now: number): boolean =>
  s.providerState === "active" && s.billingStatus === "enabled" && s.nextChargeAt !== null &&
  s.nextChargeAt <= now && unleased(s, now)

/** Whether a row belongs to the scope of a claim: the given test clock, or no clock. */
const inScope = (s: { readonly testClockId: string | null }, testClockId: string | null | undefined): boolean =>
  s.testClockId === (testClockId ?? null)

/** Memory `SubscriptionRepository`. */
export const layerSubscriptionRepository: Layer.Layer<SubscriptionRepository, never, MemoryDatabase> = Layer.effect(
  SubscriptionRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { subscriptions } = db.tables
    const get = (id: string) => db.atomically(Effect.sync(() => Option.fromUndefinedOr(subscriptions.get(id))))
    const lease = (due: ReadonlyArray<Subscription.Subscription>, leaseUntil: number) =>
      due.map((s) => {
        const leased = { ...s, chargeLeaseUntil: leaseUntil, version: s.version + 1 }
        subscriptions.set(s.id, leased)
        return leased
      })
    const tokenTaken = (candidate: Subscription.Subscription): boolean => {
      for (const s of subscriptions.values()) {
        if (s.id !== candidate.id && s.payToken === candidate.payToken) return true
      }
      return false
    }
    return SubscriptionRepository.of({
      insert: (subscription) =>
        db.atomically(Effect.suspend(() => {
          if (subscriptions.has(subscription.id)) return Effect.fail(writeConflict("subscriptions_pkey"))
          if (tokenTaken(subscription)) return Effect.fail(writeConflict("subscriptions_pay_token"))
          subscriptions.set(subscription.id, subscription)
          return Effect.void
        })),
      get,
      getForUpdate: get,
      update: (subscription) =>
        db.atomically(Effect.suspend(() => {
          const stored = subscriptions.get(subscription.id)
          if (stored === undefined || subscription.version !== stored.version + 1) {
            return Effect.fail(writeConflict("subscriptions_version"))
          }
          if (tokenTaken(subscription)) return Effect.fail(writeConflict("subscriptions_pay_token"))
          subscriptions.set(subscription.id, subscription)
          return Effect.void
        })),
      findByPayToken: (token) =>
        db.atomically(Effect.sync(() => {
          for (const s of subscriptions.values()) if (s.payToken === token) return Option.some(s)
          return Option.none()
        })),
      list: (filter, page) =>
        db.atomically(Effect.sync(() => {
          const all = [...subscriptions.values()]
            .filter((s) =>
              filter.terminalIds.includes(s.terminalId) &&
              (filter.providerState === null || s.providerState === filter.providerState) &&
              (filter.environment === undefined || filter.environment === null || s.environment === filter.environment)
            )
            .sort(newestFirst)
          return { items: pageOf(all, page), total: all.length }
        })),
      claimDue: (now, leaseUntil, limit, testClockId) =>
        db.atomically(Effect.sync(() =>
          lease(
            [...subscriptions.values()]
              .filter((s) => isDue(s, now) && inScope(s, testClockId))
              .sort((a, b) => (a.nextChargeAt ?? 0) - (b.nextChargeAt ?? 0) || compareText(a.id, b.id))
              .slice(0, Math.max(0, limit)),
            leaseUntil
          )
        )),
      claimStopPending: (now, leaseUntil, limit, testClockId) =>
        db.atomically(Effect.sync(() =>
          lease(
            [...subscriptions.values()]
              .filter((s) => s.billingStatus === "stop_pending" && unleased(s, now) && inScope(s, testClockId))
              .sort((a, b) => a.updatedAt - b.updatedAt || compareText(a.id, b.id))
              .slice(0, Math.max(0, limit)),
            leaseUntil
          )
        )),
      earliestDue: (testClockId) =>
        db.atomically(Effect.sync(() =>
          earliest([...subscriptions.values()].filter((s) => s.testClockId === testClockId).map((s) => {
            if (s.billingStatus === "stop_pending") return s.chargeLeaseUntil ?? s.updatedAt
            if (s.providerState !== "active" || s.billingStatus !== "enabled" || s.nextChargeAt === null) return null
            return Math.max(s.nextChargeAt, s.chargeLeaseUntil ?? s.nextChargeAt)
          }))
        )),
      anyOngoing: (testClockId) =>
        db.atomically(Effect.sync(() => [...subscriptions.values()].some((s) => s.testClockId === testClockId && s.billingStatus !== "stopped")))
    })
  })
)

const chargeKey = (c: Pick<Charge.Charge, "subscriptionId" | "cycleNumber" | "attempt">): string =>
  `${c.subscriptionId}\u0000${c.cycleNumber}\u0000${c.attempt}`

/** Memory `ChargeRepository`. */
export const layerChargeRepository: Layer.Layer<ChargeRepository, never, MemoryDatabase> = Layer.effect(
  ChargeRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { charges } = db.tables
    const forSubscription = (subscriptionId: string): Array<Charge.Charge> =>
      [...charges.values()].filter((c) => c.subscriptionId === subscriptionId)
    // Open attempts (pending or unconfirmed) of stopping or stopped subscriptions of a test clock (or of none).
    const openOfStopping = (testClockId: string | null): Array<Charge.Charge> =>
      [...charges.values()].filter((c) => {
        const sub = db.tables.subscriptions.get(c.subscriptionId)
        return (c.status === "pending" || c.status === "unconfirmed") && sub !== undefined &&
          (sub.billingStatus === "stop_pending" || sub.billingStatus === "stopped") && sub.testClockId === testClockId
      })
    return ChargeRepository.of({
      insert: (charge) =>
        db.atomically(Effect.suspend(() => {
          if (charges.has(charge.id)) return Effect.fail(writeConflict("charges_pkey"))
          const key = chargeKey(charge)
          for (const c of charges.values()) {
            if (chargeKey(c) === key) return Effect.fail(writeConflict("charges_subscription_cycle_attempt"))
          }
          charges.set(charge.id, charge)
          return Effect.void
        })),
      get: (id) => db.atomically(Effect.sync(() => Option.fromUndefinedOr(charges.get(id)))),
      update: (charge) =>
        db.atomically(Effect.sync(() => {
          if (charges.has(charge.id)) charges.set(charge.id, charge)
        })),
      listForCycle: (subscriptionId, cycleNumber) =>
        db.atomically(Effect.sync(() =>
          forSubscription(subscriptionId)
            .filter((c) => c.cycleNumber === cycleNumber)
            .sort((a, b) => a.attempt - b.attempt)
        )),
      listBySubscription: (subscriptionId, limit, options) =>
        db.atomically(Effect.sync(() =>
          forSubscription(subscriptionId)
            .filter((c) => options?.bookedOnly !== true || c.status !== "pending")
            .sort((a, b) => b.createdAt - a.createdAt || b.cycleNumber - a.cycleNumber || b.attempt - a.attempt)
            .slice(0, Math.max(0, limit))
        )),
      claimOpenOfStopped: (now, backoff, limit, testClockId) =>
        db.atomically(Effect.sync(() => {
          const claimed = openOfStopping(testClockId ?? null)
            .filter((c) => Charge.nextVoidAt(c, backoff) <= now)
            .sort((a, b) => a.updatedAt - b.updatedAt || compareText(a.id, b.id))
            .slice(0, Math.max(0, limit))
            .map((c) => ({ ...c, updatedAt: now }))
          for (const c of claimed) charges.set(c.id, c)
          return claimed
        })),
      earliestOpenOfStopped: (testClockId, backoff) =>
        db.atomically(Effect.sync(() => earliest(openOfStopping(testClockId).map((c) => Charge.nextVoidAt(c, backoff)))))
    })
  })
)
