/**
 * The request guards on PostgreSQL: used nonces (`nonces`) and idempotency records
 * (`idempotency_records`).
 *
 * A nonce claim is one upsert that takes the pair when it is free or its earlier window has
 * passed, and returns a row only then, so concurrent claims of one pair serialize on its
 * primary key and exactly one wins. An idempotency record is unique per
 * `(terminal, scope, key)`; the loser of a concurrent duplicate gets `WriteConflict`.
 */
import { Effect, Layer, Option } from "effect"
import { IdempotencyStore, NonceStore, Traced } from "@paydesk/core"
import type { IdempotencyRecord } from "@paydesk/core"
import { SqlClient } from "effect/sql"
import { conflictOnUnique, fromTime, orDie, time } from "./PgSupport.js"

/** `NonceStore` on the `SqlClient` in context. */
export const layerNonceStore: Layer.Layer<NonceStore, never, SqlClient.SqlClient> = Layer.effect(
  NonceStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return NonceStore.of({
      claim: Traced.fn("PgNonceStore.claim")(function*(apiKeyId, nonce, now, expiresAt) {
        const rows = yield* orDie(sql`INSERT INTO nonces (api_key_id, nonce, expires_at)
          VALUES (${apiKeyId}, ${nonce}, ${time(expiresAt)})
          ON CONFLICT (api_key_id, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at
            WHERE nonces.expires_at <= ${time(now)}
          RETURNING 1 AS claimed`)
        return rows.length > 0
      }),

      purge: Traced.fn("PgNonceStore.purge")(function*(now) {
        const rows = yield* orDie(sql<{ readonly purged: number }>`WITH gone AS (
            DELETE FROM nonces WHERE expires_at <= ${time(now)} RETURNING 1
          )
          SELECT count(*)::int AS purged FROM gone`)
        return rows[0]?.purged ?? 0
      })
    })
  })
)

/** An `idempotency_records` row as the driver returns it. */
interface RecordRow {
  readonly terminal_id: string
  readonly scope: IdempotencyRecord["scope"]
  readonly key: string
  readonly fingerprint: string
  readonly resource_id: string
  readonly created_at: Date
}

/** A row back to the core's idempotency record. */
const toEntity = (row: RecordRow): IdempotencyRecord => ({
  terminalId: row.terminal_id,
  scope: row.scope,
  key: row.key,
  fingerprint: row.fingerprint,
  resourceId: row.resource_id,
  createdAt: fromTime(row.created_at)
})

/** `IdempotencyStore` on the `SqlClient` in context. */
export const layerIdempotencyStore: Layer.Layer<IdempotencyStore, never, SqlClient.SqlClient> = Layer.effect(
  IdempotencyStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return IdempotencyStore.of({
      find: Traced.fn("PgIdempotencyStore.find")(function*(terminalId, scope, key) {
        const rows = yield* orDie(sql<RecordRow>`SELECT * FROM idempotency_records
          WHERE terminal_id = ${terminalId} AND scope = ${scope} AND key = ${key}`)
        return Option.map(Option.fromUndefinedOr(rows[0]), toEntity)
      }),

      insert: Traced.fn("PgIdempotencyStore.insert")(function*(record) {
        yield* sql`INSERT INTO idempotency_records ${
          sql.insert({
            terminal_id: record.terminalId,
            scope: record.scope,
            key: record.key,
            fingerprint: record.fingerprint,
            resource_id: record.resourceId,
            created_at: time(record.createdAt)
          })
        }`.pipe(conflictOnUnique("idempotency_records_pkey"))
      }),

      purge: Traced.fn("PgIdempotencyStore.purge")(function*(before, scopes) {
        const rows = yield* orDie(scopes === undefined
          ? sql<{ readonly purged: number }>`WITH gone AS (
              DELETE FROM idempotency_records WHERE created_at < ${time(before)} RETURNING 1
            )
            SELECT count(*)::int AS purged FROM gone`
          : sql<{ readonly purged: number }>`WITH gone AS (
              DELETE FROM idempotency_records WHERE created_at < ${time(before)} AND scope IN ${sql.in(scopes)} RETURNING 1
            )
            SELECT count(*)::int AS purged FROM gone`)
        return rows[0]?.purged ?? 0
      }),

      remove: Traced.fn("PgIdempotencyStore.remove")(function*(terminalId, scope, key) {
        yield* orDie(sql`DELETE FROM idempotency_records WHERE terminal_id = ${terminalId} AND scope = ${scope} AND key = ${key}`)
      })
    })
  })
)
