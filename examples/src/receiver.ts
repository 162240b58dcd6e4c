/**
 * A merchant's callback receiver for local development: listens on 127.0.0.1 (`PORT`, default 4000),
 * verifies each callback's `X-Signature` over `X-Timestamp` and the raw body with the terminal's
 * signing secret (`PAYDESK_SIGNING_SECRET`), prints one line per callback, and answers 200 (401 when
 * the signature does not verify, so Paydesk retries and the delivery log shows it).
 *
 *   PAYDESK_SIGNING_SECRET=sk_sign_... ./run pnpm --silent --filter @paydesk/examples run receiver
 *
 * The reference server sends callbacks to loopback only with `PAYDESK_CALLBACK_ALLOW_PRIVATE=1`.
 */
import { Effect } from "effect"
import { Signature } from "@paydesk/core"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

/** A callback as the receiver saw it. */
export interface Seen {
  readonly verified: boolean
  readonly line: string
}

/** Starts the receiver; `onCallback` gets each callback's verdict and its printed line. */
export const start = async (options: { readonly secret: string; readonly port?: number; readonly onCallback?: (seen: Seen) => void }) => {
  const server: Server = createServer((request, response) => {
    // Callbacks are POSTs; anything else (a browser, a readiness poll) just learns the receiver is up.
    if (request.method !== "POST") return void response.writeHead(200, { "content-type": "text/plain" }).end("receiver ok\n")
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", async () => {
      const body = Buffer.concat(chunks).toString("utf8")
      const header = (name: string) => {
        const value = request.headers[name]
        return Array.isArray(value) ? value[0] : value
      }
      const verdict = await Effect.runPromise(Signature.verify({
        secret: options.secret,
        timestamp: header("x-timestamp"),
        body,
        signature: header("x-signature")
      }))
      let summary = body.slice(0, 200)
      try {
        const event = JSON.parse(body) as { event_type?: string; payment_id?: string; payout_id?: string; status?: string }
        // A ping (the terminal's test event) names no object and has no status.
        summary = [event.event_type, event.payment_id ?? event.payout_id, event.status === undefined ? undefined : `status=${event.status}`]
          .filter((part) => part !== undefined).join(" ")
      } catch {}
      const line = verdict.ok ? `verified ${summary}` : `REJECTED (${verdict.reason}) ${summary}`
      options.onCallback?.({ verified: verdict.ok, line })
      response.writeHead(verdict.ok ? 200 : 401, { "content-type": "text/plain" }).end(verdict.ok ? "ok" : "bad signature")
    })
  })
  await new Promise<void>((ok) => server.listen(options.port ?? 4000, "127.0.0.1", ok))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callbacks`,
    close: () => new Promise<void>((ok) => server.close(() => ok()))
  }
}

if (import.meta.filename === process.argv[1]) {
  const secret = process.env.PAYDESK_SIGNING_SECRET
  if (secret === undefined || secret === "") {
    console.error("PAYDESK_SIGNING_SECRET is required: the terminal's signing_secret (paydesk terminals create prints it)")
    process.exit(2)
  }
  const receiver = await start({ secret, port: Number(process.env.PORT ?? 4000), onCallback: (seen) => console.log(seen.line) })
  console.log(`receiver listening on ${receiver.url}`)
}
