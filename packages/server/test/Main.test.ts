/**
 * The server's entry point refuses wrong settings before anything starts: every problem printed,
 * each naming its variable, no embedded PostgreSQL started, no secret echoed, exit code 1.
 */
import { describe, expect, it } from "vitest"
import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { serverDir, serverProgram } from "./ServerProgram.js"

describe("main", () => {
  it("reports wrong settings by name and exits 1 before starting anything", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "paydesk-main-"))
    const child = spawn(process.execPath, serverProgram("main"), {
      cwd: serverDir,
      env: { ...process.env, DATABASE_URL: "", PAYDESK_DATA_DIR: dataDir, PAYDESK_SECRET_KEY: "not-a-key-but-secret", PORT: "80800", PAYDESK_DB_POOL: "many" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    const code = await new Promise<number | null>((ok) => child.once("exit", (c) => ok(c)))
    expect(code).toBe(1)
    expect(stderr).toBe([
      "paydesk: invalid configuration:",
      "  - PORT must be a TCP port number (0 to 65535)",
      "  - PAYDESK_DB_POOL must be an integer from 1 to 200 (connections)",
      "  - PAYDESK_SECRET_KEY must be a 32-byte key: base64, or 64 hex characters",
      ""
    ].join("\n"))
    expect(stdout).toBe("")
    expect(stderr).not.toContain("not-a-key-but-secret")
    // Nothing was created: no database, no generated key.
    expect(readdirSync(dataDir)).toEqual([])
  }, 60_000)
})
