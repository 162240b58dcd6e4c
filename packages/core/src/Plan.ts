/**
 * Subscription plans, configured by the operator and read-only for merchants.
 *
 * A plan is either a fixed tariff (payer and merchant amounts, created with `payer_id`) or an
 * amount within a ceiling (`cap_amount_rub`, created with `amount`). Versions of one code are
 * immutable; a new version deactivates the older ones, while subscriptions keep their snapshot.
 */
import type { Interval, ScheduleKind } from "./Schedule.js"
import type { Mode } from "./Subscription.js"

/** A plan version. Amounts in kopecks. */
export interface Plan {
  readonly id: string
  readonly code: string
  readonly name: string
  readonly version: number
  readonly interval: Interval
  readonly schedule: ScheduleKind
  readonly mode: Mode
  readonly capAmount: bigint | null
  readonly payerAmount: bigint | null
  readonly merchantAmount: bigint | null
  readonly maxCycles: number | null
  readonly consentText: string
  readonly policyVersion: string
  readonly active: boolean
  readonly terminalIds: ReadonlyArray<string>
  readonly createdAt: number
}
