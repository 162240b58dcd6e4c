/**
 * `paydesk`: the operator CLI. It calls the operator API of a running server
 * (`PAYDESK_URL`, default http://127.0.0.1:8080, with `PAYDESK_ADMIN_TOKEN`) and prints JSON.
 *
 *   paydesk accounts create --name "Coffee" --email owner@coffee.example --password "..."
 *   paydesk terminals create --account <id> --name "Shop" [--h2h] [--callback-url https://...]
 *   paydesk api-keys create --terminal <id> [--read-only]
 *   paydesk plans create --terminals <id,id> --code basic --name Basic --interval month --schedule calendar
 *                        (--cap 4000 | --payer-amount 990 --merchant-amount 950) [--max-cycles 12]
 *                        --consent-text "..." --policy-version 2026-01
 *   paydesk acquirer settle <payment_id> paid|failed
 *   paydesk acquirer charges <subscription_id> paid failed unknown ...
 *   paydesk payouts approve|reject <payout_id> [--reason "..."]
 *   paydesk payments refund|chargeback <payment_id>
 *   paydesk subscriptions resume|stop <subscription_id>
 *   paydesk rate set <rate>        paydesk clock set <ISO time>        paydesk work run
 *   paydesk deliveries list [--terminal <id>] [--payment <id>]   paydesk deliveries show <id>
 */
import { type Call, toCall } from "./CliCommands.js"

const usage = () => {
  process.stderr.write("usage: paydesk <group> <action> [args] (see the list at the top of packages/server/src/cli.ts)\n")
  process.exit(2)
}

const main = async () => {
  let call: Call
  try {
    call = toCall(process.argv.slice(2))
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`)
    return usage()
  }
  const base = (process.env.PAYDESK_URL ?? "http://127.0.0.1:8080").replace(/\/+$/, "")
  const token = process.env.PAYDESK_ADMIN_TOKEN
  if (!token) {
    process.stderr.write("PAYDESK_ADMIN_TOKEN is required (the server prints one at start when it generates it)\n")
    process.exit(2)
  }
  const response = await fetch(`${base}/admin/v1${call.path}`, {
    method: call.method,
    headers: { authorization: `Bearer ${token}`, ...(call.body ? { "content-type": "application/json" } : {}) },
    ...(call.body ? { body: JSON.stringify(call.body) } : {})
  })
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {}
  process.stdout.write(`${JSON.stringify(body, null, 2)}\n`)
  if (!response.ok) process.exit(1)
}

main().catch((error) => {
  process.stderr.write(`${String(error)}\n`)
  process.exit(1)
})
