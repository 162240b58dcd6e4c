/**
 * Port: terminals.
 *
 * Contract: `getForUpdate` locks the row until the surrounding transaction ends (it serializes
 * balance-changing work of one terminal); `getForCredit` reads it to credit live money by its
 * conversion mode and holds that mode until the transaction ends: `lockConversionMode` (a switch to
 * instant) waits for the credits in flight, and credits that come meanwhile wait for it; credits
 * wait for nothing else (not each other, a conversion, a payout or `getForUpdate`), and nothing
 * else waits for them. `update` stores the whole record.
 * `claimDueConversions(now, limit)` returns terminals (any conversion mode) whose
 * `nextConversionAt <= now`, locked and skipping rows other transactions hold.
 */
import { Context, type Effect, type Option } from "effect"
import type { Terminal } from "../Terminal.js"

export class TerminalRepository extends Context.Service<TerminalRepository, {
  insert(terminal: Terminal): Effect.Effect<void>
  get(id: string): Effect.Effect<Option.Option<Terminal>>
  getForUpdate(id: string): Effect.Effect<Option.Option<Terminal>>
  getForCredit(id: string): Effect.Effect<Option.Option<Terminal>>
  lockConversionMode(id: string): Effect.Effect<void>
  update(terminal: Terminal): Effect.Effect<void>
  listByAccount(accountId: string): Effect.Effect<ReadonlyArray<Terminal>>
  claimDueConversions(now: number, limit: number): Effect.Effect<ReadonlyArray<Terminal>>
}>()("@paydesk/core/TerminalRepository") {}
