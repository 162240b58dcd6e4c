/**
 * Every persistence port of Paydesk on PostgreSQL, and the migrations that shape the schema.
 *
 * `layer({ url })` connects a pool, runs the migrations (under a transaction-scoped advisory
 * lock, so concurrent starts are safe) and provides `Transactions` plus every repository and
 * store. `layerRepositories` provides the same on a `SqlClient` the host already has.
 */
import { Effect, Exit, Layer, Redacted } from "effect"
import { type Persistence as CorePersistence, SecretCipher } from "@paydesk/core"
import { PgClient } from "@effect/sql-pg"
import { Migrator, SqlClient, type SqlError } from "effect/sql"
import { migrations } from "./PgMigrations.js"
import * as PgIdentity from "./PgIdentity.js"
import * as PgOutboxRepository from "./PgOutboxRepository.js"
import * as PgPaymentRepository from "./PgPaymentRepository.js"
import * as PgPayouts from "./PgPayouts.js"
import * as PgRecurring from "./PgRecurring.js"
import * as PgRequestStores from "./PgRequestStores.js"
import * as PgTestClockRepository from "./PgTestClockRepository.js"
import * as PgTransactions from "./PgTransactions.js"

/** The persistence ports. */
export type Persistence = CorePersistence

/** Table that records applied migrations. */
export const migrationsTable = "paydesk_migrations"

