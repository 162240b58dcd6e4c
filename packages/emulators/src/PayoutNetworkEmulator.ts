/**
 * An emulated payout network: answers sends from a programmable queue, idempotently per key.
 *
 * Outcomes come from a queue (`"sent"` when it is empty). A key that got `Sent` or `Rejected`
 * replays that answer forever and never sends twice. A key that got `Unknown` has no final answer
 * yet: asking again takes the next outcome from the queue, as the real network would eventually
 * answer. The final answers are kept in a `PayoutBook`: in memory (`memoryBook`: transaction ids
 * `tx_1`, `tx_2`, ... in order of successful sends), or in PostgreSQL (`PgPayoutBook`, the reference
 * server's), so that the network outlives a server process, as a real one would: a payout sent
 * before a crash and asked for again after it is answered with its first outcome, never sent twice.
 */
import { Context, Effect, Layer } from "effect"
import { PayoutNetwork } from "@paydesk/core"
import type { SendOutcome } from "@paydesk/core"
import { BookUnavailable } from "./BookUnavailable.js"

/** A programmed answer of the network. */
export type SendProgram = "sent" | "rejected" | "unknown"

/** One call of `send` and its answer. */
export interface SendRecord {
  readonly idempotencyKey: string
  readonly amountUsdt: bigint
  readonly walletAddress: string
  readonly network: string
  readonly outcome: SendOutcome
  /** True when the answer replayed a final outcome of the key (nothing was sent). */
  readonly replay: boolean
}

/** Controls and log of the payout network emulator. */
export class PayoutNetworkEmulator extends Context.Service<PayoutNetworkEmulator, {
  /** Every call of `send`, oldest first, replays included. */
  readonly calls: ReadonlyArray<SendRecord>
  /** The calls that were decided (not replays), oldest first. */
  readonly sends: ReadonlyArray<SendRecord>
  /** Queues answers of the next decided sends. */
  programOutcomes(outcomes: ReadonlyArray<SendProgram>): Effect.Effect<void>
  /** The `PayoutNetwork` port implemented by this emulator. */
  readonly network: PayoutNetwork["Service"]
}>()("@paydesk/emulators/PayoutNetworkEmulator") {}

/** The book could not be read or written (its database is unreachable): the network answers `Unknown`. */
export { BookUnavailable }

/** The network's memory of final answers, per idempotency key. */
export interface PayoutBook {
  /** The key's final answer, if it has one. */
  readonly final: (idempotencyKey: string) => Effect.Effect<SendOutcome | undefined, BookUnavailable>
  /**
   * Records `program` as the key's final answer (`"sent"` gets a transaction id of the book's) and
   * answers it; when the key got a final answer meanwhile (another process), answers that one, as a replay.
   */
  readonly decide: (input: SendInput, program: "sent" | "rejected") => Effect.Effect<{ readonly outcome: SendOutcome; readonly replay: boolean }, BookUnavailable>
}

/** A payout as the network is asked for it. */
export type SendInput = Parameters<PayoutNetwork["Service"]["send"]>[0]

/** The book of a `rejected` program's answer. */
export const rejected: SendOutcome = { _tag: "Rejected", reason: "rejected by the network" }

/** The `PayoutBook` the emulator keeps when given none: in memory, `tx_1`, `tx_2`, ... */
export const memoryBook = (): PayoutBook => {
  const finalByKey = new Map<string, SendOutcome>()
  let txCount = 0
  return {
    final: (key) => Effect.sync(() => finalByKey.get(key)),
    decide: (input, program) =>
      Effect.sync(() => {
        const known = finalByKey.get(input.idempotencyKey)
        if (known !== undefined) return { outcome: known, replay: true }
        const outcome: SendOutcome = program === "sent" ? { _tag: "Sent", txId: `tx_${++txCount}` } : rejected
        finalByKey.set(input.idempotencyKey, outcome)
        return { outcome, replay: false }
      })
  }
}

/** Builds an emulator with an empty queue (every send succeeds), keeping final answers in `book`. */
export const make = (book: PayoutBook = memoryBook()): PayoutNetworkEmulator["Service"] => {
  const calls: Array<SendRecord> = []
  const queue: Array<SendProgram> = []

  const network = PayoutNetwork.of({
    // A book that cannot be reached: no final answer, as a real network that does not answer (the
    // payout is asked about again later; a queued program is not spent on it).
    send: (input) =>
      Effect.gen(function*() {
        const final = yield* book.final(input.idempotencyKey)
        if (final !== undefined) {
          calls.push({ ...input, outcome: final, replay: true })
          return final
        }
        const program = queue[0] ?? "sent"
        const { outcome, replay } = program === "unknown"
          ? { outcome: { _tag: "Unknown", reason: "no confirmation yet" } as SendOutcome, replay: false }
          : yield* book.decide(input, program)
        // Spent once answered (a replay of another process's answer spends none).
        if (!replay) queue.shift()
        calls.push({ ...input, outcome, replay })
        return outcome
      }).pipe(Effect.catchTag("BookUnavailable", (error) =>
        Effect.as(
          Effect.logWarning("payout network emulator: its book is unavailable, answered unknown", error.cause),
          { _tag: "Unknown", reason: "the network did not answer" } as SendOutcome
        )))
  })

  return PayoutNetworkEmulator.of({
    get calls() {
      return [...calls]
    },
    get sends() {
      return calls.filter((c) => !c.replay)
    },
    programOutcomes: (outcomes) => Effect.sync(() => void queue.push(...outcomes)),
    network
  })
}

/** The emulator's `PayoutBook` (`PgPayoutBook.layer`, or none: in memory). */
export class PayoutBookService extends Context.Service<PayoutBookService, PayoutBook>()("@paydesk/emulators/PayoutBook") {}

const networkOfEmulator = Layer.effect(PayoutNetwork, Effect.map(PayoutNetworkEmulator, (emulator) => emulator.network))

/** `PayoutNetworkEmulator` and the `PayoutNetwork` port on it; fresh state per build (the book in memory). */
export const layer: Layer.Layer<PayoutNetworkEmulator | PayoutNetwork> = networkOfEmulator.pipe(
  Layer.provideMerge(Layer.sync(PayoutNetworkEmulator, () => make()))
)

/** The same on the `PayoutBookService` in context (e.g. `PgPayoutBook.layer`). */
export const layerOnBook: Layer.Layer<PayoutNetworkEmulator | PayoutNetwork, never, PayoutBookService> = networkOfEmulator.pipe(
  Layer.provideMerge(Layer.effect(PayoutNetworkEmulator, Effect.map(PayoutBookService, (book) => make(book))))
)
