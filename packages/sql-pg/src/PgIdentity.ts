/**
 * The identity ports on PostgreSQL: accounts and users, terminals, API keys and sessions.
 *
 * E-mails are lowercased by PostgreSQL's `lower` on the way in and on lookup, so the `users`
 * check constraint and the unique index see the same text. `getForUpdate` and
 * `claimDueConversions` take row locks that last until the caller's transaction ends; the
 * claim skips rows other transactions hold. The sessions' revocations lock their refresh families
 * (advisory locks, also until the transaction ends; see `layerSessionRepository`). Lookups by a string that is not a UUID are empty.
 */
import { Effect, Exit, Layer, Option, Request } from "effect"
import { AccountRepository, ApiKeyRepository, Batching, Id, SessionRepository, TerminalRepository, Traced } from "@paydesk/core"
import type { Authenticated, Terminal } from "@paydesk/core"
import { SqlClient } from "effect/sql"
import {
  byIds,
  byUuid,
  conflictOnUnique,
  first,
  fromTime,
  fromTimeOrNull,
  groupCommitted,
  inOneTransaction,
  jsonRows,
  orDie,
  rounds,
  sideBySide,
  time,
  timeOrNull
} from "./PgSupport.js"

type Time = Date | string

interface AccountRow {
  readonly id: string
  readonly name: string
  readonly created_at: Time
}

interface UserRow {
  readonly id: string
  readonly account_id: string
  readonly email: string
  readonly password_hash: string
  readonly role: Terminal.Role
  readonly created_at: Time
}

interface TerminalRow {
  readonly id: string
  readonly account_id: string
  readonly name: string
  readonly status: Terminal.Terminal["status"]
  readonly h2h: boolean
  readonly callback_url: string | null
  readonly success_redirect_url: string | null
  readonly fail_redirect_url: string | null
  readonly conversion_mode: Terminal.ConversionMode
  readonly conversion_time: string | null
  readonly next_conversion_at: Time | null
  readonly show_platform_branding: boolean
  readonly signing_secret_encrypted: string
  readonly previous_signing_secret_encrypted: string | null
  readonly signing_secret_rotated_at: Time | null
  readonly created_at: Time
  readonly updated_at: Time
}

interface ApiKeyRow {
  readonly id: string
  readonly terminal_id: string
  readonly key_hash: string
  readonly prefix: string
  readonly subscription_write: boolean
  readonly created_at: Time
  readonly revoked_at: Time | null
}

/** A terminal's columns (all NULL without a terminal) with its API key's, prefixed `k_`, and the nonce claim. */
type AuthenticatedRow = { readonly [K in keyof TerminalRow]: TerminalRow[K] | null } & {
  readonly [K in keyof ApiKeyRow as `k_${K}`]: ApiKeyRow[K]
} & { readonly k_claimed: boolean }

/** A row of `authenticate` back to the core's answer. */
const toAuthenticated = (row: AuthenticatedRow): Authenticated => ({
  key: toApiKey({
    id: row.k_id,
    terminal_id: row.k_terminal_id,
    key_hash: row.k_key_hash,
    prefix: row.k_prefix,
    subscription_write: row.k_subscription_write,
    created_at: row.k_created_at,
    revoked_at: row.k_revoked_at
  }),
  terminal: row.id === null ? Option.none() : Option.some(toTerminal(row as TerminalRow)),
  nonceClaimed: row.k_claimed
})

/** One `authenticate` waiting to go with the concurrent ones. */
class Authenticate extends Request.Class<{
  readonly keyHash: string
  readonly nonce: string
  readonly now: number
  readonly expiresAt: number
}, Option.Option<Authenticated>> {}

/** Batches of `authenticate` running at once at most; the requests arriving meanwhile wait for the next one. */
export const authenticationBatchesInFlight = 2
/** Authentications in one batch at most. */
export const maxAuthenticationBatch = 200
/**
 * An authentication batch still running after this long (a nonce's row held by another session, say)
 * no longer holds back the next (one such batch at a time: `Batching.batchResolver`'s `maxStalled`).
 */
export const authenticationStallMs = 2_000

interface SessionRow {
  readonly id: string
  readonly user_id: string
  readonly family_id: string
  readonly token_hash: string
  readonly expires_at: Time
  readonly revoked_at: Time | null
  readonly created_at: Time
}

