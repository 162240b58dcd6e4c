/**
 * The core's boundary, enforced: packages/core/src imports nothing but `effect`, `effect/<subpath>`
 * and its own files, and reads neither the wall clock nor Math.random (time and randomness come
 * from Effect's Clock/DateTime/Random or from a port).
 *
 * The check parses every source file with the TypeScript compiler, so comments and string
 * contents never count, and every kind of module reference does: static imports and
 * re-exports (type-only ones too), `import x = require("x")`, dynamic `import("x")`,
 * `require("x")` and type-level `import("x").T`.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const SRC_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../src")
const SOURCE_EXTENSIONS = [".ts", ".mts", ".cts", ".tsx"]

interface Violation {
  readonly file: string
  readonly line: number
  readonly message: string
}

const isAllowedPackage = (specifier: string): boolean => specifier === "effect" || specifier.startsWith("effect/")

/** Checks one file's text; `fileName` is the absolute path it is (or pretends to be) at under `srcRoot`. */
const checkSource = (fileName: string, text: string, srcRoot: string = SRC_ROOT): Array<Violation> => {
  const sourceFile = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, scriptKind(fileName))
  const violations: Array<Violation> = []
  const report = (node: ts.Node, message: string) => {
    const { line } = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile))
    violations.push({ file: path.relative(srcRoot, fileName) || fileName, line: line + 1, message })
  }

  const checkSpecifier = (node: ts.Node, specifierNode: ts.Node | undefined, kind: string) => {
    if (specifierNode === undefined || !ts.isStringLiteralLike(specifierNode)) {
      report(node, `${kind} with a non-literal module specifier`)
      return
    }
    const specifier = specifierNode.text
    if (specifier.startsWith("./") || specifier.startsWith("../")) {
      const target = path.resolve(path.dirname(fileName), specifier)
      if (target !== srcRoot && !target.startsWith(srcRoot + path.sep)) {
        report(node, `${kind} "${specifier}" leaves packages/core/src`)
      }
      return
    }
    if (!isAllowedPackage(specifier)) {
      report(node, `${kind} "${specifier}" is not effect, effect/<subpath> or a relative path`)
    }
  }

  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      checkSpecifier(node, node.moduleSpecifier, "import")
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined) {
      checkSpecifier(node, node.moduleSpecifier, "export from")
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      checkSpecifier(node, node.moduleReference.expression, "import = require")
    } else if (ts.isImportTypeNode(node)) {
      const argument = node.argument
      checkSpecifier(
        node,
        ts.isLiteralTypeNode(argument) ? argument.literal : undefined,
        "type import()"
      )
    } else if (ts.isCallExpression(node)) {
      if (node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        checkSpecifier(node, node.arguments[0], "dynamic import()")
      } else if (ts.isIdentifier(node.expression) && node.expression.text === "require") {
        checkSpecifier(node, node.arguments[0], "require()")
      } else if (isGlobal(node.expression, "Date")) {
        report(node, "Date() reads the wall clock: use Clock/DateTime from effect")
      } else if (isMember(node.expression, "Date", "now")) {
        report(node, "Date.now() reads the wall clock: use Clock/DateTime from effect")
      } else if (isMember(node.expression, "Math", "random")) {
        report(node, "Math.random() is not reproducible: use Random from effect or a port")
      }
    } else if (ts.isNewExpression(node) && isGlobal(node.expression, "Date")) {
      report(node, "new Date() reads the wall clock: use DateTime from effect")
    }
    ts.forEachChild(node, visit)
  }
  visit(sourceFile)
  return violations
}

/** `name`, `globalThis.name`, `(name)` */
const isGlobal = (expression: ts.Expression, name: string): boolean => {
  const e = skipParentheses(expression)
  if (ts.isIdentifier(e)) return e.text === name
  return ts.isPropertyAccessExpression(e) && e.name.text === name && isGlobalThis(e.expression)
}

/** `object.member` or `object["member"]`, where object is a global (see isGlobal). */
const isMember = (expression: ts.Expression, object: string, member: string): boolean => {
  const e = skipParentheses(expression)
  if (ts.isPropertyAccessExpression(e)) return e.name.text === member && isGlobal(e.expression, object)
  if (ts.isElementAccessExpression(e)) {
    return ts.isStringLiteralLike(e.argumentExpression) && e.argumentExpression.text === member &&
      isGlobal(e.expression, object)
  }
  return false
}

