import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import {
  Acquirer,
  CallbackTransport,
  Entropy,
  PasswordHasher,
  PayoutNetwork,
  RateSource,
  SecretCipher,
  TokenIssuer
} from "@paydesk/core"
import {
  AcquirerEmulator,
  AesGcmSecretCipher,
  HmacTokenIssuer,
  MemoryRateSource,
  PayoutNetworkEmulator,
  Pbkdf2PasswordHasher,
  RecordingCallbackTransport,
  TestEntropy
} from "@paydesk/testkit"

const chargeInput = (subscriptionId: string, cycleNumber: number) => ({
  subscriptionId,
  cycleNumber,
  idempotencyKey: `sub:${subscriptionId}:cycle:${cycleNumber}:attempt:1`,
  amount: 150_000n
})

describe("AcquirerEmulator", () => {
  it.effect("records QR payments with a deterministic payload and stores programmed outcomes", () =>
    Effect.gen(function*() {
      const acquirer = yield* Acquirer
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      const { qrPayload } = yield* acquirer.createPayment({ paymentId: "p1", terminalId: "t1", amount: 5_00n, description: "x" })
      assert.strictEqual(qrPayload, AcquirerEmulator.qrPayloadOf("p1"))
      assert.deepStrictEqual(emulator.payments.get("p1"), {
        paymentId: "p1",
        terminalId: "t1",
        amount: 5_00n,
        description: "x",
        qrPayload
      })
      assert.deepStrictEqual(yield* emulator.programmedPaymentOutcome("p1"), Option.none())
      yield* emulator.programPayment("p1", "no_answer")
      assert.deepStrictEqual(yield* emulator.programmedPaymentOutcome("p1"), Option.some("no_answer" as const))
    }).pipe(Effect.provide(AcquirerEmulator.layer)))

  it.effect("charges follow the programmed queue, then default to paid; repeated keys replay", () =>
    Effect.gen(function*() {
      const acquirer = yield* Acquirer
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      yield* emulator.programCharges("s1", ["failed", "unknown"])
      const first = yield* acquirer.charge(chargeInput("s1", 1))
      assert.strictEqual(first._tag, "Failed")
      assert.deepStrictEqual(yield* acquirer.charge(chargeInput("s1", 1)), first)
      assert.strictEqual((yield* acquirer.charge(chargeInput("s1", 2)))._tag, "Unknown")
      assert.deepStrictEqual(yield* acquirer.charge(chargeInput("s1", 3)), { _tag: "Paid", reference: "acq_ch_3" })
      assert.deepStrictEqual(yield* acquirer.charge(chargeInput("s2", 1)), { _tag: "Paid", reference: "acq_ch_4" })
      assert.strictEqual(emulator.charges.length, 4)
      assert.strictEqual(emulator.chargeCalls, 5)
      assert.deepStrictEqual(emulator.charges.map((c) => [c.subscriptionId, c.cycleNumber, c.outcome._tag]), [
        ["s1", 1, "Failed"],
        ["s1", 2, "Unknown"],
        ["s1", 3, "Paid"],
        ["s2", 1, "Paid"]
      ])
      // The bank settles the unknown charge: asking again with its key now answers paid.
      yield* emulator.resolveCharge(chargeInput("s1", 2).idempotencyKey, "paid")
      assert.strictEqual((yield* acquirer.charge(chargeInput("s1", 2)))._tag, "Paid")
      assert.strictEqual(emulator.charges.length, 4)
    }).pipe(Effect.provide(AcquirerEmulator.layer)))

  it.effect("bindings: redirect for H2H, refusals when unavailable", () =>
    Effect.gen(function*() {
      const acquirer = yield* Acquirer
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      const binding = { subscriptionId: "s1", terminalId: "t1", h2h: true, payerAmount: 1n }
      assert.deepStrictEqual(yield* acquirer.startBinding(binding), { redirectUrl: "https://acquirer.example/bind/s1" })
      assert.deepStrictEqual(yield* acquirer.startBinding({ ...binding, h2h: false }), { redirectUrl: null })
      yield* emulator.setRecurringUnavailable(true)
      assert.strictEqual((yield* Effect.flip(acquirer.startBinding(binding)))._tag, "RecurringTemporarilyUnavailable")
      yield* emulator.setUnavailable(true)
      assert.strictEqual((yield* Effect.flip(acquirer.startBinding(binding)))._tag, "ProviderUnavailable")
      assert.strictEqual(
        (yield* Effect.flip(acquirer.createPayment({ paymentId: "p", terminalId: "t", amount: 1n, description: null })))._tag,
        "ProviderUnavailable"
      )
      assert.strictEqual((yield* Effect.flip(acquirer.stopBinding({ subscriptionId: "s1" })))._tag, "ProviderUnavailable")
      yield* emulator.setUnavailable(false)
      yield* emulator.setRecurringUnavailable(false)
      yield* acquirer.startBinding(binding)
      assert.strictEqual(emulator.bindings.length, 3)
    }).pipe(Effect.provide(AcquirerEmulator.layer)))

  it.effect("stops answer stopped by default and failed when programmed", () =>
    Effect.gen(function*() {
      const acquirer = yield* Acquirer
      const emulator = yield* AcquirerEmulator.AcquirerEmulator
      assert.deepStrictEqual(yield* acquirer.stopBinding({ subscriptionId: "s1" }), { _tag: "Stopped" })
      yield* emulator.programStop("s2", "failed")
      assert.strictEqual((yield* acquirer.stopBinding({ subscriptionId: "s2" }))._tag, "Failed")
      assert.deepStrictEqual(emulator.stops, [
        { subscriptionId: "s1", outcome: "stopped" },
        { subscriptionId: "s2", outcome: "failed" }
      ])
    }).pipe(Effect.provide(AcquirerEmulator.layer)))

  it.effect("a book it cannot reach: charges and voids answer unknown, stops and programming fail unavailable; reachable again, nothing was spent", () =>
    Effect.gen(function*() {
      const memory = AcquirerEmulator.memoryBook()
      let reachable = true
      const gate = <A>(effect: Effect.Effect<A, AcquirerEmulator.BookUnavailable>) =>
        reachable ? effect : Effect.fail(new AcquirerEmulator.BookUnavailable({ cause: "connection refused" }))
      const book: AcquirerEmulator.ChargeBook = {
        program: (id, outcomes) => gate(memory.program(id, outcomes)),
        take: (request) => gate(memory.take(request)),
        void: (request) => gate(memory.void(request)),
        stopBinding: (id) => gate(memory.stopBinding(id)),
        resolve: (key, outcome) => gate(memory.resolve(key, outcome))
      }
      const emulator = AcquirerEmulator.make(book)
      const { acquirer } = emulator
      yield* emulator.programCharges("s1", ["failed"])
      reachable = false
      const noAnswer = { _tag: "Unknown", reason: "the acquirer did not answer" } as const
      assert.deepStrictEqual(yield* acquirer.charge(chargeInput("s1", 1)), noAnswer)
      assert.deepStrictEqual(yield* acquirer.voidCharge({ subscriptionId: "s1", idempotencyKey: chargeInput("s1", 2).idempotencyKey }), noAnswer)
      assert.strictEqual((yield* Effect.flip(acquirer.stopBinding({ subscriptionId: "s1" })))._tag, "ProviderUnavailable")
      assert.strictEqual((yield* Effect.flip(emulator.programCharges("s1", ["paid"])))._tag, "ProviderUnavailable")
      assert.strictEqual((yield* Effect.flip(emulator.resolveCharge(chargeInput("s1", 1).idempotencyKey, "paid")))._tag, "ProviderUnavailable")
      assert.deepStrictEqual([emulator.charges.length, emulator.voids.length], [0, 0])
      reachable = true
      // Nothing was recorded while it was down: the key still takes the queued outcome, the voided-looking key is free.
      assert.strictEqual((yield* acquirer.charge(chargeInput("s1", 1)))._tag, "Failed")
      assert.strictEqual((yield* acquirer.charge(chargeInput("s1", 2)))._tag, "Paid")
      assert.deepStrictEqual(yield* acquirer.stopBinding({ subscriptionId: "s1" }), { _tag: "Stopped" })
    }))
})

