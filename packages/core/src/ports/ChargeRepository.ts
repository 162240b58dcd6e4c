/**
 * Port: subscription charge attempts.
 *
 * Contract: `(subscriptionId, cycleNumber, attempt)` is unique: `insert` fails with
 * `WriteConflict` when taken, so two workers can never both start the same attempt.
 * `listForCycle` returns the attempts of one cycle, lowest attempt first. `listBySubscription`
 * returns at most `limit` attempts, newest first (`createdAt` desc, then cycle and attempt desc).
 */
import { Context, type Effect, type Option } from "effect"
import type { Charge } from "../Charge.js"
import type { WriteConflict } from "../Errors.js"

export class ChargeRepository extends Context.Service<ChargeRepository, {
  insert(charge: Charge): Effect.Effect<void, WriteConflict>
  get(id: string): Effect.Effect<Option.Option<Charge>>
  update(charge: Charge): Effect.Effect<void>
  listForCycle(subscriptionId: string, cycleNumber: number): Effect.Effect<ReadonlyArray<Charge>>
  listBySubscription(subscriptionId: string, limit: number): Effect.Effect<ReadonlyArray<Charge>>
}>()("@paydesk/core/ChargeRepository") {}