const toAccount = (row: AccountRow): Terminal.Account => ({
  id: row.id,
  name: row.name,
  createdAt: fromTime(row.created_at)
})

const toUser = (row: UserRow): Terminal.User => ({
  id: row.id,
  accountId: row.account_id,
  email: row.email,
  passwordHash: row.password_hash,
  role: row.role,
  createdAt: fromTime(row.created_at)
})

const toTerminal = (row: TerminalRow): Terminal.Terminal => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  status: row.status,
  h2h: row.h2h,
  callbackUrl: row.callback_url,
  successRedirectUrl: row.success_redirect_url,
  failRedirectUrl: row.fail_redirect_url,
  conversionMode: row.conversion_mode,
  conversionTime: row.conversion_time,
  nextConversionAt: fromTimeOrNull(row.next_conversion_at),
  showPlatformBranding: row.show_platform_branding,
  signingSecretEncrypted: row.signing_secret_encrypted,
  previousSigningSecretEncrypted: row.previous_signing_secret_encrypted,
  signingSecretRotatedAt: fromTimeOrNull(row.signing_secret_rotated_at),
  createdAt: fromTime(row.created_at),
  updatedAt: fromTime(row.updated_at)
})

const toApiKey = (row: ApiKeyRow): Terminal.ApiKey => ({
  id: row.id,
  terminalId: row.terminal_id,
  keyHash: row.key_hash,
  prefix: row.prefix,
  subscriptionWrite: row.subscription_write,
  createdAt: fromTime(row.created_at),
  revokedAt: fromTimeOrNull(row.revoked_at)
})

const toSession = (row: SessionRow): Terminal.Session => ({
  id: row.id,
  userId: row.user_id,
  familyId: row.family_id,
  tokenHash: row.token_hash,
  expiresAt: fromTime(row.expires_at),
  revokedAt: fromTimeOrNull(row.revoked_at),
  createdAt: fromTime(row.created_at)
})

/** `AccountRepository` on the `SqlClient` in context; a duplicate e-mail is a `WriteConflict`. */
export const layerAccountRepository: Layer.Layer<AccountRepository, never, SqlClient.SqlClient> = Layer.effect(
  AccountRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return AccountRepository.of({
      insertAccount: (account) =>
        orDie(sql`INSERT INTO accounts (id, name, created_at)
          VALUES (${account.id}, ${account.name}, ${time(account.createdAt)})`.pipe(Effect.asVoid)),
      getAccount: (id) =>
        byUuid(id, (id) =>
          orDie(sql<AccountRow>`SELECT * FROM accounts WHERE id = ${id}`).pipe(
            Effect.map((rows) => first(rows, toAccount))
          )),
      listAccounts: Traced.fn("PgAccountRepository.listAccounts")(function*(page) {
        const rows = yield* orDie(sql<AccountRow>`SELECT * FROM accounts ORDER BY created_at DESC, id DESC
          LIMIT ${Math.max(0, page.limit)} OFFSET ${Math.max(0, page.offset)}`)
        const counted = yield* orDie(sql<{ readonly total: number }>`SELECT count(*)::int AS total FROM accounts`)
        return { items: rows.map(toAccount), total: counted[0]?.total ?? 0 }
      }),
      insertUser: (user) =>
        sql`INSERT INTO users (id, account_id, email, password_hash, role, created_at)
          VALUES (${user.id}, ${user.accountId}, lower(${user.email}), ${user.passwordHash}, ${user.role},
            ${time(user.createdAt)})`.pipe(Effect.asVoid, conflictOnUnique("users_email")),
      getUser: (id) =>
        byUuid(id, (id) =>
          orDie(sql<UserRow>`SELECT * FROM users WHERE id = ${id}`).pipe(Effect.map((rows) => first(rows, toUser)))),
      findUserByEmail: (email) =>
        orDie(sql<UserRow>`SELECT * FROM users WHERE email = lower(${email})`).pipe(
          Effect.map((rows) => first(rows, toUser))
        ),
      listUsers: (accountId) =>
        Id.isUuid(accountId)
          ? orDie(sql<UserRow>`SELECT * FROM users WHERE account_id = ${accountId} ORDER BY created_at, id`).pipe(
            Effect.map((rows) => rows.map(toUser))
          )
          : Effect.succeed([]),
      lockUser: (id) =>
        byUuid(id, (id) =>
          orDie(sql<UserRow>`SELECT * FROM users WHERE id = ${id} FOR SHARE`).pipe(Effect.map((rows) => first(rows, toUser)))),
      setPassword: (id, passwordHash, expected) =>
        Id.isUuid(id)
          ? orDie(sql<{ readonly id: string }>`UPDATE users SET password_hash = ${passwordHash}
              WHERE id = ${id} ${expected === undefined ? sql`` : sql`AND password_hash = ${expected}`} RETURNING id`).pipe(
            Effect.map((rows) => rows.length > 0)
          )
          : Effect.succeed(false)
    })
  })
)

