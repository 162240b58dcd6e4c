/**
 * One merchant's first sandbox payment, run by the host: provision an account and a terminal
 * (callbacks to `callbackUrl`), create a sandbox payment as the terminal's API key, simulate the
 * payer paying, and run the background work that delivers the signed callbacks.
 */
import { Effect } from "effect"
import { Auth, Operator, Payments, Views, Work } from "@paydesk/core"
import type { PaydeskError, Services } from "@paydesk/core"

/** What the scenario ends with. */
export interface FirstPayment {
  readonly terminalId: string
  readonly signingSecret: string
  readonly payment: ReturnType<typeof Views.payment>
  readonly report: Work.Report
}

/** Runs the scenario. */
export const firstPayment = (callbackUrl: string): Effect.Effect<FirstPayment, PaydeskError, Services> =>
  Effect.gen(function*() {
    const account = yield* Operator.createAccount({ name: "Coffee", ownerEmail: `owner-${crypto.randomUUID()}@coffee.example`, ownerPassword: "correct horse battery" })
    const { terminal, apiKey, signingSecret } = yield* Operator.createTerminal({ accountId: account.accountId, name: "Shop", callbackUrl })
    // What the HTTP adapter does for `X-API-Key` + `X-Nonce`.
    const merchant = yield* Auth.apiKey(apiKey, crypto.randomUUID())
    const { payment } = yield* Payments.create(merchant, { amount: "1000,50", orderId: "ord-1", test: true })
    yield* Payments.simulateAsMerchant(merchant, payment.id, "paid")
    const report = yield* Work.drain()
    return { terminalId: terminal.id, signingSecret, payment: Views.payment(yield* Payments.get(merchant, payment.id), "http://pay.example"), report }
  })
