/**
 * A tour of the Paydesk core on PostgreSQL: provision a merchant, take a sandbox payment
 * through the payer page's simulation, deliver its signed callbacks, and run a subscription
 * through consent, first payment and a scheduled charge. The store is `DATABASE_URL`, else an
 * embedded PostgreSQL keeping its data in `PAYDESK_DATA_DIR` (default `.data/demo`); the acquirer
 * and payout network are the emulators of `@paydesk/emulators` (through the testkit's Kit), the callback
 * receiver the testkit's recording transport. `DEMO_STORE=memory` runs it all in memory. Run with `./run pnpm --filter @paydesk/examples run demo`.
 */
import { Clock, Effect, Option } from "effect"
import { Payments, Signature, Subscriptions, Views, Work } from "@paydesk/core"
import { EmbeddedPostgres, PgStore } from "@paydesk/sql-pg"
import { ManualClock } from "@paydesk/emulators"
import { Kit, RecordingCallbackTransport } from "@paydesk/testkit"
import { resolve } from "node:path"

const publicUrl = "http://127.0.0.1:8080"
const log = (title: string, value: unknown) =>
  Effect.sync(() => console.log(`\n== ${title}\n${JSON.stringify(value, (_, v) => typeof v === "bigint" ? v.toString() : v, 2)}`))

const program = (clock: ManualClock.ManualClock) => Effect.gen(function*() {
  const merchant = yield* Kit.provisionMerchant({ name: "Coffee Roasters", callbackUrl: "https://coffee.example/paydesk" })
  yield* log("Provisioned terminal", { terminal_id: merchant.terminal.id, api_key: merchant.apiKey, signing_secret: merchant.signingSecret })
  const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())

  const { payment } = yield* Payments.create(principal, { amount: "1000,50", orderId: "ord-1001", test: true })
  yield* log("POST /api/v1/payments (sandbox)", Views.payment(payment, publicUrl))
  const paid = yield* Payments.simulate(payment.payToken, { outcome: "paid", csrfToken: payment.csrfToken })
  yield* log("Payer page: simulate paid", { status: paid.status })

  yield* Work.drain()
  const transport = yield* RecordingCallbackTransport.RecordingCallbackTransport
  for (const request of transport.requests) {
    const check = yield* Signature.verify({
      secret: merchant.signingSecret,
      timestamp: request.headers["x-timestamp"],
      body: request.body,
      signature: request.headers["x-signature"]
    })
    yield* log(`Callback to ${request.url} (signature ${check.ok ? "valid" : "INVALID"})`, { headers: request.headers, body: JSON.parse(request.body) })
  }

  const plans = yield* Kit.provisionPlans(merchant.terminal.id)
  const { subscription } = yield* Subscriptions.create(principal, {
    idempotencyKey: crypto.randomUUID(),
    terminalId: merchant.terminal.id, planId: plans.ceilingMonthly.id, amount: "1500"
  })
  yield* log("POST /api/v1/subscriptions", Views.subscription(subscription, { publicUrl, withPayUrl: true }))
  const { firstPayment } = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
  yield* Payments.settle(Option.getOrThrow(firstPayment).id, "paid")
  yield* clock.set(Date.parse("2026-02-28T07:00:00.000Z"))
  yield* Work.drain()
  const after = yield* Subscriptions.get(principal, subscription.id)
  yield* log("After the first payment and the 28 February charge", Views.subscription(after, { publicUrl, withPayUrl: false }))
  const charges = yield* Subscriptions.charges(principal, subscription.id)
  yield* log("GET /api/v1/subscriptions/{id}/charges", charges.map(Views.charge))
}).pipe(Effect.provideService(Clock.Clock, clock.clock))

/** The tour on a manual clock starting on 31 January 2026 (sleeps stay real). */
const tour = Effect.flatMap(ManualClock.make(Date.parse("2026-01-31T07:00:00.000Z")), program)

const main = async () => {
  if (process.env.DEMO_STORE === "memory") {
    await Effect.runPromise(tour.pipe(Effect.provide(Kit.layer)))
    return
  }
  let url = process.env.DATABASE_URL
  let stop = async () => {}
  if (url === undefined) {
    const dataDir = resolve(process.env.PAYDESK_DATA_DIR ?? resolve(import.meta.dirname, "../../.data/demo"), "postgres")
    console.log(`Starting embedded PostgreSQL in ${dataDir}`)
    const running = await EmbeddedPostgres.start({ dataDir })
    url = running.url
    stop = () => running.stop()
  }
  try {
    await Effect.runPromise(tour.pipe(Effect.provide(Kit.layerAround(PgStore.layer(url)))))
  } finally {
    await stop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
