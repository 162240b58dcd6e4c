/**
 * The dependency rule of the workspace, checked with dependency-cruiser on every package:
 *
 * - `core` imports only `effect` (no Node built-in, no other package);
 * - a package's source imports another workspace package only when its package.json declares it
 *   (dependencies or peerDependencies; tests may also use devDependencies), no npm package it does
 *   not declare (one reachable only through hoisting), and in production code none it declares
 *   under devDependencies only; an import that resolves to nothing (a package neither declared nor
 *   installed) fails too;
 * - production code (`packages/<name>/src` of every package but the testkit) imports neither the
 *   testkit, nor vitest, @effect/vitest or fast-check, nor any test directory; the testkit's own main
 *   entry stays free of vitest too (its contract suites sit behind `@paydesk/testkit/contracts`).
 *
 * It runs with every test run (`packages/server/test/DependencyRule.test.ts`) and on its own:
 *
 *   ./run pnpm deps:check
 */
import { cruise, type IForbiddenRuleType, type IViolation } from "dependency-cruiser"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"

/** A workspace package as the rule sees it. */
interface WorkspacePackage {
  readonly dir: string
  readonly name: string
  /** Workspace packages its production code may import. */
  readonly production: ReadonlyArray<string>
  /** Workspace packages its tests may import. */
  readonly test: ReadonlyArray<string>
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Test-only libraries: never in production code. */
const testLibraries = "(^|/)node_modules/(vitest|@effect/vitest|@vitest/[^/]+|fast-check)/|^(vitest|@effect/vitest|fast-check)$"

/** The workspace packages under `root/packages`. */
export const workspace = (root: string): ReadonlyArray<WorkspacePackage> => {
  const dirs = readdirSync(join(root, "packages")).filter((dir) => existsSync(join(root, "packages", dir, "package.json")))
  const manifests = dirs.map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8")) }))
  const dirOf = new Map(manifests.map(({ dir, manifest }) => [manifest.name as string, dir]))
  const workspaceDirs = (...fields: ReadonlyArray<Record<string, string> | undefined>) =>
    fields.flatMap((field) => Object.keys(field ?? {})).flatMap((name) => dirOf.get(name) ?? [])
  return manifests.map(({ dir, manifest }) => {
    const production = workspaceDirs(manifest.dependencies, manifest.peerDependencies, manifest.optionalDependencies)
    return { dir, name: manifest.name, production, test: [...production, ...workspaceDirs(manifest.devDependencies)] }
  })
}

/** The forbidden-dependency rules for the workspace at `root`. */
export const rules = (root: string): Array<IForbiddenRuleType> => {
  const packages = workspace(root)
  const perPackage = packages.flatMap((p): Array<IForbiddenRuleType> => {
    const others = (allowed: ReadonlyArray<string>) => `^packages/(?!(${[p.dir, ...allowed].map(escape).join("|")})/)[^/]+/`
    return [
      {
        name: `undeclared-workspace-import:${p.dir}`,
        comment: `${p.name} imports a workspace package its package.json does not declare`,
        severity: "error",
        from: { path: `^packages/${escape(p.dir)}/src/` },
        to: { path: others(p.production) }
      },
      {
        name: `undeclared-workspace-import-in-tests:${p.dir}`,
        comment: `tests of ${p.name} import a workspace package its package.json does not declare`,
        severity: "error",
        from: { path: `^packages/${escape(p.dir)}/test/` },
        to: { path: others(p.test) }
      }
    ]
  })
  return [
    {
      name: "core-imports-only-effect",
      comment: "@paydesk/core depends on effect only: no Node built-in, no framework, no other package",
      severity: "error",
      from: { path: "^packages/core/src/" },
      to: { pathNot: "^packages/core/src/|(^|/)node_modules/effect/" }
    },
    {
      name: "core-no-node-builtins",
      comment: "@paydesk/core runs on any JavaScript runtime: no Node built-in",
      severity: "error",
      from: { path: "^packages/core/src/" },
      to: { dependencyTypes: ["core"] }
    },
    {
      name: "no-test-code-in-production",
      comment: "production code imports neither the testkit, nor test libraries, nor test directories",
      severity: "error",
      from: { path: "^packages/(?!testkit/)[^/]+/src/" },
      to: { path: `^packages/testkit/|^packages/[^/]+/test/|${testLibraries}` }
    },
    {
      name: "testkit-main-entry-without-vitest",
      comment: "importing @paydesk/testkit must not load vitest: suites belong under src/contracts (@paydesk/testkit/contracts)",
      severity: "error",
      from: { path: "^packages/testkit/src/(?!contracts/)" },
      to: { path: `^packages/testkit/src/contracts/|${testLibraries}` }
    },
    {
      name: "no-undeclared-npm-package",
      comment: "source imports an npm package its package.json does not declare",
      severity: "error",
      from: { path: "^packages/[^/]+/src/" },
      to: { dependencyTypes: ["npm-no-pkg", "npm-unknown"] }
    },
    {
      name: "no-dev-dependency-in-production",
      comment: "production code imports an npm package its package.json declares for development only (devDependencies)",
      severity: "error",
      from: { path: "^packages/[^/]+/src/" },
      to: { dependencyTypes: ["npm-dev"], dependencyTypesNot: ["npm", "npm-peer", "npm-optional", "npm-bundled"] }
    },
    {
      name: "no-unresolvable-import",
      comment: "an import that resolves to nothing: a package neither declared nor installed (e.g. a workspace package not in package.json)",
      severity: "error",
      from: { path: "^packages/[^/]+/(src|test)/" },
      to: { couldNotResolve: true }
    },
    ...perPackage
  ]
}

/** Runs the rule on the sources and tests of every package under `root`; returns the violations. */
export const check = async (root: string): Promise<ReadonlyArray<IViolation>> => {
  const targets = readdirSync(join(root, "packages")).flatMap((dir) =>
    ["src", "test"].map((sub) => `packages/${dir}/${sub}`).filter((path) => existsSync(join(root, path))))
  const tsConfig = join(root, "tsconfig.json")
  const result = await cruise(targets, {
    // Paths in the rules and in the answer are relative to `root`.
    baseDir: root,
    validate: true,
    ruleSet: { forbidden: rules(root) },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)dist/" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["@paydesk/source", "import", "types", "node", "default"]
    },
    ...(existsSync(tsConfig) ? { tsConfig: { fileName: tsConfig } } : {})
  }, {}, existsSync(tsConfig) ? { tsConfig: JSON.parse(readFileSync(tsConfig, "utf8")) } : {})
  if (typeof result.output === "string") throw new Error(`dependency-cruiser: ${result.output}`)
  return result.output.summary.violations
}

/** One line per violation. */
export const describe = (violation: IViolation): string => `${violation.rule.name}: ${violation.from} -> ${violation.to}`

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const violations = await check(resolve(import.meta.dirname, ".."))
  for (const violation of violations) console.log(describe(violation))
  console.log(`dependency rule: ${violations.length} violation(s)`)
  process.exit(violations.length === 0 ? 0 : 1)
}
