/**
 * The workspace's dependency rule (audit/DependencyRule.ts, dependency-cruiser): the repository
 * passes it, and on planted workspaces it reports exactly the forbidden imports and nothing that is
 * allowed: by relative path (a Node built-in and another package in core, an undeclared workspace
 * package, the testkit and vitest in production code, vitest in the testkit's main entry) and by
 * package name, resolved through node_modules as pnpm lays it out (`@paydesk/testkit` in production
 * code, a workspace package not declared, whether hoisted or not installed, an npm package not
 * declared, a devDependency in production code).
 */
import { describe, expect, it } from "vitest"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import * as DependencyRule from "../../../audit/DependencyRule.js"

const root = resolve(import.meta.dirname, "../../..")

/** A workspace of `files`, with `links` (path -> target, both in the workspace) as pnpm's node_modules symlinks. */
const plant = (files: Record<string, string>, links: Record<string, string> = {}): string => {
  const dir = mkdtempSync(join(tmpdir(), "paydesk-deprule-"))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  for (const [path, target] of Object.entries(links)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    symlinkSync(join(dir, target), join(dir, path))
  }
  return dir
}

/** A workspace package's manifest whose main entry is its source, as the repository's (`@paydesk/source`). */
const workspaceManifest = (name: string, fields: Record<string, Record<string, string>> = {}) =>
  JSON.stringify({ name, exports: { ".": { "@paydesk/source": "./src/index.ts" } }, ...fields })

/** An installed npm package. */
const npmPackage = (dir: string, name: string) => ({
  [`${dir}/${name}/package.json`]: JSON.stringify({ name, main: "index.js" }),
  [`${dir}/${name}/index.js`]: ""
})

const manifest = (name: string, dependencies: Record<string, string> = {}) => JSON.stringify({ name, dependencies })

