/**
 * Memory adapters of the identity ports: accounts and users, terminals, API keys and sessions.
 *
 * Each layer reads the `MemoryDatabase` in context and runs every operation through
 * `atomically`. Row locks (`getForUpdate`, `claimDueConversions`) need no work here: the memory
 * transactions are serialized by one global lock. An insert whose port has no error channel dies on
 * a duplicate key, as a Postgres adapter would on a primary-key violation.
 */
import { Effect, Layer, Option } from "effect"
import { claimNonce } from "./MemoryRequestStores.js"
import { AccountRepository, ApiKeyRepository, SessionRepository, TerminalRepository } from "@paydesk/core"
import type { Terminal } from "@paydesk/core"
import { compareText, duplicateKey, MemoryDatabase, newestFirst, writeConflict } from "./MemoryDatabase.js"

/** Memory `AccountRepository`: e-mails are stored lowercased and unique. */
export const layerAccountRepository: Layer.Layer<AccountRepository, never, MemoryDatabase> = Layer.effect(
  AccountRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { accounts, users } = db.tables
    const byEmail = (email: string): Option.Option<Terminal.User> => {
      const wanted = email.toLowerCase()
      for (const user of users.values()) if (user.email === wanted) return Option.some(user)
      return Option.none()
    }
    return AccountRepository.of({
      insertAccount: (account) =>
        db.atomically(Effect.suspend(() => {
          if (accounts.has(account.id)) return duplicateKey("accounts", account.id)
          accounts.set(account.id, account)
          return Effect.void
        })),
      getAccount: (id) => db.atomically(Effect.sync(() => Option.fromUndefinedOr(accounts.get(id)))),
      listAccounts: (page) =>
        db.atomically(Effect.sync(() => {
          const all = [...accounts.values()].sort(newestFirst)
          const offset = Math.max(0, page.offset)
          return { items: all.slice(offset, offset + Math.max(0, page.limit)), total: all.length }
        })),
      insertUser: (user) =>
        db.atomically(Effect.suspend(() => {
          if (Option.isSome(byEmail(user.email))) return Effect.fail(writeConflict("users_email"))
          if (users.has(user.id)) return Effect.fail(writeConflict("users_pkey"))
          users.set(user.id, { ...user, email: user.email.toLowerCase() })
          return Effect.void
        })),
      getUser: (id) => db.atomically(Effect.sync(() => Option.fromUndefinedOr(users.get(id)))),
      findUserByEmail: (email) => db.atomically(Effect.sync(() => byEmail(email))),
      listUsers: (accountId) =>
        db.atomically(Effect.sync(() =>
          [...users.values()].filter((user) => user.accountId === accountId)
            .sort((a, b) => a.createdAt - b.createdAt || compareText(a.id, b.id))
        )),
      lockUser: (id) => db.atomically(Effect.sync(() => Option.fromUndefinedOr(users.get(id)))),
      setPassword: (id, passwordHash, expected) =>
        db.atomically(Effect.sync(() => {
          const user = users.get(id)
          if (user === undefined || (expected !== undefined && user.passwordHash !== expected)) return false
          users.set(id, { ...user, passwordHash })
          return true
        }))
    })
  })
)

/** Memory `TerminalRepository`. */
export const layerTerminalRepository: Layer.Layer<TerminalRepository, never, MemoryDatabase> = Layer.effect(
  TerminalRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { terminals } = db.tables
    const get = (id: string) => db.atomically(Effect.sync(() => Option.fromUndefinedOr(terminals.get(id))))
    return TerminalRepository.of({
      insert: (terminal) =>
        db.atomically(Effect.suspend(() => {
          if (terminals.has(terminal.id)) return duplicateKey("terminals", terminal.id)
          terminals.set(terminal.id, terminal)
          return Effect.void
        })),
      get,
      getForUpdate: get,
      // One transaction at a time in memory: nothing to hold.
      getForCredit: get,
      lockConversionMode: () => Effect.void,
      update: (terminal) =>
        db.atomically(Effect.sync(() => {
          if (terminals.has(terminal.id)) terminals.set(terminal.id, terminal)
        })),
      listByAccount: (accountId) =>
        db.atomically(Effect.sync(() =>
          [...terminals.values()]
            .filter((t) => t.accountId === accountId)
            .sort((a, b) => a.createdAt - b.createdAt || compareText(a.id, b.id))
        )),
      claimDueConversions: (now, limit) =>
        db.atomically(Effect.sync(() =>
          [...terminals.values()]
            .filter((t) => t.nextConversionAt !== null && t.nextConversionAt <= now)
            .sort((a, b) => (a.nextConversionAt ?? 0) - (b.nextConversionAt ?? 0) || compareText(a.id, b.id))
            .slice(0, Math.max(0, limit))
        ))
    })
  })
)

