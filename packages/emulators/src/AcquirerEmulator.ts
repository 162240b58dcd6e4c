/**
 * An emulated acquirer (the bank side): records what the core asks and answers as programmed.
 *
 * QR payments are recorded with a deterministic payload; their outcome is only stored
 * (`programPayment`) for a test or a demo server to apply through the core's use cases. Recurring
 * charges take their outcomes from a per-subscription queue (`"paid"` when it is empty), each
 * optionally answered late (`delayMs`: the outcome is fixed when the call arrives, the answer comes
 * that much later), and are idempotent per key: a repeated key replays the recorded outcome without
 * consuming the queue or counting as a charge; `resolveCharge` lets a test settle an `Unknown`
 * charge afterwards. `voidCharge` records an unseen key as void (a later charge with it is
 * declined). Once a binding is stopped, a new charge of that subscription is declined. Switches
 * make the acquirer unreachable or refuse new recurring bindings.
 *
 * The bank's memory of recurring charges (programs and the outcome per key) lives in a
 * `ChargeBook`: in memory by default, or durable and shared (the reference server keeps it in
 * PostgreSQL, so a restarted or second server process meets the same bank, as with a real one:
 * `PgChargeBook.layer` provides `ChargeBookService`, and `layerOnBook` builds the emulator on it).
 */
import { Context, Duration, Effect, Layer, Option } from "effect"
import { Acquirer, ProviderUnavailable, RecurringTemporarilyUnavailable, SandboxAcquirer } from "@paydesk/core"
import type { ChargeOutcome } from "@paydesk/core"
import { BookUnavailable } from "./BookUnavailable.js"

/** The book could not be read or written (its database is unreachable): the bank answers as one that does not answer. */
export { BookUnavailable }

/** A programmed outcome of a recurring charge. */
export type ChargeProgram = "paid" | "failed" | "unknown"

/** A programmed charge: its outcome, and how late the bank answers (ms, 0 by default). */
export type ChargeInstruction = ChargeProgram | { readonly outcome: ChargeProgram; readonly delayMs: number }

/** Longest programmable answer delay of a charge (ms): well inside an attempt's lease. */
export const maxChargeDelayMs = 30_000

/** What the bank recorded under a key: a programmed outcome, a voided key, or a charge declined on a stopped binding. */
export type BookOutcome = ChargeProgram | "void" | "stopped"

/** The outcome and delay of an instruction. */
export const instructionOf = (instruction: ChargeInstruction): { readonly outcome: ChargeProgram; readonly delayMs: number } =>
  typeof instruction === "string" ? { outcome: instruction, delayMs: 0 } : instruction

/** A programmed outcome of a QR payment, for the test or server that applies it. */
export type PaymentProgram = "paid" | "failed" | "no_answer"

/** A QR payment the core registered. */
export interface CreatedPayment {
  readonly paymentId: string
  readonly terminalId: string
  readonly amount: bigint
  readonly description: string | null
  readonly qrPayload: string
}

/** A `startBinding` call that reached the acquirer. */
export interface BindingRequest {
  readonly subscriptionId: string
  readonly terminalId: string
  readonly h2h: boolean
  readonly payerAmount: bigint
}

/** A charge that was really performed (replays of a key are not recorded again). */
export interface ChargeRecord {
  readonly idempotencyKey: string
  readonly subscriptionId: string
  readonly cycleNumber: number
  readonly amount: bigint
  readonly outcome: ChargeOutcome
}

/** A `stopBinding` call that reached the acquirer and its answer. */
export interface StopRecord {
  readonly subscriptionId: string
  readonly outcome: "stopped" | "failed"
}

/** A recurring charge request as the acquirer receives it. */
export interface ChargeRequest {
  readonly subscriptionId: string
  readonly cycleNumber: number
  readonly idempotencyKey: string
  readonly amount: bigint
}

/** What the book answers for a charge key. */
export interface BookEntry {
  /** The outcome recorded under the key. */
  readonly program: BookOutcome
  /** The charge's serial number at the bank (its reference). */
  readonly serial: number
  /** True when this call recorded the key; false for a replay of a known key. */
  readonly fresh: boolean
  /** How late a fresh charge is answered (ms); 0 for replays. */
  readonly delayMs: number
}

