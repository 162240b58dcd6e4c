/**
 * The workspace's dependency rule (audit/DependencyRule.ts, dependency-cruiser): the repository
 * passes it, and on a planted workspace it reports exactly the forbidden imports (a Node built-in
 * and another package in core, an undeclared workspace package, the testkit and vitest in
 * production code, vitest in the testkit's main entry) and nothing that is allowed.
 */
import { describe, expect, it } from "vitest"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import * as DependencyRule from "../../../audit/DependencyRule.js"

const root = resolve(import.meta.dirname, "../../..")

const plant = (files: Record<string, string>): string => {
  const dir = mkdtempSync(join(tmpdir(), "paydesk-deprule-"))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  return dir
}

const manifest = (name: string, dependencies: Record<string, string> = {}) => JSON.stringify({ name, dependencies })

describe("dependency rule", () => {
  it("holds for every package of the repository", async () => {
    const violations = await DependencyRule.check(root)
    expect(violations.map(DependencyRule.describe)).toEqual([])
    // The rule covers every package: one declared-imports rule per package of the workspace.
    const names = DependencyRule.rules(root).map((r) => r.name)
    for (const dir of ["core", "emulators", "fastify", "inngest", "server", "sql-pg", "testkit"]) {
      expect(names).toContain(`undeclared-workspace-import:${dir}`)
    }
  }, 60_000)

  it("fails on planted forbidden imports, and only on those", async () => {
    const dir = plant({
      "packages/core/package.json": manifest("@paydesk/core"),
      "packages/core/src/index.ts": "import { readFileSync } from \"node:fs\"\nimport \"../../fastify/src/index.ts\"\nimport \"./Money.ts\"\nexport const read = readFileSync\n",
      "packages/core/src/Money.ts": "export const zero = 0n\n",
      "packages/fastify/package.json": manifest("@paydesk/fastify", { "@paydesk/core": "workspace:*" }),
      "packages/fastify/src/index.ts": "import \"../../core/src/index.ts\"\nimport \"../../inngest/src/index.ts\"\nimport \"../../testkit/src/index.ts\"\nimport \"vitest\"\n",
      "packages/inngest/package.json": manifest("@paydesk/inngest", { "@paydesk/core": "workspace:*" }),
      "packages/inngest/src/index.ts": "import \"../../core/src/index.ts\"\n",
      "packages/testkit/package.json": manifest("@paydesk/testkit", { "@paydesk/core": "workspace:*" }),
      "packages/testkit/src/index.ts": "import \"../../core/src/index.ts\"\nimport \"vitest\"\n",
      "packages/testkit/src/contracts/index.ts": "import \"vitest\"\nimport \"../index.ts\"\n"
    })
    try {
      const found = (await DependencyRule.check(dir)).map(DependencyRule.describe).sort()
      expect(found).toEqual([
        "core-imports-only-effect: packages/core/src/index.ts -> fs",
        "core-imports-only-effect: packages/core/src/index.ts -> packages/fastify/src/index.ts",
        "core-no-node-builtins: packages/core/src/index.ts -> fs",
        "no-test-code-in-production: packages/fastify/src/index.ts -> packages/testkit/src/index.ts",
        "no-test-code-in-production: packages/fastify/src/index.ts -> vitest",
        "testkit-main-entry-without-vitest: packages/testkit/src/index.ts -> vitest",
        "undeclared-workspace-import:core: packages/core/src/index.ts -> packages/fastify/src/index.ts",
        "undeclared-workspace-import:fastify: packages/fastify/src/index.ts -> packages/inngest/src/index.ts",
        "undeclared-workspace-import:fastify: packages/fastify/src/index.ts -> packages/testkit/src/index.ts"
      ])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
