/**
 * Port: subscription plans.
 *
 * Contract: `(code, version)` is unique (`insert` fails with `WriteConflict` otherwise);
 * `latestVersion(code)` is 0 for an unknown code; `listForTerminal` returns plans connected to
 * the terminal ordered by code then version, only active ones when `activeOnly`;
 * `deactivateOlder(code, version)` deactivates every version of `code` below `version`;
 * `activeVersions(code)` returns the active versions of `code` (with their terminals) by version.
 */
import { Context, type Effect, type Option } from "effect"
import type { WriteConflict } from "../Errors.js"
import type { Plan } from "../Plan.js"

export class PlanRepository extends Context.Service<PlanRepository, {
  insert(plan: Plan): Effect.Effect<void, WriteConflict>
  get(id: string): Effect.Effect<Option.Option<Plan>>
  latestVersion(code: string): Effect.Effect<number>
  deactivateOlder(code: string, version: number): Effect.Effect<void>
  activeVersions(code: string): Effect.Effect<ReadonlyArray<Plan>>
  listForTerminal(terminalId: string, options: { readonly activeOnly: boolean }): Effect.Effect<ReadonlyArray<Plan>>
}>()("@paydesk/core/PlanRepository") {}
