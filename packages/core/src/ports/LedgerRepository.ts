/**
 * Port: the append-only ledger.
 *
 * Contract: `append` stores all entries or none; entries are never changed or deleted.
 * `balance` sums a terminal's entries per account (zero for an account with no entries).
 * `entriesFor(refId)` returns the entries written for one payment or payout, oldest first.
 * Neither takes a lock on the terminal's row (`TerminalRepository.getForUpdate`): use cases that
 * need it take it before any payout's row, and `append` runs where a payout's row is held (a
 * rejection, a send's record), so a lock there would take the two in the other order.
 */
import { Context, type Effect } from "effect"
import type { Balance, Entry } from "../Ledger.js"

export class LedgerRepository extends Context.Service<LedgerRepository, {
  append(entries: ReadonlyArray<Entry>): Effect.Effect<void>
  balance(terminalId: string): Effect.Effect<Balance>
  entriesFor(refId: string): Effect.Effect<ReadonlyArray<Entry>>
}>()("@paydesk/core/LedgerRepository") {}
