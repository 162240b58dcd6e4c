/**
 * The commands of the `paydesk` CLI as operator API calls (see cli.ts for the list).
 */
import { parseArgs } from "node:util"

export interface Call {
  readonly method: "GET" | "POST" | "PUT"
  readonly path: string
  readonly body?: Record<string, unknown>
}

/** Turns argv into an operator API call. */
export const toCall = (argv: ReadonlyArray<string>): Call => {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      name: { type: "string" }, email: { type: "string" }, password: { type: "string" },
      account: { type: "string" }, h2h: { type: "boolean" }, "callback-url": { type: "string" },
      terminal: { type: "string" }, terminals: { type: "string" }, "read-only": { type: "boolean" },
      code: { type: "string" }, interval: { type: "string" }, schedule: { type: "string" },
      cap: { type: "string" }, "payer-amount": { type: "string" }, "merchant-amount": { type: "string" },
      "max-cycles": { type: "string" }, "consent-text": { type: "string" }, "policy-version": { type: "string" },
      reason: { type: "string" }, payment: { type: "string" }, status: { type: "string" }
    }
  })
  const [group, action, id, ...rest] = positionals
  const v = values as Record<string, string | boolean | undefined>
  const required = (name: string): string => {
    const value = v[name]
    if (typeof value !== "string" || value === "") throw new Error(`--${name} is required`)
    return value
  }
  const need = (value: string | undefined, what: string): string => {
    if (value === undefined) throw new Error(`${what} is required`)
    return encodeURIComponent(value)
  }
  switch (`${group} ${action}`) {
    case "accounts create":
      return { method: "POST", path: "/accounts", body: { name: required("name"), owner_email: required("email"), owner_password: required("password") } }
    case "terminals create":
      return {
        method: "POST",
        path: "/terminals",
        body: { account_id: required("account"), name: required("name"), h2h: v.h2h === true, ...(v["callback-url"] ? { callback_url: v["callback-url"] } : {}) }
      }
    case "api-keys create":
      return { method: "POST", path: `/terminals/${encodeURIComponent(required("terminal"))}/api-keys`, body: { subscription_write: v["read-only"] !== true } }
    case "plans create":
      return {
        method: "POST",
        path: "/plans",
        body: {
          terminal_ids: required("terminals").split(","),
          code: required("code"),
          name: required("name"),
          interval: required("interval"),
          schedule: required("schedule"),
          ...(v.cap ? { cap_amount_rub: v.cap } : { payer_amount_rub: required("payer-amount"), merchant_amount_rub: required("merchant-amount") }),
          ...(v["max-cycles"] ? { max_cycles: Number(v["max-cycles"]) } : {}),
          consent_text: required("consent-text"),
          policy_version: required("policy-version")
        }
      }
    case "acquirer settle":
      return { method: "POST", path: `/acquirer/payments/${need(id, "payment id")}/outcome`, body: { outcome: rest[0] ?? "paid" } }
    case "acquirer charges":
      return { method: "POST", path: `/acquirer/subscriptions/${need(id, "subscription id")}/charge-outcomes`, body: { outcomes: rest } }
    case "payouts approve":
      return { method: "POST", path: `/payouts/${need(id, "payout id")}/approve`, body: {} }
    case "payouts reject":
      return { method: "POST", path: `/payouts/${need(id, "payout id")}/reject`, body: v.reason ? { reason: v.reason } : {} }
    case "payments refund":
    case "payments chargeback":
      return { method: "POST", path: `/payments/${need(id, "payment id")}/${action}`, body: {} }
    case "subscriptions resume":
    case "subscriptions stop":
      return { method: "POST", path: `/subscriptions/${need(id, "subscription id")}/${action}`, body: {} }
    case "rate set":
      return { method: "PUT", path: "/rate", body: { rate: need(id, "rate") } }
    case "clock set":
      return { method: "POST", path: "/clock", body: { now: id } }
    case "work run":
      return { method: "POST", path: "/work/run", body: {} }
    case "deliveries list": {
      const query = new URLSearchParams()
      if (typeof v.terminal === "string") query.set("terminal_id", v.terminal)
      if (typeof v.payment === "string") query.set("payment_id", v.payment)
      if (typeof v.status === "string") query.set("status", v.status)
      return { method: "GET", path: `/deliveries${query.size > 0 ? `?${query}` : ""}` }
    }
    case "deliveries show":
      return { method: "GET", path: `/deliveries/${need(id, "delivery id")}` }
    default:
      throw new Error(`unknown command: ${positionals.join(" ") || "(none)"}`)
  }
}
