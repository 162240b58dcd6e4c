/**
 * Port: the network that sends USDT to a wallet.
 *
 * Contract: `send` MUST be idempotent per `idempotencyKey` (the payout id): a repeated call
 * returns the first outcome and never sends twice. `Sent` carries the network transaction id;
 * `Rejected` means nothing was or will be sent; `Unknown` means no answer yet (the core asks
 * again later with the same key).
 */
import { Context, type Effect } from "effect"

/** The network's answer to a send. */
export type SendOutcome =
  | { readonly _tag: "Sent"; readonly txId: string }
  | { readonly _tag: "Rejected"; readonly reason: string }
  | { readonly _tag: "Unknown"; readonly reason: string }

export class PayoutNetwork extends Context.Service<PayoutNetwork, {
  send(input: {
    readonly idempotencyKey: string
    readonly amountUsdt: bigint
    readonly walletAddress: string
    readonly network: string
  }): Effect.Effect<SendOutcome>
}>()("@paydesk/core/PayoutNetwork") {}
