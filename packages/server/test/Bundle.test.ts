/**
 * The programs `./run start` and `paydesk` run are bundles (`tsup.config.ts`): the workspace packages
 * and Effect inside, every other package imported at run time from `packages/server/node_modules`.
 * A package a bundled workspace package imports (sql-pg's `@noble/hashes`, say) must therefore be a
 * dependency of the server itself: pnpm links only declared ones, and a missing one stops the server
 * at start (`ERR_MODULE_NOT_FOUND`; an outside probe's server did). Reads the built `dist` (built
 * before the tests, as `./run test` does), following its chunks, static and dynamic imports alike.
 */
import { init, parse } from "es-module-lexer"
import { existsSync, readFileSync } from "node:fs"
import { isBuiltin } from "node:module"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const serverDir = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const dist = join(serverDir, "dist")

/** The package a bare specifier names (`@scope/name/sub.js` → `@scope/name`). */
const packageOf = (specifier: string): string => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/")

/** Every bare specifier the files reachable from `entries` import, by the file that imports it. */
const bareImports = async (entries: ReadonlyArray<string>): Promise<Map<string, string>> => {
  await init
  const found = new Map<string, string>()
  const seen = new Set<string>()
  const queue = entries.map((entry) => join(dist, entry))
  while (queue.length > 0) {
    const file = queue.pop()!
    if (seen.has(file)) continue
    seen.add(file)
    const [imports] = parse(readFileSync(file, "utf8"), file)
    for (const { specifier } of imports) {
      // A dynamic import of a computed name has none (the bundles make none of their own).
      if (specifier === undefined || specifier === null) continue
      if (specifier.startsWith("./") || specifier.startsWith("../")) queue.push(resolve(dirname(file), specifier))
      else if (!isBuiltin(specifier) && !found.has(specifier)) found.set(specifier, file)
    }
  }
  return found
}

describe("the server's bundles", () => {
  it("import at run time only packages the server declares and has installed", async () => {
    const manifest = JSON.parse(readFileSync(join(serverDir, "package.json"), "utf8")) as { dependencies: Record<string, string> }
    const imports = await bareImports(["main.js", "cli.js"])
    // The bundles do import packages (the HTTP framework, the database driver's embedded server, …).
    expect([...imports.keys()].map(packageOf)).toEqual(expect.arrayContaining(["fastify", "undici", "commander", "@noble/hashes"]))
    const undeclared = [...imports].filter(([specifier]) => manifest.dependencies[packageOf(specifier)] === undefined)
      .map(([specifier, file]) => `${specifier} (imported by dist/${file.slice(dist.length + 1)})`)
    expect(undeclared, "add these to packages/server/package.json's dependencies").toEqual([])
    const missing = [...imports.keys()].map(packageOf).filter((name) => !existsSync(join(serverDir, "node_modules", name, "package.json")))
    expect(missing).toEqual([])
  })
})
