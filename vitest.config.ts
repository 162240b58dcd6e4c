import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: { conditions: ["@paydesk/source"] },
  ssr: { resolve: { conditions: ["@paydesk/source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["packages/sql-pg/test/globalSetup.ts"],
    // The files mostly wait (for PostgreSQL, servers they start, timers), so two run at once even on
    // two cores, where vitest's default (one less than the cores) ran one: 558 s became 354 s here.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 120_000
  }
})
