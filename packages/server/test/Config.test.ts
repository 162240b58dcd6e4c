import { describe, expect, it } from "vitest"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ConfigError, load } from "../src/Config.js"
import { toCall } from "../src/CliCommands.js"

describe("Config", () => {
  it("has the documented defaults and keeps a generated secret key in the data directory", () => {
    const dir = mkdtempSync(join(tmpdir(), "paydesk-config-"))
    const config = load({ PAYDESK_DATA_DIR: dir })
    expect([config.port, config.host, config.publicUrl, config.clock, config.engine, config.databaseUrl]).toEqual([
      8080, "127.0.0.1", "http://127.0.0.1:8080", "system", "local", null
    ])
    expect(config.adminTokenGenerated).toBe(true)
    expect(Buffer.from(config.secretKey, "base64")).toHaveLength(32)
    expect(readFileSync(join(dir, "secret.key"), "utf8").trim()).toBe(config.secretKey)
    expect(load({ PAYDESK_DATA_DIR: dir }).secretKey).toBe(config.secretKey)
  })

  it("reads every variable and rejects bad values", () => {
    const config = load({
      PORT: "9000", HOST: "0.0.0.0", DATABASE_URL: "postgres://x/y", PAYDESK_PUBLIC_URL: "https://pay.example/",
      PAYDESK_ADMIN_TOKEN: "adm", PAYDESK_CLOCK: "manual", PAYDESK_ENGINE: "off", PAYDESK_SECRET_KEY: "k"
    })
    expect([config.port, config.host, config.databaseUrl, config.publicUrl, config.adminToken, config.clock, config.engine]).toEqual([
      9000, "0.0.0.0", "postgres://x/y", "https://pay.example", "adm", "manual", "off"
    ])
    expect(() => load({ PORT: "99999", PAYDESK_SECRET_KEY: "k" })).toThrow(ConfigError)
    expect(() => load({ PAYDESK_CLOCK: "fast", PAYDESK_SECRET_KEY: "k" })).toThrow(/PAYDESK_CLOCK/)
    expect(() => load({ PAYDESK_ENGINE: "cron", PAYDESK_SECRET_KEY: "k" })).toThrow(/PAYDESK_ENGINE/)
    expect(load({ PAYDESK_SECRET_KEY: "k" }).clockStart).toBe(null)
    expect(load({ PAYDESK_CLOCK_START: "2027-01-31T07:00:00.000Z", PAYDESK_WORK_INTERVAL_MS: "250", PAYDESK_SECRET_KEY: "k" }))
      .toMatchObject({ clockStart: Date.parse("2027-01-31T07:00:00.000Z"), workIntervalMs: 250, workBatchSize: 100 })
    expect(load({ PAYDESK_WORK_BATCH_SIZE: "5", PAYDESK_SECRET_KEY: "k" }).workBatchSize).toBe(5)
    expect(() => load({ PAYDESK_WORK_BATCH_SIZE: "0", PAYDESK_SECRET_KEY: "k" })).toThrow(/PAYDESK_WORK_BATCH_SIZE/)
    expect(load({ PAYDESK_SECRET_KEY: "k" })).toMatchObject({
      inngest: { isDev: false, signingKey: null, eventKey: null, baseUrl: null }, logLevel: "info"
    })
    expect(load({ PAYDESK_SECRET_KEY: "k", INNGEST_DEV: "true", INNGEST_SIGNING_KEY: "s", INNGEST_EVENT_KEY: "e", INNGEST_BASE_URL: "http://inngest:8288", LOG_LEVEL: "warn" }))
      .toMatchObject({ inngest: { isDev: true, signingKey: "s", eventKey: "e", baseUrl: "http://inngest:8288" }, logLevel: "warn" })
    expect(() => load({ PAYDESK_CLOCK_START: "yesterday", PAYDESK_SECRET_KEY: "k" })).toThrow(/PAYDESK_CLOCK_START/)
    expect(() => load({ PAYDESK_WORK_INTERVAL_MS: "soon", PAYDESK_SECRET_KEY: "k" })).toThrow(/PAYDESK_WORK_INTERVAL_MS/)
  })
})

describe("CliCommands", () => {
  it("maps commands to operator API calls", () => {
    expect(toCall(["accounts", "create", "--name", "Coffee", "--email", "a@b.c", "--password", "pw123456"])).toEqual({
      method: "POST", path: "/accounts", body: { name: "Coffee", owner_email: "a@b.c", owner_password: "pw123456" }
    })
    expect(toCall(["plans", "create", "--terminals", "t1,t2", "--code", "c", "--name", "N", "--interval", "month", "--schedule", "calendar", "--cap", "4000", "--consent-text", "ok", "--policy-version", "1"]).body).toEqual({
      terminal_ids: ["t1", "t2"], code: "c", name: "N", interval: "month", schedule: "calendar", cap_amount_rub: "4000", consent_text: "ok", policy_version: "1"
    })
    expect(toCall(["acquirer", "charges", "sub-1", "paid", "unknown"])).toEqual({
      method: "POST", path: "/acquirer/subscriptions/sub-1/charge-outcomes", body: { outcomes: ["paid", "unknown"] }
    })
    expect(toCall(["deliveries", "list", "--payment", "p1"]).path).toBe("/deliveries?payment_id=p1")
    expect(() => toCall(["accounts", "create", "--name", "x"])).toThrow(/--email is required/)
    expect(() => toCall(["nope"])).toThrow(/unknown command/)
  })
})
