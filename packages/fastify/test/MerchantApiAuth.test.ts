import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Operator } from "@paydesk/core"
import { Kit } from "@paydesk/testkit"
import { adminCalls, expectError, json, keyHeaders, make, shape, type TestApp } from "./TestApp.js"

let t: TestApp
beforeEach(async () => {
  t = await make()
})
afterEach(() => t.close())

const login = (payload: unknown) => t.app.inject({ method: "POST", url: "/api/v1/auth/login", payload: payload as object })
const refresh = (payload: unknown) => t.app.inject({ method: "POST", url: "/api/v1/auth/refresh", payload: payload as object })
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

describe("MerchantApi authentication", () => {
  it("requires an API key and a fresh nonce on every merchant route", async () => {
    const merchant = await t.merchant()
    const url = "/api/v1/balance"
    expectError(await t.app.inject({ method: "GET", url }), 401, "unauthenticated", "X-API-Key header is required")
    expectError(await t.app.inject({ method: "GET", url, headers: keyHeaders("pk_unknown") }), 401, "unauthenticated", "invalid api key")
    expectError(await t.app.inject({ method: "GET", url, headers: { "x-api-key": merchant.apiKey } }), 401, "unauthenticated", "X-Nonce header is required")
    expectError(
      await t.app.inject({ method: "GET", url, headers: { "x-api-key": merchant.apiKey, "x-nonce": "x".repeat(129) } }),
      401,
      "unauthenticated",
      "X-Nonce must be 1 to 128 printable ASCII characters"
    )
    const headers = keyHeaders(merchant.apiKey)
    expect((await t.app.inject({ method: "GET", url, headers })).statusCode).toBe(200)
    expectError(await t.app.inject({ method: "GET", url, headers }), 401, "nonce_already_used", "nonce already used")
    // A reused nonce changes nothing: the payment is not created.
    const nonce = keyHeaders(merchant.apiKey)
    await t.app.inject({ method: "GET", url, headers: nonce })
    const reused = await t.app.inject({ method: "POST", url: "/api/v1/payments", headers: nonce, payload: { amount: "1", order_id: "n-1" } })
    expectError(reused, 401, "nonce_already_used")
    const list = await t.app.inject({ method: "GET", url: "/api/v1/payments", headers: keyHeaders(merchant.apiKey) })
    expect(json(list).total).toBe(0)
  })

  it("an API key acts on its own terminal only: terminal access denied", async () => {
    const a = await t.merchant()
    const b = await t.merchant()
    const response = await t.app.inject({ method: "GET", url: `/api/v1/balance?terminal_id=${b.terminal.id}`, headers: keyHeaders(a.apiKey) })
    expectError(response, 403, "access_denied", "terminal access denied")
    const put = await t.app.inject({ method: "PUT", url: `/api/v1/terminals/${b.terminal.id}`, headers: keyHeaders(a.apiKey), payload: { show_platform_branding: false } })
    expectError(put, 403, "access_denied", "terminal access denied")
  })

  it("logs in, uses the access token on its own terminals, is refused on another account's, and refreshes", async () => {
    const merchant = await t.merchant()
    const other = await t.merchant()
    const response = await login({ email: merchant.ownerEmail, password: Kit.ownerPassword })
    expect(response.statusCode).toBe(200)
    expect(response.headers["x-request-id"]).toMatch(/^req_/)
    const pair = shape("TokenPair", json(response)) as { access_token: string; refresh_token: string; expires_at: number; user: Record<string, unknown> }
    expect(pair.user).toEqual({ id: merchant.userId, email: merchant.ownerEmail, role: "owner", account_id: merchant.accountId })
    expect(Number.isInteger(pair.expires_at)).toBe(true)
    const now = Math.floor(Date.now() / 1000)
    expect(pair.expires_at).toBeGreaterThan(now + 14 * 60)
    expect(pair.expires_at).toBeLessThanOrEqual(now + 15 * 60 + 1)

    const own = await t.app.inject({ method: "GET", url: `/api/v1/balance?terminal_id=${merchant.terminal.id}`, headers: bearer(pair.access_token) })
    expect(own.statusCode).toBe(200)
    expect(json(own).terminal_id).toBe(merchant.terminal.id)
    const created = await t.app.inject({
      method: "POST",
      url: "/api/v1/payments",
      headers: bearer(pair.access_token),
      payload: { amount: "10", order_id: "dash-1", terminal_id: merchant.terminal.id }
    })
    expect(created.statusCode).toBe(201)
    const foreign = await t.app.inject({ method: "GET", url: `/api/v1/balance?terminal_id=${other.terminal.id}`, headers: bearer(pair.access_token) })
    expectError(foreign, 403, "access_denied", "account access denied")
    const missing = await t.app.inject({ method: "GET", url: "/api/v1/balance", headers: bearer(pair.access_token) })
    expectError(missing, 400, "terminal_id_required", "terminal_id is required")
    expectError(await t.app.inject({ method: "GET", url: "/api/v1/rate", headers: bearer("not-a-token") }), 401, "unauthenticated")
    // Both credentials: neither is used, whichever merchant each names (the token used to win, the key unchecked).
    for (const key of [other.apiKey, merchant.apiKey, "pd_invalid"]) {
      const nonce = crypto.randomUUID()
      const both = { ...bearer(pair.access_token), "x-api-key": key, "x-nonce": nonce }
      const refused = expectError(await t.app.inject({ method: "GET", url: `/api/v1/balance?terminal_id=${merchant.terminal.id}`, headers: both }),
        400, "invalid_request", "send X-API-Key (with X-Nonce) or Authorization: Bearer, not both")
      expect(refused.field).toBe("X-API-Key")
      expectError(await t.app.inject({ method: "POST", url: "/api/v1/payments", headers: both, payload: { amount: "10", order_id: "both-1", terminal_id: merchant.terminal.id } }),
        400, "invalid_request")
      // A blank key is no key, as a blank Authorization is: the token alone.
      expect((await t.app.inject({ method: "GET", url: `/api/v1/balance?terminal_id=${merchant.terminal.id}`, headers: { ...bearer(pair.access_token), "x-api-key": " " } })).statusCode).toBe(200)
      // The nonce was not used: the key alone still goes through with it.
      if (key === merchant.apiKey) {
        expect((await t.app.inject({ method: "GET", url: "/api/v1/balance", headers: { "x-api-key": key, "x-nonce": nonce } })).statusCode).toBe(200)
      }
    }

    const renewed = await refresh({ refresh_token: pair.refresh_token })
    expect(renewed.statusCode).toBe(200)
    const next = shape("TokenPair", json(renewed)) as { access_token: string; refresh_token: string; user: unknown }
    expect(next.refresh_token).not.toBe(pair.refresh_token)
    expect(next.user).toEqual(pair.user)
    const withNew = await t.app.inject({ method: "GET", url: `/api/v1/payments?terminal_id=${merchant.terminal.id}`, headers: bearer(next.access_token) })
    expect(json(withNew).total).toBe(1)
    // Refresh tokens are single use: replaying the old one fails and revokes the family.
    expectError(await refresh({ refresh_token: pair.refresh_token }), 401, "unauthenticated", "invalid or expired refresh token")
    expectError(await refresh({ refresh_token: next.refresh_token }), 401, "unauthenticated", "invalid or expired refresh token")
  })

  it("lists the terminals a principal may act on: the API key's one, or every terminal of the user's account", async () => {
    const merchant = await t.merchant()
    const other = await t.merchant()
    const second = await t.run(Operator.createTerminal({ accountId: merchant.accountId, name: "Second shop", h2h: true, callbackUrl: null }))
    const ids = (response: { body: string }) => (shape("TerminalList", json(response)) as { items: ReadonlyArray<{ id: string }> }).items.map((x) => x.id)

    const byKey = await t.app.inject({ method: "GET", url: "/api/v1/terminals", headers: keyHeaders(merchant.apiKey) })
    expect(byKey.statusCode).toBe(200)
    expect(ids(byKey)).toEqual([merchant.terminal.id])
    expect(ids(await t.app.inject({ method: "GET", url: "/api/v1/terminals", headers: keyHeaders(second.apiKey) }))).toEqual([second.terminal.id])

    const pair = json(await login({ email: merchant.ownerEmail, password: Kit.ownerPassword })) as { access_token: string }
    const byUser = await t.app.inject({ method: "GET", url: "/api/v1/terminals", headers: bearer(pair.access_token) })
    expect(byUser.statusCode).toBe(200)
    expect(ids(byUser)).toEqual([merchant.terminal.id, second.terminal.id])
    expect(JSON.stringify(json(byUser))).not.toContain(other.terminal.id)
    // Never a credential in the list.
    expect(byUser.body).not.toContain(merchant.signingSecret)
    expect(byUser.body).not.toContain(merchant.apiKey)

    expectError(await t.app.inject({ method: "GET", url: "/api/v1/terminals" }), 401, "unauthenticated", "X-API-Key header is required")
    expectError(await t.app.inject({ method: "GET", url: "/api/v1/terminals", headers: bearer("not-a-token") }), 401, "unauthenticated")
  })

  it("changes the signed-in user's password: every other session ends, the answer is a new pair, bad input changes nothing", async () => {
    const merchant = await t.merchant()
    const here = json(await login({ email: merchant.ownerEmail, password: Kit.ownerPassword }))
    const elsewhere = json(await login({ email: merchant.ownerEmail, password: Kit.ownerPassword }))
    const change = (headers: Record<string, string>, payload: unknown) =>
      t.app.inject({ method: "POST", url: "/api/v1/auth/password", headers, payload: payload as object })
    const terminals = (token: string) => t.app.inject({ method: "GET", url: "/api/v1/terminals", headers: bearer(token) })
    const field = (response: Awaited<ReturnType<typeof change>>, status: number, message: string) => expectError(response, status, "invalid_request", message).field
    expect(field(await change(bearer(here.access_token), { current_password: "wrong password", new_password: "a new password" }), 400,
      "current_password is not the user's password")).toBe("current_password")
    expect(field(await change(bearer(here.access_token), { current_password: Kit.ownerPassword, new_password: "short" }), 400,
      "new_password must be 8 to 256 characters")).toBe("new_password")
    expect(field(await change(bearer(here.access_token), { current_password: Kit.ownerPassword, new_password: Kit.ownerPassword }), 400,
      "new_password must differ from current_password")).toBe("new_password")
    expect(field(await change(bearer(here.access_token), { current_password: Kit.ownerPassword }), 400, "new_password is required")).toBe("new_password")
    expectError(await change(bearer(here.access_token), { current_password: Kit.ownerPassword, new_password: "a new password", email: "x@y.z" }), 400,
      "invalid_request", "unknown field email")
    expectError(await change(keyHeaders(merchant.apiKey), { current_password: Kit.ownerPassword, new_password: "a new password" }), 403,
      "access_denied", "account owner access required")
    expectError(await change({}, { current_password: Kit.ownerPassword, new_password: "a new password" }), 401, "unauthenticated",
      "Authorization: Bearer <access token> is required")
    expectError(await change({ authorization: "Basic b3duZXI6cGFzcw==" }, { current_password: Kit.ownerPassword, new_password: "a new password" }), 401,
      "unauthenticated", "Authorization: Bearer <access token> is required")
    expectError(await change(bearer("not-a-token"), { current_password: Kit.ownerPassword, new_password: "a new password" }), 401, "unauthenticated")
    // None of those changed anything.
    expect((await terminals(elsewhere.access_token)).statusCode).toBe(200)
    expect((await login({ email: merchant.ownerEmail, password: Kit.ownerPassword })).statusCode).toBe(200)

    const changed = await change(bearer(here.access_token), { current_password: Kit.ownerPassword, new_password: "a new password" })
    expect(changed.statusCode).toBe(200)
    const pair = shape("TokenPair", json(changed)) as { access_token: string; refresh_token: string; user: Record<string, unknown> }
    expect(pair.user).toEqual({ id: merchant.userId, email: merchant.ownerEmail, role: "owner", account_id: merchant.accountId })
    expect((await terminals(pair.access_token)).statusCode).toBe(200)
    for (const old of [here, elsewhere]) {
      expectError(await terminals(old.access_token), 401, "unauthenticated", "invalid or expired access token")
      expectError(await refresh({ refresh_token: old.refresh_token }), 401, "unauthenticated")
    }
    expectError(await login({ email: merchant.ownerEmail, password: Kit.ownerPassword }), 401, "invalid_credentials")
    expect((await login({ email: merchant.ownerEmail, password: "a new password" })).statusCode).toBe(200)
  })

  it("password changes are limited per session, its refreshes included; another session of the user is not held back", async () => {
    await t.close()
    t = await make({ loginLimits: { perEmail: 3, perAddress: 1000 } })
    const merchant = await t.merchant()
    // A thief's session and the owner's (logins are limited to 3 a minute per e-mail here too).
    const thief = json(await login({ email: merchant.ownerEmail, password: Kit.ownerPassword }))
    const owner = json(await login({ email: merchant.ownerEmail, password: Kit.ownerPassword }))
    const change = (token: string, current: string) =>
      t.app.inject({ method: "POST", url: "/api/v1/auth/password", headers: bearer(token), payload: { current_password: current, new_password: "a new password" } })
    for (let i = 0; i < 3; i++) expectError(await change(thief.access_token, "wrong password"), 400, "invalid_request")
    // A refreshed access token is the same session.
    const refreshed = json(await refresh({ refresh_token: thief.refresh_token }))
    const limited = await change(refreshed.access_token, Kit.ownerPassword)
    expectError(limited, 429, "too_many_requests", /^too many password changes, retry in \d+ s$/)
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1)
    // The right password past the limit changed nothing; the owner's own session changes it.
    expect((await login({ email: merchant.ownerEmail, password: Kit.ownerPassword })).statusCode).toBe(200)
    expect((await change(owner.access_token, Kit.ownerPassword)).statusCode).toBe(200)
    expectError(await t.app.inject({ method: "GET", url: "/api/v1/terminals", headers: bearer(refreshed.access_token) }), 401, "unauthenticated")
  })

  it("the operator sets a user's password (the account lists its users): the user's sessions end, the new password signs in", async () => {
    const admin = adminCalls(t.app)
    const merchant = await t.merchant()
    const pair = json(await login({ email: merchant.ownerEmail, password: Kit.ownerPassword }))
    const account = await admin("GET", `/accounts/${merchant.accountId}`)
    expect((shape("AccountDetail", json(account)) as { users: unknown }).users).toEqual([
      { id: merchant.userId, email: merchant.ownerEmail, role: "owner", account_id: merchant.accountId, created_at: expect.any(String) }
    ])
    expect(expectError(await admin("POST", `/users/${merchant.userId}/password`, { password: "short" }), 400, "invalid_request",
      "password must be 8 to 256 characters").field).toBe("password")
    expectError(await admin("POST", `/users/${crypto.randomUUID()}/password`, { password: "long enough" }), 404, "not_found", "user not found")
    expectError(await admin("POST", `/users/${merchant.userId}/password`, {}), 400, "invalid_request", "password is required")
    expectError(await t.app.inject({ method: "POST", url: `/admin/v1/users/${merchant.userId}/password`, headers: bearer(pair.access_token), payload: { password: "long enough" } }),
      401, "unauthenticated")
    expect((await t.app.inject({ method: "GET", url: "/api/v1/terminals", headers: bearer(pair.access_token) })).statusCode).toBe(200)
    expect(json(await admin("POST", `/users/${merchant.userId}/password`, { password: "long enough" }))).toEqual({ ok: true })
    expectError(await t.app.inject({ method: "GET", url: "/api/v1/terminals", headers: bearer(pair.access_token) }), 401, "unauthenticated")
    expectError(await refresh({ refresh_token: pair.refresh_token }), 401, "unauthenticated")
    expectError(await login({ email: merchant.ownerEmail, password: Kit.ownerPassword }), 401, "invalid_credentials")
    expect((await login({ email: merchant.ownerEmail, password: "long enough" })).statusCode).toBe(200)
  })

  it("refuses wrong credentials and malformed login and refresh bodies", async () => {
    const merchant = await t.merchant()
    expectError(await login({ email: merchant.ownerEmail, password: "wrong" }), 401, "invalid_credentials", "invalid email or password")
    expectError(await login({ email: "nobody@example.com", password: "wrong" }), 401, "invalid_credentials", "invalid email or password")
    expect(expectError(await login({ email: merchant.ownerEmail }), 400, "invalid_request", "password is required").field).toBe("password")
    expect(expectError(await login({ email: 1, password: "x" }), 400, "invalid_request", "email must be a string").field).toBe("email")
    expectError(await login({ email: "a", password: "b", remember: true }), 400, "invalid_request", "unknown field remember")
    expectError(await refresh({}), 400, "invalid_request", "refresh_token is required")
    expectError(await refresh({ refresh_token: "rt_unknown" }), 401, "unauthenticated", "invalid or expired refresh token")
    const malformed = await t.app.inject({ method: "POST", url: "/api/v1/auth/login", headers: { "content-type": "application/json" }, payload: "{\"email\":" })
    expectError(malformed, 400, "invalid_json_body", "invalid json body")
  })
})
