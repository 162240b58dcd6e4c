/** A `Metrics` that records nothing, with the observers a test wants to watch given. */
import { Registry } from "prom-client"
import { Metrics } from "../src/Metrics.js"

export const fakeMetrics = (observers: Partial<Omit<Metrics["Service"], "registry">> = {}): Metrics["Service"] =>
  Metrics.of({
    registry: new Registry(),
    observeRequest: () => {},
    countInFlight: () => {},
    observeAttempt: () => {},
    observePass: () => {},
    observeTestClocks: () => {},
    observeHandedOff: () => {},
    ...observers
  })
