import { assert, describe, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { Clock, Effect, ManagedRuntime, Option } from "effect"
import { Payments, SubscriptionRepository, Subscriptions } from "@paydesk/core"
import { App } from "@paydesk/fastify"
import { AcquirerEmulator, Kit } from "@paydesk/testkit"
import * as InngestClient from "../src/InngestClient.js"
import * as InngestFunctions from "../src/InngestFunctions.js"
import * as InngestPlugin from "../src/InngestPlugin.js"

const hashId = (id: string) => createHash("sha1").update(id).digest("hex")

/** The Paydesk app on a fresh kit with the Inngest route mounted. */
const make = async (client: InngestClient.Client) => {
  const runtime = ManagedRuntime.make(Kit.layer)
  const app = await App.build({ runtime, publicUrl: "http://pay.test" })
  const functions = InngestFunctions.makeFunctions(client, runtime)
  InngestPlugin.register(app, { client, functions: functions.all })
  return {
    app,
    functions,
    run: <A, E>(effect: Effect.Effect<A, E, Kit.Services>) => runtime.runPromise(effect),
    close: async () => {
      await app.close()
      await runtime.dispose()
    }
  }
}

/** A local stand-in for the Inngest server that records what the SDK sends it. */
const fakeInngest = async () => {
  const requests: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }> = []
  const server = createServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => (body += chunk))
    req.on("end", () => {
      requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body })
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ ok: true, modified: true }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** The body Inngest POSTs to run a function: its events, the memoized steps and the run context. */
const callBody = (event: { name: string; data: Record<string, unknown> }, steps: Record<string, unknown> = {}) => {
  const received = { ...event, id: crypto.randomUUID(), ts: Date.now() }
  return {
    event: received,
    events: [received],
    steps,
    ctx: { run_id: `run-${crypto.randomUUID()}`, attempt: 0, disable_immediate_execution: false, use_api: false, stack: { stack: Object.keys(steps), current: Object.keys(steps).length } },
    version: 2
  }
}

const cronEvent = { name: "inngest/scheduled.timer", data: { cron: InngestFunctions.sweepCron } }

