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

describe("webhooks.verify options", () => {
  it("refuses a tolerance or a now that is no number with a TypeError (NaN would let any timestamp through)", async () => {
    const headers = await webhooks.testHeaders(body, "current", { timestamp: 1_700_000_000 })
    for (const toleranceSeconds of [Number.NaN, -1, "300" as unknown as number]) {
      await expect(webhooks.verify(body, headers, "current", { now: 1_800_000_000, toleranceSeconds })).rejects.toThrow(/toleranceSeconds must be a number of seconds/)
    }
    await expect(webhooks.verify(body, headers, "current", { now: Number.NaN })).rejects.toThrow(/now must be Unix seconds/)
    // Infinity is a choice (no timestamp check), said in full.
    expect((await webhooks.verify(body, headers, "current", { now: 1_800_000_000, toleranceSeconds: Number.POSITIVE_INFINITY })).event_type).toBe("payment.paid")
    await expect(webhooks.verify(body, headers, "current", { now: 1_800_000_000 })).rejects.toMatchObject({ reason: "timestamp_out_of_tolerance" })
  })
})

describe("webhooks.testHeaders", () => {
  it("makes a delivery's headers: the event id and sequence, and Standard Webhooks' signature over id.timestamp.body", async () => {
    const { createHmac } = await import("node:crypto")
    const headers = await webhooks.testHeaders(body, "current", { timestamp: 1_700_000_000, eventId: "evt_3f0c2a8e-6b1d-4f7a-9c5e-8d2b4a6f1e03", sequence: 7 })
    expect(headers).toMatchObject({
      "x-timestamp": "1700000000",
      "x-test-mode": "true",
      "x-event-id": "evt_3f0c2a8e-6b1d-4f7a-9c5e-8d2b4a6f1e03",
      "x-event-sequence": "7",
      "webhook-id": "evt_3f0c2a8e-6b1d-4f7a-9c5e-8d2b4a6f1e03",
      "webhook-timestamp": "1700000000",
      "webhook-signature": `v1,${createHmac("sha256", "current").update(`evt_3f0c2a8e-6b1d-4f7a-9c5e-8d2b4a6f1e03.1700000000.${body}`).digest("base64")}`
    })
    const fresh = await webhooks.testHeaders(body, "current")
    expect(fresh["x-event-id"]).toMatch(/^evt_[0-9a-f-]{36}$/)
    expect(fresh["webhook-id"]).toBe(fresh["x-event-id"])
    expect(fresh["x-event-sequence"]).toBe("1")
    expect((await webhooks.verify(body, fresh, "current")).event_type).toBe("payment.paid")
    // Bytes are signed as they are (a BOM kept), as X-Signature signs them.
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(body)])
    const fromBytes = await webhooks.testHeaders(bytes, "current", { timestamp: 1_700_000_000, eventId: "evt_1" })
    expect(fromBytes["webhook-signature"]).toBe(`v1,${createHmac("sha256", "current").update(Buffer.concat([Buffer.from("evt_1.1700000000."), bytes])).digest("base64")}`)
  })
})
