/**
 * Port: idempotency records of requests that create resources.
 *
 * Contract: one record per `(terminalId, scope, key)`: `insert` fails with `WriteConflict`
 * when the triple exists, which makes a concurrent duplicate lose and retry (and then find
 * the winner's record). `purge(before, scopes)` deletes records created before `before` (of the
 * given scopes, or of all); `remove` deletes one record (an expired one, before its key is reused).
 */
import { Context, type Effect, type Option } from "effect"
import type { WriteConflict } from "../Errors.js"

/** A stored idempotency record: the body fingerprint and the resource it created. */
export interface IdempotencyRecord {
  readonly terminalId: string
  /**
   * `rotation`: a signing-secret rotation's key (its `fingerprint` names the rotation, `resourceId` the terminal).
   * `operator`: an operator's move on a payment or payout (`Idempotency.operatorMoveReplayed`; the
   * `fingerprint` names the move, `resourceId` the object).
   */
  readonly scope: "subscription" | "payout" | "payment" | "rotation" | "operator"
  readonly key: string
  readonly fingerprint: string
  readonly resourceId: string
  readonly createdAt: number
}

export class IdempotencyStore extends Context.Service<IdempotencyStore, {
  find(terminalId: string, scope: IdempotencyRecord["scope"], key: string): Effect.Effect<Option.Option<IdempotencyRecord>>
  insert(record: IdempotencyRecord): Effect.Effect<void, WriteConflict>
  purge(before: number, scopes?: ReadonlyArray<IdempotencyRecord["scope"]>): Effect.Effect<number>
  remove(terminalId: string, scope: IdempotencyRecord["scope"], key: string): Effect.Effect<void>
}>()("@paydesk/core/IdempotencyStore") {}