/**
 * The bank's memory of recurring charges. `take` and `void` are atomic per key: the first call
 * records an outcome under the key (`take`: the subscription's next programmed outcome, `"paid"`
 * when none is queued, or `"stopped"` once its binding is stopped; `void`: `"void"`), and every
 * later call, from any process sharing the book, answers the recorded one.
 */
export interface ChargeBook {
  /** Queues outcomes of the next charges of a subscription. */
  program(subscriptionId: string, outcomes: ReadonlyArray<ChargeInstruction>): Effect.Effect<void, BookUnavailable>
  /** The outcome recorded under the request's key, recording the next programmed one when the key is new. */
  take(request: ChargeRequest): Effect.Effect<BookEntry, BookUnavailable>
  /** The outcome recorded under the key, recording `"void"` when the key is new. */
  void(request: { readonly subscriptionId: string; readonly idempotencyKey: string }): Effect.Effect<BookEntry, BookUnavailable>
  /** Remembers that the subscription's binding is stopped: its new charges are declined. */
  stopBinding(subscriptionId: string): Effect.Effect<void, BookUnavailable>
  /** Settles the outcome of a key recorded `unknown` (true); any other key (never seen, or already answered) is left alone (false). */
  resolve(idempotencyKey: string, outcome: "paid" | "failed"): Effect.Effect<boolean, BookUnavailable>
}

/** The `ChargeBook` an emulator built by `layerOnBook` uses (memory, or `PgChargeBook.layer`). */
export class ChargeBookService extends Context.Service<ChargeBookService, ChargeBook>()("@paydesk/emulators/ChargeBook") {}

/** A `ChargeBook` in this process's memory. */
export const memoryBook = (): ChargeBook => {
  const queues = new Map<string, Array<{ readonly outcome: ChargeProgram; readonly delayMs: number }>>()
  const entries = new Map<string, { program: BookOutcome; serial: number }>()
  const stopped = new Set<string>()
  let serial = 0
  const record = (key: string, program: BookOutcome, delayMs: number): BookEntry => {
    const entry = { program, serial: ++serial }
    entries.set(key, entry)
    return { ...entry, fresh: true, delayMs }
  }
  return {
    program: (subscriptionId, outcomes) =>
      Effect.sync(() => {
        const queue = queues.get(subscriptionId) ?? []
        queue.push(...outcomes.map(instructionOf))
        queues.set(subscriptionId, queue)
      }),
    take: (request) =>
      Effect.sync(() => {
        const known = entries.get(request.idempotencyKey)
        if (known !== undefined) return { ...known, fresh: false, delayMs: 0 }
        if (stopped.has(request.subscriptionId)) return record(request.idempotencyKey, "stopped", 0)
        const next = queues.get(request.subscriptionId)?.shift() ?? { outcome: "paid", delayMs: 0 }
        return record(request.idempotencyKey, next.outcome, next.delayMs)
      }),
    void: (request) =>
      Effect.sync(() => {
        const known = entries.get(request.idempotencyKey)
        return known !== undefined ? { ...known, fresh: false, delayMs: 0 } : record(request.idempotencyKey, "void", 0)
      }),
    stopBinding: (subscriptionId) => Effect.sync(() => void stopped.add(subscriptionId)),
    resolve: (idempotencyKey, outcome) =>
      Effect.sync(() => {
        const known = entries.get(idempotencyKey)
        if (known === undefined || known.program !== "unknown") return false
        entries.set(idempotencyKey, { program: outcome, serial: known.serial })
        return true
      })
  }
}

/** The acquirer's answer for a recorded charge. */
export const outcomeOf = (entry: { readonly program: BookOutcome; readonly serial: number }): ChargeOutcome => {
  switch (entry.program) {
    case "paid":
      return { _tag: "Paid", reference: `acq_ch_${entry.serial}` }
    case "failed":
      return { _tag: "Failed", reason: "declined by the issuer" }
    case "unknown":
      return { _tag: "Unknown", reason: "acquirer timeout" }
    case "void":
      return { _tag: "Failed", reason: "the charge key was voided" }
    case "stopped":
      return { _tag: "Failed", reason: "the recurring binding is stopped" }
  }
}

