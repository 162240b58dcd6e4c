import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { LedgerRepository, Operator, Payments, Payouts, PaydeskConfig, Config, Work } from "@paydesk/core"
import { Kit, PayoutNetworkEmulator, RecordingCallbackTransport } from "@paydesk/testkit"

const setup = Effect.gen(function*() {
  yield* TestClock.setTime(Date.parse("2026-04-01T09:00:00.000Z"))
  const merchant = yield* Kit.provisionMerchant({ callbackUrl: "https://shop.example/cb" })
  const principal = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
  // 9500.00 RUB at 95.00 gives 100 USDT.
  const { payment } = yield* Payments.create(principal, { amount: "9500", orderId: "fund" })
  yield* Payments.settle(payment.id, "paid")
  return { merchant, principal }
})

const balanceOf = (terminalId: string) => Effect.flatMap(LedgerRepository, (l) => l.balance(terminalId))

describe("Payouts scenarios", () => {
  it.effect("a payout goes from balance to hold to completed with payout.completed", () =>
    Effect.gen(function*() {
      const { merchant, principal } = yield* setup
      assert.strictEqual((yield* balanceOf(merchant.terminal.id)).usdtAvailable, 100_000_000n)
      const { payout } = yield* Payouts.create(principal, { amountUsdt: "40.5", walletAddress: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" })
      assert.strictEqual(payout.status, "created")
      assert.deepStrictEqual(yield* balanceOf(merchant.terminal.id), { rubPending: 0n, usdtAvailable: 59_500_000n, usdtHold: 40_500_000n })
      yield* Work.drain()
      let listed = yield* Payouts.list(principal, {})
      assert.strictEqual(listed.items[0]!.status, "pending")
      const approved = yield* Payouts.approve(`po_${payout.id}`)
      assert.strictEqual(approved.status, "processing")
      yield* Work.drain()
      listed = yield* Payouts.list(principal, {})
      assert.strictEqual(listed.items[0]!.status, "completed")
      const sent = (yield* PayoutNetworkEmulator.PayoutNetworkEmulator).sends[0]!.outcome
      assert.strictEqual(sent._tag, "Sent")
      assert.strictEqual(listed.items[0]!.networkTxId, sent._tag === "Sent" ? sent.txId : null)
      assert.deepStrictEqual(yield* balanceOf(merchant.terminal.id), { rubPending: 0n, usdtAvailable: 59_500_000n, usdtHold: 0n })
      const completed = (yield* RecordingCallbackTransport.RecordingCallbackTransport).requests
        .map((r) => JSON.parse(r.body))
        .filter((b) => b.event_type === "payout.completed")
      assert.strictEqual(completed.length, 1)
      assert.deepStrictEqual(completed[0], {
        event_type: "payout.completed",
        payout_id: `po_${payout.id}`,
        terminal_id: merchant.terminal.id,
        status: "completed",
        amount_usdt: "40.500000",
        wallet_address: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE",
        network: "TRC-20",
        tx_id: listed.items[0]!.networkTxId,
        test: false
      })
      // Nothing is sent twice.
      yield* Work.drain()
      assert.strictEqual((yield* PayoutNetworkEmulator.PayoutNetworkEmulator).sends.length, 1)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("a payout of a terminal disabled since it was requested is not approved until the terminal is enabled; it can be rejected", () =>
    Effect.gen(function*() {
      const { merchant, principal } = yield* setup
      const { payout } = yield* Payouts.create(principal, { amountUsdt: "10", walletAddress: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" })
      const { payout: other } = yield* Payouts.create(principal, { amountUsdt: "5", walletAddress: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" })
      yield* Work.drain()
      yield* Operator.setTerminalStatus(merchant.terminal.id, "disabled")
      const refused = yield* Effect.flip(Payouts.approve(`po_${payout.id}`))
      assert.deepStrictEqual([refused._tag, refused.message], ["OperationNotAllowed", "the payout's terminal is disabled: enable it to approve the payout, or reject the payout"])
      yield* Work.drain()
      assert.strictEqual((yield* PayoutNetworkEmulator.PayoutNetworkEmulator).sends.length, 0)
      assert.strictEqual((yield* Payouts.reject(`po_${other.id}`, null)).status, "rejected")
      yield* Operator.setTerminalStatus(merchant.terminal.id, "active")
      assert.strictEqual((yield* Payouts.approve(`po_${payout.id}`)).status, "processing")
      yield* Work.drain()
      assert.strictEqual((yield* PayoutNetworkEmulator.PayoutNetworkEmulator).sends.length, 1)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("insufficient balance, max active payouts, idempotency key and rejection", () =>
    Effect.gen(function*() {
      const { merchant, principal } = yield* setup
      const request = { amountUsdt: "10", walletAddress: "TJKmZKEkHfSuVWmQ5ZYsLFcEgH8NgoNSGw", network: "TRC-20" }
      assert.strictEqual((yield* Effect.flip(Payouts.create(principal, { ...request, amountUsdt: "100.000001" }))).message, "insufficient balance")
      const first = yield* Payouts.create(principal, { ...request, idempotencyKey: "po-1" })
      const replay = yield* Payouts.create(principal, { ...request, idempotencyKey: "po-1" })
      assert.isFalse(replay.created)
      assert.strictEqual(replay.payout.id, first.payout.id)
      assert.strictEqual((yield* Effect.flip(Payouts.create(principal, { ...request, amountUsdt: "11", idempotencyKey: "po-1" })))._tag, "IdempotencyConflict")
      for (let i = 0; i < 4; i++) yield* Payouts.create(principal, request)
      assert.strictEqual((yield* Effect.flip(Payouts.create(principal, request))).message, "max active payouts reached")
      assert.deepStrictEqual(yield* balanceOf(merchant.terminal.id), { rubPending: 0n, usdtAvailable: 50_000_000n, usdtHold: 50_000_000n })
      const rejected = yield* Payouts.reject(first.payout.id, "wrong wallet")
      assert.strictEqual(rejected.status, "rejected")
      assert.deepStrictEqual(yield* balanceOf(merchant.terminal.id), { rubPending: 0n, usdtAvailable: 60_000_000n, usdtHold: 40_000_000n })
      yield* Payouts.create(principal, request)
      const bad = [
        { ...request, amountUsdt: "1.0000001" },
        { ...request, amountUsdt: "0" },
        { ...request, network: "BTC" },
        { ...request, walletAddress: "" },
        { ...request, walletAddress: "bad wallet" }
      ]
      for (const input of bad) assert.include(["UsdtAmountMalformed", "AmountNotPositive", "InvalidRequest"], (yield* Effect.flip(Payouts.create(principal, input)))._tag)
    }).pipe(Effect.provide(Kit.layer)))

  it.effect("the maximum of active payouts is configurable and a refused send releases the hold", () =>
    Effect.gen(function*() {
      const { merchant, principal } = yield* setup
      const request = { amountUsdt: "30", walletAddress: "EQBbpICDZRnZno_y9CuIwQeUIKJVxNwriXTo_Q-Q9nGB5fDX", network: "TON" }
      yield* Payouts.create(principal, request)
      assert.strictEqual((yield* Effect.flip(Payouts.create(principal, request)))._tag, "MaxActivePayouts")
      return merchant
    }).pipe(
      Effect.provideService(PaydeskConfig, { ...Config.defaults, maxActivePayouts: 1 }),
      Effect.flatMap((merchant) =>
        Effect.gen(function*() {
          const network = yield* PayoutNetworkEmulator.PayoutNetworkEmulator
          yield* network.programOutcomes(["rejected"])
          const { items } = yield* Payouts.list(yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID()), {})
          yield* Payouts.approve(items[0]!.id)
          yield* Work.drain()
          const after = yield* Payouts.list(yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID()), {})
          assert.strictEqual(after.items[0]!.status, "rejected")
          assert.deepStrictEqual(yield* balanceOf(merchant.terminal.id), { rubPending: 0n, usdtAvailable: 100_000_000n, usdtHold: 0n })
        })
      ),
      Effect.provide(Kit.layer)
    ))

  it.effect("concurrent payouts that together exceed the balance never overdraw it", () =>
    Effect.gen(function*() {
      const { merchant, principal } = yield* setup
      const results = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => i),
        () => Effect.result(Payouts.create(principal, { amountUsdt: "30", walletAddress: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" })),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(results.filter((r) => r._tag === "Success").length, 3)
      const balance = yield* balanceOf(merchant.terminal.id)
      assert.deepStrictEqual(balance, { rubPending: 0n, usdtAvailable: 10_000_000n, usdtHold: 90_000_000n })
    }).pipe(Effect.provide(Kit.layer)))
})
