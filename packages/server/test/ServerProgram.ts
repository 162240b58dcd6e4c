/**
 * How the tests start the server's programs as OS processes: the built bundle (`dist/main.js`,
 * `dist/cli.js`: what `./run start` and `paydesk` run) when it is newer than every source it is
 * built from, by the rule `./run` uses (`build_fresh`); else the sources through tsx, so a test run
 * right after an edit, without a build, still tests the edit. `./run test` builds before the tests,
 * so there every spawned server is the bundle users run, and starts in about half the time of the
 * sources through tsx (1.5 s against 2.8 s on a slow machine).
 */
import { existsSync, readdirSync, statSync } from "node:fs"
import { join, resolve } from "node:path"

export const serverDir = resolve(import.meta.dirname, "..")
const root = resolve(serverDir, "../..")

/**
 * Whether `path` or anything under it was modified after `since` (ms), directories included as `find
 * -newer` counts them: a source file removed or renamed changes only its directory.
 */
const newerThan = (path: string, since: number): boolean => {
  if (!existsSync(path)) return false
  const stat = statSync(path)
  if (stat.mtimeMs > since) return true
  return stat.isDirectory() && readdirSync(path).some((name) => newerThan(join(path, name), since))
}

let fresh: boolean | undefined

/** `./run`'s `build_fresh`: the server's bundle exists, every bundled package is built, and no source changed since. */
export const builtFresh = (): boolean => {
  if (fresh !== undefined) return fresh
  const built = join(serverDir, "dist", "main.js")
  if (!existsSync(built) || !existsSync(join(serverDir, "dist", "cli.js"))) return (fresh = false)
  const since = statSync(built).mtimeMs
  const packages = readdirSync(join(root, "packages")).map((name) => join(root, "packages", name))
  const bundled = packages.filter((dir) => existsSync(join(dir, "tsup.config.ts")))
  fresh = bundled.every((dir) => existsSync(join(dir, "dist"))) &&
    !packages.some((dir) => ["src", "package.json", "tsup.config.ts"].some((name) => newerThan(join(dir, name), since))) &&
    !["tsconfig.base.json", "pnpm-lock.yaml"].some((name) => newerThan(join(root, name), since))
  return fresh
}

/** Node's arguments (before the program's own) to run the server's `main` or its `cli`. */
export const serverProgram = (entry: "main" | "cli"): Array<string> =>
  builtFresh()
    ? [join(serverDir, "dist", `${entry}.js`)]
    : ["--import", "tsx", "--conditions=@paydesk/source", join(serverDir, "src", `${entry}.ts`)]
