/**
 * Refresh families on every Postgres target: a revocation of a family (reuse detected, or a logout),
 * or of every session of a user, that races an exchange of one of its tokens waits for the exchange
 * and revokes the session the exchange inserted. Without the family's lock its `UPDATE` read the family as of its start and left
 * the new session live (the thief who rotated once more kept a session).
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option } from "effect"
import { AccountRepository, SessionRepository, Transactions } from "@paydesk/core"
import { Fixtures } from "@paydesk/testkit"
import { lockWaits, store, targets } from "./PgHarness.js"

/**
 * An exchange of a session of a fresh family held open (the session revoked, its successor inserted,
 * not committed) while `revoke` revokes (the family, or the user's sessions) at `Fixtures.baseTime + 20`:
 * the revocation must wait for the exchange, then reach the successor.
 */
const raceAnExchange = (revoke: (sessions: SessionRepository["Service"], userId: string, familyId: string) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const accounts = yield* AccountRepository
    const account = Fixtures.account()
    yield* accounts.insertAccount(account)
    const user = Fixtures.user(account.id)
    yield* accounts.insertUser(user)
    const sessions = yield* SessionRepository
    const tx = yield* Transactions
    const familyId = Fixtures.uuid()
    const presented = Fixtures.session(user.id, { familyId })
    yield* sessions.insert(presented)
    const successor = Fixtures.session(user.id, { familyId, createdAt: Fixtures.baseTime + 1 })
    const inserted = yield* Deferred.make<void>()
    const commit = yield* Deferred.make<void>()
    const exchange = yield* Effect.forkChild(tx.run(Effect.gen(function*() {
      assert.isTrue(yield* sessions.revoke(presented.id, Fixtures.baseTime + 10))
      yield* sessions.insert(successor)
      yield* Deferred.succeed(inserted, undefined)
      yield* Deferred.await(commit)
    })))
    yield* Deferred.await(inserted)
    const revocation = yield* Effect.forkChild(tx.run(revoke(sessions, user.id, familyId)))
    yield* lockWaits(1)
    assert.isUndefined(revocation.pollUnsafe(), "the revocation waits for the exchange")
    yield* Deferred.succeed(commit, undefined)
    yield* Fiber.join(exchange)
    yield* Fiber.join(revocation)
    assert.strictEqual(Option.getOrThrow(yield* sessions.findByHash(successor.tokenHash)).revokedAt, Fixtures.baseTime + 20)
    return { sessions, familyId }
  })

describe("PgSessions", () => {
  for (const target of targets) {
    describe(`postgres (${target.name})`, () => {
      it.live("a family revocation waits for an exchange of the family in flight and revokes the session it inserted", () =>
        Effect.gen(function*() {
          const { sessions, familyId } = yield* raceAnExchange((sessions, _userId, familyId) => sessions.revokeFamily(familyId, Fixtures.baseTime + 20))
          assert.isFalse(yield* sessions.isFamilyLive(familyId, Fixtures.baseTime + 30))
        }).pipe(Effect.provide(store(target.url))), 60_000)

      it.live("so does the revocation of every session of a user (the operator's logout)", () =>
        raceAnExchange((sessions, userId) => sessions.revokeUser(userId, Fixtures.baseTime + 20))
          .pipe(Effect.provide(store(target.url))), 60_000)
    })
  }
})
