/**
 * The OpenAPI document: linted by Redocly's engine (`@redocly/openapi-core`, what `@redocly/cli
 * lint` runs) at zero problems; every route of the app documented and every documented operation
 * a route; examples that decode with the declared schemas; the Scalar reference page served
 * without any outside asset; the Callbacks guide's Python check run with python3 (False, never an
 * exception, for missing or malformed headers; both secrets of a rotation).
 */
import Fastify from "fastify"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createConfig, lintFromString } from "@redocly/openapi-core"
import { Result, Schema } from "effect"
import { spawnSync } from "node:child_process"
import { createHmac } from "node:crypto"
import { Callbacks, Idempotency } from "@paydesk/core"
import * as App from "../src/App.js"
import * as Contract from "../src/Contract.js"
import * as OpenApi from "../src/OpenApi.js"
import { responses } from "../src/ResponseSchemas.js"
import { json, make, publicUrl, type TestApp } from "./TestApp.js"

let t: TestApp
const document = OpenApi.make()

beforeAll(async () => {
  t = await make()
  await t.app.ready()
})
afterAll(() => t.close())

type Operations = Record<string, Record<string, { operationId: string; parameters: Array<{ name: string; in: string; required: boolean; schema: Record<string, unknown> }> }>>

describe("OpenApi", () => {
  it("lints at zero errors and zero warnings with Redocly's recommended rules", async () => {
    const config = await createConfig({ extends: ["recommended"] })
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: "openapi.json", config })
    expect(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([])
  }, 60_000)

  it("documents every route of the app, and every documented operation is a route with that operation id", () => {
    const routes = App.routesOf(t.app)
    const documented = Object.entries(document.paths as Operations).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => `${method.toUpperCase()} ${Contract.fastifyPath(path)} ${op.operationId}`))
    const registered = routes.map((r) => `${r.method} ${r.url} ${r.operationId}`)
    expect(registered.toSorted()).toEqual(documented.toSorted())
    // The merchant API, the payer pages, the operator API and the docs are all there.
    expect(documented.some((d) => d.startsWith("POST /api/v1/payments/:paymentID/simulate"))).toBe(true)
    expect(documented.some((d) => d.startsWith("POST /public/payments/:token/simulate"))).toBe(true)
    expect(documented.some((d) => d.startsWith("GET /admin/v1/deliveries/:id"))).toBe(true)
    expect(routes.length).toBeGreaterThan(50)
  })

  it("answers HEAD where it means something (health, payer pages, docs), not on the merchant and operator APIs, where it used a nonce up for no body", async () => {
    const merchant = await t.merchant()
    const nonce = crypto.randomUUID()
    const headers = { "x-api-key": merchant.apiKey, "x-nonce": nonce }
    const head = await t.app.inject({ method: "HEAD", url: "/api/v1/balance", headers })
    expect([head.statusCode, head.headers["content-type"]]).toEqual([404, "application/json; charset=utf-8"])
    // Nothing ran: the nonce is still fresh.
    expect((await t.app.inject({ method: "GET", url: "/api/v1/balance", headers })).statusCode).toBe(200)
    expect((await t.app.inject({ method: "HEAD", url: "/admin/v1/accounts", headers: { authorization: "Bearer x" } })).statusCode).toBe(404)
    expect((await t.app.inject({ method: "HEAD", url: "/health/live" })).statusCode).toBe(200)
    expect((await t.app.inject({ method: "HEAD", url: "/openapi.json" })).statusCode).toBe(200)
    const created = await t.app.inject({ method: "POST", url: "/api/v1/payments", headers: { "x-api-key": merchant.apiKey, "x-nonce": crypto.randomUUID() }, payload: { amount: "10", order_id: "head-1", test: true } })
    const page = new URL(json(created).pay_url as string).pathname
    const headPage = await t.app.inject({ method: "HEAD", url: page })
    expect([headPage.statusCode, headPage.headers["content-type"], headPage.body]).toEqual([200, "text/html; charset=utf-8", ""])
  })

  it("uses $ref components, integer query parameters and examples on every operation", () => {
    const text = JSON.stringify(document)
    const refs = [...text.matchAll(/"\$ref":"#\/components\/schemas\/(\w+)"/g)].map((m) => m[1]!)
    expect(new Set(refs).size).toBeGreaterThan(40)
    for (const name of refs) expect(document.components.schemas[name], name).toBeDefined()
    const list = (document.paths as Operations)["/api/v1/payments"]!["get"]!
    expect(list.parameters.find((p) => p.name === "page")!.schema).toMatchObject({ type: "integer", minimum: 1 })
    expect(list.parameters.find((p) => p.name === "limit")!.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 100 })
    // A terminal_id the use case requires (the spec's plans list) is required in the document too; the payments list's is not.
    const plans = (document.paths as Operations)["/api/v1/subscription-plans"]!["get"]!
    expect(plans.parameters.find((p) => p.name === "terminal_id")!.required).toBe(true)
    expect(list.parameters.find((p) => p.name === "terminal_id")!.required).toBe(false)
    for (const op of OpenApi.operations) {
      // A page or a script shows itself; a JSON answer has an example (the document's own, abridged).
      const hasExample = op.responses.some((r) => r.example !== undefined || (r.contentType !== undefined && r.contentType !== "application/json")) || op.body !== undefined
      expect(hasExample, op.id).toBe(true)
      if (op.body !== undefined) {
        expect(Schema.decodeUnknownExit(op.body.schema as Schema.Codec<unknown>, { onExcessProperty: "error" })(op.body.example)._tag, op.id).toBe("Success")
      }
      for (const reply of op.responses) {
        if (reply.schema === undefined) continue
        expect(Schema.decodeUnknownExit(reply.schema as Schema.Codec<unknown>, { onExcessProperty: "error" })(reply.example)._tag, `${op.id} ${reply.status}`).toBe("Success")
      }
    }
  })

  it("says what every Idempotency-Key accepts (1 to 128 printable ASCII characters without spaces), as the use cases check it", () => {
    const keyed = Object.entries(document.paths as Operations).flatMap(([path, methods]) =>
      Object.entries(methods).flatMap(([method, op]) =>
        ((op as { parameters?: ReadonlyArray<{ name: string; in: string; schema: Record<string, unknown> }> }).parameters ?? [])
          .filter((p) => p.in === "header" && p.name === "Idempotency-Key")
          .map((p) => [`${method.toUpperCase()} ${path}`, p.schema] as const)))
    // The payments', payouts' and subscriptions' creations, the two rotations and the operator's four moves.
    expect(keyed.map(([route]) => route)).toEqual(expect.arrayContaining([
      "POST /api/v1/payouts",
      "POST /api/v1/subscriptions",
      "POST /admin/v1/payments/{id}/refund",
      "POST /admin/v1/payments/{id}/chargeback",
      "POST /admin/v1/payouts/{id}/approve",
      "POST /admin/v1/payouts/{id}/reject",
      "POST /admin/v1/terminals/{id}/signing-secret/rotate"
    ]))
    const pattern = new RegExp(String(keyed[0]![1]["pattern"]))
    for (const [route, schema] of keyed) {
      expect([route, schema]).toEqual([route, { type: "string", minLength: 1, maxLength: 128, pattern: "^[\\x21-\\x7E]+$" }])
    }
    // The pattern means what `Idempotency.validateKey` does.
    for (const key of ["refund-1", "~!x", "a".repeat(128)]) expect(Result.isSuccess(Idempotency.validateKey(key)) && pattern.test(key), key).toBe(true)
    for (const key of ["a b", "ключ", "tab\t", ""]) expect(Result.isSuccess(Idempotency.validateKey(key)) || pattern.test(key), key).toBe(false)
  })

  it("writes no object a generator would read as empty: free-form ones (metadata, an event's payload) allow any property", () => {
    const closedEmpty: Array<string> = []
    const walk = (node: unknown, path: string): void => {
      if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${path}/${i}`))
      if (typeof node !== "object" || node === null) return
      const object = node as Record<string, unknown>
      if (object["type"] === "object" && !("properties" in object) && !("additionalProperties" in object) && !("patternProperties" in object)) closedEmpty.push(path)
      for (const [key, value] of Object.entries(object)) walk(value, `${path}/${key}`)
    }
    walk(document, "")
    expect(closedEmpty).toEqual([])
    const create = JSON.stringify((document.components as { schemas: Record<string, unknown> }).schemas)
    expect(create).toContain('"additionalProperties":true')
  })

  it("describes every callback event with its body and signature headers under webhooks", () => {
    const hooks = document.webhooks as Record<string, { post: { parameters: Array<{ name: string }>; requestBody: unknown } }>
    expect(Object.keys(hooks).toSorted()).toEqual([
      "payment.canceled", "payment.chargeback", "payment.created", "payment.expired", "payment.paid", "payment.refunded", "payout.completed", "ping", "refund_request.completed"
    ])
    for (const hook of Object.values(hooks)) {
      expect(hook.post.parameters.map((p) => p.name)).toEqual([
        "X-Signature", "X-Timestamp", "X-Test-Mode", "X-Event-Id", "X-Event-Sequence", "X-Signature-Next", "X-Test-Clock", "X-Test-Clock-Time",
        "webhook-id", "webhook-timestamp", "webhook-signature"
      ])
    }
    // The documented headers are the ones a callback carries (`Callbacks.headersFor` with every option).
    const sent = Callbacks.headersFor({
      signature: "s", nextSignature: "n", timestamp: 1, test: true, eventId: "evt_x", sequence: 1, webhookSignature: "v1,x", testClockId: "c", testClockTime: 2
    })
    const documented = hooks["ping"]!.post.parameters.map((p) => p.name.toLowerCase())
    expect(Object.keys(sent).filter((h) => h !== "content-type").toSorted()).toEqual(documented.toSorted())
    expect(Schema.decodeUnknownExit(responses.PingEvent as Schema.Codec<unknown>, { onExcessProperty: "error" })(
      (hooks["ping"]!.post.requestBody as { content: { "application/json": { example: unknown } } }).content["application/json"].example
    )._tag).toBe("Success")
    expect(document.info.description).toContain("## Callbacks")
    for (const language of ["```ts", "```python", "```php"]) expect(document.info.description).toContain(language)
  })

  it("the Callbacks guide's Python check returns False for missing or malformed headers (http.server answers 400) and accepts a rotation's pair", () => {
    const blocks = [...document.info.description!.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]!)
    expect(blocks).toHaveLength(1)
    const body = JSON.stringify({ event_type: "ping", terminal_id: "term_1", sent_at: "2026-03-01T00:00:00.000Z", test: false })
    const now = String(Math.floor(Date.now() / 1000))
    const sign = (key: string, timestamp = now, text = body) => createHmac("sha256", key).update(`${timestamp}.${text}`).digest("hex")
    const [secret, previous, next] = ["sk_sign_secret", "sk_sign_previous", "sk_sign_next"]
    const good: Array<[string, string]> = [["X-Timestamp", now], ["X-Signature", sign(secret)], ["X-Event-Id", "evt_1"]]
    const without = (name: string) => good.filter(([header]) => header !== name)
    const withHeader = (name: string, value: string): Array<[string, string]> => [...without(name), [name, value]]
    const rotation: Array<[string, string]> = [["X-Timestamp", now], ["X-Signature", sign(previous)], ["X-Signature-Next", sign(next)]]
    const cases: Array<{ name: string; headers: Array<[string, string]>; secrets: string | Array<string | null>; body?: string; expected: boolean }> = [
      { name: "signed", headers: good, secrets: secret, expected: true },
      { name: "signed, uppercase hex", headers: withHeader("X-Signature", sign(secret).toUpperCase()), secrets: secret, expected: true },
      { name: "no X-Timestamp", headers: without("X-Timestamp"), secrets: secret, expected: false },
      { name: "no X-Signature", headers: without("X-Signature"), secrets: secret, expected: false },
      { name: "no headers", headers: [], secrets: secret, expected: false },
      { name: "X-Timestamp 12abc", headers: withHeader("X-Timestamp", "12abc"), secrets: secret, expected: false },
      { name: "X-Timestamp superscript two", headers: withHeader("X-Timestamp", "\u00b2"), secrets: secret, expected: false },
      { name: "X-Timestamp of 5000 digits", headers: withHeader("X-Timestamp", "1".repeat(5000)), secrets: secret, expected: false },
      { name: "X-Timestamp empty", headers: withHeader("X-Timestamp", ""), secrets: secret, expected: false },
      { name: "X-Signature not ASCII", headers: withHeader("X-Signature", "\u00ff".repeat(64)), secrets: secret, expected: false },
      { name: "X-Signature not hex", headers: withHeader("X-Signature", "zz"), secrets: secret, expected: false },
      { name: "old timestamp", headers: [["X-Timestamp", String(Number(now) - 301)], ["X-Signature", sign(secret, String(Number(now) - 301))]], secrets: secret, expected: false },
      { name: "wrong secret", headers: good, secrets: "another", expected: false },
      { name: "changed body", headers: good, secrets: secret, body: body.replace("term_1", "term_2"), expected: false },
      // A rotation's overlap: X-Signature the previous secret's, X-Signature-Next the new one's.
      { name: "overlap, previous secret", headers: rotation, secrets: previous, expected: true },
      { name: "overlap, new secret", headers: rotation, secrets: next, expected: true },
      { name: "overlap, both secrets", headers: rotation, secrets: [previous, next], expected: true },
      { name: "overlap, another secret", headers: rotation, secrets: ["another", "other"], expected: false },
      // An unset secret (os.environ.get of a missing variable) is left out, not an exception.
      { name: "overlap, the new secret unset", headers: rotation, secrets: [previous, null], expected: true },
      { name: "no secret set", headers: good, secrets: [null, ""], expected: false },
      { name: "overlap, X-Signature-Next malformed", headers: [...rotation.slice(0, 2), ["X-Signature-Next", "12abc"]], secrets: previous, expected: true },
      // After retire-previous: X-Signature alone, the new secret's.
      { name: "retired, both secrets", headers: [["X-Timestamp", now], ["X-Signature", sign(next)]], secrets: [previous, next], expected: true },
      { name: "retired, previous secret only", headers: [["X-Timestamp", now], ["X-Signature", sign(next)]], secrets: previous, expected: false }
    ]
    // Each case with http.server's headers (also in a running http.server whose handler answers
    // 200 or 400 as the check says), a dict of lower-cased names and a dict as sent.
    const driver = `
import http.client, http.server, io, json, sys, threading
data = json.load(sys.stdin)
scope = {}
exec(data["snippet"], scope)
verify = scope["verify"]

class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200 if verify(body, self.headers, self.server.secrets) else 400)
        self.end_headers()
    def log_message(self, *args):
        pass

server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()

def served(body, pairs, secrets):
    server.secrets = secrets
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    try:
        connection.putrequest("POST", "/webhooks")
        for name, value in pairs:
            connection.putheader(name, value.encode("latin-1"))
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        status = connection.getresponse().status
    except Exception as error:
        return "no answer: " + type(error).__name__
    finally:
        connection.close()
    return {200: True, 400: False}.get(status, "status %d" % status)

def called(body, headers, secrets):
    try:
        result = verify(body, headers, secrets)
    except Exception as error:
        return type(error).__name__ + ": " + str(error)[:80]
    return result if type(result) is bool else "not a bool: " + repr(result)

results = []
for case in data["cases"]:
    body, pairs, secrets = case["body"].encode(), case["headers"], case["secrets"]
    message = http.client.parse_headers(io.BytesIO(("".join(n + ": " + v + "\\r\\n" for n, v in pairs) + "\\r\\n").encode("latin-1")))
    results.append({"name": case["name"], "results": [
        called(body, message, secrets),
        served(body, pairs, secrets),
        called(body, {n.lower(): v for n, v in pairs}, secrets),
        called(body, dict(pairs), secrets)
    ]})
print(json.dumps(results))
`
    const input = JSON.stringify({ snippet: blocks[0], cases: cases.map((c) => ({ ...c, body: c.body ?? body })) })
    const result = spawnSync("python3", ["-c", driver], { input, encoding: "utf8", timeout: 60_000 })
    expect(result.status, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual(cases.map((c) => ({ name: c.name, results: [c.expected, c.expected, c.expected, c.expected] })))
  }, 60_000)

  it("checks answers against the declarations (a wrong answer is caught)", () => {
    const good = JSON.stringify({ ok: true })
    const op = OpenApi.operations.find((o) => o.id === "stopSubscription")!
    expect(Contract.violation(op, 200, "application/json", good, responses.Error)).toBeNull()
    expect(Contract.violation(op, 200, "application/json", JSON.stringify({ ok: "yes" }), responses.Error)).toMatch(/stopSubscription 200/)
    expect(Contract.violation(op, 418, "application/json", good, responses.Error)).toMatch(/status 418 is not declared/)
    // A refusal on arrival (400 on every operation) is JSON in the error format, also on a payer page.
    const page = OpenApi.operations.find((o) => o.id === "paymentPage")!
    const refused = JSON.stringify({ error: { code: "invalid_request", message: "the path is not valid percent-encoded UTF-8", request_id: "req_1" } })
    expect(Contract.violation(page, 400, "application/json", refused, responses.Error)).toBeNull()
    expect(Contract.violation(page, 400, "text/html", "<p>bad</p>", responses.Error)).toMatch(/paymentPage: error 400 is not JSON/)
    expect(Contract.violation(page, 404, "text/html", "<p>not found</p>", responses.Error)).toBeNull()
    expect(Contract.violation(page, 400, "application/json", good, responses.Error)).not.toBeNull()
  })

  it("serves the document and a Scalar reference page that loads nothing from elsewhere", async () => {
    const served = await t.app.inject({ method: "GET", url: "/openapi.json" })
    expect(served.statusCode).toBe(200)
    expect(json(served).openapi).toBe("3.1.0")
    // "Try it" sends to the serving server (its public URL), not to the reference server's default address.
    expect(json(served).servers).toEqual([{ url: publicUrl, description: "this server" }])
    const page = await t.app.inject({ method: "GET", url: "/docs" })
    expect(page.statusCode).toBe(200)
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8")
    expect(page.body).toContain("<script src=\"/docs/scalar.js\"></script>")
    expect(page.body).toContain("data-url=\"/openapi.json\"")
    expect(page.body).not.toMatch(/https?:\/\//)
    expect(page.headers["content-security-policy"]).toContain("default-src 'none'")
    const script = await t.app.inject({ method: "GET", url: "/docs/scalar.js" })
    expect(script.statusCode).toBe(200)
    expect(script.headers["content-type"]).toBe("text/javascript; charset=utf-8")
    expect(script.body.length).toBeGreaterThan(1_000_000)
  })

  it("without the optional renderer package, /docs links the document and says what to install; its script is a 404", async () => {
    const app = Fastify()
    try {
      await OpenApi.registerDocs(app, () => null)
      const page = await app.inject({ method: "GET", url: "/docs" })
      expect(page.statusCode).toBe(200)
      expect(page.body).toContain("<a href=\"/openapi.json\">/openapi.json</a>")
      expect(page.body).toContain("npm install @scalar/api-reference")
      expect(page.body).not.toContain("<script")
      const script = await app.inject({ method: "GET", url: "/docs/scalar.js" })
      expect([script.statusCode, json(script).error.code]).toEqual([404, "not_found"])
      const op = OpenApi.operations.find((o) => o.id === "docsScript")!
      expect(Contract.violation(op, 404, "application/json", script.body, responses.Error)).toBeNull()
      expect((await app.inject({ method: "GET", url: "/openapi.json" })).statusCode).toBe(200)
    } finally {
      await app.close()
    }
    // Installed here (a devDependency): found.
    expect(OpenApi.installedRenderer()).toMatch(/standalone\.js$/)
  })
})
