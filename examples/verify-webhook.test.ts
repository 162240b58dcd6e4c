/**
 * examples/verify-webhook.py (python3) accepts what Paydesk signs and refuses a wrong secret, a
 * changed body, an old timestamp and malformed headers (a reason, never a traceback); takes several
 * secrets for a rotation's switch-over (X-Signature with the previous, X-Signature-Next with the
 * new); and, serving, deduplicates on X-Event-Id and prints one line per rejection saying why.
 */
import { afterAll, describe, expect, it, vi } from "vitest"
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { join } from "node:path"
import { webhooks } from "@paydesk/client"

const script = join(import.meta.dirname, "verify-webhook.py")
const secret = "whsec_example_secret"
const body = JSON.stringify({ event_type: "payment.paid", payment_id: "pay_3f0c2a8e-6b1d-4f7a-9c5e-8d2b4a6f1e03", order_id: "ord-1", status: "paid", amount: "10.00", currency: "RUB", test: true })
const previous = "sk_sign_previous_secret"
const next = "sk_sign_next_secret"

const check = (input: string, headers: { "x-timestamp": string; "x-signature": string }, key = secret) =>
  spawnSync("python3", [script, "check", "--secret", key, "--timestamp", headers["x-timestamp"], "--signature", headers["x-signature"]], { input, encoding: "utf8" })

const run = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}) => {
  const environment = { ...process.env, ...env }
  if (env["PAYDESK_SIGNING_SECRET"] === undefined) delete environment["PAYDESK_SIGNING_SECRET"]
  return spawnSync("python3", [script, ...args], { input: body, encoding: "utf8", env: environment })
}

/** X-Timestamp, and X-Signature and X-Signature-Next as a rotation's overlap signs them. */
const overlap = async () => {
  const timestamp = String(Math.floor(Date.now() / 1000))
  return { timestamp, signature: await webhooks.sign(body, previous, timestamp), next: await webhooks.sign(body, next, timestamp) }
}

const started: Array<ChildProcess> = []
afterAll(() => {
  for (const child of started) if (child.exitCode === null) child.kill("SIGTERM")
})

/** `serve` on a free port, with its output so far. */
const serve = async (args: ReadonlyArray<string>) => {
  const child = spawn("python3", [script, "serve", ...args, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] })
  started.push(child)
  const output = { text: "" }
  child.stdout!.on("data", (c: Buffer) => (output.text += c.toString()))
  child.stderr!.on("data", (c: Buffer) => (output.text += c.toString()))
  const deadline = Date.now() + 10_000
  let match: RegExpExecArray | null = null
  while ((match = /listening on (http:\/\/127\.0\.0\.1:\d+\/webhooks)/.exec(output.text)) === null) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`serve did not start:\n${output.text}`)
    await new Promise((ok) => setTimeout(ok, 50))
  }
  const url = match[1]!
  const post = async (headers: Record<string, string>, text = body) => {
    const before = output.text.length
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: text })
    await response.text()
    // The line of this request (printed before the answer is sent).
    const until = Date.now() + 5_000
    while (!output.text.slice(before).includes("\n") && Date.now() < until) await new Promise((ok) => setTimeout(ok, 20))
    return { status: response.status, line: output.text.slice(before).trim() }
  }
  return { post, output, url }
}

