/**
 * Runs the shop: `PAYDESK_API_KEY`, `PAYDESK_SIGNING_SECRET`, `PAYDESK_URL` (default the reference
 * server on 127.0.0.1:8080), `PORT` (default 3000). Sandbox unless `PAYDESK_LIVE=1`.
 *
 *   ./run pnpm --filter @paydesk/examples run shop
 */
import { Paydesk } from "@paydesk/client"
import { buildShop } from "./Shop.js"

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`${name} is required`)
  return value
}

const { app } = await buildShop({
  paydesk: new Paydesk({ apiKey: env("PAYDESK_API_KEY"), baseUrl: process.env.PAYDESK_URL ?? "http://127.0.0.1:8080", sandbox: process.env.PAYDESK_LIVE !== "1" }),
  signingSecret: env("PAYDESK_SIGNING_SECRET"),
  logger: true
})
await app.listen({ port: Number(process.env.PORT ?? 3000), host: "127.0.0.1" })
