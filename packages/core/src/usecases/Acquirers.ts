/**
 * Which acquirer serves a subscription: the live `Acquirer`, or for a sandbox subscription the
 * `SandboxAcquirer` (no real money). A host without a sandbox acquirer offers no sandbox
 * subscriptions, so asking for it there is a clear 400.
 */
import { Effect, Option } from "effect"
import { InvalidRequest } from "../Errors.js"
import type { Environment } from "../Payment.js"
import { Acquirer, SandboxAcquirer } from "../ports/Acquirer.js"

/** The message when a deployment has no sandbox acquirer. */
export const sandboxUnavailable = "sandbox subscriptions are not available in this deployment"

/** The acquirer of an environment. */
export const acquirerFor = Effect.fnUntraced(function*(environment: Environment) {
  if (environment === "prod") return yield* Acquirer
  const sandbox = yield* Effect.serviceOption(SandboxAcquirer)
  if (Option.isNone(sandbox)) return yield* new InvalidRequest({ field: "test", message: sandboxUnavailable })
  return sandbox.value as Acquirer["Service"]
})

/** The sandbox acquirer, when the host has one. */
export const sandbox = Effect.serviceOption(SandboxAcquirer)
