import { defineConfig } from "tsup"

export default defineConfig({
  entry: { index: "src/index.ts", "contracts/index": "src/contracts/index.ts" },
  format: ["esm"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "es2023",
  tsconfig: "../../tsconfig.base.json"
})
