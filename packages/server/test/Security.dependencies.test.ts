/**
 * The dependency audit that runs here (the registry's audit endpoint is not reachable): every
 * version in pnpm-lock.yaml against the advisory snapshot in audit/osv-advisories.json.
 */
import { describe, expect, it } from "vitest"
import * as LockfileAudit from "../../../audit/LockfileAudit.js"

const lockfile = (entries: ReadonlyArray<string>) =>
  `lockfileVersion: '9.0'\n\npackages:\n\n${entries.map((e) => `  '${e}':\n    resolution: {integrity: sha512-x}\n`).join("\n")}`

describe("dependency audit", () => {
  it("no package version in pnpm-lock.yaml is affected by an advisory of the snapshot", () => {
    const { lockfile: text, advisories } = LockfileAudit.load()
    expect(LockfileAudit.installed(text).length).toBeGreaterThan(100)
    expect(advisories.length).toBeGreaterThanOrEqual(10)
    expect(LockfileAudit.audit(text, advisories)).toEqual([])
  })

  it("flags affected versions and only those", () => {
    const { advisories } = LockfileAudit.load()
    const findings = LockfileAudit.audit(lockfile([
      "fastify@5.3.1", "fastify@5.3.2", "semver@6.3.0", "semver@7.5.2", "cross-spawn@7.0.3", "esbuild@0.24.2(@types/node@24)", "@scope/other@1.0.0"
    ]), advisories)
    expect(findings.map((f) => `${f.advisory} ${f.name}@${f.version}`)).toEqual([
      "GHSA-mg2h-6x62-wpwc fastify@5.3.1",
      "GHSA-c2qf-rxjj-qqgw semver@6.3.0",
      "GHSA-3xgq-45jj-v275 cross-spawn@7.0.3",
      "GHSA-67mh-4wv8-2f99 esbuild@0.24.2"
    ])
    expect(LockfileAudit.installed(lockfile(["@fastify/rate-limit@11.2.0"]))).toEqual([{ name: "@fastify/rate-limit", version: "11.2.0" }])
  })
})
