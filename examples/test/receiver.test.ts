import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Signature } from "@paydesk/core"
import { type Seen, start } from "../src/receiver.js"

describe("examples/receiver", () => {
  it("accepts a callback signed with the terminal's secret and rejects a forged one", async () => {
    const seen: Array<Seen> = []
    const receiver = await start({ secret: "sk_sign_test", port: 0, onCallback: (s) => seen.push(s) })
    try {
      const paid = JSON.stringify({ event_type: "payment.paid", payment_id: "pay_1", status: "paid" })
      const timestamp = String(Math.floor(Date.now() / 1000))
      const send = async (secret: string, body = paid) =>
        (await fetch(receiver.url, {
          method: "POST",
          headers: { "content-type": "application/json", "x-timestamp": timestamp, "x-signature": await Effect.runPromise(Signature.sign({ secret, timestamp, body })) },
          body
        })).status
      expect((await fetch(receiver.url)).status).toBe(200)
      expect(await send("sk_sign_test")).toBe(200)
      expect(await send("sk_sign_other")).toBe(401)
      // The terminal's test event: no object, no status.
      expect(await send("sk_sign_test", JSON.stringify({ event_type: "ping", terminal_id: "t1" }))).toBe(200)
      expect(seen).toEqual([
        { verified: true, line: "verified payment.paid pay_1 status=paid" },
        { verified: false, line: "REJECTED (mismatch) payment.paid pay_1 status=paid" },
        { verified: true, line: "verified ping" }
      ])
    } finally {
      await receiver.close()
    }
  })
})
