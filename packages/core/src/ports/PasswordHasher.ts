/**
 * Port: password hashing.
 *
 * Contract: `hash` returns a self-describing string (algorithm, parameters, salt, hash) that
 * never contains the password; `verify(password, hash)` is true only for the hashed password
 * and compares in constant time. Production adapters use a memory-hard function (scrypt) and may
 * bound how many run at once: past their queue they fail with `ServiceBusy` instead of waiting.
 */
import { Context, type Effect } from "effect"
import type { ServiceBusy } from "../Errors.js"

export class PasswordHasher extends Context.Service<PasswordHasher, {
  hash(password: string): Effect.Effect<string, ServiceBusy>
  verify(password: string, hash: string): Effect.Effect<boolean, ServiceBusy>
}>()("@paydesk/core/PasswordHasher") {}
