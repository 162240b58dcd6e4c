/**
 * An emulated payout network: answers sends from a programmable queue, idempotently per key.
 *
 * Outcomes come from a queue (`"sent"` when it is empty). A key that got `Sent` or `Rejected`
 * replays that answer forever and never sends twice. A key that got `Unknown` has no final answer
 * yet: asking again takes the next outcome from the queue, as the real network would eventually
 * answer. Transaction ids are deterministic: `tx_1`, `tx_2`, ... in order of successful sends.
 */
import { Context, Effect, Layer } from "effect"
import { PayoutNetwork } from "@paydesk/core"
import type { SendOutcome } from "@paydesk/core"

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

/** Builds an emulator with an empty queue (every send succeeds). */
export const make = (): PayoutNetworkEmulator["Service"] => {
  const calls: Array<SendRecord> = []
  const queue: Array<SendProgram> = []
  const finalByKey = new Map<string, SendOutcome>()
  let txCount = 0

  const decide = (program: SendProgram): SendOutcome => {
    switch (program) {
      case "sent":
        return { _tag: "Sent", txId: `tx_${++txCount}` }
      case "rejected":
        return { _tag: "Rejected", reason: "rejected by the network" }
      case "unknown":
        return { _tag: "Unknown", reason: "no confirmation yet" }
    }
  }

  const network = PayoutNetwork.of({
    send: (input) =>
      Effect.sync(() => {
        const final = finalByKey.get(input.idempotencyKey)
        const outcome = final ?? decide(queue.shift() ?? "sent")
        if (final === undefined && outcome._tag !== "Unknown") finalByKey.set(input.idempotencyKey, outcome)
        calls.push({ ...input, outcome, replay: final !== undefined })
        return outcome
      })
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

/** `PayoutNetworkEmulator` and the `PayoutNetwork` port on it; fresh state per build. */
export const layer: Layer.Layer<PayoutNetworkEmulator | PayoutNetwork> = Layer.effect(
  PayoutNetwork,
  Effect.map(PayoutNetworkEmulator, (emulator) => emulator.network)
).pipe(Layer.provideMerge(Layer.sync(PayoutNetworkEmulator, make)))
