import { describe, expect, it } from "vitest"
import { Effect, Layer } from "effect"
import { type Wakeup, Wakeups } from "@paydesk/core"
import * as LocalWakeups from "../src/LocalWakeups.js"

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms))

const setup = (options: LocalWakeups.Options = {}) => {
  const woken: Array<number> = []
  const local = LocalWakeups.make(() => woken.push(Date.now()), options)
  const notify = (items: ReadonlyArray<Wakeup>) => Effect.runPromise(local.port.notify(items))
  return { local, woken, notify }
}

describe("LocalWakeups", () => {
  it("wakes the worker at once for work due now, and on time for work due later", async () => {
    const { local, woken, notify } = setup({ soonMs: 50 })
    await notify([{ kind: "delivery", deliveryId: "d1", at: Date.now() }])
    expect(woken).toHaveLength(1)
    const due = Date.now() + 300
    await notify([{ kind: "charge", subscriptionId: "s1", at: due + 400 }, { kind: "expiry", paymentId: "p1", at: due }])
    expect(woken).toHaveLength(1)
    await sleep(1_000)
    // One timer, for the earliest moment; the later one is left to the interval pass.
    expect(woken).toHaveLength(2)
    expect(woken[1]!).toBeGreaterThanOrEqual(due)
    local.close()
  })

  it("re-arms long delays in steps and stops after close", async () => {
    const { local, woken, notify } = setup({ soonMs: 10, maxDelayMs: 100 })
    await notify([{ kind: "charge", subscriptionId: "s1", at: Date.now() + 350 }])
    await sleep(700)
    expect(woken).toHaveLength(1)
    await notify([{ kind: "charge", subscriptionId: "s2", at: Date.now() + 200 }])
    local.close()
    await sleep(400)
    await notify([{ kind: "delivery", deliveryId: "d2", at: Date.now() }])
    expect(woken).toHaveLength(1)
  })

  it("as a layer, opens the WakeSignal when work falls due", async () => {
    const open = await Effect.runPromise(Effect.gen(function*() {
      const signal = yield* LocalWakeups.WakeSignal
      const before = signal.isOpen()
      yield* (yield* Wakeups).notify([{ kind: "delivery", deliveryId: "d1", at: 0 }])
      return [before, signal.isOpen()]
    }).pipe(Effect.provide(LocalWakeups.layer().pipe(Layer.provideMerge(LocalWakeups.WakeSignal.layer)))))
    expect(open).toEqual([false, true])
  })
})
