/**
 * The offline dependency audit: every package version resolved in pnpm-lock.yaml checked against a
 * snapshot of advisories in the OSV schema (`audit/osv-advisories.json`). It needs no network, so it
 * runs with every test run (`packages/server/test/Security.dependencies.test.ts`) and on its own:
 *
 *   ./run pnpm audit:offline
 *
 * A version is affected when it lies in an `introduced` / `fixed` interval of a SEMVER range
 * (`introduced: "0"` is every version before `fixed`; no `fixed` is every later version).
 */
import { readFileSync } from "node:fs"
import { resolve } from "node:path"
import semver from "semver"
import { parse } from "yaml"

/** An OSV advisory, as far as the check reads it. */
export interface Advisory {
  readonly id: string
  readonly summary: string
  readonly affected: ReadonlyArray<{
    readonly package: { readonly ecosystem: string; readonly name: string }
    readonly ranges: ReadonlyArray<{ readonly type: string; readonly events: ReadonlyArray<{ readonly introduced?: string; readonly fixed?: string }> }>
  }>
}

/** A resolved package of the lockfile that an advisory affects. */
export interface Finding {
  readonly advisory: string
  readonly name: string
  readonly version: string
  readonly summary: string
}

/** Every `name@version` resolved in a pnpm lockfile (v9: the keys of `packages`). */
export const installed = (lockfile: string): ReadonlyArray<{ readonly name: string; readonly version: string }> => {
  const document = parse(lockfile) as { packages?: Record<string, unknown> }
  return Object.keys(document.packages ?? {}).map((entry) => {
    // `name@version`, possibly followed by peer suffixes such as `(@types/node@24)`.
    const key = entry.replace(/\(.*$/, "")
    const at = key.lastIndexOf("@")
    return { name: key.slice(0, at), version: key.slice(at + 1) }
  })
}

/** Whether `version` lies in one of the advisory's SEMVER intervals for package `name`. */
export const affects = (advisory: Advisory, name: string, version: string): boolean =>
  advisory.affected.some((entry) =>
    entry.package.ecosystem === "npm" && entry.package.name === name &&
    entry.ranges.some((range) => {
      if (range.type !== "SEMVER") return false
      let introduced: string | null = null
      for (const event of range.events) {
        if (event.introduced !== undefined) introduced = event.introduced
        if (event.fixed !== undefined && introduced !== null) {
          if ((introduced === "0" || semver.gte(version, introduced)) && semver.lt(version, event.fixed)) return true
          introduced = null
        }
      }
      return introduced !== null && (introduced === "0" || semver.gte(version, introduced))
    }))

/** Every (advisory, package) pair where the lockfile resolves an affected version. */
export const audit = (lockfile: string, advisories: ReadonlyArray<Advisory>): ReadonlyArray<Finding> =>
  installed(lockfile).flatMap(({ name, version }) =>
    semver.valid(version) === null
      ? []
      : advisories.filter((a) => affects(a, name, version)).map((a) => ({ advisory: a.id, name, version, summary: a.summary })))

/** The repository's lockfile and snapshot. */
export const load = (root: string = resolve(import.meta.dirname, "..")) => ({
  lockfile: readFileSync(resolve(root, "pnpm-lock.yaml"), "utf8"),
  advisories: (JSON.parse(readFileSync(resolve(root, "audit/osv-advisories.json"), "utf8")) as { advisories: ReadonlyArray<Advisory> }).advisories
})

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const { lockfile, advisories } = load()
  const findings = audit(lockfile, advisories)
  for (const f of findings) console.log(`${f.advisory} ${f.name}@${f.version}: ${f.summary}`)
  console.log(`${installed(lockfile).length} packages checked against ${advisories.length} advisories: ${findings.length} affected`)
  process.exit(findings.length === 0 ? 0 : 1)
}
