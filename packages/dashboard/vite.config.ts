/**
 * Builds the dashboard into `dist/`: `index.html` and hashed assets under `dist/assets/`, every URL
 * under `/dashboard/` (where the reference server serves it). The SDK is bundled from its sources.
 */
import { fileURLToPath } from "node:url"
import { defineConfig } from "vite"

export default defineConfig({
  base: "/dashboard/",
  resolve: {
    conditions: ["@paydesk/source", "module", "browser", "import", "default"],
    // The SDK falls back to node:crypto on runtimes without Web Crypto; browsers have it.
    alias: { "node:crypto": fileURLToPath(new URL("src/WebCrypto.ts", import.meta.url)) }
  },
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    // No inline script or style: the server's Content-Security-Policy allows only the dashboard's own files.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false
  }
})
