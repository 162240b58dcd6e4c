import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import { Signature } from "@paydesk/core"
import { type Seen, start } from "../src/receiver.js"

describe("examples/receiver", () => {
  it("accepts a callback signed with the terminal's secret and rejects a forged one", async () => {
    const seen: Array<Seen> = []
    const receiver = await start({ secret: "sk_sign_test", port: 0, onCallback: (s) => seen.push(s) })
    try {
      const body = JSON.stringify({ event_type: "payment.paid", payment_id: "pay_1", status: "paid" })
      const timestamp = String(Math.floor(Date.now() / 1000))
      const send = async (secret: string) =>
        (await fetch(receiver.url, {
          method: "POST",
          headers: { "content-type": "application/json", "x-timestamp": timestamp, "x-signature": await Effect.runPromise(Signature.sign({ secret, timestamp, body })) },
          body
        })).status
      expect((await fetch(receiver.url)).status).toBe(200)
      expect(await send("sk_sign_test")).toBe(200)
      expect(await send("sk_sign_other")).toBe(401)
      expect(seen).toEqual([
        { verified: true, line: "verified payment.paid pay_1 status=paid" },
        { verified: false, line: "REJECTED (mismatch) payment.paid pay_1 status=paid" }
      ])
    } finally {
      await receiver.close()
    }
  })
})