describe("InngestPlugin", () => {
  it("GET /api/inngest in dev mode answers the introspection", async () => {
    const { app, functions, close } = await make(InngestClient.makeClient({ isDev: true }))
    try {
      const response = await app.inject({ method: "GET", url: "/api/inngest" })
      assert.strictEqual(response.statusCode, 200)
      assert.match(String(response.headers["content-type"]), /^application\/json/)
      assert.strictEqual(response.headers["x-inngest-framework"], "fastify")
      const body = response.json()
      assert.strictEqual(body.mode, "dev")
      assert.strictEqual(body.function_count, functions.all.length)
      assert.strictEqual(body.has_signing_key, false)
    } finally {
      await close()
    }
  })

  it("PUT /api/inngest registers every function with their triggers", async () => {
    const inngest = await fakeInngest()
    const { app, close } = await make(InngestClient.makeClient({ isDev: true, baseUrl: inngest.url }))
    try {
      const response = await app.inject({ method: "PUT", url: "/api/inngest", headers: { host: "paydesk.test" } })
      assert.strictEqual(response.statusCode, 200)
      assert.strictEqual(response.json().message, "Successfully registered")
      assert.deepStrictEqual(inngest.requests.map((r) => [r.method, r.url]), [["POST", "/fn/register"]])
      const registration = JSON.parse(inngest.requests[0]!.body)
      assert.strictEqual(registration.appName, "paydesk")
      assert.strictEqual(registration.url, "http://paydesk.test/api/inngest")
      const triggers = Object.fromEntries(
        (registration.functions as Array<{ id: string; triggers: unknown }>).map((f) => [f.id, f.triggers])
      )
      const cron = [{ cron: "* * * * *" }]
      assert.deepStrictEqual(triggers, {
        "paydesk-sweep-expire-payments": cron,
        "paydesk-sweep-due-charges": cron,
        "paydesk-sweep-pending-stops": cron,
        "paydesk-sweep-stopped-charges": cron,
        "paydesk-sweep-conversions": cron,
        "paydesk-sweep-payouts": cron,
        "paydesk-sweep-callbacks": cron,
        "paydesk-sweep-housekeeping": cron,
        "paydesk-sweep-test-clocks": cron,
        "paydesk-charge-when-due": [{ event: "paydesk/subscription.charge_scheduled" }],
        "paydesk-deliver-when-due": [{ event: "paydesk/callback.scheduled" }],
        "paydesk-expire-when-due": [{ event: "paydesk/payment.created" }],
        "paydesk-payout-when-due": [{ event: "paydesk/payout.due" }]
      })
    } finally {
      await close()
      await inngest.close()
    }
  })

  it("POST /api/inngest runs a sweep's step on the app's runtime, also past the app's body limit", async () => {
    const { app, run, close } = await make(InngestClient.makeClient({ isDev: true }))
    try {
      const subscriptionId = await run(Effect.gen(function*() {
        const merchant = yield* Kit.provisionMerchant()
        const plans = yield* Kit.provisionPlans(merchant.terminal.id)
        const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
        const { subscription } = yield* Subscriptions.create(principal, {
          idempotencyKey: "k",
          terminalId: merchant.terminal.id, planId: plans.fixedMonthly.id, payerId: "p-1"
        })
        const confirmed = yield* Subscriptions.confirm(subscription.payToken, subscription.csrfToken)
        yield* Payments.settle(Option.getOrThrow(confirmed.firstPayment).id, "paid")
        const repo = yield* SubscriptionRepository
        const active = Option.getOrThrow(yield* repo.get(subscription.id))
        yield* repo.update({ ...active, nextChargeAt: (yield* Clock.currentTimeMillis) - 1_000, version: active.version + 1 })
        return subscription.id
      }))
      // 100 KiB of event data: over the app's 64 KiB JSON limit, under the Inngest route's.
      const body = callBody({ ...cronEvent, data: { ...cronEvent.data, padding: "x".repeat(100 * 1024) } })
      const response = await app.inject({
        method: "POST",
        url: "/api/inngest?fnId=paydesk-sweep-due-charges&stepId=step",
        payload: body
      })
      assert.strictEqual(response.statusCode, 206)
      const [op] = response.json()
      assert.strictEqual(op.op, "StepRun")
      assert.strictEqual(op.id, hashId("run-due-charges"))
      assert.strictEqual(op.data, 1)
      assert.strictEqual((await run(AcquirerEmulator.AcquirerEmulator)).charges.length, 1)
      const sub = await run(Effect.flatMap(SubscriptionRepository, (r) => r.get(subscriptionId)).pipe(Effect.map(Option.getOrThrow)))
      assert.strictEqual(sub.successfulCycles, 2)
    } finally {
      await close()
    }
  })

  it("a non-retryable failure reaches Inngest as a failed step with no retry; an invalid event is refused", async () => {
    const { app, close } = await make(InngestClient.makeClient({ isDev: true }))
    try {
      const event = {
        name: "paydesk/subscription.charge_scheduled",
        data: { subscription_id: crypto.randomUUID(), next_charge_at: new Date().toISOString() }
      }
      // The sleep is over: Inngest sends it back as a memoized step.
      const response = await app.inject({
        method: "POST",
        url: "/api/inngest?fnId=paydesk-charge-when-due&stepId=step",
        payload: callBody(event, { [hashId("wait-for-charge")]: { type: "data", data: null } })
      })
      assert.strictEqual(response.statusCode, 206)
      assert.strictEqual(response.headers["x-inngest-no-retry"], "true")
      const [op] = response.json()
      assert.strictEqual(op.op, "StepFailed")
      assert.strictEqual(op.id, hashId("charge"))
      assert.strictEqual(op.error.name, "NonRetriableError")
      assert.strictEqual(op.error.message, "NotFound: subscription not found")

      // An event whose data does not match the schema is refused before any step runs.
      const invalid = await app.inject({
        method: "POST",
        url: "/api/inngest?fnId=paydesk-charge-when-due&stepId=step",
        payload: callBody({ ...event, data: { subscription_id: "s", next_charge_at: "tomorrow" } })
      })
      assert.strictEqual(invalid.statusCode, 400)
      assert.strictEqual(invalid.headers["x-inngest-no-retry"], "true")
    } finally {
      await close()
    }
  })

  it("in cloud mode, unsigned requests are refused", async () => {
    const client = InngestClient.makeClient({ isDev: false, signingKey: "signkey-test-8d2cb1f9a7e54c3b9f0e6a1d2c3b4a59" })
    const { app, run, close } = await make(client)
    try {
      const get = await app.inject({ method: "GET", url: "/api/inngest" })
      assert.strictEqual(get.statusCode, 401)
      const post = await app.inject({
        method: "POST",
        url: "/api/inngest?fnId=paydesk-sweep-due-charges&stepId=step",
        payload: callBody(cronEvent)
      })
      assert.strictEqual(post.statusCode, 401)
      assert.strictEqual((await run(AcquirerEmulator.AcquirerEmulator)).chargeCalls, 0)
    } finally {
      await close()
    }
  })
})
