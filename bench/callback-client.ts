/**
 * Benchmark of the callback client alone: `HttpCallbackTransport.send` (the server's transport: a
 * signed callback's headers and body, POSTed over its keep-alive pool) against undici's `request()`
 * on a pool of its own sending the same request and reading the answer's body to its end (the
 * baseline, in the same process). `CONCURRENCY` sends at once (a pass's 32 by default), `SENDS` per
 * round, rounds alternating between the two (`ROUNDS` each, after one unmeasured round of each); the
 * receiver runs in its own process. Prints each round's sends per second and this process's CPU per
 * send, and the ratio of the medians of CPU per send (below 1.0: the transport costs less than a
 * plain `request()`).
 *
 *   ./run pnpm bench:client
 *   SENDS=20000 ROUNDS=5 ./run pnpm bench:client
 *   PROFILE=1 PROFILE_INTERVAL_US=100 ./run pnpm bench:client   # then one more round of the transport, profiled, to bench/profiles/client-transport.cpuprofile
 *
 * The profile of the transport in a tight loop compares with `bench:work`'s of the engine's callback
 * drain (`PROFILE=1`), per send, through `bench/profile-summary.ts`.
 */
import { HttpCallbackTransport } from "@paydesk/server"
import { Agent } from "undici"
import * as LoopbackReceiver from "./LoopbackReceiver.js"
import { profiledPromise } from "./Measure.js"

const sends = Number(process.env.SENDS ?? 10000)
const rounds = Number(process.env.ROUNDS ?? 3)
const concurrency = Number(process.env.CONCURRENCY ?? 32)

// A payment.created body and the headers a callback carries (as signed by Callbacks.signCallback).
const body = JSON.stringify({
  id: `evt_${"0".repeat(32)}`,
  type: "payment.created",
  data: { id: crypto.randomUUID(), amount: "10.00", currency: "UAH", status: "created", order_id: "order-000001", test: true, metadata: {} }
})
const headers: Record<string, string> = {
  "content-type": "application/json",
  "x-signature": "a".repeat(64),
  "x-timestamp": "1795712415",
  "x-test-mode": "true",
  "x-event-id": `evt_${"b".repeat(32)}`,
  "webhook-id": `evt_${"b".repeat(32)}`,
  "x-event-sequence": "1",
  "webhook-timestamp": "1795712415",
  "webhook-signature": `v1,${"c".repeat(44)}`
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const main = async () => {
  const receiver = await LoopbackReceiver.start()
  const url = new URL(receiver.url)
  const baselinePool = new Agent({ allowH2: false })
  const variants = {
    transport: () => HttpCallbackTransport.send({ url: receiver.url, headers, body, timeoutMs: 10_000 }, true),
    "undici request()": async () => {
      const response = await baselinePool.request({ origin: url.origin, path: url.pathname, method: "POST", headers, body })
      await response.body.text()
    }
  } satisfies Record<string, () => Promise<unknown>>
  const round = async (name: keyof typeof variants) => {
    const send = variants[name]
    let started = 0
    const cpu = process.cpuUsage()
    const at = performance.now()
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (started++ < sends) await send()
    }))
    const used = process.cpuUsage(cpu)
    return { perSecond: sends / ((performance.now() - at) / 1000), micros: (used.user + used.system) / sends }
  }
  const names = Object.keys(variants) as Array<keyof typeof variants>
  for (const name of names) await round(name)
  const results = new Map<string, Array<number>>(names.map((name) => [name, []]))
  for (let i = 0; i < rounds; i++) {
    for (const name of names) {
      const { perSecond, micros } = await round(name)
      results.get(name)!.push(micros)
      console.log(`${name.padEnd(17)} ${perSecond.toFixed(0).padStart(6)} sends/s  ${micros.toFixed(1).padStart(6)} µs of CPU each`)
    }
  }
  const transport = median(results.get("transport")!)
  const baseline = median(results.get("undici request()")!)
  console.log(`median CPU per send: transport ${transport.toFixed(1)} µs, undici request() ${baseline.toFixed(1)} µs; ratio ${(transport / baseline).toFixed(2)} (${concurrency} at once, ${sends} per round)`)
  if (process.env.PROFILE === "1") {
    const { micros } = await profiledPromise("client-transport", () => round("transport"))
    console.log(`transport, profiled (bench/profiles/client-transport.cpuprofile): ${micros.toFixed(1)} µs of CPU each under the profiler, ${sends} sends`)
  }
  await baselinePool.close()
  await receiver.close()
  process.exit(0)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
