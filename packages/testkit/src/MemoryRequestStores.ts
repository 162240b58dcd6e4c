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

/** Memory `NonceStore`. */
export const layerNonceStore: Layer.Layer<NonceStore, never, MemoryDatabase> = Layer.effect(
  NonceStore,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { nonces } = db.tables
    return NonceStore.of({
      claim: (apiKeyId, nonce, now, expiresAt) =>
        db.atomically(Effect.sync(() => {
          const key = `${apiKeyId}\u0000${nonce}`
          const earlier = nonces.get(key)
          if (earlier !== undefined && earlier.expiresAt > now) return false
          nonces.set(key, { apiKeyId, nonce, expiresAt })
          return true
        })),
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
      purge: (before) =>
        db.atomically(Effect.sync(() => {
          let purged = 0
          for (const [key, record] of idempotency) {
            if (record.createdAt < before) {
              idempotency.delete(key)
              purged++
            }
          }
          return purged
        }))
    })
  })
)