/** Controls and logs of the acquirer emulator. */
export class AcquirerEmulator extends Context.Service<AcquirerEmulator, {
  /** Registered QR payments by payment id. */
  readonly payments: ReadonlyMap<string, CreatedPayment>
  /** Binding requests, oldest first. */
  readonly bindings: ReadonlyArray<BindingRequest>
  /** Real charges this emulator performed, oldest first. */
  readonly charges: ReadonlyArray<ChargeRecord>
  /** How many times `charge` was called, replays included. */
  readonly chargeCalls: number
  /** Stop requests, oldest first. */
  readonly stops: ReadonlyArray<StopRecord>
  /** Keys this emulator voided before any charge with them, oldest first. */
  readonly voids: ReadonlyArray<string>
  /** Queues outcomes (and answer delays) of the next recurring charges of a subscription. */
  programCharges(subscriptionId: string, outcomes: ReadonlyArray<ChargeInstruction>): Effect.Effect<void, ProviderUnavailable>
  /** Replaces the recorded outcome of a charge key recorded `unknown` (the bank settled it; true), else nothing (false). */
  resolveCharge(idempotencyKey: string, outcome: "paid" | "failed"): Effect.Effect<boolean, ProviderUnavailable>
  /** Sets how stops of a subscription end (default `"stopped"`). */
  programStop(subscriptionId: string, outcome: "stopped" | "failed"): Effect.Effect<void>
  /** Makes `createPayment`, `startBinding` and `stopBinding` fail with `ProviderUnavailable`. */
  setUnavailable(unavailable: boolean): Effect.Effect<void>
  /** Makes `startBinding` fail with `RecurringTemporarilyUnavailable`. */
  setRecurringUnavailable(unavailable: boolean): Effect.Effect<void>
  /** Stores the outcome a test wants for a QR payment. */
  programPayment(paymentId: string, outcome: PaymentProgram): Effect.Effect<void>
  /** The stored outcome of a QR payment, if any. */
  programmedPaymentOutcome(paymentId: string): Effect.Effect<Option.Option<PaymentProgram>>
  /** The `Acquirer` port implemented by this emulator. */
  readonly acquirer: Acquirer["Service"]
}>()("@paydesk/emulators/AcquirerEmulator") {}

/** The QR payload the emulator returns for a payment. */
export const qrPayloadOf = (paymentId: string): string => `https://qr.acquirer.example/pay/${paymentId}`

/** The redirect URL of an H2H binding. */
export const bindingUrlOf = (subscriptionId: string): string => `https://acquirer.example/bind/${subscriptionId}`

