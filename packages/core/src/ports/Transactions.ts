/**
 * Port: run an effect atomically.
 *
 * Contract: every repository write made inside `run` is committed together when the effect
 * succeeds and none is visible when it fails (any error or defect rolls back all of them).
 * Nested `run` calls join the outer transaction. Rows read with a repository's `getForUpdate`
 * or claimed with a `claim*` method inside `run` stay locked against other transactions until
 * it ends. A transaction the database aborts for a concurrency reason (deadlock, serialization
 * failure) fails with `WriteConflict`, which `atomic` retries. Adapters: Postgres
 * (`sql.withTransaction`), memory (one global lock plus snapshot and restore).
 */
import { Context, type Effect } from "effect"
import type { WriteConflict } from "../Errors.js"

export class Transactions extends Context.Service<Transactions, {
  /** Runs `effect` in one transaction. */
  run<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | WriteConflict, R>
}>()("@paydesk/core/Transactions") {}
