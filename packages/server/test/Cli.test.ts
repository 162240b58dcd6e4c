/**
 * The `paydesk` CLI without a server: help at every level, usage errors (exit 2), each command's
 * operator API call, `--password-stdin`, JSON and `--table` output, API errors and an unreachable
 * server (exit 1), and a command module added by one registration.
 */
import { describe, expect, it } from "vitest"
import { createServer } from "node:net"
import type { AddressInfo } from "node:net"
import * as CliProgram from "../src/CliProgram.js"

interface Sent {
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: unknown
}

/** Runs the CLI against a fake server answering `answer` (200 `{ ok: true }` by default). */
const cli = async (
  argv: ReadonlyArray<string>,
  options: {
    readonly env?: Record<string, string | undefined>
    readonly stdin?: string
    readonly answer?: { readonly status: number; readonly body: unknown }
    readonly fetch?: typeof globalThis.fetch
    readonly modules?: ReadonlyArray<CliProgram.Extension>
    /** A person at the terminal answering each question so (none: not in a terminal). */
    readonly confirm?: boolean
  } = {}
) => {
  const questions: Array<string> = []
  const sent: Array<Sent> = []
  let stdout = ""
  let stderr = ""
  const fake: typeof globalThis.fetch = async (input, init) => {
    sent.push({
      method: init?.method ?? "GET",
      url: String(input),
      headers: Object.fromEntries(Object.entries((init?.headers ?? {}) as Record<string, string>)),
      body: init?.body === undefined ? undefined : JSON.parse(String(init.body))
    })
    const answer = options.answer ?? { status: 200, body: { ok: true } }
    return new Response(JSON.stringify(answer.body), { status: answer.status, headers: { "content-type": "application/json" } })
  }
  const code = await CliProgram.run(argv, {
    env: { PAYDESK_ADMIN_TOKEN: "adm-token", ...options.env },
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    readStdin: async () => options.stdin ?? "",
    fetch: options.fetch ?? fake,
    ...(options.confirm === undefined ? {} : {
      confirm: async (question: string) => {
        questions.push(question)
        return options.confirm!
      }
    })
  }, options.modules)
  return { code, sent, stdout, stderr, questions }
}

describe("paydesk CLI: help and usage", () => {
  it("has help at every level, exit 0", async () => {
    const top = await cli(["--help"])
    expect(top.code).toBe(0)
    for (const group of ["accounts", "terminals", "api-keys", "users", "plans", "payments", "subscriptions", "payouts", "deliveries", "acquirer", "rate", "clock", "work"]) {
      expect(top.stdout).toMatch(new RegExp(`^  ${group} `, "m"))
    }
    const group = await cli(["payments", "--help"])
    expect([group.code, group.stdout]).toEqual([0, expect.stringMatching(/list \[options\][\s\S]*get <payment_id>[\s\S]*refund \[options\] <payment_id>/)])
    const leaf = await cli(["accounts", "create", "--help"])
    expect([leaf.code, leaf.stdout]).toEqual([0, expect.stringContaining("--password-stdin")])
    expect((await cli(["help", "terminals"])).stdout).toContain("update [options] <terminal_id>")
    // The key option says what it withholds; its first name (--read-only) still works, unlisted.
    const keys = (await cli(["api-keys", "create", "--help"])).stdout
    expect([keys.includes("--no-subscription-write"), keys.includes("--read-only")]).toEqual([true, false])
    expect(top.sent).toEqual([])
  })

  it("answers wrong usage with exit 2 and a message, calling nothing", async () => {
    const cases: ReadonlyArray<[ReadonlyArray<string>, RegExp]> = [
      [["nope"], /unknown command 'nope'/],
      [["accounts"], /Usage: paydesk accounts/],
      [[], /Usage: paydesk/],
      [["accounts", "create", "--name", "x"], /required option '--email <email>' not specified/],
      [["accounts", "create", "--name", "x", "--email", "a@b.c"], /exactly one of --password <password> and --password-stdin/],
      [["users", "set-password", "u1"], /exactly one of --password <password> and --password-stdin/],
      [["users", "set-password", "u1", "--password", "x", "--password-stdin"], /exactly one of --password <password> and --password-stdin/],
      [["payments", "list", "--terminal", "t1", "--environment", "test"], /Allowed choices are prod, sandbox, all/],
      [["payments", "list", "--terminal", "t1", "--page", "0"], /--page must be an integer from 1 to 999999/],
      // As the server checks it (it was its 400, exit 1: an outside probe).
      [["payments", "list", "--terminal", "t1", "--page", "1000000"], /--page must be an integer from 1 to 999999/],
      [["terminals", "update", "t1"], /nothing to change/],
      [["terminals", "status", "t1", "paused"], /Allowed choices are active, disabled/],
      [["plans", "create", "--terminals", "t", "--code", "c", "--name", "n", "--interval", "month", "--consent-text", "ok", "--policy-version", "1"], /--cap <rub>, or both/],
      [["accounts", "list", "--colour"], /unknown option '--colour'/]
    ]
    for (const [argv, message] of cases) {
      const run = await cli(argv)
      expect([run.code, run.sent], argv.join(" ")).toEqual([2, []])
      expect(run.stderr, argv.join(" ")).toMatch(message)
    }
    const noToken = await cli(["accounts", "list"], { env: { PAYDESK_ADMIN_TOKEN: undefined } })
    expect([noToken.code, noToken.stderr, noToken.sent]).toEqual([2, expect.stringContaining("PAYDESK_ADMIN_TOKEN is not set"), []])
  })
})