/** A terminal read by id, with the ones read side by side. */
class TerminalById extends Request.Class<{ readonly id: string }, Option.Option<Terminal.Terminal>> {}

/** A terminal read by id to credit on its conversion mode, with the ones read side by side. */
class TerminalForCredit extends Request.Class<{ readonly id: string }, Option.Option<Terminal.Terminal>> {}

/**
 * Advisory-lock key space of terminals' conversion modes (`getForCredit` shared, `lockConversionMode`
 * exclusive). An advisory lock, not the row's: a row lock that a switch to instant could wait on
 * would also be one that conversions, payouts and settings (`FOR NO KEY UPDATE`) wait on, and a hot
 * terminal's stream of credits could hold it off them for good (PostgreSQL's row locks let new
 * sharers in ahead of a waiting updater); the lock manager queues a later sharer behind a waiting
 * switch instead.
 */
const conversionModeLocks = 72261704

/** `TerminalRepository` on the `SqlClient` in context. */
export const layerTerminalRepository: Layer.Layer<TerminalRepository, never, SqlClient.SqlClient> = Layer.effect(
  TerminalRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Reads made side by side (the charge runner's bookings) go as one statement.
    const getTogether = sideBySide(
      sql,
      byIds<TerminalById, TerminalRow, Terminal.Terminal>(sql, (ids) => sql<TerminalRow>`SELECT * FROM terminals WHERE id IN (${ids})`, toTerminal)
    )
    // The conversion-mode locks taken shared, in id order (a volatile function in the select list of
    // an ordered query runs after the sort, so two batches never wait on each other's in a cycle),
    // then the rows read by a statement of their own: a statement reads the rows as they were when
    // it began, so one that waited for a switch to instant inside it would still see the scheduled
    // mode (an outside probe's rerun found roubles stranded so when the read and the lock were one).
    const getForCreditTogether = sideBySide(
      sql,
      byIds<TerminalForCredit, TerminalRow, Terminal.Terminal>(
        sql,
        (ids) =>
          Effect.andThen(
            sql`SELECT pg_advisory_xact_lock_shared(${conversionModeLocks}, hashtext(l.id::text)) IS NULL AS held FROM (${ids}) AS l(id) ORDER BY l.id`,
            sql<TerminalRow>`SELECT * FROM terminals WHERE id IN (${ids})`
          ),
        toTerminal
      )
    )
    return TerminalRepository.of({
      insert: (t) =>
        orDie(sql`INSERT INTO terminals (id, account_id, name, status, h2h, callback_url, success_redirect_url,
            fail_redirect_url, conversion_mode, conversion_time, next_conversion_at, show_platform_branding,
            signing_secret_encrypted, previous_signing_secret_encrypted, signing_secret_rotated_at, created_at, updated_at)
          VALUES (${t.id}, ${t.accountId}, ${t.name}, ${t.status}, ${t.h2h}, ${t.callbackUrl}, ${t.successRedirectUrl},
            ${t.failRedirectUrl}, ${t.conversionMode}, ${t.conversionTime}, ${timeOrNull(t.nextConversionAt)},
            ${t.showPlatformBranding}, ${t.signingSecretEncrypted}, ${t.previousSigningSecretEncrypted},
            ${timeOrNull(t.signingSecretRotatedAt)}, ${time(t.createdAt)}, ${time(t.updatedAt)})`)
          .pipe(Effect.asVoid),
      get: (id) => byUuid(id, (id) => getTogether(new TerminalById({ id }))),
      // Only inside a transaction: outside one, the lock would end with its statement and hold nothing.
      getForCredit: (id) =>
        Effect.flatMap(Effect.serviceOption(sql.transactionService), (transaction) =>
          Option.isNone(transaction)
            ? Effect.die(new Error("TerminalRepository.getForCredit outside a transaction: the conversion mode it reads would not be held"))
            : byUuid(id, (id) => getForCreditTogether(new TerminalForCredit({ id })))),
      lockConversionMode: (id) =>
        Id.isUuid(id)
          ? orDie(sql`SELECT pg_advisory_xact_lock(${conversionModeLocks}, hashtext(${id}::uuid::text))`).pipe(Effect.asVoid)
          : Effect.void,
      getForUpdate: (id) =>
        byUuid(id, (id) =>
          // NO KEY: a payment inserted for the terminal (its foreign key's KEY SHARE lock) does not wait for
          // the holder, so a batch of creations never waits behind one terminal's conversion or payout.
          orDie(sql<TerminalRow>`SELECT * FROM terminals WHERE id = ${id} FOR NO KEY UPDATE`).pipe(
            Effect.map((rows) => first(rows, toTerminal))
          )),
      update: (t) =>
        orDie(sql`UPDATE terminals SET account_id = ${t.accountId}, name = ${t.name}, status = ${t.status},
            h2h = ${t.h2h}, callback_url = ${t.callbackUrl}, success_redirect_url = ${t.successRedirectUrl},
            fail_redirect_url = ${t.failRedirectUrl}, conversion_mode = ${t.conversionMode},
            conversion_time = ${t.conversionTime}, next_conversion_at = ${timeOrNull(t.nextConversionAt)},
            show_platform_branding = ${t.showPlatformBranding}, signing_secret_encrypted = ${t.signingSecretEncrypted},
            previous_signing_secret_encrypted = ${t.previousSigningSecretEncrypted},
            signing_secret_rotated_at = ${timeOrNull(t.signingSecretRotatedAt)},
            created_at = ${time(t.createdAt)}, updated_at = ${time(t.updatedAt)}
          WHERE id = ${t.id}`).pipe(Effect.asVoid),
      listByAccount: (accountId) =>
        Id.isUuid(accountId)
          ? orDie(sql<TerminalRow>`SELECT * FROM terminals WHERE account_id = ${accountId} ORDER BY created_at, id`)
            .pipe(Effect.map((rows) => rows.map(toTerminal)))
          : Effect.succeed([]),
      claimDueConversions: (now, limit) =>
        orDie(sql<TerminalRow>`SELECT * FROM terminals
          WHERE next_conversion_at IS NOT NULL AND next_conversion_at <= ${time(now)}
          ORDER BY next_conversion_at, id
          LIMIT ${Math.max(0, limit)}
          FOR NO KEY UPDATE SKIP LOCKED`).pipe(Effect.map((rows) => rows.map(toTerminal)))
    })
  })
)

