/**
 * examples/verify-webhook.py (python3) accepts what Paydesk signs and refuses a
 * wrong secret, a changed body and an old timestamp.
 */
import { describe, expect, it } from "vitest"
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { webhooks } from "@paydesk/client"

const script = join(import.meta.dirname, "verify-webhook.py")
const secret = "whsec_example_secret"
const body = JSON.stringify({ event_type: "payment.paid", payment_id: "pay_3f0c2a8e-6b1d-4f7a-9c5e-8d2b4a6f1e03", order_id: "ord-1", status: "paid", amount: "10.00", currency: "RUB", test: true })

const check = (input: string, headers: { "x-timestamp": string; "x-signature": string }, key = secret) =>
  spawnSync("python3", [script, "check", "--secret", key, "--timestamp", headers["x-timestamp"], "--signature", headers["x-signature"]], { input, encoding: "utf8" })

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
})
