/**
 * `./run start` checks what it passes to node before anything starts: `PAYDESK_MAX_HEAP_MB`, which
 * the server never sees (it is a node flag), refused as the server refuses its own wrong settings.
 */
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..")

describe("./run start", () => {
  it("refuses a PAYDESK_MAX_HEAP_MB that is not a whole number of MiB of at least 64, before anything starts", () => {
    for (const value of ["abc", "-1", "8", "0x40", "1e3"]) {
      const result = spawnSync("bash", [join(root, "run"), "start"], {
        cwd: root, encoding: "utf8", timeout: 30_000, env: { ...process.env, PAYDESK_MAX_HEAP_MB: value }
      })
      expect([value, result.status, result.stderr.trim()]).toEqual([
        value, 1, `[run] cannot start: PAYDESK_MAX_HEAP_MB must be a whole number of MiB, at least 64 (got "${value}")`
      ])
    }
  })
})