/** `ApiKeyRepository` on the `SqlClient` in context. */
export const layerApiKeyRepository: Layer.Layer<ApiKeyRepository, never, SqlClient.SqlClient> = Layer.effect(
  ApiKeyRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Authentications in one statement per round (a key's nonce once per round, since one upsert
     * cannot touch a row twice): each key with its nonce claim and terminal. The requests share the
     * nonce lifetime (`expiresAt - now`, the resolver's batch key), which the claim's condition uses
     * for each request's own `now`.
     */
    const authenticateMany = (requests: ReadonlyArray<Authenticate>) =>
      Effect.gen(function*() {
        const answers = new Array<Option.Option<Authenticated>>(requests.length).fill(Option.none())
        const lifetime = requests[0]!.expiresAt - requests[0]!.now
        const all = rounds(requests, (r) => `${r.keyHash}\u0000${r.nonce}`)
        // Several rounds (a nonce sent twice at once) commit together, so a failure redoes none of them twice.
        yield* inOneTransaction(sql, all.length, Effect.gen(function*() {
          for (const round of all) {
            const rows = yield* orDie(sql<AuthenticatedRow & { readonly ord: number }>`WITH v AS (
                SELECT * FROM jsonb_to_recordset(${jsonRows(round.map((index) => {
                  const r = requests[index]!
                  return { ord: index, key_hash: r.keyHash, nonce: r.nonce, expires_at: time(r.expiresAt) }
                }))}::jsonb) AS v(ord int, key_hash text, nonce text, expires_at timestamptz)
              ), k AS (
                SELECT v.ord, v.nonce AS claim, v.expires_at AS claim_expires_at, api_keys.* FROM v JOIN api_keys ON api_keys.key_hash = v.key_hash
              ), n AS (
                INSERT INTO nonces (api_key_id, nonce, expires_at)
                SELECT k.id, k.claim, k.claim_expires_at FROM k WHERE k.revoked_at IS NULL
                ON CONFLICT (api_key_id, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at
                  WHERE nonces.expires_at <= EXCLUDED.expires_at - ${lifetime} * interval '1 millisecond'
                RETURNING api_key_id, nonce
              )
              SELECT k.ord, t.*, k.id AS k_id, k.terminal_id AS k_terminal_id, k.key_hash AS k_key_hash, k.prefix AS k_prefix,
                k.subscription_write AS k_subscription_write, k.created_at AS k_created_at, k.revoked_at AS k_revoked_at,
                EXISTS (SELECT 1 FROM n WHERE n.api_key_id = k.id AND n.nonce = k.claim) AS k_claimed
              FROM k LEFT JOIN terminals t ON t.id = k.terminal_id`)
            for (const row of rows) answers[row.ord] = Option.some(toAuthenticated(row))
          }
        }))
        return answers.map((answer) => Exit.succeed(answer))
      })

    // Concurrent authentications (with the same nonce lifetime) go to the database together; while
    // a batch runs, the ones arriving wait for the next (see `batchResolver`).
    // The nonce lifetime is the batch key, inside a transaction too (`authenticateMany` shares it).
    const lifetime = (r: Authenticate) => r.expiresAt - r.now
    const authenticateTogether = groupCommitted(
      sql,
      authenticateMany,
      Batching.batchResolver<Authenticate>(authenticateMany, {
        maxInFlight: authenticationBatchesInFlight,
        maxBatch: maxAuthenticationBatch,
        stallMs: authenticationStallMs,
        batchKey: lifetime
      }),
      lifetime
    )


    return ApiKeyRepository.of({
      insert: (key) =>
        orDie(sql`INSERT INTO api_keys (id, terminal_id, key_hash, prefix, subscription_write, created_at, revoked_at)
          VALUES (${key.id}, ${key.terminalId}, ${key.keyHash}, ${key.prefix}, ${key.subscriptionWrite},
            ${time(key.createdAt)}, ${timeOrNull(key.revokedAt)})`).pipe(Effect.asVoid),
      findByHash: (keyHash) =>
        orDie(sql<ApiKeyRow>`SELECT * FROM api_keys WHERE key_hash = ${keyHash}`).pipe(
          Effect.map((rows) => first(rows, toApiKey))
        ),
      // One round trip for the key, the nonce claim (the NonceStore's upsert, for a key not revoked)
      // and the terminal, shared with the concurrent authentications (see `authenticateTogether`).
      authenticate: (keyHash, nonce, now, expiresAt) =>
        authenticateTogether(new Authenticate({ keyHash, nonce, now, expiresAt })),
      listByTerminal: (terminalId) =>
        Id.isUuid(terminalId)
          ? orDie(sql<ApiKeyRow>`SELECT * FROM api_keys WHERE terminal_id = ${terminalId} ORDER BY created_at, id`)
            .pipe(Effect.map((rows) => rows.map(toApiKey)))
          : Effect.succeed([]),
      revoke: (terminalId, id, at) =>
        Id.isUuid(terminalId) && Id.isUuid(id)
          ? orDie(sql<ApiKeyRow>`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ${time(at)})
              WHERE id = ${id} AND terminal_id = ${terminalId} RETURNING *`).pipe(Effect.map((rows) => first(rows, toApiKey)))
          : Effect.succeed(Option.none())
    })
  })
)