/** Memory `ApiKeyRepository`: a duplicate id or hash is a defect (the port has no error for it). */
export const layerApiKeyRepository: Layer.Layer<ApiKeyRepository, never, MemoryDatabase> = Layer.effect(
  ApiKeyRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { apiKeys, nonces, terminals } = db.tables
    const byHash = (keyHash: string): Option.Option<Terminal.ApiKey> => {
      for (const key of apiKeys.values()) if (key.keyHash === keyHash) return Option.some(key)
      return Option.none()
    }
    return ApiKeyRepository.of({
      insert: (key) =>
        db.atomically(Effect.suspend(() => {
          if (apiKeys.has(key.id)) return duplicateKey("api_keys", key.id)
          if (Option.isSome(byHash(key.keyHash))) return duplicateKey("api_keys.key_hash", key.keyHash)
          apiKeys.set(key.id, key)
          return Effect.void
        })),
      findByHash: (keyHash) => db.atomically(Effect.sync(() => byHash(keyHash))),
      authenticate: (keyHash, nonce, now, expiresAt) =>
        db.atomically(Effect.sync(() =>
          Option.map(byHash(keyHash), (key) => {
            const terminal = Option.fromUndefinedOr(terminals.get(key.terminalId))
            return { key, terminal, nonceClaimed: key.revokedAt === null && claimNonce(nonces, key.id, nonce, now, expiresAt) }
          }))),
      listByTerminal: (terminalId) =>
        db.atomically(Effect.sync(() =>
          [...apiKeys.values()]
            .filter((k) => k.terminalId === terminalId)
            .sort((a, b) => a.createdAt - b.createdAt || compareText(a.id, b.id))
        )),
      revoke: (terminalId, id, at) =>
        db.atomically(Effect.sync(() => {
          const key = apiKeys.get(id)
          if (key === undefined || key.terminalId !== terminalId) return Option.none()
          if (key.revokedAt !== null) return Option.some(key)
          const revoked = { ...key, revokedAt: at }
          apiKeys.set(id, revoked)
          return Option.some(revoked)
        }))
    })
  })
)

/** Memory `SessionRepository`. */
export const layerSessionRepository: Layer.Layer<SessionRepository, never, MemoryDatabase> = Layer.effect(
  SessionRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const { sessions } = db.tables
    return SessionRepository.of({
      insert: (session) =>
        db.atomically(Effect.suspend(() => {
          if (sessions.has(session.id)) return duplicateKey("sessions", session.id)
          for (const s of sessions.values()) {
            if (s.tokenHash === session.tokenHash) return duplicateKey("sessions.token_hash", session.tokenHash)
          }
          sessions.set(session.id, session)
          return Effect.void
        })),
      findByHash: (tokenHash) =>
        db.atomically(Effect.sync(() => {
          for (const s of sessions.values()) if (s.tokenHash === tokenHash) return Option.some(s)
          return Option.none()
        })),
      revoke: (id, at) =>
        db.atomically(Effect.sync(() => {
          const session = sessions.get(id)
          if (session === undefined || session.revokedAt !== null) return false
          sessions.set(id, { ...session, revokedAt: at })
          return true
        })),
      revokeFamily: (familyId, at) =>
        db.atomically(Effect.sync(() => {
          for (const s of sessions.values()) {
            if (s.familyId === familyId && s.revokedAt === null) sessions.set(s.id, { ...s, revokedAt: at })
          }
        })),
      revokeUser: (userId, at) =>
        db.atomically(Effect.sync(() => {
          for (const s of sessions.values()) {
            if (s.userId === userId && s.revokedAt === null) sessions.set(s.id, { ...s, revokedAt: at })
          }
        })),
      isFamilyLive: (familyId, now, owner) =>
        db.atomically(Effect.sync(() => {
          for (const s of sessions.values()) {
            if (s.familyId !== familyId || s.revokedAt !== null || s.expiresAt <= now) continue
            if (owner === undefined) return true
            if (s.userId === owner.userId && db.tables.users.get(s.userId)?.accountId === owner.accountId) return true
          }
          return false
        })),
      purge: (before) =>
        db.atomically(Effect.sync(() => {
          const liveFamilies = new Set([...sessions.values()].filter((s) => s.expiresAt >= before).map((s) => s.familyId))
          let purged = 0
          for (const s of [...sessions.values()]) {
            if (purged < 1_000 && s.expiresAt < before && !liveFamilies.has(s.familyId)) {
              sessions.delete(s.id)
              purged++
            }
          }
          return purged
        }))
    })
  })
)
