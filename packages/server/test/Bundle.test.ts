/**
 * The programs `./run start` and `paydesk` run are bundles (`tsup.config.ts`): the workspace packages
 * and Effect inside, every other package imported at run time from `packages/server/node_modules`.
 * A package a bundled workspace package imports (sql-pg's `@noble/hashes`, say) must therefore be a
 * dependency of the server itself: pnpm links only declared ones, and a missing one stops the server
 * at start (`ERR_MODULE_NOT_FOUND`; an outside probe's server did). And they are ASCII: V8 keeps each
 * script's source in the heap (functions are compiled when first called), and one character beyond
 * ASCII (a comment's ellipsis) stores the whole file two bytes a character: 0.6 MB more of an idle
 * server's heap for `main.js` alone. esbuild escapes such characters in strings, not in the comments
 * it keeps. Reads the built `dist` (built before the tests, as `./run test` does), following its
 * chunks, static and dynamic imports alike.
 */
import { init, parse } from "es-module-lexer"
import { existsSync, readFileSync } from "node:fs"
import { createRequire, isBuiltin } from "node:module"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const serverDir = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const dist = join(serverDir, "dist")

/** The package a bare specifier names (`@scope/name/sub.js` → `@scope/name`). */
const packageOf = (specifier: string): string => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/")

/** The files reachable from `entries`, and every bare specifier they import, by the file that imports it. */
const reachable = async (entries: ReadonlyArray<string>): Promise<{ readonly files: ReadonlySet<string>; readonly imports: Map<string, string> }> => {
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
  return { files: seen, imports: found }
}

describe("the server's bundles", () => {
  it("import at run time only packages the server declares and has installed", async () => {
    const manifest = JSON.parse(readFileSync(join(serverDir, "package.json"), "utf8")) as { dependencies: Record<string, string> }
    const { imports } = await reachable(["main.js", "cli.js"])
    // The bundles do import packages (the HTTP framework, the database driver's embedded server, …).
    expect([...imports.keys()].map(packageOf)).toEqual(expect.arrayContaining(["fastify", "undici", "commander", "@noble/hashes"]))
    const undeclared = [...imports].filter(([specifier]) => manifest.dependencies[packageOf(specifier)] === undefined)
      .map(([specifier, file]) => `${specifier} (imported by dist/${file.slice(dist.length + 1)})`)
    expect(undeclared, "add these to packages/server/package.json's dependencies").toEqual([])
    const missing = [...imports.keys()].map(packageOf).filter((name) => !existsSync(join(serverDir, "node_modules", name, "package.json")))
    expect(missing).toEqual([])
  })

  it("load undici's agent alone, not its index (fetch, WebSocket, caches, mocks: about 2 MB of an idle server)", async () => {
    const { imports } = await reachable(["main.js", "cli.js"])
    const undici = [...imports.keys()].filter((specifier) => packageOf(specifier) === "undici")
    expect(undici).toEqual(["undici/lib/dispatcher/agent.js"])
    // The file is undici's own, not a public entry: an upgrade that moves it or changes what it exports fails here.
    const fromServer = createRequire(join(serverDir, "package.json"))
    expect(fromServer("undici/lib/dispatcher/agent.js")).toBe(fromServer("undici").Agent)
  })

  it("are ASCII, so V8 holds their sources one byte a character", async () => {
    const { files } = await reachable(["main.js", "cli.js"])
    expect(files.size).toBeGreaterThan(2)
    const beyond = [...files].flatMap((file) =>
      readFileSync(file, "utf8").split("\n").flatMap((line, i) =>
        /[^\x00-\x7F]/.test(line) ? [`dist/${file.slice(dist.length + 1)}:${i + 1}: ${line.trim().slice(0, 100)}`] : []))
    expect(beyond, "write these comments of the bundled sources in ASCII (esbuild keeps them as they are)").toEqual([])
  })
})