describe("dependency rule", () => {
  it("holds for every package of the repository", async () => {
    const violations = await DependencyRule.check(root)
    expect(violations.map(DependencyRule.describe)).toEqual([])
    // The rule covers every package: one declared-imports rule per package of the workspace.
    const names = DependencyRule.rules(root).map((r) => r.name)
    for (const dir of ["client", "core", "emulators", "fastify", "inngest", "server", "sql-pg", "testkit"]) {
      expect(names).toContain(`undeclared-workspace-import:${dir}`)
    }
  }, 60_000)

  it("fails on planted forbidden imports, and only on those", async () => {
    const dir = plant({
      "packages/core/package.json": manifest("@paydesk/core"),
      "packages/core/src/index.ts": "import { readFileSync } from \"node:fs\"\nimport \"../../fastify/src/index.ts\"\nimport \"./Money.ts\"\nexport const read = readFileSync\n",
      "packages/core/src/Money.ts": "export const zero = 0n\n",
      // vitest declared (as a dependency, which the rule still refuses in production code) and installed.
      "packages/fastify/package.json": manifest("@paydesk/fastify", { "@paydesk/core": "workspace:*", vitest: "5.1.1" }),
      ...npmPackage("packages/fastify/node_modules", "vitest"),
      "packages/fastify/src/index.ts": "import \"../../core/src/index.ts\"\nimport \"../../inngest/src/index.ts\"\nimport \"../../testkit/src/index.ts\"\nimport \"vitest\"\n",
      "packages/inngest/package.json": manifest("@paydesk/inngest", { "@paydesk/core": "workspace:*" }),
      "packages/inngest/src/index.ts": "import \"../../core/src/index.ts\"\n",
      "packages/testkit/package.json": manifest("@paydesk/testkit", { "@paydesk/core": "workspace:*", vitest: "5.1.1" }),
      ...npmPackage("packages/testkit/node_modules", "vitest"),
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
        "no-test-code-in-production: packages/fastify/src/index.ts -> packages/fastify/node_modules/vitest/index.js",
        "testkit-main-entry-without-vitest: packages/testkit/src/index.ts -> packages/testkit/node_modules/vitest/index.js",
        "undeclared-workspace-import:core: packages/core/src/index.ts -> packages/fastify/src/index.ts",
        "undeclared-workspace-import:fastify: packages/fastify/src/index.ts -> packages/inngest/src/index.ts",
        "undeclared-workspace-import:fastify: packages/fastify/src/index.ts -> packages/testkit/src/index.ts"
      ].sort())
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it("fails on planted imports by package name (resolved through node_modules), and only on those", async () => {
    const dir = plant({
      "packages/core/package.json": workspaceManifest("@paydesk/core"),
      "packages/core/src/index.ts": "export const zero = 0n\n",
      "packages/testkit/package.json": workspaceManifest("@paydesk/testkit", { dependencies: { "@paydesk/core": "workspace:*" } }),
      "packages/testkit/src/index.ts": "import \"@paydesk/core\"\n",
      "packages/inngest/package.json": workspaceManifest("@paydesk/inngest", { dependencies: { "@paydesk/core": "workspace:*" } }),
      "packages/inngest/src/index.ts": "import \"@paydesk/core\"\n",
      "packages/client/package.json": workspaceManifest("@paydesk/client"),
      "packages/client/src/index.ts": "export const client = 1\n",
      "packages/fastify/package.json": workspaceManifest("@paydesk/fastify", {
        dependencies: { "@paydesk/core": "workspace:*", "declared-lib": "1.0.0" },
        devDependencies: { "@paydesk/testkit": "workspace:*", "dev-lib": "1.0.0" }
      }),
      "packages/fastify/src/index.ts": [
        // Allowed: declared workspace and npm dependencies.
        "import \"@paydesk/core\"",
        "import \"declared-lib\"",
        // The testkit (a devDependency, installed): test code in production.
        "import \"@paydesk/testkit\"",
        // A workspace package not declared: reachable through the root's node_modules, or not installed here at all.
        "import \"@paydesk/inngest\"",
        "import \"@paydesk/client\"",
        // npm packages: not declared (hoisted), declared for development only, not installed.
        "import \"phantom-lib\"",
        "import \"dev-lib\"",
        "import \"not-installed\"",
        ""
      ].join("\n"),
      // Tests may use what devDependencies declare.
      "packages/fastify/test/App.test.ts": "import \"@paydesk/testkit\"\nimport \"dev-lib\"\nimport \"../src/index.ts\"\n",
      ...npmPackage("packages/fastify/node_modules", "declared-lib"),
      ...npmPackage("packages/fastify/node_modules", "dev-lib"),
      ...npmPackage("node_modules", "phantom-lib")
    }, {
      "packages/fastify/node_modules/@paydesk/core": "packages/core",
      "packages/fastify/node_modules/@paydesk/testkit": "packages/testkit",
      "packages/testkit/node_modules/@paydesk/core": "packages/core",
      "packages/inngest/node_modules/@paydesk/core": "packages/core",
      "node_modules/@paydesk/inngest": "packages/inngest"
    })
    try {
      const found = (await DependencyRule.check(dir)).map(DependencyRule.describe).sort()
      expect(found).toEqual([
        "no-dev-dependency-in-production: packages/fastify/src/index.ts -> packages/fastify/node_modules/dev-lib/index.js",
        "no-test-code-in-production: packages/fastify/src/index.ts -> packages/testkit/src/index.ts",
        "no-undeclared-npm-package: packages/fastify/src/index.ts -> node_modules/phantom-lib/index.js",
        "no-unresolvable-import: packages/fastify/src/index.ts -> @paydesk/client",
        "no-unresolvable-import: packages/fastify/src/index.ts -> not-installed",
        "undeclared-workspace-import:fastify: packages/fastify/src/index.ts -> packages/inngest/src/index.ts",
        "undeclared-workspace-import:fastify: packages/fastify/src/index.ts -> packages/testkit/src/index.ts"
      ].sort())
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
