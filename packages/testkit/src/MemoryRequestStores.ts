/**
 * Memory adapters of the request guards: used nonces and idempotency records.
 *
 * A nonce claim succeeds when the `(apiKeyId, nonce)` pair is free or its earlier claim has
 * expired (`expiresAt <= now`), and then records the new window. Idempotency records are unique per
 * `(terminalId, scope, key)`. Both run under the database lock, so concurrent claims of one nonce
 * serialize and exactly one wins.
 */
import { Effect, Layer, Option } from "effect"
import { IdempotencyStore, NonceStore } from "@paydesk/core"
import type { IdempotencyRecord } from "@paydesk/core"
import { MemoryDatabase, writeConflict } from "./MemoryDatabase.js"

/** The claim rule on the memory table: free, or its earlier window over; records the new window. */
export const claimNonce = (
  nonces: MemoryDatabase["Service"]["tables"]["nonces"],
  apiKeyId: string,
  nonce: string,
  now: number,
  expiresAt: number
): boolean => {
  const key = `${apiKeyId}\u0000${nonce}`
  const earlier = nonces.get(key)
  if (earlier !== undefined && earlier.expiresAt > now) return false
  nonces.set(key, { apiKeyId, nonce, expiresAt })
  return true
}

/** Memory `NonceStore`. */
export const layerNonceStore: Layer.Layer<NonceStore, never, MemoryDatabase> = Layer.effect(
  NonceStore,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { nonces } = db.tables
    return NonceStore.of({
      claim: (apiKeyId, nonce, now, expiresAt) => db.atomically(Effect.sync(() => claimNonce(nonces, apiKeyId, nonce, now, expiresAt))),
      purge: (now) =>
        db.atomically(Effect.sync(() => {
          let purged = 0
          for (const [key, claim] of nonces) {
            if (claim.expiresAt <= now) {
              nonces.delete(key)
              purged++
            }
          }
          return purged
        }))
    })
  })
)

const recordKey = (terminalId: string, scope: IdempotencyRecord["scope"], key: string): string =>
  `${terminalId}\u0000${scope}\u0000${key}`

/** Memory `IdempotencyStore`. */
export const layerIdempotencyStore: Layer.Layer<IdempotencyStore, never, MemoryDatabase> = Layer.effect(
  IdempotencyStore,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { idempotency } = db.tables
    return IdempotencyStore.of({
      find: (terminalId, scope, key) =>
        db.atomically(Effect.sync(() => Option.fromUndefinedOr(idempotency.get(recordKey(terminalId, scope, key))))),
      insert: (record) =>
        db.atomically(Effect.suspend(() => {
          const key = recordKey(record.terminalId, record.scope, record.key)
          if (idempotency.has(key)) return Effect.fail(writeConflict("idempotency_records_pkey"))
          idempotency.set(key, record)
          return Effect.void
        })),
      purge: (before, scopes) =>
        db.atomically(Effect.sync(() => {
          let purged = 0
          for (const [key, record] of idempotency) {
            if (record.createdAt < before && (scopes === undefined || scopes.includes(record.scope))) {
              idempotency.delete(key)
              purged++
            }
          }
          return purged
        })),
      remove: (terminalId, scope, key) =>
        db.atomically(Effect.sync(() => {
          idempotency.delete(recordKey(terminalId, scope, key))
        }))
    })
  })
)
