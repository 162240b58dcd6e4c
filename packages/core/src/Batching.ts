/**
 * Group commit for any port: concurrent calls wait briefly and run as one batch, each answered with
 * its own exit. Used by the PostgreSQL adapter (creations, authentications, attempt records) and by
 * the charge runner (the answers of one pass booked together).
 */
import { Array as Arr, type Context, Effect, Exit, type Request, RequestResolver } from "effect"

/**
 * A resolver that runs the requests waiting together as one batch: `run` answers each request of the
 * batch, in order, and must commit all of them or none (a batch that dies is redone). When a batch
 * dies (text PostgreSQL refuses in one of them, say), each of its requests runs alone, so only the one
 * at fault fails (unless `redo` says otherwise for its key).
 *
 * Without `maxInFlight`, a batch is the requests of one scheduler turn. With it, at most that many
 * batches run at once, of all keys together (not counting up to `maxStalled` running longer than `stallMs`): the requests arriving
 * while they run wait and go together in the next batch (group commit); a batch of more than
 * `maxBatch` requests is run in parts of `maxBatch`, one after the other.
 */
export const batchResolver = <A extends Request.Any>(
  /** Answers each request of a batch, in order; `key` is the batch's key (see `batchKey`). */
  run: (requests: ReadonlyArray<A>, key: unknown) => Effect.Effect<ReadonlyArray<Exit.Exit<Request.Success<A>, Request.Error<A>>>>,
  options: {
    readonly maxInFlight?: number
    readonly maxBatch?: number
    /**
     * A batch still running after this long (real time: a timer, not the runtime's `Clock`) stops
     * counting against `maxInFlight`, so a statement stuck on a lock holds back the others for this
     * long at most; it still runs to its end. Default: never.
     */
    readonly stallMs?: number
    /**
     * Stalled batches that stop counting at once at most (default 1): past that, a batch running
     * longer than `stallMs` keeps its slot until a stalled one ends. So at most `maxInFlight` +
     * `maxStalled` batches run at once (each holding a connection, say), however many stall.
     */
    readonly maxStalled?: number
    /** Requests of different keys never share a batch (`context`: the requester's services). */
    readonly batchKey?: (request: A, context: Context.Context<never>) => unknown
    /**
     * Whether a failed batch of this key is redone one request at a time (the default). When not
     * (the batch shares a transaction the failure has aborted, say), every request of the batch gets
     * the batch's failure.
     */
    readonly redo?: (key: unknown) => boolean
  } = {}
): RequestResolver.RequestResolver<A> => {
  const maxInFlight = options.maxInFlight ?? Number.POSITIVE_INFINITY
  const maxBatch = options.maxBatch ?? Number.POSITIVE_INFINITY
  let inFlight = 0
  const waiting = new Set<() => void>()
  /** Until a batch frees its slot. */
  const freed: Effect.Effect<void> = Effect.callback<void>((resume) => {
    const wake = () => resume(Effect.void)
    waiting.add(wake)
    return Effect.sync(() => waiting.delete(wake))
  })
  // The batch collects requests until a slot is free (always one scheduler turn at least), and looks
  // again after that turn, in which a batch of another key may have taken it: while it waits here it is
  // still pending, so its requests can leave it and new ones join it.
  const slot: Effect.Effect<void> = Effect.suspend(() =>
    inFlight < maxInFlight
      ? Effect.andThen(Effect.yieldNow, Effect.suspend(() => inFlight < maxInFlight ? Effect.void : Effect.andThen(freed, slot)))
      : Effect.andThen(freed, slot)
  )
  const free = () => {
    inFlight--
    const woken = [...waiting]
    waiting.clear()
    for (const wake of woken) wake()
  }
  const maxStalled = options.maxStalled ?? 1
  let stalled = 0
  // Batches past `stallMs` still counting, because `maxStalled` others had stalled: the first goes when one of those ends.
  const overdue: Array<() => void> = []
  const key = {}
  const batchKey = options.batchKey
  return RequestResolver.makeWith<A>({
    batchKey: batchKey === undefined ? () => key : (entry) => batchKey(entry.request, entry.context),
    delay: slot,
    collectWhile: () => true,
    runAll: (all, batch) => {
      // The slot is taken and its release set up with nothing between them (no interruption either).
      const started: Effect.Effect<void> = Effect.uninterruptibleMask((restore) => {
        // Taken since `slot` (the runtime yielded between them, say): wait again, interruptibly.
        if (inFlight >= maxInFlight) return restore(Effect.andThen(freed, started))
        inFlight++
        // The slot is freed once: when the batch ends, or when it stalls (while fewer than `maxStalled` have).
        let state: "holding" | "stalled" | "ended" = "holding"
        const stall = () => {
          if (state !== "holding") return
          if (stalled >= maxStalled) {
            overdue.push(stall)
            return
          }
          state = "stalled"
          stalled++
          free()
        }
        const timer = options.stallMs === undefined ? undefined : setTimeout(stall, options.stallMs)
        const release = Effect.sync(() => {
          clearTimeout(timer)
          const was = state
          state = "ended"
          if (was === "holding") {
            const index = overdue.indexOf(stall)
            if (index >= 0) overdue.splice(index, 1)
            free()
          } else if (was === "stalled") {
            stalled--
            overdue.shift()?.()
          }
        })
        const redo = options.redo === undefined || options.redo(batch)
        return restore(Effect.forEach(Arr.chunksOf(all, maxBatch), (entries) =>
          Effect.gen(function*() {
            const answers = yield* Effect.exit(run(entries.map((entry) => entry.request), batch))
            if (Exit.isSuccess(answers)) {
              entries.forEach((entry, i) => entry.completeUnsafe(answers.value[i]!))
            } else if (entries.length === 1 || !redo) {
              for (const entry of entries) entry.completeUnsafe(Exit.failCause(answers.cause))
            } else {
              for (const entry of entries) {
                const alone = yield* Effect.exit(run([entry.request], batch))
                entry.completeUnsafe(Exit.isSuccess(alone) ? alone.value[0]! : Exit.failCause(alone.cause))
              }
            }
          }), { discard: true })).pipe(Effect.ensuring(release))
      })
      return started
    }
  })
}

