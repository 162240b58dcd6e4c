/**
 * The Inngest engine in cloud mode (a signing key), as a real process: a sync (`PUT /api/inngest`,
 * unsigned by Inngest's design) registers the configured origin whatever `Host` the caller sends
 * (an outside probe registered `http://evil.example/api/inngest` with the server's signing key), an
 * unsigned call runs nothing, and the SDK's messages are JSON lines of the server's log.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { randomBytes } from "node:crypto"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { freshDatabase } from "./ServerHarness.js"
import { dataDir, type ServerProcess, spawnServer } from "./ServerProcess.js"

/** A stand-in for Inngest's API that records every request. */
const startInngestApi = async () => {
  const requests: Array<{ readonly method: string; readonly url: string; readonly body: string }> = []
  const server = createServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => (body += chunk))
    req.on("end", () => {
      requests.push({ method: req.method ?? "", url: req.url ?? "", body })
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ ok: true, modified: true, ids: [], status: 200 }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
  }
}

/** Sends a raw request (any `Host`) and resolves with the status and body. */
const raw = async (base: string, method: string, path: string, headers: Record<string, string>, body = "") => {
  const { request } = await import("node:http")
  const url = new URL(path, base)
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } }, (res) => {
      let text = ""
      res.on("data", (chunk) => (text += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }))
    })
    req.on("error", reject)
    req.end(body)
  })
}

let inngest: Awaited<ReturnType<typeof startInngestApi>>
let server: ServerProcess
let base: string

beforeAll(async () => {
  inngest = await startInngestApi()
  server = await spawnServer({
    PORT: "0",
    DATABASE_URL: await freshDatabase(),
    PAYDESK_DATA_DIR: dataDir(),
    PAYDESK_ADMIN_TOKEN: "test-admin",
    PAYDESK_SECRET_KEY: randomBytes(32).toString("base64"),
    PAYDESK_ENGINE: "inngest",
    INNGEST_DEV: undefined,
    INNGEST_SIGNING_KEY: `signkey-test-${randomBytes(32).toString("hex")}`,
    INNGEST_EVENT_KEY: "event-key-test",
    INNGEST_BASE_URL: inngest.url,
    // The public URL stands for the origin Inngest calls (the SDK itself reads only INNGEST_SERVE_ORIGIN).
    INNGEST_SERVE_ORIGIN: undefined,
    PAYDESK_PUBLIC_URL: "https://paydesk.example",
    LOG_LEVEL: "info"
  })
  base = /paydesk listening on (http:\/\/\S+?) /.exec(server.output())![1]!
}, 120_000)

afterAll(async () => {
  await server?.kill()
  await inngest?.close()
})

describe("PAYDESK_ENGINE=inngest with a signing key", () => {
  it("a sync registers the configured origin, never the Host the caller names", async () => {
    const synced = await raw(base, "PUT", "/api/inngest", { host: "evil.example" })
    expect(synced.status).toBe(200)
    const registrations = inngest.requests.filter((r) => r.method === "POST" && r.url.includes("/fn/register"))
    expect(registrations).toHaveLength(1)
    const registered = JSON.parse(registrations[0]!.body) as { url: string; functions: Array<{ steps: Record<string, { runtime: { url: string } }> }> }
    expect(registered.url).toMatch(/^https:\/\/paydesk\.example\/api\/inngest(\?|$)/)
    const stepUrls = registered.functions.flatMap((f) => Object.values(f.steps).map((s) => s.runtime.url))
    expect(stepUrls.length).toBeGreaterThan(0)
    for (const url of stepUrls) expect(url).toMatch(/^https:\/\/paydesk\.example\/api\/inngest\?/)
    expect(registrations[0]!.body).not.toContain("evil.example")
  }, 30_000)

  it("an unsigned call runs nothing (401), and what the SDK says of it is a JSON line of the log", async () => {
    const before = server.output().length
    const call = await raw(base, "POST", "/api/inngest?fnId=paydesk-sweep-payouts&stepId=step", { "content-type": "application/json" }, JSON.stringify({ event: {}, events: [], steps: {}, ctx: {} }))
    expect(call.status).toBe(401)
    await new Promise((ok) => setTimeout(ok, 200))
    const lines = server.output().slice(before).split("\n").filter((line) => line.trim() !== "")
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow()
    expect(lines.map((line) => JSON.parse(line) as { component?: string; msg?: string })).toContainEqual(
      expect.objectContaining({ component: "inngest", msg: "Signature validation failed" })
    )
  }, 30_000)
})