describe("PayoutNetworkEmulator", () => {
  const send = (key: string) =>
    Effect.flatMap(PayoutNetwork, (n) => n.send({ idempotencyKey: key, amountUsdt: 1n, walletAddress: "T1", network: "TRC20" }))

  it.effect("sends succeed with tx_1, tx_2, ... and replay per key", () =>
    Effect.gen(function*() {
      const emulator = yield* PayoutNetworkEmulator.PayoutNetworkEmulator
      assert.deepStrictEqual(yield* send("a"), { _tag: "Sent", txId: "tx_1" })
      assert.deepStrictEqual(yield* send("b"), { _tag: "Sent", txId: "tx_2" })
      assert.deepStrictEqual(yield* send("a"), { _tag: "Sent", txId: "tx_1" })
      assert.strictEqual(emulator.sends.length, 2)
      assert.strictEqual(emulator.calls.length, 3)
    }).pipe(Effect.provide(PayoutNetworkEmulator.layer)))

  it.effect("programmed outcomes: rejected is final, unknown resolves on the next ask", () =>
    Effect.gen(function*() {
      const emulator = yield* PayoutNetworkEmulator.PayoutNetworkEmulator
      yield* emulator.programOutcomes(["rejected", "unknown"])
      assert.strictEqual((yield* send("a"))._tag, "Rejected")
      assert.strictEqual((yield* send("a"))._tag, "Rejected")
      assert.strictEqual((yield* send("b"))._tag, "Unknown")
      assert.deepStrictEqual(yield* send("b"), { _tag: "Sent", txId: "tx_1" })
      assert.deepStrictEqual(yield* send("b"), { _tag: "Sent", txId: "tx_1" })
      assert.deepStrictEqual(emulator.sends.map((s) => [s.idempotencyKey, s.outcome._tag]), [
        ["a", "Rejected"],
        ["b", "Unknown"],
        ["b", "Sent"]
      ])
    }).pipe(Effect.provide(PayoutNetworkEmulator.layer)))

  it.effect("a book it cannot reach: the network answers unknown and spends no programmed outcome; reachable again, it answers", () =>
    Effect.gen(function*() {
      const memory = PayoutNetworkEmulator.memoryBook()
      let reachable = false
      const unavailable = Effect.fail(new PayoutNetworkEmulator.BookUnavailable({ cause: "connection refused" }))
      const book: PayoutNetworkEmulator.PayoutBook = {
        final: (key) => reachable ? memory.final(key) : unavailable,
        decide: (input, program) => reachable ? memory.decide(input, program) : unavailable
      }
      const emulator = PayoutNetworkEmulator.make(book)
      yield* emulator.programOutcomes(["rejected"])
      const sendTo = (key: string) => emulator.network.send({ idempotencyKey: key, amountUsdt: 1n, walletAddress: "T1", network: "TRC20" })
      assert.deepStrictEqual(yield* sendTo("a"), { _tag: "Unknown", reason: "the network did not answer" })
      reachable = true
      assert.strictEqual((yield* sendTo("a"))._tag, "Rejected")
      assert.deepStrictEqual(yield* sendTo("b"), { _tag: "Sent", txId: "tx_1" })
    }))
})

