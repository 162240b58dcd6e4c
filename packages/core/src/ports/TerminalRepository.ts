/**
 * Port: terminals.
 *
 * Contract: `getForUpdate` locks the row until the surrounding transaction ends (it serializes
 * balance-changing work of one terminal); `getForShare` reads it under a lock that `getForUpdate`
 * waits for, and that waits for it, but not other readers or `getForShare` (money credited on the
 * settings read so cannot race a settings change, such as the conversion mode); `update` stores
 * the whole record.
 * `claimDueConversions(now, limit)` returns terminals (any conversion mode) whose
 * `nextConversionAt <= now`, locked and skipping rows other transactions hold.
 */
import { Context, type Effect, type Option } from "effect"
import type { Terminal } from "../Terminal.js"

export class TerminalRepository extends Context.Service<TerminalRepository, {
  insert(terminal: Terminal): Effect.Effect<void>
  get(id: string): Effect.Effect<Option.Option<Terminal>>
  getForUpdate(id: string): Effect.Effect<Option.Option<Terminal>>
  getForShare(id: string): Effect.Effect<Option.Option<Terminal>>
  update(terminal: Terminal): Effect.Effect<void>
  listByAccount(accountId: string): Effect.Effect<ReadonlyArray<Terminal>>
  claimDueConversions(now: number, limit: number): Effect.Effect<ReadonlyArray<Terminal>>
}>()("@paydesk/core/TerminalRepository") {}
