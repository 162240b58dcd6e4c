import { assert, describe, it } from "@effect/vitest"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, Layer, Logger, ManagedRuntime, Option } from "effect"
import { OutboxRepository, Payments, type Wakeup, Wakeups } from "@paydesk/core"
import { Kit } from "@paydesk/testkit"
import * as InngestClient from "../src/InngestClient.js"
import * as InngestFunctions from "../src/InngestFunctions.js"
import * as InngestWakeups from "../src/InngestWakeups.js"

/** A sent event as the Inngest event API receives it. */
interface Received {
  readonly name: string
  readonly id: string
  readonly data: Record<string, unknown>
}

/**
 * A local stand-in for Inngest's event API (`POST /e/<event key>`): records each request's path
 * and events and answers as Inngest does, or with `status` when set, or never when `hang`.
 */
const fakeEventApi = async () => {
  const requests: Array<{ url: string; events: ReadonlyArray<Received> }> = []
  const state = { status: 200, hang: false }
  const server = createServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => (body += chunk))
    req.on("end", () => {
      const events = JSON.parse(body) as ReadonlyArray<Received>
      requests.push({ url: req.url ?? "", events })
      if (state.hang) return
      res.writeHead(state.status, { "content-type": "application/json" })
      res.end(JSON.stringify(state.status === 200
        ? { ids: events.map((e) => e.id), status: 200 }
        : { error: "unavailable", status: state.status }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}

/** Runs `effect` with the Inngest `Wakeups` on a client pointed at `url`, collecting warnings. */
const withWakeups = <A, E>(url: string, effect: Effect.Effect<A, E, Wakeups>, options: InngestWakeups.Options = { background: false }) => {
  const warnings: Array<string> = []
  const logger = Logger.make<unknown, void>(({ logLevel, message }) => {
    if (logLevel === "Warn") warnings.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
  })
  const client = InngestClient.makeClient({ isDev: true, baseUrl: url })
  return Effect.runPromise(effect.pipe(
    Effect.provide(Layer.merge(InngestWakeups.layer(client, options), Logger.layer([logger])))
  )).then((value) => ({ value, warnings }))
}

const notify = (items: ReadonlyArray<Wakeup>) => Effect.flatMap(Wakeups, (w) => w.notify(items))

const at = Date.parse("2026-06-01T12:00:00.000Z")

describe("InngestWakeups", () => {
  it("sends one event per wakeup, named after its flow, with its due moment and a deterministic id", async () => {
    const api = await fakeEventApi()
    try {
      await withWakeups(api.url, notify([
        { kind: "charge", subscriptionId: "sub-1", at },
        { kind: "delivery", deliveryId: "del-1", at: at + 30_000 },
        { kind: "expiry", paymentId: "pay-1", at: at + 1_800_000 },
        { kind: "payout", payoutId: "po-1", at }
      ]))
      assert.strictEqual(api.requests.length, 1, "one send per notify")
      assert.match(api.requests[0]!.url, /^\/e\//)
      assert.deepStrictEqual(api.requests[0]!.events.map(({ name, id, data }) => ({ name, id, data })), [
        {
          name: "paydesk/subscription.charge_scheduled",
          id: `charge:sub-1:${at}`,
          data: { subscription_id: "sub-1", next_charge_at: "2026-06-01T12:00:00.000Z" }
        },
        {
          name: "paydesk/callback.scheduled",
          id: `delivery:del-1:${at + 30_000}`,
          data: { delivery_id: "del-1", next_attempt_at: "2026-06-01T12:00:30.000Z" }
        },
        {
          name: "paydesk/payment.created",
          id: `expiry:pay-1:${at + 1_800_000}`,
          data: { payment_id: "pay-1", expires_at: "2026-06-01T12:30:00.000Z" }
        },
        { name: "paydesk/payout.due", id: `payout:po-1:${at}`, data: { payout_id: "po-1" } }
      ])
      // The events are the ones the flows are triggered by.
      const names = api.requests[0]!.events.map((e) => e.name)
      assert.deepStrictEqual(names, [
        InngestFunctions.Events.chargeScheduled.name,
        InngestFunctions.Events.callbackScheduled.name,
        InngestFunctions.Events.paymentCreated.name,
        InngestFunctions.Events.payoutDue.name
      ])

      // The same moment again gets the same id (Inngest keeps one); a new moment a new one.
      await withWakeups(api.url, notify([
        { kind: "charge", subscriptionId: "sub-1", at },
        { kind: "charge", subscriptionId: "sub-1", at: at + 86_400_000 }
      ]))
      assert.deepStrictEqual(api.requests[1]!.events.map((e) => e.id), [`charge:sub-1:${at}`, `charge:sub-1:${at + 86_400_000}`])

      // Nothing to say: no request.
      await withWakeups(api.url, notify([]))
      assert.strictEqual(api.requests.length, 2)
    } finally {
      await api.close()
    }
  })

  it("an event API that fails is retried with the same ids, then the events are dropped with a warning", async () => {
    const api = await fakeEventApi()
    api.state.status = 500
    try {
      const { warnings } = await withWakeups(api.url, notify([{ kind: "expiry", paymentId: "pay-1", at }]))
      assert.isAtLeast(api.requests.length, 2)
      assert.isTrue(api.requests.every((r) => r.events.length === 1 && r.events[0]!.id === `expiry:pay-1:${at}`))
      assert.strictEqual(warnings.length, 1)
      assert.include(warnings[0]!, `expiry:pay-1:${at}`)
    } finally {
      await api.close()
    }
  })

  it("an event API that never answers is given up after the timeout", async () => {
    const api = await fakeEventApi()
    api.state.hang = true
    try {
      const started = Date.now()
      const { warnings } = await withWakeups(api.url, notify([{ kind: "charge", subscriptionId: "s", at }]), { timeout: "200 millis", background: false })
      assert.isBelow(Date.now() - started, 5_000)
      assert.strictEqual(api.requests.length, 1)
      assert.strictEqual(warnings.length, 1)
    } finally {
      await api.close()
    }
  })

  it("in the background (the default), notify returns at once while the send goes on", async () => {
    const api = await fakeEventApi()
    api.state.hang = true
    try {
      const started = Date.now()
      await withWakeups(api.url, notify([{ kind: "delivery", deliveryId: "d-1", at }]), {})
      assert.isBelow(Date.now() - started, 1_000)
      for (let i = 0; i < 50 && api.requests.length === 0; i++) await new Promise((ok) => setTimeout(ok, 20))
      assert.deepStrictEqual(api.requests.map((r) => r.events.map((e) => e.id)), [[`delivery:d-1:${at}`]])
    } finally {
      await api.close()
    }
  })

  it("at most maxInFlight sends are outstanding; more hints are dropped with a warning, not queued", async () => {
    const api = await fakeEventApi()
    api.state.hang = true
    try {
      const { warnings } = await withWakeups(api.url, Effect.gen(function*() {
        for (let i = 0; i < 5; i++) yield* notify([{ kind: "delivery", deliveryId: `d-${i}`, at }])
      }), { background: true, maxInFlight: 2 })
      for (let i = 0; i < 50 && api.requests.length < 2; i++) await new Promise((ok) => setTimeout(ok, 20))
      assert.deepStrictEqual(api.requests.map((r) => r.events[0]!.id), [`delivery:d-0:${at}`, `delivery:d-1:${at}`])
      assert.strictEqual(warnings.filter((w) => w.includes("dropped")).length, 3)
    } finally {
      await api.close()
    }
  })

  it("on the kit, creating a payment sends paydesk/payment.created and paydesk/callback.scheduled after the commit", async () => {
    const api = await fakeEventApi()
    const client = InngestClient.makeClient({ isDev: true, baseUrl: api.url })
    const runtime = ManagedRuntime.make(InngestWakeups.layer(client, { background: false }).pipe(Layer.provideMerge(Kit.layer)))
    try {
      const { payment, delivery } = await runtime.runPromise(Effect.gen(function*() {
        const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/cb" })
        const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
        const { payment } = yield* Payments.create(principal, { amount: "10", orderId: "o-1", test: true })
        const [delivery] = yield* (yield* OutboxRepository).listDeliveries({ paymentId: payment.id, limit: 10 })
        return { payment, delivery: Option.getOrThrow(Option.fromNullishOr(delivery)) }
      }))
      assert.strictEqual(api.requests.length, 1)
      assert.deepStrictEqual(api.requests[0]!.events.map(({ name, id, data }) => ({ name, id, data })), [
        {
          name: "paydesk/payment.created",
          id: `expiry:${payment.id}:${payment.expiresAt}`,
          data: { payment_id: payment.id, expires_at: new Date(payment.expiresAt!).toISOString() }
        },
        {
          name: "paydesk/callback.scheduled",
          id: `delivery:${delivery.id}:${delivery.createdAt}`,
          data: { delivery_id: delivery.id, next_attempt_at: new Date(delivery.createdAt).toISOString() }
        }
      ])
    } finally {
      await runtime.dispose()
      await api.close()
    }
  })
})
