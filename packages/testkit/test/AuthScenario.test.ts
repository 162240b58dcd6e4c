import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { Auth, Digest, Operator, PasswordHasher, Payments, SessionRepository, Subscriptions, Terminals, Views, Work } from "@paydesk/core"
import { Kit } from "@paydesk/testkit"

const start = Date.parse("2026-07-01T08:00:00.000Z")

describe("Authentication", () => {
  it.effect("API keys with nonces: unknown key 401, reused nonce 401 within 10 minutes, fine after", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(start)
      const merchant = yield* Kit.provisionMerchant()
      assert.strictEqual((yield* Effect.flip(Auth.apiKey("pd_nope", "n1"))).message, "invalid api key")
      assert.strictEqual((yield* Effect.flip(Auth.apiKey(undefined, "n1")))._tag, "Unauthenticated")
      assert.strictEqual((yield* Effect.flip(Auth.apiKey(merchant.apiKey, undefined))).message, "X-Nonce header is required")
      const principal = yield* Auth.apiKey(merchant.apiKey, "n1")
      assert.deepStrictEqual(principal, { _tag: "ApiKey", apiKeyId: principal._tag === "ApiKey" ? principal.apiKeyId : "", terminalId: merchant.terminal.id, subscriptionWrite: true })
      assert.strictEqual((yield* Effect.flip(Auth.apiKey(merchant.apiKey, "n1"))).message, "nonce already used")
      // The request path also hands over the key's terminal as it read it (for that request only).
      const request = yield* Auth.apiKeyRequest(merchant.apiKey, "n0")
      assert.deepStrictEqual([request.principal, request.terminal], [principal, merchant.terminal])
      assert.strictEqual((yield* Effect.flip(Auth.apiKeyRequest(merchant.apiKey, "n0"))).message, "nonce already used")
      yield* TestClock.adjust("9 minutes")
      assert.strictEqual((yield* Effect.flip(Auth.apiKey(merchant.apiKey, "n1"))).message, "nonce already used")
      yield* TestClock.adjust("1 minute")
      yield* Auth.apiKey(merchant.apiKey, "n1")
      // Concurrent reuse: exactly one wins.
      const results = yield* Effect.forEach(Array.from({ length: 20 }, () => "same"), (n) => Effect.result(Auth.apiKey(merchant.apiKey, n)), { concurrency: "unbounded" })
      assert.strictEqual(results.filter((r) => r._tag === "Success").length, 1)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("housekeeping deletes a dashboard session a week after its refresh token expired, revoked or not; a live one stays", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(start)
      const merchant = yield* Kit.provisionMerchant()
      const first = yield* Auth.login(merchant.ownerEmail, Kit.ownerPassword)
      // Rotated: the first session is revoked, the second live.
      const rotated = yield* Auth.refresh(first.refreshToken)
      const sessions = yield* SessionRepository
      const hashOf = (token: string) => Effect.flatMap(Digest, (d) => d.sha256Hex(token))
      const find = (token: string) => Effect.flatMap(hashOf(token), (hash) => sessions.findByHash(hash))
      const expiresAt = (yield* find(rotated.refreshToken)).pipe((o) => o._tag === "Some" ? o.value.expiresAt : 0)
      // A week after its expiry, to the millisecond, both stay; a millisecond later both go.
      yield* TestClock.setTime(expiresAt + Work.sessionRetentionMs)
      const later = yield* Auth.login(merchant.ownerEmail, Kit.ownerPassword)
      assert.strictEqual((yield* Work.housekeeping()).sessions, 0)
      yield* TestClock.adjust(1)
      assert.strictEqual((yield* Work.housekeeping()).sessions, 2)
      for (const token of [first.refreshToken, rotated.refreshToken]) assert.strictEqual((yield* find(token))._tag, "None")
      assert.strictEqual((yield* find(later.refreshToken))._tag, "Some")
      // An expired token is refused as it was before its session went.
      assert.strictEqual((yield* Effect.flip(Auth.refresh(rotated.refreshToken)))._tag, "Unauthenticated")
      yield* Auth.refresh(later.refreshToken)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("login, bearer access to the account's terminals only, refresh rotation and replay detection", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(start)
      const merchant = yield* Kit.provisionMerchant()
      const other = yield* Kit.provisionMerchant()
      assert.strictEqual((yield* Effect.flip(Auth.login(merchant.ownerEmail, "wrong password"))).message, "invalid email or password")
      assert.strictEqual((yield* Effect.flip(Auth.login("nobody@example.com", Kit.ownerPassword))).message, "invalid email or password")
      const pair = yield* Auth.login(merchant.ownerEmail.toUpperCase(), Kit.ownerPassword)
      assert.strictEqual(pair.expiresAt, start + 15 * 60_000)
      assert.deepStrictEqual(Views.user(pair.user), { id: merchant.userId, email: merchant.ownerEmail, role: "owner", account_id: merchant.accountId })
      const user = yield* Auth.bearer(pair.accessToken)
      yield* Payments.create(user, { terminalId: merchant.terminal.id, amount: "10", orderId: "u1" })
      assert.strictEqual((yield* Effect.flip(Payments.create(user, { amount: "10", orderId: "u2" }))).message, "terminal_id is required")
      assert.strictEqual((yield* Effect.flip(Payments.create(user, { terminalId: other.terminal.id, amount: "10", orderId: "u3" }))).message, "account access denied")
      assert.strictEqual((yield* Effect.flip(Auth.bearer(pair.accessToken + "x")))._tag, "Unauthenticated")
      // Expiry of the access token.
      yield* TestClock.adjust("15 minutes")
      assert.strictEqual((yield* Effect.flip(Auth.bearer(pair.accessToken)))._tag, "Unauthenticated")
      // Refresh rotates; the old refresh token stops working and its replay revokes the family.
      const next = yield* Auth.refresh(pair.refreshToken)
      assert.notStrictEqual(next.refreshToken, pair.refreshToken)
      yield* Auth.bearer(next.accessToken)
      assert.strictEqual((yield* Effect.flip(Auth.refresh(pair.refreshToken)))._tag, "Unauthenticated")
      assert.strictEqual((yield* Effect.flip(Auth.refresh(next.refreshToken)))._tag, "Unauthenticated")
      assert.strictEqual((yield* Effect.flip(Auth.refresh("rt_garbage")))._tag, "Unauthenticated")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a password change: checked, every session of the user ended, a new pair for the caller; the old password no longer signs in", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(start)
      const merchant = yield* Kit.provisionMerchant()
      const here = yield* Auth.login(merchant.ownerEmail, Kit.ownerPassword)
      const elsewhere = yield* Auth.login(merchant.ownerEmail, Kit.ownerPassword)
      const user = yield* Auth.bearer(here.accessToken)
      const refused = (input: { currentPassword: string; newPassword: string }) =>
        Effect.map(Effect.flip(Auth.changePassword(user, input)), (e) => [e._tag, "field" in e ? e.field : undefined, e.message])
      assert.deepStrictEqual(yield* refused({ currentPassword: "wrong password", newPassword: "a new password" }),
        ["InvalidRequest", "current_password", "current_password is not the user's password"])
      assert.deepStrictEqual(yield* refused({ currentPassword: Kit.ownerPassword, newPassword: "short" }),
        ["InvalidRequest", "new_password", "new_password must be 8 to 256 characters"])
      assert.deepStrictEqual(yield* refused({ currentPassword: Kit.ownerPassword, newPassword: "x".repeat(257) }),
        ["InvalidRequest", "new_password", "new_password must be 8 to 256 characters"])
      // Characters, not UTF-16 units: four emoji are four (a fuzz took them for eight); 256 emoji are 256.
      assert.deepStrictEqual(yield* refused({ currentPassword: Kit.ownerPassword, newPassword: "😀".repeat(4) }),
        ["InvalidRequest", "new_password", "new_password must be 8 to 256 characters"])
      // A lone surrogate is refused: stored as U+FFFD, two passwords would be one (a fuzz).
      assert.deepStrictEqual(yield* refused({ currentPassword: Kit.ownerPassword, newPassword: "\ud800".repeat(8) }),
        ["InvalidRequest", "new_password", "new_password must be valid Unicode text (a surrogate without its pair was sent)"])
      assert.deepStrictEqual(yield* refused({ currentPassword: Kit.ownerPassword, newPassword: Kit.ownerPassword }),
        ["InvalidRequest", "new_password", "new_password must differ from current_password"])
      const key = yield* Kit.apiKeyPrincipal(merchant, "n")
      assert.strictEqual((yield* Effect.flip(Auth.changePassword(key, { currentPassword: Kit.ownerPassword, newPassword: "a new password" }))).message,
        "account owner access required")
      // Nothing refused changed anything: both sessions live, the password as it was.
      yield* Auth.bearer(elsewhere.accessToken)
      const pair = yield* Auth.changePassword(user, { currentPassword: Kit.ownerPassword, newPassword: "a new password" })
      assert.deepStrictEqual(Views.user(pair.user), Views.user(here.user))
      for (const old of [here, elsewhere]) {
        assert.strictEqual((yield* Effect.flip(Auth.bearer(old.accessToken)))._tag, "Unauthenticated")
        assert.strictEqual((yield* Effect.flip(Auth.refresh(old.refreshToken)))._tag, "Unauthenticated")
      }
      // The caller's new pair works and rotates as any.
      yield* Auth.bearer(pair.accessToken)
      yield* Auth.bearer((yield* Auth.refresh(pair.refreshToken)).accessToken)
      assert.strictEqual((yield* Effect.flip(Auth.login(merchant.ownerEmail, Kit.ownerPassword))).message, "invalid email or password")
      yield* Auth.login(merchant.ownerEmail, "a new password")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("two password changes at once: one wins, the other's current password is no longer right and it writes nothing", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(start)
      const merchant = yield* Kit.provisionMerchant()
      const users = yield* Effect.forEach([1, 2], () => Effect.flatMap(Auth.login(merchant.ownerEmail, Kit.ownerPassword), (p) => Auth.bearer(p.accessToken)))
      const results = yield* Effect.forEach(users, (user, i) =>
        Effect.result(Auth.changePassword(user, { currentPassword: Kit.ownerPassword, newPassword: `new password ${i}` })), { concurrency: "unbounded" })
      const won = results.flatMap((r, i) => r._tag === "Success" ? [i] : [])
      assert.strictEqual(won.length, 1)
      const lost = results.find((r) => r._tag === "Failure")
      assert.strictEqual(lost?._tag === "Failure" ? lost.failure.message : "", "current_password is not the user's password")
      yield* Auth.login(merchant.ownerEmail, `new password ${won[0]}`)
      assert.strictEqual((yield* Effect.flip(Auth.login(merchant.ownerEmail, `new password ${1 - won[0]!}`)))._tag, "InvalidCredentials")
    }).pipe(Effect.provide(Kit.layer)))

  it.live("a login that checked the password before a change committed is refused; one that issued its session first has it ended", () =>
    Effect.gen(function*() {
      const merchant = yield* Kit.provisionMerchant()
      const hasher = yield* PasswordHasher
      const checked = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      // The login's check of the password is held until the change has committed.
      const held = PasswordHasher.of({
        hash: hasher.hash,
        verify: (password, hash) => Effect.tap(hasher.verify(password, hash), () => Effect.andThen(Deferred.succeed(checked, undefined), Deferred.await(gate)))
      })
      const login = yield* Effect.forkChild(Effect.flip(Auth.login(merchant.ownerEmail, Kit.ownerPassword).pipe(Effect.provideService(PasswordHasher, held))))
      yield* Deferred.await(checked)
      const owner = yield* Effect.flatMap(Auth.login(merchant.ownerEmail, Kit.ownerPassword), (p) => Auth.bearer(p.accessToken))
      yield* Auth.changePassword(owner, { currentPassword: Kit.ownerPassword, newPassword: "a new password" })
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual((yield* Fiber.join(login))._tag, "InvalidCredentials")
      // The other order: a login whose session was issued before the change is ended by it.
      const before = yield* Auth.login(merchant.ownerEmail, "a new password")
      yield* Auth.resetPassword(merchant.userId, "a reset password")
      assert.strictEqual((yield* Effect.flip(Auth.bearer(before.accessToken)))._tag, "Unauthenticated")
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("the operator's reset: checked, every session of the user ended, the new password signs in", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(start)
      const merchant = yield* Kit.provisionMerchant()
      const pair = yield* Auth.login(merchant.ownerEmail, Kit.ownerPassword)
      assert.strictEqual((yield* Effect.flip(Auth.resetPassword(merchant.userId, "short"))).message, "password must be 8 to 256 characters")
      assert.strictEqual((yield* Effect.flip(Auth.resetPassword("00000000-0000-4000-8000-000000000000", "long enough"))).message, "user not found")
      assert.strictEqual((yield* Effect.flip(Auth.resetPassword("not-a-uuid", "long enough"))).message, "user not found")
      yield* Auth.bearer(pair.accessToken)
      assert.deepStrictEqual(yield* Auth.resetPassword(merchant.userId.toUpperCase(), "long enough"), { ok: true })
      assert.strictEqual((yield* Effect.flip(Auth.bearer(pair.accessToken)))._tag, "Unauthenticated")
      assert.strictEqual((yield* Effect.flip(Auth.refresh(pair.refreshToken)))._tag, "Unauthenticated")
      assert.strictEqual((yield* Effect.flip(Auth.login(merchant.ownerEmail, Kit.ownerPassword)))._tag, "InvalidCredentials")
      yield* Auth.login(merchant.ownerEmail, "long enough")
      // 256 emoji are 256 characters (they were 512 UTF-16 units, refused); U+FFFD is a character like any.
      assert.deepStrictEqual(yield* Auth.resetPassword(merchant.userId, "😀".repeat(256)), { ok: true })
      yield* Auth.login(merchant.ownerEmail, "😀".repeat(256))
      assert.deepStrictEqual(yield* Auth.resetPassword(merchant.userId, "\ufffd".repeat(8)), { ok: true })
      yield* Auth.login(merchant.ownerEmail, "\ufffd".repeat(8))
      // Lone surrogates, hashed as U+FFFD, would sign in with it (a fuzz): refused as a wrong password.
      for (const unpaired of ["\ud800".repeat(8), "\udfff".repeat(8)]) {
        assert.strictEqual((yield* Effect.flip(Auth.login(merchant.ownerEmail, unpaired)))._tag, "InvalidCredentials")
      }
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("terminal settings: validated, applied, and scoped to the key's terminal", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(start)
      const merchant = yield* Kit.provisionMerchant()
      const principal = yield* Kit.apiKeyPrincipal(merchant, "n")
      const updated = yield* Terminals.updateSettings(principal, merchant.terminal.id, {
        callbackUrl: "https://shop.example/new",
        successRedirectUrl: "https://shop.example/ok",
        failRedirectUrl: "https://shop.example/fail",
        showPlatformBranding: false
      })
      assert.deepStrictEqual(
        [updated.callbackUrl, updated.successRedirectUrl, updated.failRedirectUrl, updated.showPlatformBranding],
        ["https://shop.example/new", "https://shop.example/ok", "https://shop.example/fail", false]
      )
      const bad = [
        { callbackUrl: "ftp://x" },
        { conversionTime: "25:00" },
        { conversionMode: "scheduled" as const }
      ]
      for (const settings of bad) {
        assert.strictEqual((yield* Effect.flip(Terminals.updateSettings(principal, merchant.terminal.id, settings)))._tag, "InvalidRequest")
      }
      const other = yield* Kit.provisionMerchant()
      assert.strictEqual((yield* Effect.flip(Terminals.updateSettings(principal, other.terminal.id, { showPlatformBranding: true }))).message, "terminal access denied")
      const rate = yield* Terminals.rate(principal, null)
      assert.deepStrictEqual(Views.rate(rate), { rate: "95.00", updated_at: "1970-01-01T00:00:00.000Z" })
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("stats and CSV export follow the environment and recurring filters", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(start)
      const merchant = yield* Kit.provisionMerchant()
      const principal = yield* Kit.apiKeyPrincipal(merchant, "n")
      const { payment: live } = yield* Payments.create(principal, { amount: "100", orderId: "a,\"quoted\"", description: "line\nbreak" })
      yield* Payments.settle(live.id, "paid")
      yield* Payments.create(principal, { amount: "50", orderId: "b" })
      yield* Payments.create(principal, { amount: "7", orderId: "c", test: true })
      const stats = yield* Payments.stats(principal, {})
      assert.deepStrictEqual(
        [...stats.rows].sort((x, y) => x.status.localeCompare(y.status)).map((r) => [r.status, r.count, r.amount]),
        [["created", 1, 5_000n], ["paid", 1, 10_000n]]
      )
      const all = yield* Payments.stats(principal, { environment: "all" })
      assert.strictEqual(all.rows.reduce((n, r) => n + r.count, 0), 3)
      const csv = yield* Payments.exportCsv(principal, { environment: "all" }, (ms) => new Date(ms).toISOString())
      const lines = csv.trimEnd().split("\r\n")
      assert.strictEqual(lines[0], Payments.csvColumns.join(","))
      assert.strictEqual(lines.length, 1 + 3)
      assert.include(csv, "\"line\nbreak\"")
      assert.include(csv, "\"a,\"\"quoted\"\"\"")
      assert.include(csv, ",sandbox,false,,sbp_test,")
      const recurring = yield* Payments.exportCsv(principal, { recurring: true }, String)
      assert.strictEqual(recurring, Payments.csvColumns.join(",") + "\r\n")
      assert.strictEqual((yield* Subscriptions.list(principal, {})).total, 0)
      assert.strictEqual((yield* Operator.createApiKey(merchant.terminal.id, { subscriptionWrite: false })).startsWith("pd_"), true)
    }).pipe(Effect.provide(Kit.layer)))
})