describe("verify-webhook.py", () => {
  it("accepts a signed callback and prints its event", async () => {
    const result = check(body, await webhooks.testHeaders(body, secret))
    expect(result.status).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ event_type: "payment.paid", status: "paid" })
  })

  it("refuses a wrong secret, a changed body and an old timestamp", async () => {
    const headers = await webhooks.testHeaders(body, secret)
    expect(check(body, headers, "another").stdout.trim()).toBe("rejected: signature_mismatch")
    expect(check(body.replace("10.00", "99.00"), headers).stdout.trim()).toBe("rejected: signature_mismatch")
    const old = await webhooks.testHeaders(body, secret, { timestamp: Math.floor(Date.now() / 1000) - 301 })
    const result = check(body, old)
    expect(result.status).toBe(1)
    expect(result.stdout.trim()).toBe("rejected: timestamp_out_of_tolerance")
  })

  it("refuses malformed headers with a reason, never a traceback", async () => {
    const headers = await webhooks.testHeaders(body, secret)
    for (const timestamp of ["12abc", "", "\u00b2", "1".repeat(5000)]) {
      const result = check(body, { ...headers, "x-timestamp": timestamp })
      expect([result.status, result.stdout.trim(), result.stderr], timestamp).toEqual([1, timestamp === "" ? "rejected: missing_header" : "rejected: malformed_signature", ""])
    }
    for (const signature of ["\u00e9".repeat(64), "zz", ""]) {
      const result = check(body, { ...headers, "x-signature": signature })
      expect([result.status, result.stdout.trim(), result.stderr], signature).toEqual([1, signature === "" ? "rejected: missing_header" : "rejected: malformed_signature", ""])
    }
    // Signed JSON nested deeper than Python's stack: a reason, not a RecursionError (an outside probe).
    const deep = "[".repeat(100_000) + "]".repeat(100_000)
    const nested = check(deep, await webhooks.testHeaders(deep, secret))
    expect([nested.status, nested.stdout.trim(), nested.stderr]).toEqual([1, "rejected: malformed_body", ""])
  })

  it("takes several secrets (repeated --secret, commas, PAYDESK_SIGNING_SECRET): X-Signature with the previous or X-Signature-Next with the new", async () => {
    const { timestamp, signature, next: signatureNext } = await overlap()
    const during = ["--timestamp", timestamp, "--signature", signature, "--signature-next", signatureNext]
    // During the overlap: the previous secret (X-Signature), the new one (X-Signature-Next), or both.
    for (const secrets of [["--secret", previous], ["--secret", next], ["--secret", previous, "--secret", next], ["--secret", `${previous},${next}`]]) {
      const result = run(["check", ...secrets, ...during])
      expect([result.status, result.stderr], secrets.join(" ")).toEqual([0, ""])
      expect(JSON.parse(result.stdout)).toMatchObject({ event_type: "payment.paid" })
    }
    expect(run(["check", ...during], { PAYDESK_SIGNING_SECRET: `${previous}, ${next}` }).status).toBe(0)
    expect(run(["check", "--secret", "another", "--secret", "other", ...during]).stdout.trim()).toBe("rejected: signature_mismatch")
    // Without X-Signature-Next the new secret does not verify the previous one's X-Signature.
    expect(run(["check", "--secret", next, "--timestamp", timestamp, "--signature", signature]).stdout.trim()).toBe("rejected: signature_mismatch")
    // After retire-previous: X-Signature alone, with the new secret; both secrets still verify it.
    const after = await webhooks.sign(body, next, timestamp)
    expect(run(["check", "--secret", previous, "--secret", next, "--timestamp", timestamp, "--signature", after]).status).toBe(0)
    // No secret at all: a usage error, not a check with an empty key.
    const none = run(["check", "--timestamp", timestamp, "--signature", signature])
    expect([none.status, none.stderr]).toEqual([2, expect.stringContaining("no signing secret")])
  })

  it("serving: deduplicates on X-Event-Id (every ping is new), accepts both secrets, and prints why it rejects", async () => {
    const { post, output, url } = await serve(["--secret", previous, "--secret", next])
    const signed = async (text: string, key: string, eventId: string) => {
      const timestamp = String(Math.floor(Date.now() / 1000))
      return { "x-timestamp": timestamp, "x-signature": await webhooks.sign(text, key, timestamp), "x-event-id": eventId }
    }
    const ping = JSON.stringify({ event_type: "ping", terminal_id: "term_1", sent_at: "2026-03-01T00:00:00.000Z", test: false })
    // Two pings (the same body shape, no payment_id): two events, both processed.
    expect(await post(await signed(ping, previous, "evt_ping-1"), ping)).toEqual({ status: 200, line: "verified ping term_1 evt_ping-1" })
    expect(await post(await signed(ping, previous, "evt_ping-2"), ping)).toEqual({ status: 200, line: "verified ping term_1 evt_ping-2" })
    // A repeat of an event (a retry: a fresh timestamp and signature, the same id): 200, not processed again.
    expect(await post(await signed(body, previous, "evt_paid-1"))).toEqual({ status: 200, line: expect.stringMatching(/^verified payment\.paid pay_[0-9a-f-]{36} evt_paid-1$/) })
    expect(await post(await signed(body, previous, "evt_paid-1"))).toEqual({ status: 200, line: expect.stringMatching(/^repeat payment\.paid pay_[0-9a-f-]{36} evt_paid-1/) })
    // Another event id is another event, whatever its payment and type.
    expect((await post(await signed(body, previous, "evt_paid-2"))).line).toMatch(/^verified payment\.paid .* evt_paid-2$/)
    // During a rotation's overlap: X-Signature the previous secret's, X-Signature-Next the new one's.
    const { timestamp, signature, next: signatureNext } = await overlap()
    expect(await post({ "x-timestamp": timestamp, "x-signature": signature, "x-signature-next": signatureNext, "x-event-id": "evt_rot-1" }))
      .toEqual({ status: 200, line: expect.stringMatching(/^verified .* evt_rot-1$/) })
    // After retire-previous: X-Signature with the new secret.
    expect((await post(await signed(body, next, "evt_rot-2"))).status).toBe(200)
    // Rejections: a 400 and one line each, saying why.
    const rejected = async (headers: Record<string, string>, reason: string) => {
      const answer = await post(headers)
      expect(answer.status, reason).toBe(400)
      expect(answer.line.split("\n"), reason).toEqual([expect.stringMatching(new RegExp(`^rejected .*: ${reason} \\(.+\\)$`))])
    }
    const good = await signed(body, previous, "evt_bad")
    await rejected({ "x-event-id": "evt_bad", "x-signature": good["x-signature"] }, "missing_header")
    await rejected({ "x-event-id": "evt_bad", "x-timestamp": good["x-timestamp"] }, "missing_header")
    await rejected({ ...good, "x-timestamp": "12abc" }, "malformed_signature")
    await rejected({ ...good, "x-timestamp": "\u00b2" }, "malformed_signature")
    await rejected({ ...good, "x-signature": "\u00ff".repeat(64) }, "malformed_signature")
    await rejected(await signed(body, "another", "evt_bad"), "signature_mismatch")
    await rejected({ ...good, "x-timestamp": String(Math.floor(Date.now() / 1000) - 301) }, "timestamp_out_of_tolerance")
    await rejected({}, "missing_header")
    // A delivery re-chunked on its way (a proxy): read whole, verified.
    const chunked = await signed(body, next, "evt_chunked")
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(body.slice(0, 20)))
        controller.enqueue(new TextEncoder().encode(body.slice(20)))
        controller.close()
      }
    })
    const before = output.text.length
    const answer = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...chunked }, body: stream, duplex: "half" } as RequestInit)
    expect([answer.status, await answer.text()]).toEqual([200, ""])
    // Its line (printed before the answer is sent, read from the pipe a moment later).
    await vi.waitFor(() => expect(output.text.slice(before)).toMatch(/^verified payment\.paid .* evt_chunked\n/), { timeout: 5_000 })
    // It kept serving throughout, and printed no secret.
    expect(await post(await signed(body, next, "evt_last"))).toMatchObject({ status: 200 })
    expect(output.text).not.toContain(previous)
    expect(output.text).not.toContain(next)
    expect(output.text).not.toContain("Traceback")
  })
})
