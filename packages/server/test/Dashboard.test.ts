/**
 * The dashboard's files as `Dashboard.register` serves them from a build directory: a build made
 * while the server runs (new hashed asset names, a new index.html) is served at once, a missing
 * asset is 404, and every other path under /dashboard/ is the app.
 */
import { afterEach, describe, expect, it } from "vitest"
import Fastify, { type FastifyInstance } from "fastify"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Dashboard from "../src/Dashboard.js"

let app: FastifyInstance | undefined
let dir: string | undefined
afterEach(async () => {
  await app?.close()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

const build = (root: string, name: string) => {
  rmSync(join(root, "assets"), { recursive: true, force: true })
  mkdirSync(join(root, "assets"), { recursive: true })
  writeFileSync(join(root, "assets", `${name}.js`), `console.log(${JSON.stringify(name)})`)
  writeFileSync(join(root, "index.html"), `<div id="app"></div><script src="/dashboard/assets/${name}.js"></script>`)
}

describe("Dashboard files", () => {
  it("serves a build made while it runs: the new index.html and its assets; the old assets are gone (404)", async () => {
    dir = mkdtempSync(join(tmpdir(), "paydesk-dashboard-"))
    build(dir, "index-old")
    app = Fastify()
    await Dashboard.register(app, { root: dir })
    const get = (url: string) => app!.inject({ method: "GET", url })
    expect((await get("/dashboard/assets/index-old.js")).statusCode).toBe(200)
    build(dir, "index-new")
    const page = await get("/dashboard/payments")
    expect([page.statusCode, page.body]).toEqual([200, expect.stringContaining("/dashboard/assets/index-new.js")])
    const asset = await get("/dashboard/assets/index-new.js")
    expect([asset.statusCode, asset.headers["content-type"], asset.headers["cache-control"]]).toEqual([200, expect.stringMatching(/javascript/), "public, max-age=31536000, immutable"])
    expect((await get("/dashboard/assets/index-old.js")).statusCode).toBe(404)
    expect((await get("/dashboard/assets/missing.js")).statusCode).toBe(404)
    // Nothing outside the assets, and no dotfile: an encoded `..` (light-my-request would resolve a plain one).
    writeFileSync(join(dir, "assets", ".secret"), "dot-secret")
    writeFileSync(join(dir, "beside.txt"), "beside-secret")
    for (const path of ["/dashboard/assets/..%2fbeside.txt", "/dashboard/assets/..%2findex.html", "/dashboard/assets/.secret"]) {
      const refused = await get(path)
      expect(refused.statusCode, path).toBeGreaterThanOrEqual(400)
      expect(refused.headers["cache-control"], path).not.toBe("public, max-age=31536000, immutable")
      expect(refused.body, path).not.toMatch(/dot-secret|beside-secret|index-new/)
    }
  })
})
