/**
 * The built package works as published, in both formats, without Effect: `require` of the CJS
 * build and `import` of the ESM build sign and verify a callback. Also under the machine's own
 * Node (20 here) beside the project's 24: the SDK promises Node 18 or later.
 */
import { describe, expect, it } from "vitest"
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { join, resolve } from "node:path"

const dist = resolve(import.meta.dirname, "../dist")
const script = (load: string) => `
const { webhooks, Paydesk, PaydeskApiError } = ${load}
const body = JSON.stringify({ event_type: "payment.paid", payment_id: "pay_1", order_id: "o", status: "paid", amount: "1.00", currency: "RUB", test: true })
const run = async () => {
  const headers = await webhooks.testHeaders(body, "s3cret")
  const event = await webhooks.verify(body, headers, "s3cret")
  const refused = await webhooks.verify(body, headers, "other").then(() => "accepted", (e) => e.reason)
  console.log(JSON.stringify({ type: event.event_type, refused, client: typeof new Paydesk({ apiKey: "k" }).payments.create, error: new PaydeskApiError(400, "x", "m", "req_1").requestId }))
}
run()
`
const cjs = script(`require(${JSON.stringify(join(dist, "index.cjs"))})`)
const esm = `import(${JSON.stringify(join(dist, "index.js"))}).then((m) => { ${script("m").replace("run()", "return run()")} })`

const nodes = [process.execPath, ...["/usr/bin/node", "/usr/local/bin/node"].filter((p) => existsSync(p) && p !== process.execPath).slice(0, 1)]

/** Both builds in one process: an error of either copy is `instanceof` the other's classes, and of no unrelated one. */
const both = `
const { createRequire } = require("node:module")
const cjs = createRequire(${JSON.stringify(join(dist, "index.cjs"))})(${JSON.stringify(join(dist, "index.cjs"))})
import(${JSON.stringify(join(dist, "index.js"))}).then((esm) => {
  const checks = []
  for (const [from, to] of [[cjs, esm], [esm, cjs]]) {
    const api = new from.PaydeskApiError(400, "invalid_request", "m", "req_1")
    const connection = new from.PaydeskConnectionError("no answer", 1)
    checks.push(
      api instanceof to.PaydeskApiError, api instanceof to.PaydeskError, api instanceof Error,
      connection instanceof to.PaydeskConnectionError, connection instanceof to.PaydeskError,
      !(api instanceof to.PaydeskConnectionError), !(connection instanceof to.PaydeskApiError), !(api instanceof to.WebhookVerificationError),
      !({ message: "m" } instanceof to.PaydeskError), !(new Error("m") instanceof to.PaydeskError)
    )
  }
  console.log(JSON.stringify(checks))
})
`

describe("Formats", () => {
  it("an error of the CommonJS build is instanceof the ESM build's classes and back (both loaded in one process)", () => {
    const result = spawnSync(process.execPath, ["-e", both], { encoding: "utf8" })
    expect(result.stderr).toBe("")
    const checks = JSON.parse(result.stdout) as Array<boolean>
    expect(checks).toHaveLength(20)
    expect(checks.every(Boolean)).toBe(true)
  })

  for (const node of nodes) {
    const version = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim()
    for (const [format, code] of [["CJS", cjs], ["ESM", esm]] as const) {
      it(`${format} on Node ${version}: verifies a signed callback and refuses another secret`, () => {
        const result = spawnSync(node, ["-e", code], { encoding: "utf8" })
        expect(result.stderr).toBe("")
        expect(JSON.parse(result.stdout)).toEqual({ type: "payment.paid", refused: "signature_mismatch", client: "function", error: "req_1" })
      })
    }
  }
})