describe("RecordingCallbackTransport", () => {
  const post = (url = "https://shop.example/cb") =>
    Effect.flatMap(CallbackTransport, (t) =>
      t.post({ url, headers: { "x-signature": "abc" }, body: "{\"a\":1}", timeoutMs: 10_000 }))

  it.effect("records every request with the clock time and answers 200 by default", () =>
    Effect.gen(function*() {
      const transport = yield* RecordingCallbackTransport.RecordingCallbackTransport
      yield* TestClock.setTime(1_000)
      assert.deepStrictEqual(yield* post(), { statusCode: 200, latencyMs: 0 })
      assert.deepStrictEqual(transport.requests, [{
        url: "https://shop.example/cb",
        headers: { "x-signature": "abc" },
        body: "{\"a\":1}",
        timeoutMs: 10_000,
        at: 1_000,
        answer: { status: 200 }
      }])
    }).pipe(Effect.provide(RecordingCallbackTransport.layer)))

  it.effect("failNext queues answers; timeouts carry the timeout as latency; failAlways and per URL", () =>
    Effect.gen(function*() {
      const transport = yield* RecordingCallbackTransport.RecordingCallbackTransport
      yield* transport.failNext(1, { status: 500 })
      yield* transport.failNext(2, "timeout")
      yield* transport.failNext(1, "refused")
      assert.deepStrictEqual(yield* post(), { statusCode: 500, latencyMs: 0 })
      const timeout = yield* Effect.flip(post())
      assert.strictEqual(timeout._tag, "TransportFailure")
      assert.strictEqual(timeout.latencyMs, 10_000)
      assert.strictEqual((yield* Effect.flip(post())).latencyMs, 10_000)
      assert.strictEqual((yield* Effect.flip(post())).latencyMs, 0)
      assert.strictEqual((yield* post()).statusCode, 200)
      yield* transport.failAlways({ status: 503 })
      yield* transport.respondTo("https://other.example/", { status: 204 })
      assert.strictEqual((yield* post()).statusCode, 503)
      assert.strictEqual((yield* post("https://other.example/")).statusCode, 204)
      yield* transport.succeed()
      assert.strictEqual((yield* post()).statusCode, 200)
      assert.strictEqual(transport.requests.length, 8)
      yield* transport.clearRequests()
      assert.strictEqual(transport.requests.length, 0)
    }).pipe(Effect.provide(RecordingCallbackTransport.layer)))
})

