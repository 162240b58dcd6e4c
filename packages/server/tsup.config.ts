import { defineConfig } from "tsup"

/** Everything but the workspace packages and Effect stays a runtime dependency (resolved from node_modules). */
const thirdParty = /^(?!@paydesk\/|effect(\/|$)|@effect\/|\.|\/)/

export default defineConfig([
  {
    // The library entry: the workspace packages stay separate (an embedding host shares them).
    entry: ["src/index.ts"],
    format: ["esm"],
    dts: { entry: "src/index.ts" },
    sourcemap: true,
    clean: false,
    target: "es2023",
    tsconfig: "../../tsconfig.base.json"
  },
  {
    // The programs: one tree-shaken bundle of the workspace packages and Effect (only the modules
    // they use are loaded, which keeps the idle server small); third-party packages stay external.
    entry: ["src/main.ts", "src/cli.ts"],
    format: ["esm"],
    sourcemap: true,
    clean: false,
    target: "es2023",
    tsconfig: "../../tsconfig.base.json",
    noExternal: [/^@paydesk\//, /^effect(\/|$)/, /^@effect\//],
    external: [thirdParty],
    esbuildOptions(options) {
      options.conditions = ["@paydesk/source", "import"]
    }
  }
])