const isGlobalThis = (expression: ts.Expression): boolean => {
  const e = skipParentheses(expression)
  return ts.isIdentifier(e) && (e.text === "globalThis" || e.text === "window" || e.text === "self")
}

const skipParentheses = (expression: ts.Expression): ts.Expression =>
  ts.isParenthesizedExpression(expression) ? skipParentheses(expression.expression) : expression

const scriptKind = (fileName: string): ts.ScriptKind => fileName.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS

const listSourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return listSourceFiles(full)
    return entry.isFile() && SOURCE_EXTENSIONS.some((ext) => entry.name.endsWith(ext)) ? [full] : []
  }).sort()

const format = (violations: ReadonlyArray<Violation>): Array<string> =>
  violations.map((v) => `${v.file}:${v.line}: ${v.message}`)

describe("core boundary checker", () => {
  const at = (relative: string) => path.join(SRC_ROOT, relative)
  const messages = (text: string, file = "Synthetic.ts") => format(checkSource(at(file), text))

  it("reports a Node built-in import", () => {
    const found = messages(`import x from "node:fs"\nexport const y = x`)
    expect(found).toHaveLength(1)
    expect(found[0]).toContain(`"node:fs"`)
    expect(found[0]).toMatch(/^Synthetic\.ts:1: /)
  })

  it("reports every kind of module reference to a forbidden module", () => {
    const text = [
      `import "reflect-metadata"`,
      `import type { FastifyInstance } from "fastify"`,
      `import * as crypto from "crypto"`,
      `export * from "@paydesk/testkit"`,
      `export { x } from "effectful"`,
      `import pg = require("pg")`,
      `const a = await import("node:path")`,
      `const b = require("fs")`,
      `type C = import("inngest").Inngest`,
      `const name = "effect"; const d = await import(name)`
    ].join("\n")
    expect(checkSource(at("Synthetic.ts"), text).map((v) => v.line)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
  })

  it("reports a relative path that leaves packages/core/src", () => {
    expect(messages(`import { x } from "../../testkit/src/index.js"`)).toHaveLength(1)
    expect(messages(`import { x } from "../test/helpers.js"`)).toHaveLength(1)
    expect(messages(`export * from "../../Errors.js"`, "domain/Payment.ts")).toHaveLength(1)
  })

  it("accepts effect, effect/<subpath> and relative paths inside src", () => {
    const text = [
      `import { Effect, Schema } from "effect"`,
      `import type { SqlError } from "effect/unstable/sql"`,
      `import * as DateTime from "effect/DateTime"`,
      `import { InvalidRequest } from "../Errors.js"`,
      `export * from "./Money.js"`,
      `export type { Plan } from "../domain/Plan.js"`,
      `const lazy = () => import("./Heavy.js")`
    ].join("\n")
    expect(messages(text, "domain/Payment.ts")).toEqual([])
  })

  it("reports the wall clock and Math.random, in any spelling", () => {
    const text = [
      `const a = Date.now()`,
      `const b = new Date()`,
      `const c = new Date(0)`,
      `const d = Math.random()`,
      `const e = globalThis.Date.now()`,
      `const f = Date()`,
      `const g = new globalThis.Date`,
      `const h = Math["random"]()`
    ].join("\n")
    expect(checkSource(at("Synthetic.ts"), text).map((v) => v.line)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
  })

  it("ignores comments and strings", () => {
    const text = [
      `// never Date.now(), new Date() or Math.random() here; import x from "node:fs" is forbidden`,
      `/** require("pg") */`,
      `export const note = "use Clock, not Date.now() or import(\\"node:fs\\")"`,
      `export const shown = \`new Date(\${1})\``,
      `export const clock = { now: () => 0 }; clock.now()`
    ].join("\n")
    expect(messages(text)).toEqual([])
  })
})

describe("packages/core/src", () => {
  const files = listSourceFiles(SRC_ROOT)

  it("has source files to check", () => {
    expect(files.length).toBeGreaterThanOrEqual(3)
  })

  it("imports only effect, effect/<subpath> and its own files, and never reads the wall clock or Math.random", () => {
    const violations = files.flatMap((file) => checkSource(file, fs.readFileSync(file, "utf8")))
    expect(format(violations)).toEqual([])
  })
})