describe("MemoryRateSource", () => {
  it.effect("starts at 95.00 RUB per USDT, can be set per terminal and made unavailable", () =>
    Effect.gen(function*() {
      const source = yield* RateSource
      const control = yield* MemoryRateSource.MemoryRateSource
      assert.deepStrictEqual(yield* source.current(null), { rate: 95_000_000n, updatedAt: 0 })
      yield* control.set(80_000_000n, 5)
      yield* control.setForTerminal("t1", 90_000_000n, 6)
      assert.deepStrictEqual(yield* source.current("t2"), { rate: 80_000_000n, updatedAt: 5 })
      assert.deepStrictEqual(yield* source.current("t1"), { rate: 90_000_000n, updatedAt: 6 })
      yield* control.setUnavailable(true)
      assert.strictEqual((yield* Effect.flip(source.current(null)))._tag, "ProviderUnavailable")
      yield* control.setUnavailable(false)
      assert.strictEqual((yield* source.current(null)).rate, 80_000_000n)
    }).pipe(Effect.provide(MemoryRateSource.layer())))

  it.effect("the initial rate is configurable", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* (yield* RateSource).current(null), { rate: 100_000_000n, updatedAt: 42 })
    }).pipe(Effect.provide(MemoryRateSource.layer({ rate: 100_000_000n, updatedAt: 42 }))))
})

describe("TestEntropy", () => {
  const draw = Effect.gen(function*() {
    const entropy = yield* Entropy
    return [yield* entropy.uuid, yield* entropy.uuid, yield* entropy.token(16)]
  })

  it.effect("the same seed gives the same sequence in every build; another seed another one", () =>
    Effect.gen(function*() {
      const a = yield* Effect.provide(draw, TestEntropy.layerSeeded(7))
      const b = yield* Effect.provide(draw, TestEntropy.layerSeeded(7))
      const c = yield* Effect.provide(draw, TestEntropy.layerSeeded(8))
      assert.deepStrictEqual(a, b)
      assert.notDeepEqual(a, c)
      assert.notStrictEqual(a[0], a[1])
    }))
})

describe("Web Crypto adapters", () => {
  it.effect("PBKDF2 hashes read pbkdf2$1000$<salt>$<hash>", () =>
    Effect.gen(function*() {
      const hash = yield* (yield* PasswordHasher).hash("secret")
      assert.match(hash, /^pbkdf2\$1000\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/)
    }).pipe(Effect.provide(Pbkdf2PasswordHasher.layer())))

  it.effect("tokens are two base64url parts; ciphertexts read v1.<iv>.<ciphertext>", () =>
    Effect.gen(function*() {
      const token = yield* (yield* TokenIssuer).issue({ userId: "u", accountId: "a", role: "owner", familyId: "f", expiresAt: 10 })
      assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
      const sealed = yield* (yield* SecretCipher).encrypt("s")
      assert.match(sealed, /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/)
    }).pipe(Effect.provide(Layer.merge(HmacTokenIssuer.layer(), AesGcmSecretCipher.layer()))))
})
