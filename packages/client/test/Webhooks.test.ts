/**
 * `webhooks.verify`'s secrets: a list may hold an unset entry (the next secret before a rotation),
 * skipped; no secret at all is a `TypeError` that says so, not a failure of the callback.
 */
import { describe, expect, it } from "vitest"
import { webhooks } from "../src/index.js"

const body = JSON.stringify({ event_type: "payment.paid", payment_id: "pay_1", order_id: "o", status: "paid", amount: "1.00", currency: "RUB", test: true })

describe("webhooks.verify secrets", () => {
  it("skips unset entries of a list (before a rotation the next secret is not set yet)", async () => {
    const headers = await webhooks.testHeaders(body, "current")
    for (const secrets of [["current", undefined], [undefined, "current"], ["current", ""], ["current", null], ["other", undefined, "current"]]) {
      expect((await webhooks.verify(body, headers, secrets)).event_type).toBe("payment.paid")
    }
    await expect(webhooks.verify(body, headers, ["other", undefined])).rejects.toMatchObject({ reason: "signature_mismatch" })
  })

  it("refuses no secret at all with a TypeError that says so", async () => {
    const headers = await webhooks.testHeaders(body, "current")
    await expect(webhooks.verify(body, headers, undefined as unknown as string)).rejects.toThrow(/^webhooks.verify: no signing secret given \(undefined\)/)
    for (const secrets of ["", [], [undefined], ["", null]]) {
      await expect(webhooks.verify(body, headers, secrets as ReadonlyArray<string>)).rejects.toThrow(/secret must be a non-empty string or a list holding at least one/)
    }
    await expect(webhooks.verify(body, headers, [42 as unknown as string])).rejects.toThrow(TypeError)
  })
})
