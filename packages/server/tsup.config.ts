import { defineConfig } from "tsup"

export default defineConfig({
  entry: ["src/index.ts", "src/main.ts", "src/cli.ts"],
  format: ["esm"],
  dts: { entry: "src/index.ts" },
  sourcemap: true,
  clean: true,
  target: "es2023",
  tsconfig: "../../tsconfig.base.json"
})
