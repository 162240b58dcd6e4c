/**
 * Contract suite of `SessionRepository`: sessions are found by hash revoked or not; `revoke`
 * answers whether this call revoked; `revokeFamily` revokes a whole rotation family; `revokeUser`
 * every session of a user; `isFamilyLive` is true while a family has an unrevoked, unexpired session;
 * `purge` deletes the sessions expired before a time, revoked or not.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { AccountRepository, SessionRepository } from "@paydesk/core"
import * as Fixtures from "../Fixtures.js"
import { none, some } from "./Support.js"

/** What the suite needs. */
export type Requirements = SessionRepository | AccountRepository

/** Registers the `SessionRepository` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`SessionRepository contract (${name})`, (it) => {
    const setup = Effect.gen(function*() {
      const accounts = yield* AccountRepository
      const account = Fixtures.account()
      yield* accounts.insertAccount(account)
      const user = Fixtures.user(account.id)
      yield* accounts.insertUser(user)
      return { user, repo: yield* SessionRepository }
    })

    it.effect("findByHash returns the session with every field, revoked or not", () =>
      Effect.gen(function*() {
        const { user, repo } = yield* setup
        const live = Fixtures.session(user.id)
        const revoked = Fixtures.session(user.id, { revokedAt: Fixtures.baseTime + 5, createdAt: Fixtures.baseTime + 1 })
        yield* repo.insert(live)
        yield* repo.insert(revoked)
        assert.deepStrictEqual(some(yield* repo.findByHash(live.tokenHash)), live)
        assert.deepStrictEqual(some(yield* repo.findByHash(revoked.tokenHash)), revoked)
        none(yield* repo.findByHash("f".repeat(64)))
      }))

    it.effect("revoke is true once, records the time, and false afterwards", () =>
      Effect.gen(function*() {
        const { user, repo } = yield* setup
        const s = Fixtures.session(user.id)
        yield* repo.insert(s)
        assert.isTrue(yield* repo.revoke(s.id, Fixtures.baseTime + 100))
        assert.deepStrictEqual(some(yield* repo.findByHash(s.tokenHash)), { ...s, revokedAt: Fixtures.baseTime + 100 })
        assert.isFalse(yield* repo.revoke(s.id, Fixtures.baseTime + 200))
        assert.strictEqual(some(yield* repo.findByHash(s.tokenHash)).revokedAt, Fixtures.baseTime + 100)
        assert.isFalse(yield* repo.revoke(Fixtures.uuid(), Fixtures.baseTime))
      }))

    it.effect("concurrent revokes of one session: exactly one is true", () =>
      Effect.gen(function*() {
        const { user, repo } = yield* setup
        const s = Fixtures.session(user.id)
        yield* repo.insert(s)
        const results = yield* Effect.forEach(
          Array.from({ length: 10 }, (_, i) => i),
          (i) => repo.revoke(s.id, Fixtures.baseTime + i),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter(Boolean).length, 1)
      }))

    it.effect("revokeFamily revokes every session of the family and keeps earlier revocations", () =>
      Effect.gen(function*() {
        const { user, repo } = yield* setup
        const familyId = Fixtures.uuid()
        const older = Fixtures.session(user.id, { familyId, revokedAt: Fixtures.baseTime + 1 })
        const current = Fixtures.session(user.id, { familyId })
        const elsewhere = Fixtures.session(user.id)
        for (const s of [older, current, elsewhere]) yield* repo.insert(s)
        yield* repo.revokeFamily(familyId, Fixtures.baseTime + 50)
        assert.strictEqual(some(yield* repo.findByHash(older.tokenHash)).revokedAt, Fixtures.baseTime + 1)
        assert.strictEqual(some(yield* repo.findByHash(current.tokenHash)).revokedAt, Fixtures.baseTime + 50)
        assert.deepStrictEqual(some(yield* repo.findByHash(elsewhere.tokenHash)), elsewhere)
      }))
  
    it.effect("isFamilyLive follows revocation and expiry; revokeUser ends every family of one user", () =>
      Effect.gen(function*() {
        const { user, repo } = yield* setup
        const accounts = yield* AccountRepository
        const otherUser = Fixtures.user(user.accountId)
        yield* accounts.insertUser(otherUser)
        const familyId = Fixtures.uuid()
        const used = Fixtures.session(user.id, { familyId, revokedAt: Fixtures.baseTime + 1 })
        const current = Fixtures.session(user.id, { familyId, expiresAt: Fixtures.baseTime + 1_000 })
        const second = Fixtures.session(user.id)
        const others = Fixtures.session(otherUser.id)
        for (const s of [used, current, second, others]) yield* repo.insert(s)
        assert.isTrue(yield* repo.isFamilyLive(familyId, Fixtures.baseTime + 999))
        assert.isFalse(yield* repo.isFamilyLive(familyId, Fixtures.baseTime + 1_000))
        assert.isFalse(yield* repo.isFamilyLive(Fixtures.uuid(), Fixtures.baseTime))
        yield* repo.revokeUser(user.id, Fixtures.baseTime + 50)
        assert.isFalse(yield* repo.isFamilyLive(familyId, Fixtures.baseTime + 60))
        assert.isFalse(yield* repo.isFamilyLive(second.familyId, Fixtures.baseTime + 60))
        assert.strictEqual(some(yield* repo.findByHash(used.tokenHash)).revokedAt, Fixtures.baseTime + 1)
        assert.strictEqual(some(yield* repo.findByHash(second.tokenHash)).revokedAt, Fixtures.baseTime + 50)
        assert.isTrue(yield* repo.isFamilyLive(others.familyId, Fixtures.baseTime + 60))
      }))

    it.effect("isFamilyLive with an owner: only a live session of that user, a user of that account", () =>
      Effect.gen(function*() {
        const { user, repo } = yield* setup
        const accounts = yield* AccountRepository
        const colleague = Fixtures.user(user.accountId)
        const elsewhere = Fixtures.account()
        yield* accounts.insertAccount(elsewhere)
        const stranger = Fixtures.user(elsewhere.id)
        yield* accounts.insertUser(colleague)
        yield* accounts.insertUser(stranger)
        const session = Fixtures.session(user.id)
        yield* repo.insert(session)
        const now = Fixtures.baseTime + 1
        assert.isTrue(yield* repo.isFamilyLive(session.familyId, now, { userId: user.id, accountId: user.accountId }))
        assert.isFalse(yield* repo.isFamilyLive(session.familyId, now, { userId: colleague.id, accountId: user.accountId }))
        assert.isFalse(yield* repo.isFamilyLive(session.familyId, now, { userId: user.id, accountId: elsewhere.id }))
        assert.isFalse(yield* repo.isFamilyLive(session.familyId, now, { userId: stranger.id, accountId: elsewhere.id }))
        assert.isFalse(yield* repo.isFamilyLive(session.familyId, now, { userId: "not-a-uuid", accountId: user.accountId }))
        yield* repo.revokeFamily(session.familyId, now)
        assert.isFalse(yield* repo.isFamilyLive(session.familyId, now + 1, { userId: user.id, accountId: user.accountId }))
      }))

    it.effect("purge deletes the sessions expired before the time, revoked or not, and keeps the rest", () =>
      Effect.gen(function*() {
        const { user, repo } = yield* setup
        const base = Fixtures.baseTime + 10_000_000
        const expired = Fixtures.session(user.id, { expiresAt: base - 1 })
        const expiredRevoked = Fixtures.session(user.id, { expiresAt: base - 500, revokedAt: base - 900 })
        const atTheTime = Fixtures.session(user.id, { expiresAt: base })
        const revokedLive = Fixtures.session(user.id, { expiresAt: base + 1_000, revokedAt: base - 900 })
        for (const s of [expired, expiredRevoked, atTheTime, revokedLive]) yield* repo.insert(s)
        // Other suites' sessions may share the store: counted as at least these two.
        assert.isAtLeast(yield* repo.purge(base), 2)
        none(yield* repo.findByHash(expired.tokenHash))
        none(yield* repo.findByHash(expiredRevoked.tokenHash))
        assert.deepStrictEqual(some(yield* repo.findByHash(atTheTime.tokenHash)), atTheTime)
        assert.deepStrictEqual(some(yield* repo.findByHash(revokedLive.tokenHash)), revokedLive)
        assert.strictEqual(yield* repo.purge(base), 0)
      }))

    it.effect("purge keeps a family's expired sessions while one of the family has not expired (a rotated-away token's replay still revokes it)", () =>
      Effect.gen(function*() {
        const { user, repo } = yield* setup
        const base = Fixtures.baseTime + 20_000_000
        const familyId = Fixtures.uuid()
        const rotatedAway = Fixtures.session(user.id, { familyId, expiresAt: base - 10, revokedAt: base - 20 })
        const current = Fixtures.session(user.id, { familyId, expiresAt: base + 10 })
        for (const s of [rotatedAway, current]) yield* repo.insert(s)
        yield* repo.purge(base)
        assert.deepStrictEqual(some(yield* repo.findByHash(rotatedAway.tokenHash)), rotatedAway)
        // Once the whole family has expired, it goes.
        yield* repo.purge(base + 11)
        none(yield* repo.findByHash(rotatedAway.tokenHash))
        none(yield* repo.findByHash(current.tokenHash))
      }))
  })
