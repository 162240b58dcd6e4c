import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer } from "./ServerHarness.js"

let srv: Awaited<ReturnType<typeof startServer>>

beforeAll(async () => {
  process.env.INNGEST_DEV = "1"
  srv = await startServer({ PAYDESK_ENGINE: "inngest" })
}, 120_000)

afterAll(async () => {
  delete process.env.INNGEST_DEV
  await srv?.stop()
})

describe("PAYDESK_ENGINE=inngest", () => {
  it("serves the Inngest functions at /api/inngest and runs no local worker", async () => {
    const introspection = await srv.call("GET", "/api/inngest")
    expect(introspection.status).toBe(200)
    expect(introspection.json).toMatchObject({ mode: "dev", function_count: 10 })
    // Without a local worker, /admin/v1/work/run still runs due work on demand.
    expect(Object.keys(await srv.work()).sort()).toEqual(["callbacks", "charges", "conversions", "expiredPayments", "payouts", "stops"])
  }, 60_000)
})
