import { defineConfig } from "tsup"

export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  // Node 18, Bun, Deno and edge runtimes.
  target: "es2022",
  tsconfig: "../../tsconfig.base.json"
})
