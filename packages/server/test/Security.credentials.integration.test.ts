/**
 * The credential lifecycle against the real server (in process, PostgreSQL): API keys created,
 * listed and revoked by the account owner and by the operator (a revoked key is `invalid api key`),
 * the signing secret rotated (the previous one signs `X-Signature` through the overlap, the new one
 * `X-Signature-Next`), logout revoking the
 * refresh family, and access tokens refused as soon as their family is revoked.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { createHash, randomBytes } from "node:crypto"
import { PgStore } from "@paydesk/sql-pg"
import { Signature } from "@paydesk/core"
import { type Receiver, startReceiver, startServer } from "./ServerHarness.js"

type Srv = Awaited<ReturnType<typeof startServer>>

describe("credential lifecycle", () => {
  let srv: Srv
  let receiver: Receiver

  beforeAll(async () => {
    srv = await startServer()
    receiver = await startReceiver(() => srv.now())
    await srv.setClock("2026-06-01T10:00:00.000Z")
  }, 120_000)

  afterAll(async () => {
    await receiver?.close()
    await srv?.stop()
  })

  /** An account with its owner signed in, and a terminal delivering to the receiver. */
  const merchant = async () => {
    const email = `owner-${randomBytes(4).toString("hex")}@shop.example`
    const account = await srv.admin("POST", "/accounts", { name: "Shop", owner_email: email, owner_password: "correct horse" })
    const terminal = await srv.admin("POST", "/terminals", { account_id: account.json.account_id, name: "Shop", callback_url: receiver.url })
    const signIn = async () => (await srv.call("POST", "/api/v1/auth/login", { body: { email, password: "correct horse" } })).json
    const session = await signIn()
    const owner = (method: string, path: string, body?: unknown, token: string = session.access_token) =>
      srv.call(method, `/api/v1${path}`, { headers: { authorization: `Bearer ${token}` }, ...(body === undefined ? {} : { body }) })
    const withKey = (key: string, method: string, path: string, body?: unknown) =>
      srv.call(method, `/api/v1${path}`, { headers: { "x-api-key": key, "x-nonce": crypto.randomUUID() }, ...(body === undefined ? {} : { body }) })
    return {
      accountId: account.json.account_id as string,
      userId: account.json.user_id as string,
      terminalId: terminal.json.terminal_id as string,
      apiKey: terminal.json.api_key as string,
      signingSecret: terminal.json.signing_secret as string,
      session,
      signIn,
      owner,
      withKey
    }
  }

  it("the owner creates, lists and revokes API keys; a revoked key is refused at once", async () => {
    const m = await merchant()
    const created = await m.owner("POST", `/terminals/${m.terminalId}/api-keys`, { subscription_write: false })
    expect(created.status).toBe(201)
    expect(created.json).toMatchObject({ terminal_id: m.terminalId, subscription_write: false, revoked_at: null })
    expect(created.json.api_key).toMatch(/^pd_/)
    expect(created.json.prefix).toBe(created.json.api_key.slice(0, 10))
    expect((await m.withKey(created.json.api_key, "GET", "/balance")).status).toBe(200)

    const listed = await m.owner("GET", `/terminals/${m.terminalId}/api-keys`)
    expect(listed.json.items.map((k: { id: string }) => k.id)).toContain(created.json.id)
    expect(JSON.stringify(listed.json)).not.toContain(created.json.api_key)

    const revoked = await m.owner("POST", `/terminals/${m.terminalId}/api-keys/${created.json.id}/revoke`)
    expect(revoked.status).toBe(200)
    expect(revoked.json.revoked_at).not.toBeNull()
    const refused = await m.withKey(created.json.api_key, "GET", "/balance")
    expect([refused.status, refused.json.error.message]).toEqual([401, "invalid api key"])
    // Revoking again changes nothing; an unknown key is 404; the terminal's first key still works.
    expect((await m.owner("POST", `/terminals/${m.terminalId}/api-keys/${created.json.id}/revoke`)).json.revoked_at).toBe(revoked.json.revoked_at)
    expect((await m.owner("POST", `/terminals/${m.terminalId}/api-keys/${crypto.randomUUID()}/revoke`)).status).toBe(404)
    expect((await m.withKey(m.apiKey, "GET", "/balance")).status).toBe(200)
  }, 60_000)

  it("an API key cannot manage credentials, nor an owner of another account", async () => {
    const m = await merchant()
    const other = await merchant()
    const byKey = await m.withKey(m.apiKey, "POST", `/terminals/${m.terminalId}/api-keys`, {})
    expect([byKey.status, byKey.json.error.message]).toEqual([403, "account owner access required"])
    expect((await m.withKey(m.apiKey, "POST", `/terminals/${m.terminalId}/signing-secret/rotate`)).status).toBe(403)
    const foreign = await other.owner("POST", `/terminals/${m.terminalId}/api-keys/${crypto.randomUUID()}/revoke`)
    expect([foreign.status, foreign.json.error.message]).toEqual([403, "account access denied"])
  }, 60_000)

  it("the operator lists and revokes a terminal's keys", async () => {
    const m = await merchant()
    const keys = await srv.admin("GET", `/terminals/${m.terminalId}/api-keys`)
    expect(keys.json.items).toHaveLength(1)
    const revoked = await srv.admin("POST", `/terminals/${m.terminalId}/api-keys/${keys.json.items[0].id}/revoke`)
    expect(revoked.status).toBe(200)
    expect((await m.withKey(m.apiKey, "GET", "/balance")).json.error.message).toBe("invalid api key")
  }, 60_000)

  /** A sandbox payment of `m` made and its payment.created delivered; checks a header of that callback against a secret. */
  const deliveredPayment = async (m: Awaited<ReturnType<typeof merchant>>, orderId: string) => {
    const created = await m.withKey(m.apiKey, "POST", "/payments", { amount: "10.00", order_id: orderId, test: true })
    await srv.work()
    const delivered = receiver.requests.find((r) => r.body.includes(created.json.id))!
    return (candidate: string, header: string) =>
      Effect.runPromise(Signature.verify({
        secret: candidate, timestamp: String(delivered.headers["x-timestamp"]), body: delivered.body,
        signature: String(delivered.headers[header]), nowSeconds: Math.floor(srv.now() / 1000)
      }))
  }

  it("a rotated signing secret: during the overlap X-Signature is the previous secret's and X-Signature-Next the new one's; the first secret verifies neither", async () => {
    const m = await merchant()
    const rotated = await m.owner("POST", `/terminals/${m.terminalId}/signing-secret/rotate`)
    expect(rotated.status).toBe(200)
    expect(rotated.json.signing_secret).toMatch(/^sk_sign_/)
    expect(rotated.json.signing_secret).not.toBe(m.signingSecret)
    const byOperator = await srv.admin("POST", `/terminals/${m.terminalId}/signing-secret/rotate`)
    const secret: string = byOperator.json.signing_secret
    expect(secret).not.toBe(rotated.json.signing_secret)

    const verify = await deliveredPayment(m, "rotated-1")
    // The receiver still holding the secret of the owner's rotation keeps verifying X-Signature;
    // one that switched to the newest verifies X-Signature-Next.
    expect(await verify(rotated.json.signing_secret, "x-signature")).toEqual({ ok: true })
    expect(await verify(secret, "x-signature-next")).toEqual({ ok: true })
    expect(await verify(secret, "x-signature")).toEqual({ ok: false, reason: "mismatch" })
    expect(await verify(m.signingSecret, "x-signature")).toEqual({ ok: false, reason: "mismatch" })
    expect(await verify(m.signingSecret, "x-signature-next")).toEqual({ ok: false, reason: "mismatch" })
  }, 60_000)

  it("a rotation repeated with its Idempotency-Key (a retry after a lost answer) answers the same secret: X-Signature stays the merchant's", async () => {
    const m = await merchant()
    const rotate = (key?: string) =>
      srv.call("POST", `/api/v1/terminals/${m.terminalId}/signing-secret/rotate`, {
        headers: { authorization: `Bearer ${m.session.access_token}`, ...(key === undefined ? {} : { "idempotency-key": key }) }
      })
    const first = await rotate("rotate-1")
    const again = await rotate("rotate-1")
    expect([first.status, again.status]).toEqual([200, 200])
    expect(again.json).toEqual(first.json)
    const verify = await deliveredPayment(m, "rotated-again")
    // The merchant's own secret still signs X-Signature; the one it was shown (twice) X-Signature-Next.
    expect(await verify(m.signingSecret, "x-signature")).toEqual({ ok: true })
    expect(await verify(first.json.signing_secret, "x-signature-next")).toEqual({ ok: true })
    // A later rotation replaces that secret: its key is then 409, nothing rotated.
    const later = await rotate("rotate-2")
    expect(later.json.signing_secret).not.toBe(first.json.signing_secret)
    const stale = await rotate("rotate-1")
    expect([stale.status, stale.json.error.code]).toEqual([409, "idempotency_conflict"])
    expect((await rotate("rotate-2")).json.signing_secret).toBe(later.json.signing_secret)
    // After retire-previous, a repeat says the overlap has ended (as the terminal does).
    expect((await m.owner("POST", `/terminals/${m.terminalId}/signing-secret/retire-previous`)).status).toBe(200)
    const retired = await rotate("rotate-2")
    expect([retired.json.signing_secret, retired.json.previous_secret_expires_at]).toEqual([later.json.signing_secret, null])
    // The operator's rotation takes a key too (it rotated twice under one).
    const byOperator = (key: string) => srv.admin("POST", `/terminals/${m.terminalId}/signing-secret/rotate`, undefined, { "idempotency-key": key })
    const operatorFirst = await byOperator("operator-1")
    expect((await byOperator("operator-1")).json.signing_secret).toBe(operatorFirst.json.signing_secret)
    expect((await rotate("rotate-2")).status).toBe(409)
    // A key that is not one: 400, nothing rotated.
    const bad = await rotate("x".repeat(129))
    expect([bad.status, bad.json.error.field]).toEqual([400, "Idempotency-Key"])
    expect((await byOperator("operator-1")).json.signing_secret).toBe(operatorFirst.json.signing_secret)
  }, 60_000)

  it("logout revokes the refresh family: its access and refresh tokens stop working at once", async () => {
    const m = await merchant()
    const balance = (token: string) => m.owner("GET", `/balance?terminal_id=${m.terminalId}`, undefined, token)
    expect((await balance(m.session.access_token)).status).toBe(200)
    const out = await srv.call("POST", "/api/v1/auth/logout", { headers: { authorization: `Bearer ${m.session.access_token}` } })
    expect([out.status, out.json]).toEqual([200, { ok: true }])
    expect((await balance(m.session.access_token)).status).toBe(401)
    expect((await srv.call("POST", "/api/v1/auth/refresh", { body: { refresh_token: m.session.refresh_token } })).status).toBe(401)

    // With the refresh token alone (the access token may have expired).
    const second = await m.signIn()
    expect((await srv.call("POST", "/api/v1/auth/logout", { body: { refresh_token: second.refresh_token } })).status).toBe(200)
    expect((await balance(second.access_token)).status).toBe(401)
    // Neither token: 401.
    expect((await srv.call("POST", "/api/v1/auth/logout", { body: {} })).status).toBe(401)
  }, 60_000)

  it("a replayed refresh token revokes the family, and its newest access token stops working at once", async () => {
    const m = await merchant()
    const balance = (token: string) => m.owner("GET", `/balance?terminal_id=${m.terminalId}`, undefined, token)
    const next = (await srv.call("POST", "/api/v1/auth/refresh", { body: { refresh_token: m.session.refresh_token } })).json
    expect((await balance(next.access_token)).status).toBe(200)
    const replay = await srv.call("POST", "/api/v1/auth/refresh", { body: { refresh_token: m.session.refresh_token } })
    expect(replay.status).toBe(401)
    const after = await balance(next.access_token)
    expect([after.status, after.json.error.message]).toEqual([401, "invalid or expired access token"])
  }, 60_000)

  it("two exchanges of one refresh token at once: one may win, and the loser revokes the family, the winner's new pair included", async () => {
    const m = await merchant()
    const balance = (token: string) => m.owner("GET", `/balance?terminal_id=${m.terminalId}`, undefined, token)
    const refresh = () => srv.call("POST", "/api/v1/auth/refresh", { body: { refresh_token: m.session.refresh_token } })
    // The session's row held by a transaction of our own, so that both exchanges read it unrevoked
    // and then wait (one on the row, the other on its family's lock); released, one takes the token
    // and the other finds it taken.
    const db = ManagedRuntime.make(PgStore.layerClient(srv.databaseUrl, { maxConnections: 2 }))
    // Released in any case, so that a failure before the release leaves no transaction waiting.
    let release = () => {}
    const released = new Promise<void>((ok) => (release = ok))
    try {
      const query = <A extends object>(text: string, params: ReadonlyArray<unknown> = []) =>
        db.runPromise(Effect.orDie(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text, params as Array<unknown>))))
      const hash = createHash("sha256").update(m.session.refresh_token, "utf8").digest("hex")
      let locked!: () => void
      const holding = new Promise<void>((ok) => (locked = ok))
      const holder = db.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql.unsafe("SELECT id FROM sessions WHERE token_hash = $1 FOR UPDATE", [hash])
          locked()
          yield* Effect.promise(() => released)
        }))))
      await Promise.race([holding, holder]) // (a holder that failed before locking fails the test here)
      const exchanges = [refresh(), refresh()]
      for (let waited = 0; ; waited += 20) {
        const [row] = await query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
        if (row!.n >= 2) break
        if (waited > 10_000) throw new Error("the two exchanges never waited on the session's row")
        await new Promise((ok) => setTimeout(ok, 20))
      }
      release()
      await holder
      const answers = await Promise.all(exchanges)
      expect(answers.map((a) => a.status).sort()).toEqual([200, 401])
      const winner = answers.find((a) => a.status === 200)!.json
      expect((await balance(winner.access_token)).status).toBe(401)
      expect((await srv.call("POST", "/api/v1/auth/refresh", { body: { refresh_token: winner.refresh_token } })).status).toBe(401)
      const [live] = await query<{ n: number }>("SELECT count(*)::int AS n FROM sessions WHERE family_id = (SELECT family_id FROM sessions WHERE token_hash = $1) AND revoked_at IS NULL", [hash])
      expect(live!.n).toBe(0)
    } finally {
      release()
      await db.dispose()
    }
  }, 60_000)

  it("the operator ends every session of a user", async () => {
    const m = await merchant()
    const second = await m.signIn()
    expect((await srv.admin("POST", `/users/${m.userId}/logout`, {})).json).toEqual({ ok: true })
    for (const token of [m.session.access_token, second.access_token]) {
      expect((await m.owner("GET", `/balance?terminal_id=${m.terminalId}`, undefined, token)).status).toBe(401)
    }
    expect((await srv.admin("POST", `/users/${crypto.randomUUID()}/logout`, {})).status).toBe(404)
  }, 60_000)

  it("a disabled terminal keeps its settings (400 terminal is unavailable) but its credentials can still be revoked and rotated", async () => {
    const m = await merchant()
    expect((await srv.admin("POST", `/terminals/${m.terminalId}/status`, { status: "disabled" })).status).toBe(200)
    const put = await m.withKey(m.apiKey, "PUT", `/terminals/${m.terminalId}`, { callback_url: "https://elsewhere.example/cb" })
    expect([put.status, put.json.error.message]).toEqual([400, "terminal is unavailable"])
    const byOwner = await m.owner("PUT", `/terminals/${m.terminalId}`, { show_platform_branding: false })
    expect(byOwner.status).toBe(400)
    expect((await m.owner("POST", `/terminals/${m.terminalId}/api-keys`, {})).json.error.message).toBe("terminal is unavailable")
    expect((await m.owner("POST", `/terminals/${m.terminalId}/signing-secret/rotate`)).status).toBe(200)
    const keys = await m.owner("GET", `/terminals/${m.terminalId}/api-keys`)
    expect((await m.owner("POST", `/terminals/${m.terminalId}/api-keys/${keys.json.items[0].id}/revoke`)).status).toBe(200)
  }, 60_000)
})