/** Runs pending migrations once, safely under concurrent starts; returns the ones applied. */
export const migrate = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const run = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: migrationsTable })
  return yield* sql.withTransaction(
    Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(7226170001)`
      return yield* run
    })
  )
})

/**
 * Migrations of this build not applied to the database yet (names such as `0004_security_hardening`);
 * empty once `migrate` has run. A database without the migrations table has every one pending.
 */
export const pendingMigrations = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const exists = yield* sql<{ readonly present: boolean }>`SELECT to_regclass(${migrationsTable}) IS NOT NULL AS present`
  const applied = exists[0]?.present === true
    ? new Set((yield* sql<{ readonly migration_id: number }>`SELECT migration_id FROM ${sql(migrationsTable)}`).map((r) => Number(r.migration_id)))
    : new Set<number>()
  return Object.keys(migrations).filter((name) => !applied.has(Number(/^(\d+)_/.exec(name)?.[1])))
})

/**
 * Migrations applied to the database that this build does not have (`<id>_<name>`): a newer build
 * migrated it (a rollback, or an older process during a rolling upgrade). Empty on a database this
 * build or an older one migrated.
 */
export const unknownMigrations = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const exists = yield* sql<{ readonly present: boolean }>`SELECT to_regclass(${migrationsTable}) IS NOT NULL AS present`
  if (exists[0]?.present !== true) return []
  const known = new Set(Object.keys(migrations).map((name) => Number(/^(\d+)_/.exec(name)?.[1])))
  const applied = yield* sql<{ readonly migration_id: number; readonly name: string }>`SELECT migration_id, name FROM ${sql(migrationsTable)} ORDER BY migration_id`
  return applied.filter((row) => !known.has(Number(row.migration_id))).map((row) => `${String(row.migration_id).padStart(4, "0")}_${row.name}`)
})

/** Every repository and store on the `SqlClient` in context. */
export const layerRepositories: Layer.Layer<Persistence, never, SqlClient.SqlClient> = Layer.mergeAll(
  PgTransactions.layer,
  PgIdentity.layerAccountRepository,
  PgIdentity.layerTerminalRepository,
  PgIdentity.layerApiKeyRepository,
  PgIdentity.layerSessionRepository,
  PgRecurring.layerPlanRepository,
  PgRecurring.layerSubscriptionRepository,
  PgTestClockRepository.layer,
  PgRecurring.layerChargeRepository,
  PgPaymentRepository.layer,
  PgPayouts.layerPayoutRepository,
  PgPayouts.layerLedgerRepository,
  PgOutboxRepository.layer,
  PgRequestStores.layerNonceStore,
  PgRequestStores.layerIdempotencyStore
)

/** A pooled client for `url` (`applicationName` shows in `pg_stat_activity`). */
export const layerClient = (url: string | Redacted.Redacted<string>, options: { readonly maxConnections?: number; readonly applicationName?: string } = {}) =>
  PgClient.layer({
    url: typeof url === "string" ? Redacted.make(url) : url,
    maxConnections: options.maxConnections ?? 10,
    ...(options.applicationName === undefined ? {} : { applicationName: options.applicationName })
  })

/** Connects to `url`, migrates, and provides every persistence port plus the client. */
export const layer = (url: string, options: { readonly maxConnections?: number } = {}) =>
  Layer.effectDiscard(Effect.orDie(migrate)).pipe(
    Layer.provideMerge(layerRepositories),
    Layer.provideMerge(layerClient(url, options))
  )

/**
 * Whether the host's `SecretCipher` (its secret key) decrypts the secrets the database holds: every
 * terminal's signing secret (and previous secret) is decrypted with it, `unreadable` counting the
 * terminals with one it cannot (of `terminals`). A database that holds none yet (fresh) answers
 * `{ stored: false, decrypts: true, terminals: 0, unreadable: 0 }`: nothing to check.
 *
 * A host checks this at start, after the migrations, and refuses to start when `decrypts` is false: the
 * database was written with another key (a move to a new host, a backup restored without its key, a
 * wrong key in the configuration). Running on would sign no callback ("signing secret unavailable",
 * every delivery failing until it is given up) and rotate no secret. The reference server refuses to
 * start then, and generates no key for a database that already holds secrets (`stored`).
 *
 * ```ts
 * const { decrypts } = yield* PgStore.checkSecretCipher.pipe(Effect.provide(NodeSecurity.layerAesGcmSecretCipher(key)))
 * ```
 */
export const checkSecretCipher: Effect.Effect<
  { readonly stored: boolean; readonly decrypts: boolean; readonly terminals: number; readonly unreadable: number },
  SqlError.SqlError,
  SqlClient.SqlClient | SecretCipher
> = Effect.gen(function*() {
  const cipher = yield* SecretCipher
  // A foreign or tampered ciphertext dies (the port's contract).
  const opens = (ciphertext: string) => Effect.map(Effect.exit(cipher.decrypt(ciphertext)), Exit.isSuccess)
  // Every terminal's secrets, not one: after a rotation of the key the terminals may be under
  // different keys (a review found a half-rotated database passing a check of one row).
  let terminals = 0
  let unreadable = 0
  yield* forEachTerminalSecrets(1000, (row) =>
    Effect.gen(function*() {
      terminals++
      if (!(yield* opens(row.secret)) || (row.previous !== null && !(yield* opens(row.previous)))) unreadable++
    }))
  return { stored: terminals > 0, decrypts: unreadable === 0, terminals, unreadable }
})

/** What the key marker holds, encrypted: any text would do; this one says what it is for. */
const markerText = "paydesk secret key marker"

/**
 * Marks the database as the host's key's (its `SecretCipher`): the first process to start on it
 * writes a marker encrypted with its key, and every later one (every start) reads it back. `matches`
 * false: the marker was written with a key this host has not (nor among its previous and next keys),
 * so the processes on this database would not share a key. `checkSecretCipher` finds that only once
 * a terminal's secret is stored: until then two processes started on a fresh database with keys of
 * their own both ran, and every callback of a terminal made by one was unsigned by the other, which
 * said it was ready (an outside probe: half of 40 callbacks never sent). The marker is written again
 * with the key in force by `reencryptSigningSecrets`, as the terminals' secrets are.
 */
export const claimSecretKey: Effect.Effect<
  { readonly written: boolean; readonly matches: boolean },
  SqlError.SqlError,
  SqlClient.SqlClient | SecretCipher
> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cipher = yield* SecretCipher
  const inserted = yield* sql`INSERT INTO secret_key_marker (id, ciphertext) VALUES (1, ${yield* cipher.encrypt(markerText)})
    ON CONFLICT (id) DO NOTHING RETURNING id`
  if (inserted.length > 0) return { written: true, matches: true }
  const rows = yield* sql<{ readonly ciphertext: string }>`SELECT ciphertext FROM secret_key_marker WHERE id = 1`
  const opened = rows.length === 0 ? null : yield* Effect.exit(cipher.decrypt(rows[0]!.ciphertext))
  return { written: false, matches: opened !== null && Exit.isSuccess(opened) && opened.value === markerText }
})

/** Runs `each` on every terminal's stored secrets, in the order of their ids, `batch` terminals a read. */
const forEachTerminalSecrets = <E, R>(
  batch: number,
  each: (row: { readonly id: string; readonly secret: string; readonly previous: string | null }) => Effect.Effect<void, E, R>
): Effect.Effect<void, E | SqlError.SqlError, R | SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    let after = "00000000-0000-0000-0000-000000000000"
    for (;;) {
      const rows = yield* sql<{ readonly id: string; readonly secret: string; readonly previous: string | null }>`
        SELECT id, signing_secret_encrypted AS secret, previous_signing_secret_encrypted AS previous
        FROM terminals WHERE id > ${after} ORDER BY id LIMIT ${batch}`
      if (rows.length === 0) return
      after = rows[rows.length - 1]!.id
      for (const row of rows) yield* each(row)
    }
  })

/** What `reencryptSigningSecrets` did. */
export interface Reencrypted {
  /** Terminals whose secrets were written again with the current key. */
  readonly reencrypted: number
  /** Terminals with a secret no key opens (left as they are). */
  readonly unreadable: number
}

/**
 * After a rotation of the host's secret key: writes every terminal signing secret (and previous
 * secret) that `current` does not open but `readable` (the new key and the earlier ones) does again
 * with `current`, `batch` terminals a statement read, so that the earlier keys can be dropped.
 * `current` encrypts with the new key; what it opens (the new key, and any key the host also keeps,
 * such as the next key of a fleet's rotation) is left as it is. Each terminal is updated only while
 * its secrets are still the ones read (a rotation of its signing secret meanwhile, or another process
 * doing the same, wins), and its `updated_at` is left alone (its settings did not change). Safe to run from several processes at
 * once and again at any time.
 */
export const reencryptSigningSecrets = (
  current: SecretCipher["Service"],
  readable: SecretCipher["Service"],
  batch = 500
): Effect.Effect<Reencrypted, SqlError.SqlError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    /** The ciphertext again under `current`; the same one when `current` opens it; null when no key does. */
    const again = (ciphertext: string): Effect.Effect<string | null> =>
      Effect.gen(function*() {
        if (Exit.isSuccess(yield* Effect.exit(current.decrypt(ciphertext)))) return ciphertext
        const opened = yield* Effect.exit(readable.decrypt(ciphertext))
        return Exit.isSuccess(opened) ? yield* current.encrypt(opened.value) : null
      })
    let reencrypted = 0
    let unreadable = 0
    yield* forEachTerminalSecrets(batch, (row) =>
      Effect.gen(function*() {
        const secretAgain = yield* again(row.secret)
        const previousAgain = row.previous === null ? null : yield* again(row.previous)
        if (secretAgain === null || (row.previous !== null && previousAgain === null)) unreadable++
        // What no key opens stays as it is.
        const secret = secretAgain ?? row.secret
        const previous = previousAgain ?? row.previous
        if (secret === row.secret && previous === row.previous) return
        const updated = yield* sql`
          UPDATE terminals SET signing_secret_encrypted = ${secret}, previous_signing_secret_encrypted = ${previous}
          WHERE id = ${row.id} AND signing_secret_encrypted = ${row.secret}
            AND previous_signing_secret_encrypted IS NOT DISTINCT FROM ${row.previous}
          RETURNING id`
        reencrypted += updated.length
      }))
    // The key marker (`claimSecretKey`) too, so that a process given only the new key reads it.
    const marker = yield* sql<{ readonly ciphertext: string }>`SELECT ciphertext FROM secret_key_marker WHERE id = 1`
    const markerAgain = marker.length === 0 ? null : yield* again(marker[0]!.ciphertext)
    if (markerAgain !== null && markerAgain !== marker[0]!.ciphertext) {
      yield* sql`UPDATE secret_key_marker SET ciphertext = ${markerAgain} WHERE id = 1 AND ciphertext = ${marker[0]!.ciphertext}`
    }
    return { reencrypted, unreadable }
  })

/** Creates database `name` on the server of `serverUrl` and returns its URL (tests, benchmarks, tooling). */
export const createDatabase = (serverUrl: string, name: string): Effect.Effect<string> => {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) return Effect.die(new Error(`invalid database name ${name}`))
  return Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE DATABASE ${name}`)).pipe(
    Effect.provide(layerClient(serverUrl, { maxConnections: 1 })),
    Effect.orDie,
    Effect.as((() => {
      const url = new URL(serverUrl)
      url.pathname = `/${name}`
      return url.toString()
    })())
  )
}

/** Drops every database on the server of `serverUrl` whose name starts with `prefix`, closing their connections (tests, tooling). */
export const dropDatabases = (serverUrl: string, prefix: string): Effect.Effect<ReadonlyArray<string>> => {
  if (!/^[a-z_][a-z0-9_]{3,40}$/.test(prefix)) return Effect.die(new Error(`invalid database name prefix ${prefix}`))
  return Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ datname: string }>`SELECT datname FROM pg_database WHERE starts_with(datname, ${prefix})`
    for (const { datname } of rows) yield* sql.unsafe(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`)
    return rows.map((r) => r.datname)
  }).pipe(Effect.provide(layerClient(serverUrl, { maxConnections: 1 })), Effect.orDie)
}