/** Builds an emulator with empty logs, everything available and nothing programmed (a fresh memory book by default). */
export const make = (book: ChargeBook = memoryBook()): AcquirerEmulator["Service"] => {
  const payments = new Map<string, CreatedPayment>()
  const bindings: Array<BindingRequest> = []
  const charges: Array<ChargeRecord> = []
  const stops: Array<StopRecord> = []
  const voids: Array<string> = []
  const stopPrograms = new Map<string, "stopped" | "failed">()
  const paymentPrograms = new Map<string, PaymentProgram>()
  let chargeCalls = 0
  let unavailable = false
  let recurringUnavailable = false

  // A book that cannot be reached: the bank does not answer. A charge or a void is then `Unknown`,
  // as from a bank that timed out (the attempt is unconfirmed and asked about again under its key:
  // by the operator's resume, or the background work for a stopping subscription); a stop,
  // programming and settling fail with `ProviderUnavailable`.
  const noAnswer = (error: BookUnavailable): Effect.Effect<ChargeOutcome> =>
    Effect.as(
      Effect.logWarning("acquirer emulator: its book is unavailable, answered unknown", error.cause),
      { _tag: "Unknown", reason: "the acquirer did not answer" } as const
    )
  const notReachable = (error: BookUnavailable) =>
    Effect.andThen(Effect.logWarning("acquirer emulator: its book is unavailable", error.cause), Effect.fail(ProviderUnavailable.of()))

  const acquirer = Acquirer.of({
    createPayment: (input) =>
      Effect.suspend(() => {
        if (unavailable) return Effect.fail(ProviderUnavailable.of())
        const qrPayload = qrPayloadOf(input.paymentId)
        payments.set(input.paymentId, { ...input, qrPayload })
        return Effect.succeed({ qrPayload })
      }),
    startBinding: Effect.fnUntraced(function*(input) {
      if (unavailable) return yield* ProviderUnavailable.of()
      if (recurringUnavailable) return yield* RecurringTemporarilyUnavailable.of()
      bindings.push({ ...input })
      return { redirectUrl: input.h2h ? bindingUrlOf(input.subscriptionId) : null }
    }),
    charge: Effect.fnUntraced(function*(input) {
      const entry = yield* book.take(input)
      chargeCalls++
      const outcome = outcomeOf(entry)
      if (entry.fresh) {
        charges.push({
          idempotencyKey: input.idempotencyKey,
          subscriptionId: input.subscriptionId,
          cycleNumber: input.cycleNumber,
          amount: input.amount,
          outcome
        })
      }
      if (entry.delayMs > 0) yield* Effect.sleep(Duration.millis(entry.delayMs))
      return outcome
    }, Effect.catchTag("BookUnavailable", noAnswer)),
    voidCharge: (input) =>
      Effect.map(book.void(input), (entry) => {
        if (entry.fresh) voids.push(input.idempotencyKey)
        return entry.program === "void" ? { _tag: "Voided" as const } : outcomeOf(entry)
      }).pipe(Effect.catchTag("BookUnavailable", noAnswer)),
    stopBinding: Effect.fnUntraced(function*(input) {
      if (unavailable) return yield* ProviderUnavailable.of()
      const outcome = stopPrograms.get(input.subscriptionId) ?? "stopped"
      stops.push({ subscriptionId: input.subscriptionId, outcome })
      if (outcome === "failed") return { _tag: "Failed" as const, reason: "the acquirer could not end the binding" }
      yield* Effect.catchTag(book.stopBinding(input.subscriptionId), "BookUnavailable", notReachable)
      return { _tag: "Stopped" as const }
    })
  })

  return AcquirerEmulator.of({
    get payments() {
      return new Map(payments)
    },
    get bindings() {
      return [...bindings]
    },
    get charges() {
      return [...charges]
    },
    get chargeCalls() {
      return chargeCalls
    },
    get stops() {
      return [...stops]
    },
    get voids() {
      return [...voids]
    },
    programCharges: (subscriptionId, outcomes) => Effect.catchTag(book.program(subscriptionId, outcomes), "BookUnavailable", notReachable),
    resolveCharge: (idempotencyKey, outcome) => Effect.catchTag(book.resolve(idempotencyKey, outcome), "BookUnavailable", notReachable),
    programStop: (subscriptionId, outcome) => Effect.sync(() => void stopPrograms.set(subscriptionId, outcome)),
    setUnavailable: (value) => Effect.sync(() => void (unavailable = value)),
    setRecurringUnavailable: (value) => Effect.sync(() => void (recurringUnavailable = value)),
    programPayment: (paymentId, outcome) => Effect.sync(() => void paymentPrograms.set(paymentId, outcome)),
    programmedPaymentOutcome: (paymentId) => Effect.sync(() => Option.fromUndefinedOr(paymentPrograms.get(paymentId))),
    acquirer
  })
}

const acquirerOfEmulator = Layer.effect(Acquirer, Effect.map(AcquirerEmulator, (emulator) => emulator.acquirer))

/** `AcquirerEmulator` and the `Acquirer` port on it, with a fresh memory book; fresh state per build. */
export const layer: Layer.Layer<AcquirerEmulator | Acquirer> = acquirerOfEmulator.pipe(
  Layer.provideMerge(Layer.sync(AcquirerEmulator, () => make()))
)

/** `AcquirerEmulator` and the `Acquirer` port on the `ChargeBookService` in context (e.g. `PgChargeBook.layer`). */
export const layerOnBook: Layer.Layer<AcquirerEmulator | Acquirer, never, ChargeBookService> = acquirerOfEmulator.pipe(
  Layer.provideMerge(Layer.effect(AcquirerEmulator, Effect.map(ChargeBookService, (book) => make(book))))
)

/** A `SandboxAcquirer` on an emulator of its own: programmed through `programCharges`. */
export const sandboxOf = (emulator: AcquirerEmulator["Service"]): SandboxAcquirer["Service"] =>
  SandboxAcquirer.of({ ...emulator.acquirer, programCharges: emulator.programCharges })

/** A `SandboxAcquirer` on a fresh emulator with a memory book. */
export const sandboxLayer: Layer.Layer<SandboxAcquirer> = Layer.sync(SandboxAcquirer, () => sandboxOf(make()))

/** A `SandboxAcquirer` on the `ChargeBookService` in context (the reference server's Postgres book). */
export const sandboxLayerOnBook: Layer.Layer<SandboxAcquirer, never, ChargeBookService> = Layer.effect(
  SandboxAcquirer,
  Effect.map(ChargeBookService, (book) => sandboxOf(make(book)))
)
