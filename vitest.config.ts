import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: { conditions: ["@paydesk/source"] },
  ssr: { resolve: { conditions: ["@paydesk/source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["packages/sql-pg/test/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000
  }
})
