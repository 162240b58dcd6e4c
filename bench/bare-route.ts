/**
 * bench:http's bare route: the reference server's Fastify with one `POST /api/v1/payments` that
 * parses the JSON body (Fastify's own parser) and answers 201 with a canned body (`BARE_ANSWER`, a
 * real creation's answer), with no database, authentication or metrics: what Node and Fastify cost
 * per request on this machine, the floor under the server's own work. Everything the server adds is
 * counted as its own: its strict body parser (UTF-8 and JSON checks), request ids, hooks and headers
 * as well as the use case. Started by bench/http-payments.ts (`node bench/bare-route.ts`, Node's type
 * stripping) with the server's node flags; `PORT`, `HOST`.
 */
import { createRequire } from "node:module"
import { join } from "node:path"

/** What of Fastify this uses (its types are not resolvable from the workspace root). */
interface Reply {
  code(status: number): Reply
  header(name: string, value: string): Reply
  send(body: unknown): Reply
}
interface App {
  get(path: string, handler: () => Promise<unknown>): void
  post(path: string, handler: (request: { readonly body: unknown }, reply: Reply) => Promise<unknown>): void
  listen(options: { readonly port: number; readonly host: string }): Promise<string>
  close(): Promise<void>
}

// The server's own Fastify (the bench's workspace root does not depend on it).
const require = createRequire(join(import.meta.dirname, "..", "packages", "fastify", "package.json"))
const Fastify = require("fastify") as (options: { readonly logger: boolean }) => App

const answer = process.env.BARE_ANSWER ?? "{}"
const app = Fastify({ logger: false })
app.get("/health/ready", async () => ({ status: "ready" }))
app.post("/api/v1/payments", async (request, reply) => {
  // The body as Fastify's JSON parser gives it, then the canned answer.
  if (typeof request.body !== "object" || request.body === null) return reply.code(400).send({ error: "bad body" })
  return reply.code(201).header("content-type", "application/json; charset=utf-8").send(answer)
})
await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? "127.0.0.1" })
process.once("SIGTERM", () => void app.close().then(() => process.exit(0)))
