/**
 * Contract suite of `AccountRepository`: accounts and users round-trip, e-mails are stored
 * lowercased and unique regardless of case, lookups of unknown ids are empty, accounts are listed
 * newest first with their total, an account's users oldest first; a password is replaced only while
 * it is the one expected, and not while a transaction holds the user under `lockUser`.
 */
import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { AccountRepository, Transactions } from "@paydesk/core"
import * as Fixtures from "../Fixtures.js"
import { expectWriteConflict, none, some } from "./Support.js"

/** What the suite needs. */
export type Requirements = AccountRepository | Transactions

/** Registers the `AccountRepository` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_, { timeout: "60 seconds" })(`AccountRepository contract (${name})`, (it) => {
    const setup = Effect.gen(function*() {
      const repo = yield* AccountRepository
      const account = Fixtures.account({ name: "ООО Ромашка" })
      yield* repo.insertAccount(account)
      return { repo, account }
    })

    it.effect("accounts round-trip; unknown ids are empty", () =>
      Effect.gen(function*() {
        const { repo, account } = yield* setup
        assert.deepStrictEqual(some(yield* repo.getAccount(account.id)), account)
        none(yield* repo.getAccount(Fixtures.uuid()))
        none(yield* repo.getUser(Fixtures.uuid()))
      }))

    it.effect("accounts are listed newest first, paged, with the total", () =>
      Effect.gen(function*() {
        const repo = yield* AccountRepository
        const before = yield* repo.listAccounts({ limit: 1, offset: 0 })
        // Later than anything other tests of the suite insert, in a known order (same time: id decides).
        const at = Date.parse("2099-01-01T00:00:00.000Z")
        const older = Fixtures.account({ createdAt: at })
        const newer = Fixtures.account({ createdAt: at + 1_000 })
        const sameTime = Fixtures.account({ createdAt: at + 1_000 })
        for (const a of [older, newer, sameTime]) yield* repo.insertAccount(a)
        const expected = [newer, sameTime].sort((a, b) => (a.id < b.id ? 1 : -1)).concat(older)
        const page = yield* repo.listAccounts({ limit: 3, offset: 0 })
        assert.deepStrictEqual(page.items, expected)
        assert.strictEqual(page.total, before.total + 3)
        assert.deepStrictEqual((yield* repo.listAccounts({ limit: 2, offset: 1 })).items, expected.slice(1))
        assert.deepStrictEqual((yield* repo.listAccounts({ limit: 0, offset: 0 })).items, [])
      }))

    it.effect("users round-trip and are found by e-mail in any case", () =>
      Effect.gen(function*() {
        const { repo, account } = yield* setup
        const user = Fixtures.user(account.id)
        yield* repo.insertUser(user)
        assert.deepStrictEqual(some(yield* repo.getUser(user.id)), user)
        assert.deepStrictEqual(some(yield* repo.findUserByEmail(user.email)), user)
        assert.deepStrictEqual(some(yield* repo.findUserByEmail(user.email.toUpperCase())), user)
        none(yield* repo.findUserByEmail(`nobody-${Fixtures.unique()}@example.com`))
      }))

    it.effect("a mixed-case e-mail is stored lowercased", () =>
      Effect.gen(function*() {
        const { repo, account } = yield* setup
        const local = `Mixed.Case-${Fixtures.unique()}`
        const user = Fixtures.user(account.id, { email: `${local}@Example.COM` })
        yield* repo.insertUser(user)
        const expected = { ...user, email: `${local.toLowerCase()}@example.com` }
        assert.deepStrictEqual(some(yield* repo.getUser(user.id)), expected)
        assert.deepStrictEqual(some(yield* repo.findUserByEmail(`${local}@example.com`)), expected)
      }))

    it.effect("e-mails are unique case-insensitively", () =>
      Effect.gen(function*() {
        const { repo, account } = yield* setup
        const first = Fixtures.user(account.id)
        yield* repo.insertUser(first)
        const second = Fixtures.user(account.id, { email: first.email.toUpperCase() })
        yield* expectWriteConflict(repo.insertUser(second))
        none(yield* repo.getUser(second.id))
        assert.deepStrictEqual(some(yield* repo.findUserByEmail(first.email)), first)
      }))

    it.effect("an account's users are listed oldest first (then by id); another or an unknown account lists none", () =>
      Effect.gen(function*() {
        const { repo, account } = yield* setup
        const other = Fixtures.account()
        yield* repo.insertAccount(other)
        const later = Fixtures.user(account.id, { createdAt: Fixtures.baseTime + 2_000 })
        const sameTime = [Fixtures.user(account.id, { createdAt: Fixtures.baseTime + 1_000 }), Fixtures.user(account.id, { createdAt: Fixtures.baseTime + 1_000 })]
        for (const user of [later, ...sameTime, Fixtures.user(other.id)]) yield* repo.insertUser(user)
        const expected = [...sameTime].sort((a, b) => (a.id < b.id ? -1 : 1)).concat(later)
        assert.deepStrictEqual(yield* repo.listUsers(account.id), expected)
        assert.strictEqual((yield* repo.listUsers(other.id)).length, 1)
        assert.deepStrictEqual(yield* repo.listUsers(Fixtures.uuid()), [])
        assert.deepStrictEqual(yield* repo.listUsers("not-a-uuid"), [])
      }))

    it.effect("a password is replaced while it is the one expected (or whatever it is, without one); an unknown user's is not", () =>
      Effect.gen(function*() {
        const { repo, account } = yield* setup
        const user = Fixtures.user(account.id)
        yield* repo.insertUser(user)
        assert.isFalse(yield* repo.setPassword(user.id, "hash-2", "not-the-hash"))
        assert.strictEqual(some(yield* repo.getUser(user.id)).passwordHash, user.passwordHash)
        assert.isTrue(yield* repo.setPassword(user.id, "hash-2", user.passwordHash))
        assert.deepStrictEqual(some(yield* repo.getUser(user.id)), { ...user, passwordHash: "hash-2" })
        assert.isFalse(yield* repo.setPassword(user.id, "hash-3", user.passwordHash))
        assert.isTrue(yield* repo.setPassword(user.id, "hash-4"))
        assert.strictEqual(some(yield* repo.findUserByEmail(user.email)).passwordHash, "hash-4")
        assert.isFalse(yield* repo.setPassword(Fixtures.uuid(), "hash-5"))
        assert.isFalse(yield* repo.setPassword("not-a-uuid", "hash-5"))
        none(yield* repo.lockUser(Fixtures.uuid()))
      }))

    it.effect("a password change waits for a transaction holding the user under lockUser, which read the password before it", () =>
      Effect.gen(function*() {
        const { repo, account } = yield* setup
        const tx = yield* Transactions
        const user = Fixtures.user(account.id)
        yield* repo.insertUser(user)
        const locked = yield* Deferred.make<string>()
        const release = yield* Deferred.make<void>()
        const holder = yield* Effect.forkChild(tx.run(Effect.gen(function*() {
          yield* Deferred.succeed(locked, some(yield* repo.lockUser(user.id)).passwordHash)
          yield* Deferred.await(release)
        })))
        assert.strictEqual(yield* Deferred.await(locked), user.passwordHash)
        const change = yield* Effect.forkChild(tx.run(repo.setPassword(user.id, "hash-2", user.passwordHash)))
        // Not done while the holder's transaction is open (an adapter with concurrent transactions
        // would answer at once without the lock; the memory adapter's run one at a time).
        yield* Effect.promise(() => new Promise((done) => setTimeout(done, 300)))
        assert.isUndefined(change.pollUnsafe())
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        assert.isTrue(yield* Fiber.join(change))
        assert.strictEqual(some(yield* repo.getUser(user.id)).passwordHash, "hash-2")
      }))

    it.effect("replacements of one password at once, each expecting the hash all of them read: exactly one is made", () =>
      Effect.gen(function*() {
        const { repo, account } = yield* setup
        const tx = yield* Transactions
        const user = Fixtures.user(account.id)
        yield* repo.insertUser(user)
        const read = some(yield* repo.getUser(user.id)).passwordHash
        const made = yield* Effect.forEach(["hash-a", "hash-b", "hash-c", "hash-d"], (hash) =>
          tx.run(repo.setPassword(user.id, hash, read)), { concurrency: "unbounded" })
        assert.strictEqual(made.filter((done) => done).length, 1)
        assert.strictEqual(some(yield* repo.getUser(user.id)).passwordHash, ["hash-a", "hash-b", "hash-c", "hash-d"][made.indexOf(true)])
      }))

    it.effect("concurrent registrations of one e-mail: exactly one wins", () =>
      Effect.gen(function*() {
        const { repo, account } = yield* setup
        const tx = yield* Transactions
        const email = `race-${Fixtures.unique()}@example.com`
        const exits = yield* Effect.forEach(
          Array.from({ length: 8 }, () => Fixtures.user(account.id, { email })),
          (u) => Effect.exit(tx.run(repo.insertUser(u))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(exits.filter((e) => e._tag === "Success").length, 1)
      }))
  })