describe("paydesk CLI: commands", () => {
  it("turns each command into its operator API call", async () => {
    const cases: ReadonlyArray<[ReadonlyArray<string>, string, string, unknown?]> = [
      [["accounts", "list", "--page", "2"], "GET", "/accounts?page=2"],
      [["accounts", "get", "a1"], "GET", "/accounts/a1"],
      [["terminals", "create", "--account", "a1", "--name", "Shop", "--h2h", "--callback-url", "https://s.example/cb"], "POST", "/terminals",
        { account_id: "a1", name: "Shop", h2h: true, callback_url: "https://s.example/cb" }],
      [["terminals", "list", "--account", "a1"], "GET", "/accounts/a1/terminals"],
      [["terminals", "get", "t1"], "GET", "/terminals/t1"],
      [["terminals", "update", "t1", "--callback-url", "", "--conversion-mode", "scheduled", "--conversion-time", "10:00", "--no-branding"], "PUT", "/terminals/t1",
        { callback_url: null, conversion_mode: "scheduled", conversion_time: "10:00", show_platform_branding: false }],
      [["terminals", "status", "t1", "disabled"], "POST", "/terminals/t1/status", { status: "disabled" }],
      [["terminals", "rotate-secret", "t1"], "POST", "/terminals/t1/signing-secret/rotate", {}],
      [["deliveries", "list", "--status", "failed", "--limit", "500"], "GET", "/deliveries?status=failed&limit=500"],
      [["api-keys", "create", "--terminal", "t1"], "POST", "/terminals/t1/api-keys", { subscription_write: true }],
      [["api-keys", "create", "--terminal", "t1", "--no-subscription-write"], "POST", "/terminals/t1/api-keys", { subscription_write: false }],
      [["api-keys", "create", "--terminal", "t1", "--read-only"], "POST", "/terminals/t1/api-keys", { subscription_write: false }],
      [["api-keys", "list", "--terminal", "t1"], "GET", "/terminals/t1/api-keys"],
      [["api-keys", "revoke", "k1", "--terminal", "t1"], "POST", "/terminals/t1/api-keys/k1/revoke", {}],
      [["users", "logout", "u1"], "POST", "/users/u1/logout", {}],
      [["users", "set-password", "u1", "--password", "a new password"], "POST", "/users/u1/password", { password: "a new password" }],
      [["plans", "create", "--terminals", "t1,t2", "--code", "c", "--name", "N", "--interval", "month", "--schedule", "calendar", "--cap", "4000", "--consent-text", "ok", "--policy-version", "1"],
        "POST", "/plans", { terminal_ids: ["t1", "t2"], code: "c", name: "N", interval: "month", schedule: "calendar", cap_amount_rub: "4000", consent_text: "ok", policy_version: "1" }],
      // half_year, which the operator API takes, is offered too (a conformance probe found it missing).
      [["plans", "create", "--terminals", "t1", "--code", "h", "--name", "H", "--interval", "half_year", "--schedule", "fixed_days", "--payer-amount", "990", "--merchant-amount", "950", "--consent-text", "ok", "--policy-version", "1"],
        "POST", "/plans", { terminal_ids: ["t1"], code: "h", name: "H", interval: "half_year", schedule: "fixed_days", payer_amount_rub: "990", merchant_amount_rub: "950", consent_text: "ok", policy_version: "1" }],
      [["payments", "list", "--terminal", "t1"], "GET", "/terminals/t1/payments?environment=prod"],
      [["payments", "list", "--terminal", "t1", "--environment", "all", "--page", "3"], "GET", "/terminals/t1/payments?environment=all&page=3"],
      [["payments", "get", "pay_1"], "GET", "/payments/pay_1"],
      [["payments", "refund", "pay_1"], "POST", "/payments/pay_1/refund", {}],
      [["subscriptions", "list", "--terminal", "t1", "--state", "active"], "GET", "/terminals/t1/subscriptions?state=active"],
      [["subscriptions", "get", "s1"], "GET", "/subscriptions/s1"],
      [["subscriptions", "stop", "s1"], "POST", "/subscriptions/s1/stop", {}],
      [["payouts", "list", "--terminal", "t1"], "GET", "/terminals/t1/payouts"],
      [["payouts", "get", "po_1"], "GET", "/payouts/po_1"],
      [["payouts", "reject", "po_1", "--reason", "blocked"], "POST", "/payouts/po_1/reject", { reason: "blocked" }],
      [["payouts", "approve", "po_1"], "POST", "/payouts/po_1/approve", {}],
      [["payments", "chargeback", "pay_1"], "POST", "/payments/pay_1/chargeback", {}],
      [["deliveries", "list", "--payment", "p1", "--status", "failed"], "GET", "/deliveries?payment_id=p1&status=failed"],
      [["deliveries", "show", "d1"], "GET", "/deliveries/d1"],
      [["acquirer", "settle", "p1"], "POST", "/acquirer/payments/p1/outcome", { outcome: "paid" }],
      [["acquirer", "charges", "s1", "paid", "unknown"], "POST", "/acquirer/subscriptions/s1/charge-outcomes", { outcomes: ["paid", "unknown"] }],
      [["acquirer", "resolve", "s1", "failed"], "POST", "/acquirer/subscriptions/s1/unknown-charge", { outcome: "failed" }],
      [["rate", "set", "95.5"], "PUT", "/rate", { rate: "95.5" }],
      [["clock", "set", "2027-01-01T00:00:00Z"], "POST", "/clock", { now: "2027-01-01T00:00:00Z" }],
      [["work", "run"], "POST", "/work/run", {}]
    ]
    for (const [argv, method, path, body] of cases) {
      const run = await cli(argv)
      expect([run.code, run.stderr], argv.join(" ")).toEqual([0, ""])
      expect(run.sent, argv.join(" ")).toEqual([{
        method,
        url: `http://127.0.0.1:8080/admin/v1${path}`,
        headers: { authorization: "Bearer adm-token", ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body
      }])
    }
  })

  it("sends an operator move's --idempotency-key as its Idempotency-Key header", async () => {
    const cases: ReadonlyArray<[ReadonlyArray<string>, string, unknown]> = [
      [["payments", "refund", "pay_1", "--idempotency-key", "refund-1"], "/payments/pay_1/refund", {}],
      [["payments", "chargeback", "pay_1", "--idempotency-key", "cb-1"], "/payments/pay_1/chargeback", {}],
      [["payouts", "approve", "po_1", "--idempotency-key", "approve-1"], "/payouts/po_1/approve", {}],
      [["payouts", "reject", "po_1", "--reason", "blocked", "--idempotency-key", "reject-1"], "/payouts/po_1/reject", { reason: "blocked" }],
      [["terminals", "rotate-secret", "t1", "--idempotency-key", "rotate-1"], "/terminals/t1/signing-secret/rotate", {}]
    ]
    for (const [argv, path, body] of cases) {
      const run = await cli(argv)
      expect([run.code, run.stderr], argv.join(" ")).toEqual([0, ""])
      expect(run.sent, argv.join(" ")).toEqual([{
        method: "POST",
        url: `http://127.0.0.1:8080/admin/v1${path}`,
        headers: { authorization: "Bearer adm-token", "content-type": "application/json", "idempotency-key": argv.at(-1) },
        body
      }])
    }
  })

  it("refuses an --idempotency-key the server would refuse, before any call (exit 2)", async () => {
    for (const key of ["ключ", " padded ", "x".repeat(129), ""]) {
      const run = await cli(["payments", "refund", "pay_1", "--idempotency-key", key])
      expect([run.code, run.sent, run.stderr], JSON.stringify(key)).toEqual([2, [], expect.stringMatching(/--idempotency-key.*the key must be (at most 128 characters|1 to 128 printable ASCII characters)/)])
    }
  })

  it("in a terminal, asks before a call that cannot be undone, showing what it acts on; --yes and scripts do not ask", async () => {
    const payout = { id: "po_1", terminal_id: "t1", amount_usdt: "125.500000", wallet_address: "TXYZ1234", network: "TRC20", status: "pending", idempotency_key: null }
    const approve = ["payouts", "approve", "po_1"]
    // Answered yes: the payout is read, shown, and then approved.
    const yes = await cli(approve, { confirm: true, answer: { status: 200, body: payout } })
    expect(yes.code).toBe(0)
    expect(yes.sent.map((call) => `${call.method} ${call.url}`)).toEqual([
      "GET http://127.0.0.1:8080/admin/v1/payouts/po_1",
      "POST http://127.0.0.1:8080/admin/v1/payouts/po_1/approve"
    ])
    expect(yes.questions).toHaveLength(1)
    expect(yes.questions[0]).toMatch(/^  id\s+po_1\n  terminal_id\s+t1\n  amount_usdt\s+125\.500000\n  wallet_address\s+TXYZ1234\n  network\s+TRC20\n  status\s+pending\n/)
    expect(yes.questions[0]).toMatch(/The USDT is sent to the wallet, which cannot be undone\. Approve this payout\? \[y\/N\] $/)
    // Only the call's answer is printed (the object read first is in the question).
    expect(JSON.parse(yes.stdout)).toEqual(payout)
    // Answered no: read and shown, nothing approved, exit 1.
    const no = await cli(approve, { confirm: false, answer: { status: 200, body: payout } })
    expect([no.code, no.stderr, no.stdout]).toEqual([1, "paydesk: not done: not confirmed (--yes makes it without asking)\n", ""])
    expect(no.sent.map((call) => call.method)).toEqual(["GET"])
    // --yes (before or after the command): no question, the call alone.
    for (const argv of [["--yes", ...approve], [...approve, "-y"]]) {
      const given = await cli(argv, { confirm: false })
      expect([given.code, given.questions, given.sent.map((call) => call.method)]).toEqual([0, [], ["POST"]])
    }
    // What it acts on cannot be read: the server's refusal, no question, no call.
    const missing = await cli(approve, { confirm: true, answer: { status: 404, body: { error: { code: "not_found", message: "payout not found" } } } })
    expect([missing.code, missing.stderr, missing.questions, missing.sent.map((call) => call.method)]).toEqual([1, "paydesk: 404 not_found: payout not found\n", [], ["GET"]])
    // Each call that cannot be undone asks; the others do not.
    const asking: ReadonlyArray<[ReadonlyArray<string>, string | null]> = [
      [["payouts", "reject", "po_1"], "/payouts/po_1"],
      [["payments", "refund", "pay_1"], "/payments/pay_1"],
      [["payments", "chargeback", "pay_1"], "/payments/pay_1"],
      [["subscriptions", "stop", "s1"], "/subscriptions/s1"],
      [["terminals", "rotate-secret", "t1"], "/terminals/t1"],
      [["api-keys", "revoke", "k1", "--terminal", "t1"], null]
    ]
    for (const [argv, shown] of asking) {
      const declined = await cli(argv, { confirm: false })
      expect([declined.code, declined.questions.length], argv.join(" ")).toEqual([1, 1])
      expect(declined.sent.map((call) => `${call.method} ${call.url}`), argv.join(" ")).toEqual(shown === null ? [] : [`GET http://127.0.0.1:8080/admin/v1${shown}`])
    }
    for (const argv of [["subscriptions", "resume", "s1"], ["terminals", "status", "t1", "disabled"], ["users", "logout", "u1"], ["payouts", "get", "po_1"]]) {
      const run = await cli(argv, { confirm: false })
      expect([run.code, run.questions, run.sent.length], argv.join(" ")).toEqual([0, [], 1])
    }
  })

  it("takes the server from --url or PAYDESK_URL, and the password from stdin", async () => {
    const byEnv = await cli(["accounts", "list"], { env: { PAYDESK_URL: "http://10.0.0.5:9000/" } })
    expect(byEnv.sent[0]!.url).toBe("http://10.0.0.5:9000/admin/v1/accounts")
    const byFlag = await cli(["--url", "http://a.example", "accounts", "list"], { env: { PAYDESK_URL: "http://b.example" } })
    expect(byFlag.sent[0]!.url).toBe("http://a.example/admin/v1/accounts")
    const created = await cli(["accounts", "create", "--name", "Coffee", "--email", "o@coffee.example", "--password-stdin"], { stdin: "correct horse battery\n" })
    expect(created.sent[0]!.body).toEqual({ name: "Coffee", owner_email: "o@coffee.example", owner_password: "correct horse battery" })
    const reset = await cli(["users", "set-password", "u1", "--password-stdin"], { stdin: "a new password\r\n" })
    expect(reset.sent[0]!.body).toEqual({ password: "a new password" })
  })

  it("prints JSON by default and a table with --table", async () => {
    const page = { items: [{ id: "a1", name: "Coffee", created_at: "2026-01-01T00:00:00.000Z" }, { id: "a2", name: "Tea", created_at: "2026-01-02T00:00:00.000Z" }], total: 2, page: 1, per_page: 50 }
    const json = await cli(["accounts", "list"], { answer: { status: 200, body: page } })
    expect(JSON.parse(json.stdout)).toEqual(page)
    const listed = await cli(["accounts", "list", "--table"], { answer: { status: 200, body: page } })
    expect(listed.stdout).toBe([
      "ID  NAME    CREATED_AT",
      "a1  Coffee  2026-01-01T00:00:00.000Z",
      "a2  Tea     2026-01-02T00:00:00.000Z",
      "(2 of 2, page 1)",
      ""
    ].join("\n"))
    const one = await cli(["--table", "accounts", "get", "a1"], { answer: { status: 200, body: { id: "a1", name: "Coffee", terminals: [{ id: "t1" }] } } })
    expect(one.stdout).toBe("id         a1\nname       Coffee\nterminals  [{\"id\":\"t1\"}]\n")
    expect(CliProgram.table({ items: [], total: 0, page: 1 })).toBe("(none)\n(0 of 0, page 1)")
  })

  it("prints a merchant's text with its terminal controls and bidi characters escaped, never acted on (the JSON parses to the same value)", async () => {
    // Clear the screen, set the window's title, an 8-bit CSI, a right-to-left override, a line break.
    const description = "Beans\u001b[2J\u001b]0;pwned\u0007 \u009b31m \u202eevil\nnext"
    const page = { items: [{ id: "p1", description, metadata: { note: "\u001b[31mred" } }], total: 1, page: 1, per_page: 50 }
    const json = await cli(["payments", "list", "--terminal", "t1"], { answer: { status: 200, body: page } })
    expect(JSON.parse(json.stdout)).toEqual(page)
    const listed = await cli(["payments", "list", "--terminal", "t1", "--table"], { answer: { status: 200, body: page } })
    for (const out of [json.stdout, listed.stdout]) {
      expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
    }
    expect(listed.stdout).toContain("Beans\\u001b[2J\\u001b]0;pwned\\u0007 \\u009b31m \\u202eevil\\u000anext")
    // Invisible characters too (a name that reads as another), but not the joiners emoji and scripts need.
    const lookalike = await cli(["accounts", "get", "a1", "--table"], { answer: { status: 200, body: { id: "a1", name: "Cof\u200bfee\u200f\ufeff 👨\u200d👩" } } })
    expect(lookalike.stdout).toContain("Cof\\u200bfee\\u200f\\ufeff 👨\u200d👩")
    expect(listed.stdout).toContain("{\"note\":\"\\u001b[31mred\"}")
    // So are the lines `events list` writes itself, whatever field carries it (here a key of a record, an object id).
    const events = { items: [{ id: "evt_1", type: "payment.created", object_id: "pay_\u001b[2J", sequence: 1, created_at: "2026-01-01T00:00:00.000Z", delivery: null }], next_cursor: null }
    const rows = await cli(["events", "list"], { env: { PAYDESK_API_KEY: "pk_test_1" }, answer: { status: 200, body: events } })
    expect(rows.stdout).toContain("pay_\\u001b[2J")
    expect(rows.stdout).not.toContain("\u001b")
    const keyed = await cli(["accounts", "get", "a1", "--table"], { answer: { status: 200, body: { "na\u001bme": "x" } } })
    expect(keyed.stdout).toBe("na\\u001bme  x\n")
    // An error message carrying such text is escaped as well.
    const refused = await cli(["accounts", "get", "a1"], { answer: { status: 404, body: { error: { code: "not_found", message: "no account \u001b[2J here", request_id: "req_1" } } } })
    expect(refused.stderr).toContain("no account \\u001b[2J here")
  })
})

describe("paydesk CLI: the merchant's commands (API key)", () => {
  const key = { PAYDESK_API_KEY: "pk_test_1" }

  it("have help at every level beside the operator's", async () => {
    const top = await cli(["--help"])
    for (const command of ["listen", "trigger", "events", "test-clocks"]) expect(top.stdout).toMatch(new RegExp(`^  ${command} `, "m"))
    const clocks = await cli(["test-clocks", "--help"])
    expect([clocks.code, clocks.stdout]).toEqual([0, expect.stringMatching(/create \[options\] <frozen_time>[\s\S]*get \[options\] <test_clock_id>[\s\S]*list[\s\S]*advance \[options\] <test_clock_id> <frozen_time>[\s\S]*delete \[options\] <test_clock_id>/)])
    const advance = await cli(["test-clocks", "advance", "--help"])
    expect([advance.code, advance.stdout]).toEqual([0, expect.stringMatching(/--api-key <key>[\s\S]*--wait/)])
    const subscriptions = await cli(["subscriptions", "--help"])
    expect(subscriptions.stdout).toMatch(/resume <subscription_id>[\s\S]*upcoming \[options\] <subscription_id>[\s\S]*charge-outcomes \[options\] <subscription_id> <outcomes\.\.\.>/)
    expect((await cli(["events", "recover", "--help"])).stdout).toContain("--since <iso>")
    expect((await cli(["listen", "--help"])).stdout).toContain("--forward-to <url>")
    expect(top.sent).toEqual([])
  })

  it("turn each command into its merchant API call, with the API key and a nonce", async () => {
    const cases: ReadonlyArray<[ReadonlyArray<string>, string, string, unknown?]> = [
      [["test-clocks", "create", "2026-01-31T10:00:00+03:00", "--name", "January"], "POST", "/test-clocks", { frozen_time: "2026-01-31T10:00:00+03:00", name: "January" }],
      [["test-clocks", "get", "c1"], "GET", "/test-clocks/c1"],
      [["test-clocks", "list", "--page", "2"], "GET", "/test-clocks?page=2"],
      [["test-clocks", "advance", "c1", "2026-03-01T00:00:00Z"], "POST", "/test-clocks/c1/advance", { frozen_time: "2026-03-01T00:00:00Z" }],
      [["test-clocks", "delete", "c1"], "DELETE", "/test-clocks/c1"],
      [["subscriptions", "upcoming", "s1", "--count", "3"], "GET", "/subscriptions/s1/upcoming?count=3"],
      [["subscriptions", "upcoming", "s1"], "GET", "/subscriptions/s1/upcoming"],
      [["subscriptions", "charge-outcomes", "s1", "paid", "failed", "unknown"], "POST", "/subscriptions/s1/sandbox/charge-outcomes", { outcomes: ["paid", "failed", "unknown"] }],
      [["events", "show", "evt_1"], "GET", "/events/evt_1"],
      [["events", "resend", "evt_1"], "POST", "/events/evt_1/resend"],
      [["events", "recover", "--since", "2026-01-01T00:00:00Z", "--sandbox"], "POST", "/events/recover", { since: "2026-01-01T00:00:00Z", environment: "sandbox" }],
      [["events", "list", "--all", "--status", "failed", "--limit", "5"], "GET", "/events?environment=all&delivery_status=failed&limit=5"],
      // --environment, as payments list takes it, on the events' commands too.
      [["events", "list", "--environment", "sandbox"], "GET", "/events?environment=sandbox"],
      [["events", "recover", "--since", "2026-01-01T00:00:00Z", "--environment", "all"], "POST", "/events/recover", { since: "2026-01-01T00:00:00Z", environment: "all" }],
      [["events", "list", "--since", "2026-11-01T00:00:00+03:00", "--until", "2026-11-30T00:00:00Z"], "GET",
        `/events?environment=prod&created_from=${encodeURIComponent("2026-11-01T00:00:00+03:00")}&created_to=${encodeURIComponent("2026-11-30T00:00:00Z")}`]
    ]
    for (const [argv, method, path, body] of cases) {
      const run = await cli(argv, { env: key, answer: { status: 200, body: argv[1] === "list" && argv[0] === "events" ? { items: [], next_cursor: null } : { ok: true } } })
      expect([run.code, run.stderr], argv.join(" ")).toEqual([0, ""])
      expect(run.sent.map((s) => [s.method, s.url, s.body]), argv.join(" ")).toEqual([[method, `http://127.0.0.1:8080/api/v1${path}`, body]])
      expect(run.sent[0]!.headers["x-api-key"]).toBe("pk_test_1")
      expect(run.sent[0]!.headers["x-nonce"]).toMatch(/.{8,}/)
      expect(run.sent[0]!.headers.authorization).toBeUndefined()
    }
    // --api-key and --url beside the environment; the answer printed as JSON or a table.
    const flagged = await cli(["--url", "http://h.example:9/", "test-clocks", "get", "c1", "--api-key", "pk_flag", "--table"], {
      answer: { status: 200, body: { id: "c1", status: "ready" } }
    })
    expect([flagged.code, flagged.sent[0]!.url, flagged.sent[0]!.headers["x-api-key"], flagged.stdout]).toEqual([0, "http://h.example:9/api/v1/test-clocks/c1", "pk_flag", "id      c1\nstatus  ready\n"])
    const deleted = await cli(["test-clocks", "delete", "c1"], { env: key, answer: { status: 200, body: { id: "c1", deleted: true } } })
    expect([deleted.code, JSON.parse(deleted.stdout), deleted.sent.map((s) => [s.method, s.body])]).toEqual([0, { id: "c1", deleted: true }, [["DELETE", undefined]]])
    expect((await cli(["test-clocks", "delete", "c1", "--table"], { env: key, answer: { status: 200, body: { id: "c1", deleted: true } } })).stdout).toBe("id       c1\ndeleted  true\n")
  })

  it("advance --wait polls an advancing clock until it is ready", async () => {
    const answers = [
      { status: 202, body: { id: "c1", status: "advancing", frozen_time: "2026-02-10T00:00:00.000Z" } },
      { status: 200, body: { id: "c1", status: "advancing", frozen_time: "2026-02-20T00:00:00.000Z" } },
      { status: 200, body: { id: "c1", status: "ready", frozen_time: "2026-03-01T00:00:00.000Z" } }
    ]
    const urls: Array<string> = []
    const fetch: typeof globalThis.fetch = async (input) => {
      urls.push(String(input))
      const answer = answers.shift()!
      return new Response(JSON.stringify(answer.body), { status: answer.status, headers: { "content-type": "application/json" } })
    }
    const run = await cli(["test-clocks", "advance", "c1", "2026-03-01T00:00:00Z", "--wait"], { env: key, fetch })
    expect([run.code, JSON.parse(run.stdout).status]).toEqual([0, "ready"])
    expect(urls).toEqual(["http://127.0.0.1:8080/api/v1/test-clocks/c1/advance", "http://127.0.0.1:8080/api/v1/test-clocks/c1", "http://127.0.0.1:8080/api/v1/test-clocks/c1"])
  }, 10_000)

  it("answer wrong usage with exit 2 and an API error with exit 1", async () => {
    const usage: ReadonlyArray<[ReadonlyArray<string>, RegExp]> = [
      [["test-clocks", "get", "c1"], /PAYDESK_API_KEY \(or --api-key\) is required/],
      [["test-clocks", "create"], /missing required argument 'frozen_time'/],
      [["test-clocks", "advance", "c1"], /missing required argument 'frozen_time'/],
      [["test-clocks", "delete"], /missing required argument 'test_clock_id'/],
      [["subscriptions", "charge-outcomes", "s1", "maybe"], /Allowed choices are paid, failed, unknown/],
      [["subscriptions", "upcoming", "s1", "--count", "61"], /--count must be an integer from 1 to 60/],
      [["trigger", "payout.completed"], /Allowed choices are payment\.created, payment\.paid, payment\.canceled/],
      [["events", "recover"], /required option '--since <iso>' not specified/],
      [["events", "purge"], /unknown command 'purge'/],
      [["events", "list", "--limit", "many"], /--limit must be an integer/],
      [["deliveries", "list", "--limit", "99999"], /--limit must be an integer from 1 to 500/],
      [["events", "list", "--since", "yesterday"], /--since must be an ISO 8601 date-time with an offset/],
      [["events", "list", "--until", "2026-11-30"], /--until must be an ISO 8601 date-time with an offset/],
      [["events", "recover", "--since", "2026-11-30T00:00:00"], /--since must be an ISO 8601 date-time with an offset/],
      [["events", "list", "--sandbox", "--all"], /cannot be used with option '--all'/],
      [["events", "list", "--environment", "sandbox", "--sandbox"], /cannot be used with option '--sandbox'/],
      [["events", "list", "--environment", "live"], /Allowed choices are prod, sandbox, all/],
      [["listen", "--forward-to", "http://127.0.0.1:3000/", "--environment", "all", "--live"], /cannot be used with option '--live'/],
      [["listen"], /required option '--forward-to <url>' not specified/],
      // Checked before anything is read (it was taken, and every event failed to be forwarded: an outside probe).
      [["listen", "--forward-to", "notaurl"], /--forward-to must be an http or https URL/],
      [["listen", "--forward-to", "ftp://127.0.0.1/x"], /--forward-to must be an http or https URL/]
    ]
    for (const [argv, message] of usage) {
      const run = await cli(argv, { env: argv[0] === "test-clocks" && argv[2] === "c1" && argv.length === 3 ? {} : key })
      expect([run.code, run.sent], argv.join(" ")).toEqual([2, []])
      expect(run.stderr, argv.join(" ")).toMatch(message)
    }
    const advancing = await cli(["test-clocks", "delete", "c1"], { env: key, answer: { status: 409, body: { error: { code: "test_clock_advancing", message: "test clock is advancing", request_id: "req_2" } } } })
    expect([advancing.code, advancing.stdout, advancing.stderr, advancing.sent.length]).toEqual([1, "", "paydesk: 409 test_clock_advancing: test clock is advancing\n", 1])
    const missing = await cli(["test-clocks", "get", "c9"], { env: key, answer: { status: 404, body: { error: { code: "not_found", message: "test clock not found", request_id: "req_1" } } } })
    expect([missing.code, missing.stdout, missing.stderr]).toEqual([1, "", "paydesk: 404 not_found: test clock not found\n"])
    const refused = await cli(["subscriptions", "charge-outcomes", "s1", "paid"], {
      env: key,
      answer: { status: 400, body: { error: { code: "invalid_request", message: "charge outcomes can be programmed for sandbox subscriptions only", field: "subscription" } } }
    })
    expect([refused.code, refused.stderr]).toEqual([1, "paydesk: 400 invalid_request: charge outcomes can be programmed for sandbox subscriptions only (field subscription)\n"])
  })
})

describe("paydesk CLI: failures", () => {
  it("exits 1 with the API's error", async () => {
    const missing = await cli(["accounts", "get", "a1"], { answer: { status: 404, body: { error: { code: "not_found", message: "account not found", request_id: "req_1" } } } })
    expect([missing.code, missing.stdout, missing.stderr]).toEqual([1, "", "paydesk: 404 not_found: account not found\n"])
    const invalid = await cli(["terminals", "update", "t1", "--conversion-time", "25:00"], {
      answer: { status: 400, body: { error: { code: "invalid_request", message: "conversion_time must be HH:MM (Moscow time)", field: "conversion_time" } } }
    })
    expect([invalid.code, invalid.stderr]).toEqual([1, "paydesk: 400 invalid_request: conversion_time must be HH:MM (Moscow time) (field conversion_time)\n"])
    const refused = await cli(["accounts", "list"], { answer: { status: 401, body: { error: { code: "unauthenticated", message: "operator bearer token required" } } } })
    expect([refused.code, refused.stderr]).toEqual([1, "paydesk: http://127.0.0.1:8080 refused the operator token (401): check PAYDESK_ADMIN_TOKEN\n"])
  })

  it("says it cannot reach the server, exit 1", async () => {
    const server = createServer()
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok))
    const port = (server.address() as AddressInfo).port
    await new Promise<void>((ok) => server.close(() => ok()))
    const run = await cli(["accounts", "list"], { env: { PAYDESK_URL: `http://127.0.0.1:${port}` }, fetch: globalThis.fetch })
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(`paydesk: cannot reach http://127.0.0.1:${port} (ECONNREFUSED): is the server running there? Point --url or PAYDESK_URL at it.\n`)
  })
})

describe("paydesk CLI: command modules", () => {
  it("adds a module's commands by one registration", async () => {
    const hello: CliProgram.Extension = (program, context) => {
      program.command("hello").description("say hello").argument("<name>").action((name: string, _options, command) => context.print(command, { hello: name }))
    }
    const run = await cli(["hello", "world", "--table"], { modules: [...CliProgram.extensions, hello] })
    expect([run.code, run.stdout]).toEqual([0, "hello  world\n"])
    expect((await cli(["--help"], { modules: [...CliProgram.extensions, hello] })).stdout).toMatch(/^ {2}hello <name> +say hello$/m)
  })
})
