/**
 * Every public `@paydesk/*` package is publishable: its tarball, packed once by `pnpm pack` as
 * `changeset publish` packs it under pnpm (workspace dependencies written as versions), holds its
 * built `dist/`, README and license and no test; publint finds no error or warning in it; and
 * @arethetypeswrong resolves its types for Node (ESM, and CJS where offered) and bundlers from it.
 * Runs after the build.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { execFileSync, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { publint } from "publint"

const root = resolve(import.meta.dirname, "..")

/** The public packages and the resolutions they offer (`esm-only`, or `strict`: ESM and CJS). */
export const publicPackages: ReadonlyArray<{ readonly dir: string; readonly profile: "esm-only" | "strict" }> = [
  { dir: "core", profile: "esm-only" },
  { dir: "testkit", profile: "esm-only" },
  { dir: "sql-pg", profile: "esm-only" },
  { dir: "fastify", profile: "esm-only" },
  { dir: "inngest", profile: "esm-only" },
  { dir: "emulators", profile: "esm-only" },
  { dir: "client", profile: "strict" }
]

const workspacePackages = ["core", "testkit", "sql-pg", "fastify", "inngest", "emulators", "client", "dashboard", "server"]

describe("Packages", () => {
  it("lists every public workspace package (the private ones are marked private)", () => {
    for (const dir of workspacePackages) {
      const manifest = JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8"))
      expect(manifest.private === true || publicPackages.some((p) => p.dir === dir), dir).toBe(true)
    }
  })

  it("the pending changesets make a release plan (none mixes the private server with published packages)", () => {
    const result = spawnSync(process.execPath, [join(root, "node_modules/@changesets/cli/bin.js"), "status"], { cwd: root, encoding: "utf8" })
    expect(result.status, `${result.stdout}${result.stderr}`).toBe(0)
  })

  it("the testkit's test libraries are optional peers: only @paydesk/testkit/contracts needs them", () => {
    const manifest = JSON.parse(readFileSync(join(root, "packages", "testkit", "package.json"), "utf8"))
    const testLibraries = ["@effect/vitest", "fast-check", "vitest"]
    for (const name of testLibraries) {
      expect(manifest.peerDependencies?.[name], name).toBeTypeOf("string")
      expect(manifest.peerDependenciesMeta?.[name], name).toEqual({ optional: true })
    }
    // effect is what every entry runs on: required.
    expect(manifest.peerDependencies?.effect).toBeTypeOf("string")
    expect(manifest.peerDependenciesMeta?.effect?.optional ?? false).toBe(false)
    // The root entry loads none of them (they stay behind ./contracts).
    const barrel = readFileSync(join(root, "packages", "testkit", "src", "index.ts"), "utf8")
    const imported = [...barrel.matchAll(/from\s+"([^"]+)"/g)].map((m) => m[1])
    expect(imported.filter((specifier) => testLibraries.some((name) => specifier === name || specifier?.startsWith(`${name}/`)))).toEqual([])
  })

  for (const { dir, profile } of publicPackages) {
    describe(`@paydesk/${dir}`, () => {
      const path = join(root, "packages", dir)

      /** The package's tarball, packed once for the tests below, and the files it holds. */
      let packed: { readonly tarball: string; readonly files: ReadonlyArray<string> }
      let packDir: string
      beforeAll(() => {
        packDir = mkdtempSync(join(tmpdir(), "paydesk-pack-"))
        const report = JSON.parse(execFileSync("pnpm", ["pack", "--pack-destination", packDir, "--json"], { cwd: path, encoding: "utf8" }))
        packed = { tarball: report.filename, files: report.files.map((f: { path: string }) => f.path) }
      }, 60_000)
      afterAll(() => rmSync(packDir, { recursive: true, force: true }))

      it("packs dist/, README and LICENSE, and no test", () => {
        const { files } = packed
        expect(files).toContain("README.md")
        expect(files).toContain("LICENSE")
        expect(files).toContain("dist/index.js")
        expect(files).toContain("dist/index.d.ts")
        if (profile === "strict") expect(files).toEqual(expect.arrayContaining(["dist/index.cjs", "dist/index.d.cts"]))
        expect(files.filter((f) => /(^|\/)test\/|\.test\.ts$|\.integration\./.test(f))).toEqual([])
      })

      it("passes publint", async () => {
        const tarball = readFileSync(packed.tarball)
        const { messages } = await publint({ pack: { tarball: tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.byteLength) }, level: "warning" })
        expect(messages.map((m) => `${m.type} ${m.code} ${m.path.join(".")}`)).toEqual([])
      }, 60_000)

      it("loads with require() from a CommonJS host (Node's require of ES modules)", () => {
        const manifest = JSON.parse(readFileSync(join(path, "package.json"), "utf8")) as { name: string; exports: Record<string, unknown> }
        for (const entry of Object.keys(manifest.exports).filter((e) => e !== "./package.json")) {
          const specifier = entry === "." ? manifest.name : `${manifest.name}/${entry.slice(2)}`
          // The package names itself (self-reference), so this resolves through its own exports map.
          const loaded = spawnSync(process.execPath, ["--input-type=commonjs", "-e", `console.log(Object.keys(require(${JSON.stringify(specifier)})).length)`], { cwd: path, encoding: "utf8" })
          expect(loaded.stderr, specifier).toBe("")
          expect(Number(loaded.stdout), specifier).toBeGreaterThan(0)
        }
      }, 60_000)

      it(`passes @arethetypeswrong (${profile})`, () => {
        const result = spawnSync(process.execPath, [join(root, "node_modules/@arethetypeswrong/cli/dist/index.js"), packed.tarball, "--profile", profile, "--format", "json"], {
          encoding: "utf8"
        })
        const report = JSON.parse(result.stdout) as { problems?: Record<string, Array<{ resolutionKind?: string }>> }
        // esm-only offers no CommonJS entry: node10 and require() are not resolutions it promises.
        const ignored = profile === "esm-only" ? ["node10", "node16-cjs"] : []
        const problems = Object.values(report.problems ?? {}).flat().filter((p) => !ignored.includes(p.resolutionKind ?? ""))
        expect(problems).toEqual([])
        expect(result.status, result.stderr).toBe(0)
      }, 60_000)
    })
  }
})
