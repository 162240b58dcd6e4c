/**
 * `batchResolver` without a database: requests arriving while batches run wait and go together in
 * the next batch, never more than `maxInFlight` batches at once (of all keys) and never more than `maxBatch`
 * requests in one run; a batch running longer than `stallMs` no longer holds the others back, while
 * fewer than `maxStalled` have stalled; a batch
 * that dies is redone one request at a time; a waiting request that is interrupted leaves the others alone.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Request } from "effect"
import { batchResolver } from "../src/Batching.js"

class Double extends Request.Class<{ readonly n: number }, number> {}

/** A resolver whose runs take `ms` and are recorded (sizes, and how many ran at once). */
const recorded = (options: {
  readonly maxInFlight: number
  readonly maxBatch: number
  readonly ms: number
  readonly poison?: number
  readonly stallMs?: number
  readonly maxStalled?: number
  /** A batch with a request of one of these numbers takes its time (ms) instead of `ms`. */
  readonly slow?: ReadonlyMap<number, number>
  /** The batch key of a request (one key for all by default). */
  readonly keyOf?: (n: number) => unknown
}) => {
  const runs: Array<ReadonlyArray<number>> = []
  let running = 0
  let mostAtOnce = 0
  const resolver = batchResolver<Double>((requests) =>
    Effect.gen(function*() {
      running++
      mostAtOnce = Math.max(mostAtOnce, running)
      runs.push(requests.map((r) => r.n))
      yield* Effect.sleep(requests.map((r) => options.slow?.get(r.n)).find((ms) => ms !== undefined) ?? options.ms)
      running--
      if (requests.some((r) => r.n === options.poison)) return yield* Effect.die(new Error("refused"))
      return requests.map((r) => Exit.succeed(r.n * 2))
    }), {
      maxInFlight: options.maxInFlight,
      maxBatch: options.maxBatch,
      ...(options.stallMs === undefined ? {} : { stallMs: options.stallMs }),
      ...(options.maxStalled === undefined ? {} : { maxStalled: options.maxStalled }),
      ...(options.keyOf === undefined ? {} : { batchKey: (request: Double) => options.keyOf!(request.n) })
    })
  return { resolver, runs, mostAtOnce: () => mostAtOnce }
}

/**
 * Waits until `count` batches have started. A sleep of a few milliseconds after forking a request is
 * not enough on a loaded machine: the timer can fire before the forked fiber's batch has started, and
 * the requests meant for the next batch then join that one.
 */
const untilRuns = (runs: ReadonlyArray<unknown>, count: number) =>
  Effect.gen(function*() {
    while (runs.length < count) yield* Effect.sleep(1)
  })

