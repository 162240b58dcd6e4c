/**
 * Port: password hashing.
 *
 * Contract: `hash` returns a self-describing string (algorithm, parameters, salt, hash) that
 * never contains the password; `verify(password, hash)` is true only for the hashed password
 * and compares in constant time. Production adapters use a memory-hard function (scrypt).
 */
import { Context, type Effect } from "effect"

export class PasswordHasher extends Context.Service<PasswordHasher, {
  hash(password: string): Effect.Effect<string>
  verify(password: string, hash: string): Effect.Effect<boolean>
}>()("@paydesk/core/PasswordHasher") {}