/** The first key of the advisory locks of refresh families (the second is the family id's hash). */
const familyLockSpace = 72_261_702

/**
 * `SessionRepository` on the `SqlClient` in context. `revoke`, `revokeFamily` and `revokeUser` first
 * lock the families concerned until the caller's transaction ends (`pg_advisory_xact_lock`),
 * so that the exchanges and revocations of one family run one after another. Without it a
 * revocation racing an exchange (reuse detected, or a logout) could miss the session the exchange
 * was inserting: its `UPDATE` reads the family as of its start.
 */
/** Sessions one purge deletes at most. */
const purgeBatch = 1_000

export const layerSessionRepository: Layer.Layer<SessionRepository, never, SqlClient.SqlClient> = Layer.effect(
  SessionRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const lockFamilyOf = (id: string) =>
      sql`SELECT pg_advisory_xact_lock(${familyLockSpace}::int4, hashtext(family_id::text)) FROM sessions WHERE id = ${id}`
    const lockFamily = (familyId: string) => sql`SELECT pg_advisory_xact_lock(${familyLockSpace}::int4, hashtext(${familyId}::uuid::text))`
    return SessionRepository.of({
      insert: (s) =>
        orDie(sql`INSERT INTO sessions (id, user_id, family_id, token_hash, expires_at, revoked_at, created_at)
          VALUES (${s.id}, ${s.userId}, ${s.familyId}, ${s.tokenHash}, ${time(s.expiresAt)},
            ${timeOrNull(s.revokedAt)}, ${time(s.createdAt)})`).pipe(Effect.asVoid),
      findByHash: (tokenHash) =>
        orDie(sql<SessionRow>`SELECT * FROM sessions WHERE token_hash = ${tokenHash}`).pipe(
          Effect.map((rows) => first(rows, toSession))
        ),
      revoke: (id, at) =>
        Id.isUuid(id)
          ? orDie(Effect.andThen(
            lockFamilyOf(id),
            sql<{ readonly id: string }>`UPDATE sessions SET revoked_at = ${time(at)}
              WHERE id = ${id} AND revoked_at IS NULL RETURNING id`
          )).pipe(Effect.map((rows) => rows.length > 0))
          : Effect.succeed(false),
      revokeFamily: (familyId, at) =>
        Id.isUuid(familyId)
          ? orDie(Effect.andThen(
            lockFamily(familyId),
            sql`UPDATE sessions SET revoked_at = ${time(at)}
              WHERE family_id = ${familyId} AND revoked_at IS NULL`
          )).pipe(Effect.asVoid)
          : Effect.void,
      revokeUser: (userId, at) =>
        Id.isUuid(userId)
          ? orDie(Effect.andThen(
            // Each live family of the user, in the order of their keys (two such calls never wait on each other in a circle).
            sql`SELECT pg_advisory_xact_lock(${familyLockSpace}::int4, f.k)
              FROM (SELECT DISTINCT hashtext(family_id::text) AS k FROM sessions WHERE user_id = ${userId} AND revoked_at IS NULL ORDER BY k) f`,
            sql`UPDATE sessions SET revoked_at = ${time(at)}
              WHERE user_id = ${userId} AND revoked_at IS NULL`
          )).pipe(Effect.asVoid)
          : Effect.void,
      isFamilyLive: (familyId, now, owner) =>
        !Id.isUuid(familyId) || (owner !== undefined && !(Id.isUuid(owner.userId) && Id.isUuid(owner.accountId)))
          ? Effect.succeed(false)
          : orDie(sql<{ readonly live: boolean }>`SELECT EXISTS (SELECT 1 FROM sessions s
              WHERE s.family_id = ${familyId} AND s.revoked_at IS NULL AND s.expires_at > ${time(now)}
              ${owner === undefined ? sql`` : sql`AND s.user_id = ${owner.userId}
                AND EXISTS (SELECT 1 FROM users u WHERE u.id = s.user_id AND u.account_id = ${owner.accountId})`}) AS live`)
            .pipe(Effect.map((rows) => rows[0]?.live === true)),
      // At most 1,000 a call (the housekeeping calls it every pass), and only sessions of a family
      // none of whose sessions expires at `before` or later.
      purge: (before) =>
        orDie(sql<{ readonly purged: number }>`WITH old AS (
            SELECT s.id FROM sessions s
            WHERE s.expires_at < ${time(before)}
              AND NOT EXISTS (SELECT 1 FROM sessions l WHERE l.family_id = s.family_id AND l.expires_at >= ${time(before)})
            LIMIT ${purgeBatch}
          ), gone AS (
            DELETE FROM sessions WHERE id IN (SELECT id FROM old) RETURNING 1
          )
          SELECT count(*)::int AS purged FROM gone`).pipe(Effect.map((rows) => rows[0]?.purged ?? 0))
    })
  })
)