describe("batchResolver", () => {
  it.live("requests arriving during a batch form the next; at most maxInFlight run at once, each run at most maxBatch", () =>
    Effect.gen(function*() {
      const { resolver, runs, mostAtOnce } = recorded({ maxInFlight: 1, maxBatch: 4, ms: 20 })
      // One request, then 10 more while its batch runs.
      const first = yield* Effect.forkChild(Effect.request(new Double({ n: 0 }), resolver))
      yield* untilRuns(runs, 1)
      const rest = yield* Effect.forEach(Array.from({ length: 10 }, (_, i) => i + 1), (n) => Effect.request(new Double({ n }), resolver), {
        concurrency: "unbounded"
      })
      assert.strictEqual(yield* Fiber.join(first), 0)
      assert.deepStrictEqual(rest, Array.from({ length: 10 }, (_, i) => (i + 1) * 2))
      assert.deepStrictEqual(runs[0], [0])
      // The 10 that waited went together, in parts of at most 4, one run at a time.
      assert.deepStrictEqual(runs.slice(1).map((r) => r.length), [4, 4, 2])
      assert.strictEqual(mostAtOnce(), 1)
    }))

  it.live("batches of different keys count against the same maxInFlight, even when they start in the same turn", () =>
    Effect.gen(function*() {
      const { resolver, runs, mostAtOnce } = recorded({ maxInFlight: 1, maxBatch: 100, ms: 20, keyOf: (n) => n % 3 })
      // Three keys' requests at once: three batches, one after the other.
      const answers = yield* Effect.forEach([0, 1, 2, 3, 4, 5], (n) => Effect.request(new Double({ n }), resolver), { concurrency: "unbounded" })
      assert.deepStrictEqual(answers, [0, 2, 4, 6, 8, 10])
      assert.deepStrictEqual(runs.map((r) => [...r].sort()).sort(), [[0, 3], [1, 4], [2, 5]])
      assert.strictEqual(mostAtOnce(), 1)
    }))

  it.live("a batch waiting for a slot another key's batch holds still takes new requests and lets interrupted ones go", () =>
    Effect.gen(function*() {
      const { resolver, runs } = recorded({ maxInFlight: 1, maxBatch: 100, ms: 40, keyOf: (n) => n % 2 })
      // Key 0's batch takes the slot; key 1's waits for it.
      const first = yield* Effect.forkChild(Effect.forEach([0, 1], (n) => Effect.request(new Double({ n }), resolver), { concurrency: "unbounded" }))
      yield* untilRuns(runs, 1)
      const gone = yield* Effect.forkChild(Effect.request(new Double({ n: 3 }), resolver))
      const later = yield* Effect.forkChild(Effect.request(new Double({ n: 5 }), resolver))
      yield* Effect.sleep(5)
      yield* Fiber.interrupt(gone)
      assert.deepStrictEqual(yield* Fiber.join(first), [0, 2])
      assert.strictEqual(yield* Fiber.join(later), 10)
      // Key 1's waiting batch took 5 and let 3 go: one run of [1, 5] after [0].
      assert.deepStrictEqual(runs, [[0], [1, 5]])
    }))

  it.live("a batch running longer than stallMs no longer holds back the next", () =>
    Effect.gen(function*() {
      const { resolver, runs } = recorded({ maxInFlight: 1, maxBatch: 100, ms: 5, stallMs: 50, slow: new Map([[0, 1000]]) })
      const stuck = yield* Effect.forkChild(Effect.request(new Double({ n: 0 }), resolver))
      yield* untilRuns(runs, 1)
      const started = Date.now()
      // These wait behind the stuck batch until it has run for 50 ms, then go, while it still runs.
      const rest = yield* Effect.forEach([1, 2, 3], (n) => Effect.request(new Double({ n }), resolver), { concurrency: "unbounded" })
      const waited = Date.now() - started
      assert.deepStrictEqual(rest, [2, 4, 6])
      assert.isAtLeast(waited, 30)
      assert.isBelow(waited, 900)
      assert.deepStrictEqual(runs, [[0], [1, 2, 3]])
      assert.strictEqual(yield* Fiber.join(stuck), 0)
    }))

  it.live("past maxStalled stalled batches, a batch running longer than stallMs keeps its slot until a stalled one ends", () =>
    Effect.gen(function*() {
      const { resolver, runs, mostAtOnce } = recorded({ maxInFlight: 1, maxBatch: 100, ms: 5, stallMs: 50, maxStalled: 1, slow: new Map([[0, 600], [1, 600]]) })
      const first = yield* Effect.forkChild(Effect.request(new Double({ n: 0 }), resolver))
      yield* untilRuns(runs, 1)
      // Goes once the first has stalled (50 ms), and stalls in turn: the limit of one is reached.
      const second = yield* Effect.forkChild(Effect.request(new Double({ n: 1 }), resolver))
      yield* untilRuns(runs, 2)
      yield* Effect.sleep(100)
      const started = Date.now()
      // Waits until the first ends (600 ms after it began) and the second stops counting.
      assert.strictEqual(yield* Effect.request(new Double({ n: 2 }), resolver), 4)
      const waited = Date.now() - started
      assert.isAtLeast(waited, 300)
      assert.deepStrictEqual(runs, [[0], [1], [2]])
      // Never more than maxInFlight + maxStalled at once.
      assert.strictEqual(mostAtOnce(), 2)
      assert.deepStrictEqual([yield* Fiber.join(first), yield* Fiber.join(second)], [0, 2])
    }))

  it.live("an overdue batch that ends before the stalled one frees its slot when it ends", () =>
    Effect.gen(function*() {
      // 0 stalls and runs 900 ms; 1 runs 300 ms, overdue once past stallMs (0 has stalled, the limit).
      const { resolver, runs, mostAtOnce } = recorded({ maxInFlight: 1, maxBatch: 1, ms: 5, stallMs: 50, maxStalled: 1, slow: new Map([[0, 900], [1, 300]]) })
      const request = (n: number) => Effect.forkChild(Effect.request(new Double({ n }), resolver))
      const first = yield* request(0)
      yield* untilRuns(runs, 1)
      yield* Effect.sleep(80)
      const second = yield* request(1)
      yield* untilRuns(runs, 2)
      // 3 waits: 1 still counts, and frees its slot when it ends (at about 300 ms), long before 0 ends.
      yield* Effect.sleep(80)
      const started = Date.now()
      const third = yield* request(3)
      assert.strictEqual(yield* Fiber.join(second), 2)
      assert.strictEqual(yield* Fiber.join(third), 6)
      // Answered when 1 ended, not when 0 did (about 740 ms from now).
      assert.isBelow(Date.now() - started, 600)
      // 3 ran after 1 ended (not beside it): 1 had not stopped counting, the limit being reached.
      assert.deepStrictEqual(runs, [[0], [1], [3]])
      assert.strictEqual(mostAtOnce(), 2)
      assert.strictEqual(yield* Fiber.join(first), 0)
    }))

  it.live("maxStalled 2: two stalled batches stop counting, a third keeps its slot", () =>
    Effect.gen(function*() {
      const { resolver, runs, mostAtOnce } = recorded({ maxInFlight: 1, maxBatch: 100, ms: 5, stallMs: 40, maxStalled: 2, slow: new Map([[0, 700], [1, 700], [2, 700]]) })
      const stuck = []
      for (const n of [0, 1, 2]) {
        stuck.push(yield* Effect.forkChild(Effect.request(new Double({ n }), resolver)))
        yield* untilRuns(runs, n + 1)
        yield* Effect.sleep(100)
      }
      const started = Date.now()
      // 0 and 1 have stalled; 2 has run for 100 ms, past stallMs, but keeps its slot until 0 ends (at about 700 ms).
      assert.strictEqual(yield* Effect.request(new Double({ n: 3 }), resolver), 6)
      assert.isAtLeast(Date.now() - started, 250)
      assert.deepStrictEqual(runs, [[0], [1], [2], [3]])
      assert.strictEqual(mostAtOnce(), 3)
      assert.deepStrictEqual(yield* Fiber.joinAll(stuck), [0, 2, 4])
    }))

  it.live("a batch that dies is redone one request at a time: only the one at fault fails", () =>
    Effect.gen(function*() {
      const { resolver, runs } = recorded({ maxInFlight: 2, maxBatch: 100, ms: 1, poison: 3 })
      const exits = yield* Effect.forEach([1, 2, 3, 4], (n) => Effect.exit(Effect.request(new Double({ n }), resolver)), {
        concurrency: "unbounded"
      })
      assert.deepStrictEqual(exits.map((e) => Exit.isSuccess(e) ? e.value : "died"), [2, 4, "died", 8])
      assert.deepStrictEqual(runs, [[1, 2, 3, 4], [1], [2], [3], [4]])
    }))

  it.live("a waiting request that is interrupted leaves the batch to the others", () =>
    Effect.gen(function*() {
      const { resolver, runs } = recorded({ maxInFlight: 1, maxBatch: 100, ms: 30 })
      const busy = yield* Effect.forkChild(Effect.request(new Double({ n: 0 }), resolver))
      yield* untilRuns(runs, 1)
      const gone = yield* Effect.forkChild(Effect.request(new Double({ n: 1 }), resolver))
      const kept = yield* Effect.forkChild(Effect.request(new Double({ n: 2 }), resolver))
      yield* Effect.sleep(5)
      yield* Fiber.interrupt(gone)
      assert.strictEqual(yield* Fiber.join(kept), 4)
      assert.strictEqual(yield* Fiber.join(busy), 0)
      assert.deepStrictEqual(runs, [[0], [2]])
    }))
})
