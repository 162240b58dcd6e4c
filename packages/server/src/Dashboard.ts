/**
 * Serves the merchant dashboard (`@paydesk/dashboard`, static files built into its `dist/`) at
 * `/dashboard`: hashed assets cached for a year, `index.html` for every other path under
 * `/dashboard/` (the app's own routes: deep links and reloads work), and headers that let the
 * page run only its own scripts and styles and talk only to this origin's API.
 */
import fastifyStatic from "@fastify/static"
import type { FastifyInstance } from "fastify"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

/** Where the dashboard is served. */
export const prefix = "/dashboard"

/** Content-Security-Policy of the dashboard: its own files only, API calls to this origin only. */
export const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")

/** The built dashboard's directory (the package's `dist/`); null when the package is not installed. */
export const assetsDir = (): string | null => {
  try {
    return join(dirname(createRequire(import.meta.url).resolve("@paydesk/dashboard/package.json")), "dist")
  } catch {
    return null
  }
}

/** Registers `/dashboard` on `app`; without a build (`pnpm run build`) it answers 503 saying so. */
export const register = async (app: FastifyInstance, options: { readonly root?: string | null } = {}): Promise<void> => {
  const root = options.root === undefined ? assetsDir() : options.root
  await app.register(async (scope) => {
    scope.addHook("onSend", async (request, reply) => {
      reply.header("content-security-policy", contentSecurityPolicy)
      reply.header("x-frame-options", "DENY")
      reply.header("referrer-policy", "no-referrer")
      // Asset names carry their content hash; index.html must be revalidated to pick up a new build.
      const immutable = request.url.startsWith(`${prefix}/assets/`) && reply.statusCode === 200
      reply.header("cache-control", immutable ? "public, max-age=31536000, immutable" : "no-cache")
    })
    scope.get(prefix, (_request, reply) => reply.redirect(`${prefix}/`))
    if (root === null || !existsSync(join(root, "index.html"))) {
      scope.get(`${prefix}/*`, (_request, reply) =>
        reply.code(503).type("text/plain; charset=utf-8").send("The dashboard is not built: run `pnpm run build` (or `pnpm --filter @paydesk/dashboard build`).\n"))
      return
    }
    // The assets are looked up when asked for, as index.html is read for each page: a build made while
    // the server runs (new hashed names) is served at once (routes made per file at start answered
    // the new build's assets 404, a blank page until a restart).
    await scope.register(fastifyStatic, { root: join(root, "assets"), prefix: `${prefix}/assets/`, index: false, list: false, dotfiles: "ignore", cacheControl: false })
    scope.get(`${prefix}/*`, (request, reply) => {
      // A missing asset is a 404, not the app.
      if (request.url.startsWith(`${prefix}/assets/`)) return reply.callNotFound()
      return reply.type("text/html; charset=utf-8").sendFile("index.html", root)
    })
  })
}
