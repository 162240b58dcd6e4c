import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as fc from "fast-check"
import type * as Callback from "../src/Callback.js"
import * as Charge from "../src/Charge.js"
import * as Payment from "../src/Payment.js"
import * as Payout from "../src/Payout.js"
import * as StateMachine from "../src/StateMachine.js"
import * as Subscription from "../src/Subscription.js"

/** One expected edge of a table, as the spec states it. */
type Row<S extends string, E extends string, Emit extends string> = readonly [
  from: S,
  event: E,
  to: S,
  emits: ReadonlyArray<Emit>
]

const keyOf = (from: string, event: string): string => `${from} --${event}-->`

/** The states and events of a union, written out; `satisfies Record<U, true>` keeps the lists exhaustive. */
const keys = <K extends string>(record: Record<K, true>): ReadonlyArray<K> => Object.keys(record) as Array<K>

/**
 * The checks every machine gets: the table declares exactly `states`; initial and final states
 * are declared; every state is reachable; final states accept nothing; `can` and `transition`
 * agree on every (state, event) pair, and a missing edge fails with `InvalidTransition`
 * carrying entity, from and event; the table holds exactly the expected rows.
 */
const walk = <S extends string, E extends string, Emit extends string>(
  machine: StateMachine.Machine<S, E, Emit>,
  states: ReadonlyArray<S>,
  events: ReadonlyArray<E>,
  rows: ReadonlyArray<Row<S, E, Emit>>
) => {
  it("declares exactly the states of its type", () => {
    assert.sameMembers(Object.keys(machine.table), [...states])
    for (const s of machine.initial) assert.include(states, s)
    for (const s of machine.final) assert.include(states, s)
  })

  it("reaches every declared state from its initial states", () => {
    assert.sameMembers([...StateMachine.reachable(machine)], [...states])
  })

  it("has no outgoing edge from a final state", () => {
    assert.isNotEmpty(machine.final)
    for (const s of machine.final) {
      assert.deepStrictEqual(Object.keys(machine.table[s]), [], `final state ${s}`)
      assert.deepStrictEqual(StateMachine.edges(machine).filter((edge) => edge.from === s), [])
      for (const event of events) assert.isFalse(StateMachine.can(machine, s, event), `${s} accepts ${event}`)
    }
  })

  it("has an outgoing edge from every non-final state", () => {
    for (const s of states) {
      if (machine.final.includes(s)) continue
      assert.isNotEmpty(StateMachine.edges(machine).filter((edge) => edge.from === s), `non-final state ${s}`)
    }
  })

  it.each(rows.map((row) => [keyOf(row[0], row[1]), row] as const))("has %s", (_, [from, event, to, emits]) => {
    assert.isTrue(StateMachine.can(machine, from, event))
    const result = StateMachine.transition(machine, from, event)
    if (Result.isFailure(result)) assert.fail(`expected an edge, got ${result.failure.message}`)
    assert.strictEqual(result.success.to, to)
    assert.deepStrictEqual(result.success.emits, emits)
  })

  it("has no edge beyond the expected rows", () => {
    const actual = StateMachine.edges(machine).map((edge) => [edge.from, edge.event, edge.to, edge.emits] as const)
    const sort = (list: ReadonlyArray<Row<S, E, Emit>>) =>
      [...list].sort(([f1, e1], [f2, e2]) => keyOf(f1, e1).localeCompare(keyOf(f2, e2)))
    assert.deepStrictEqual(sort(actual), sort(rows))
  })

  it("fails every (state, event) pair outside the table with InvalidTransition", () => {
    const declared = new Set(rows.map(([from, event]) => keyOf(from, event)))
    let missing = 0
    for (const from of states) {
      for (const event of events) {
        const result = StateMachine.transition(machine, from, event)
        assert.strictEqual(StateMachine.can(machine, from, event), Result.isSuccess(result))
        if (declared.has(keyOf(from, event))) {
          assert.isTrue(Result.isSuccess(result), keyOf(from, event))
          continue
        }
        missing++
        if (Result.isSuccess(result)) assert.fail(`unexpected edge ${keyOf(from, event)}`)
        const error = result.failure
        assert.strictEqual(error._tag, "InvalidTransition")
        assert.strictEqual(error.entity, machine.entity)
        assert.strictEqual(error.from, from)
        assert.strictEqual(error.event, event)
        assert.include(error.message, from)
        assert.include(error.message, event)
      }
    }
    assert.isAbove(missing, 0)
  })

  it("random walks stay inside the table and agree with can/transition", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...machine.initial),
        fc.array(fc.constantFrom(...events), { maxLength: 30 }),
        (start, sequence) => {
          let state: S = start
          for (const event of sequence) {
            const result = StateMachine.transition(machine, state, event)
            assert.strictEqual(StateMachine.can(machine, state, event), Result.isSuccess(result))
            if (Result.isSuccess(result)) {
              assert.include(states, result.success.to)
              state = result.success.to
            } else {
              assert.strictEqual(result.failure.from, state)
            }
          }
        }
      )
    )
  })
}

/** Applies events in order from `from`, collecting the emitted callbacks. */
const run = <S extends string, E extends string, Emit extends string>(
  machine: StateMachine.Machine<S, E, Emit>,
  from: S,
  events: ReadonlyArray<E>
): { readonly state: S; readonly emitted: ReadonlyArray<Emit> } => {
  let state = from
  const emitted: Array<Emit> = []
  for (const event of events) {
    const result = StateMachine.transition(machine, state, event)
    if (Result.isFailure(result)) assert.fail(result.failure.message)
    state = result.success.to
    emitted.push(...result.success.emits)
  }
  return { state, emitted }
}

// Compile-time: no "failed" payment status and no "payment.failed" event type exist anywhere.
type NoFailed = Extract<
  Payment.Status | Payment.Event | Payment.CallbackEventType | Callback.EventType,
  "failed" | "payment.failed" | "fail"
>
const noFailed: [NoFailed] extends [never] ? true : false = true

describe("StateMachine", () => {
  describe("Payment.machine", () => {
    const states = Payment.statuses
    const events = keys(
      {
        start_processing: true,
        confirm: true,
        cancel: true,
        expire: true,
        late_payment: true,
        chargeback: true,
        refund: true
      } satisfies Record<Payment.Event, true>
    )
    const rows: ReadonlyArray<Row<Payment.Status, Payment.Event, Payment.CallbackEventType>> = [
      ["created", "start_processing", "processing", []],
      ["processing", "confirm", "paid", ["payment.paid"]],
      ["processing", "cancel", "canceled", ["payment.canceled"]],
      ["created", "expire", "expired", ["payment.expired"]],
      ["processing", "expire", "expired", ["payment.expired"]],
      ["expired", "late_payment", "paid", ["payment.paid"]],
      ["paid", "chargeback", "chargeback", ["payment.chargeback"]],
      ["paid", "refund", "refunded", ["refund_request.completed", "payment.refunded"]]
    ]

    walk(Payment.machine, states, events, rows)

    it("is named payment and declares the spec's statuses", () => {
      assert.strictEqual(Payment.machine.entity, "payment")
      assert.deepStrictEqual(
        [...Payment.statuses],
        ["created", "processing", "paid", "canceled", "expired", "chargeback", "refunded"]
      )
    })

    it("accepts nothing in canceled, and only late_payment in expired", () => {
      assert.deepStrictEqual(Object.keys(Payment.machine.table.canceled), [])
      assert.include(Payment.machine.final, "canceled")
      assert.deepStrictEqual(Object.keys(Payment.machine.table.expired), ["late_payment"])
      for (const event of events) {
        assert.isFalse(StateMachine.can(Payment.machine, "canceled", event))
        assert.strictEqual(StateMachine.can(Payment.machine, "expired", event), event === "late_payment")
      }
    })

    it("emits refund_request.completed before payment.refunded", () => {
      const { emitted, state } = run(Payment.machine, "created", ["start_processing", "confirm", "refund"])
      assert.strictEqual(state, "refunded")
      assert.deepStrictEqual(emitted, ["payment.paid", "refund_request.completed", "payment.refunded"])
    })

    it("emits a second payment.paid on a late payment after expiry", () => {
      const { emitted, state } = run(Payment.machine, "created", ["start_processing", "expire", "late_payment"])
      assert.strictEqual(state, "paid")
      assert.deepStrictEqual(emitted, ["payment.expired", "payment.paid"])
      assert.deepStrictEqual(run(Payment.machine, "created", ["expire", "late_payment"]).emitted, [
        "payment.expired",
        "payment.paid"
      ])
    })

    it("has no failed status nor payment.failed event", () => {
      assert.isTrue(noFailed)
      assert.notInclude(Payment.statuses as ReadonlyArray<string>, "failed")
      assert.notProperty(Payment.machine.table, "failed")
      for (const edge of StateMachine.edges(Payment.machine)) {
        assert.notStrictEqual(edge.to as string, "failed")
        assert.notInclude(edge.emits as ReadonlyArray<string>, "payment.failed")
        assert.notMatch(edge.event, /fail/)
      }
    })

    it("emits exactly the status's callback on every move into a reported status", () => {
      const emitsFor: Partial<Record<Payment.Status, ReadonlyArray<string>>> = {
        processing: [],
        paid: ["payment.paid"],
        canceled: ["payment.canceled"],
        expired: ["payment.expired"],
        chargeback: ["payment.chargeback"],
        refunded: ["refund_request.completed", "payment.refunded"]
      }
      for (const edge of StateMachine.edges(Payment.machine)) {
        assert.deepStrictEqual(edge.emits, emitsFor[edge.to], keyOf(edge.from, edge.event))
      }
    })
  })

  describe("Subscription.machine", () => {
    const states = keys(
      {
        "new/consent_pending": true,
        "new/pending": true,
        "new/review": true,
        "new/stop_pending": true,
        "active/enabled": true,
        "active/review": true,
        "active/stop_pending": true,
        "stop/stopped": true
      } satisfies Record<Subscription.State, true>
    )
    const events = keys(
      {
        first_payment_started: true,
        first_payment_paid: true,
        first_payment_failed: true,
        charge_paid: true,
        charge_failed: true,
        request_stop: true,
        stop_confirmed: true,
        stop_failed: true,
        resume: true
      } satisfies Record<Subscription.Event, true>
    )
    const stopPending = (state: Subscription.State): Subscription.State =>
      `${Subscription.fieldsOf(state).providerState}/stop_pending` as Subscription.State
    const stoppable = states.filter((s) => s !== "stop/stopped" && !s.endsWith("/stop_pending"))
    const rows: ReadonlyArray<Row<Subscription.State, Subscription.Event, never>> = [
      ["new/consent_pending", "first_payment_started", "new/pending", []],
      ["new/pending", "first_payment_paid", "active/enabled", []],
      ["active/enabled", "charge_paid", "active/enabled", []],
      ["active/enabled", "charge_failed", "active/review", []],
      ["new/pending", "first_payment_failed", "new/review", []],
      ...stoppable.map((s) => [s, "request_stop", stopPending(s), []] as const),
      ["new/stop_pending", "stop_confirmed", "stop/stopped", []],
      ["active/stop_pending", "stop_confirmed", "stop/stopped", []],
      ["new/stop_pending", "stop_failed", "new/review", []],
      ["active/stop_pending", "stop_failed", "active/review", []],
      ["active/review", "resume", "active/enabled", []],
      ["new/review", "resume", "active/enabled", []]
    ]

    walk(Subscription.machine, states, events, rows)

    it("starts new/consent_pending and ends stop/stopped", () => {
      assert.strictEqual(Subscription.machine.entity, "subscription")
      assert.deepStrictEqual(Subscription.machine.initial, ["new/consent_pending"])
      assert.deepStrictEqual(Subscription.machine.final, ["stop/stopped"])
      assert.deepStrictEqual(Object.keys(Subscription.machine.table["stop/stopped"]), [])
    })

    it("stops from every state that is neither stopped nor already stopping", () => {
      assert.sameMembers(stoppable, ["new/consent_pending", "new/pending", "new/review", "active/enabled", "active/review"])
      for (const s of stoppable) {
        const result = StateMachine.transition(Subscription.machine, s, "request_stop")
        if (Result.isFailure(result)) assert.fail(result.failure.message)
        assert.match(result.success.to, /\/stop_pending$/)
        assert.strictEqual(run(Subscription.machine, s, ["request_stop", "stop_confirmed"]).state, "stop/stopped")
      }
    })

    it("charges only when active/enabled", () => {
      for (const s of states) {
        assert.strictEqual(StateMachine.can(Subscription.machine, s, "charge_paid"), s === "active/enabled", s)
        assert.strictEqual(StateMachine.can(Subscription.machine, s, "charge_failed"), s === "active/enabled", s)
      }
    })

    it("never moves to active/enabled except by first payment, charge or resume", () => {
      for (const edge of StateMachine.edges(Subscription.machine)) {
        if (edge.to === "active/enabled") {
          assert.include(["first_payment_paid", "charge_paid", "resume"], edge.event)
        }
      }
    })

    it("emits no callbacks", () => {
      for (const edge of StateMachine.edges(Subscription.machine)) assert.deepStrictEqual(edge.emits, [])
    })

    it("walks the happy path and the review paths", () => {
      assert.strictEqual(
        run(Subscription.machine, "new/consent_pending", [
          "first_payment_started",
          "first_payment_paid",
          "charge_paid",
          "charge_paid",
          "charge_failed",
          "resume",
          "charge_paid",
          "request_stop",
          "stop_confirmed"
        ]).state,
        "stop/stopped"
      )
      assert.strictEqual(
        run(Subscription.machine, "new/consent_pending", ["first_payment_started", "first_payment_failed", "request_stop", "stop_failed"])
          .state,
        "new/review"
      )
    })

    describe("stateOf / fieldsOf", () => {
      it.each(states)("round-trips %s", (state) => {
        const fields = Subscription.fieldsOf(state)
        assert.strictEqual(`${fields.providerState}/${fields.billingStatus}`, state)
        assert.strictEqual(Subscription.stateOf(fields), state)
        assert.deepStrictEqual(Subscription.fieldsOf(Subscription.stateOf(fields)), fields)
      })
    })

    describe("isChargeable", () => {
      it("is true only for active/enabled", () => {
        for (const s of states) {
          assert.strictEqual(Subscription.isChargeable(Subscription.fieldsOf(s)), s === "active/enabled", s)
        }
      })

      it("is true only for active/enabled among every pair of field values", () => {
        const providers: ReadonlyArray<Subscription.ProviderState> = ["new", "active", "stop"]
        const billing: ReadonlyArray<Subscription.BillingStatus> = [
          "consent_pending",
          "pending",
          "enabled",
          "review",
          "stop_pending",
          "stopped"
        ]
        for (const providerState of providers) {
          for (const billingStatus of billing) {
            assert.strictEqual(
              Subscription.isChargeable({ providerState, billingStatus }),
              providerState === "active" && billingStatus === "enabled"
            )
          }
        }
      })
    })
  })

  describe("Charge.machine", () => {
    const states = keys(
      { pending: true, payed: true, fail: true, unconfirmed: true, stop: true } satisfies Record<Charge.Status, true>
    )
    const events = keys(
      {
        paid: true,
        failed: true,
        unknown: true,
        stopped: true,
        reconciled_paid: true,
        reconciled_failed: true,
        contradicted_paid: true
      } satisfies Record<Charge.Event, true>
    )
    const rows: ReadonlyArray<Row<Charge.Status, Charge.Event, never>> = [
      ["pending", "paid", "payed", []],
      ["pending", "failed", "fail", []],
      ["pending", "unknown", "unconfirmed", []],
      ["pending", "stopped", "stop", []],
      ["unconfirmed", "reconciled_paid", "payed", []],
      ["unconfirmed", "reconciled_failed", "fail", []],
      ["unconfirmed", "stopped", "stop", []],
      ["fail", "contradicted_paid", "payed", []],
      ["stop", "contradicted_paid", "payed", []]
    ]

    walk(Charge.machine, states, events, rows)

    it("eventOf: paid is always paid; refused or voided on a stopping subscription is stop; unknown again changes nothing", () => {
      const paid = { _tag: "Paid", reference: "r" } as const
      const failed = { _tag: "Failed", reason: "declined" } as const
      const unknown = { _tag: "Unknown", reason: "timeout" } as const
      const voided = { _tag: "Voided" } as const
      const table: ReadonlyArray<[Charge.Status & ("pending" | "unconfirmed"), Charge.VoidOutcome, boolean, Charge.Event | null]> = [
        ["pending", paid, false, "paid"],
        ["pending", paid, true, "paid"],
        ["unconfirmed", paid, true, "reconciled_paid"],
        ["pending", failed, false, "failed"],
        ["pending", failed, true, "stopped"],
        ["unconfirmed", failed, false, "reconciled_failed"],
        ["unconfirmed", failed, true, "stopped"],
        ["pending", unknown, false, "unknown"],
        ["pending", unknown, true, "unknown"],
        ["unconfirmed", unknown, true, null],
        ["pending", voided, true, "stopped"],
        ["unconfirmed", voided, true, "stopped"]
      ]
      for (const [status, answer, stopping, event] of table) {
        assert.strictEqual(Charge.eventOf(status, answer, stopping), event, `${status} ${answer._tag} ${stopping}`)
        if (event !== null) assert.isTrue(StateMachine.can(Charge.machine, status, event))
      }
    })

    it("starts pending and ends payed; fail and stop move only when the acquirer contradicts itself", () => {
      assert.strictEqual(Charge.machine.entity, "charge")
      assert.deepStrictEqual(Charge.machine.initial, ["pending"])
      assert.sameMembers([...Charge.machine.final], ["payed"])
      for (const s of ["fail", "stop"] as const) assert.deepStrictEqual(Object.keys(Charge.machine.table[s]), ["contradicted_paid"])
    })

    it("shows unconfirmed as fail", () => {
      assert.strictEqual(Charge.publicStatus("unconfirmed"), "fail")
      for (const s of ["pending", "payed", "fail", "stop"] as const) assert.strictEqual(Charge.publicStatus(s), s)
    })
  })

  describe("Payout.machine", () => {
    const states = keys(
      {
        created: true,
        pending: true,
        processing: true,
        completed: true,
        rejected: true
      } satisfies Record<Payout.Status, true>
    )
    const events = keys({ submit: true, approve: true, complete: true, reject: true } satisfies Record<Payout.Event, true>)
    const rows: ReadonlyArray<Row<Payout.Status, Payout.Event, Payout.CallbackEventType>> = [
      ["created", "submit", "pending", []],
      ["pending", "approve", "processing", []],
      ["processing", "complete", "completed", ["payout.completed"]],
      ["created", "reject", "rejected", []],
      ["pending", "reject", "rejected", []],
      ["processing", "reject", "rejected", []]
    ]

    walk(Payout.machine, states, events, rows)

    it("starts created and ends completed or rejected", () => {
      assert.strictEqual(Payout.machine.entity, "payout")
      assert.deepStrictEqual(Payout.machine.initial, ["created"])
      assert.sameMembers([...Payout.machine.final], ["completed", "rejected"])
    })

    it("counts exactly the non-final statuses as active", () => {
      assert.deepStrictEqual([...Payout.activeStatuses], ["created", "pending", "processing"])
      for (const s of states) {
        assert.strictEqual(Payout.activeStatuses.includes(s), !Payout.machine.final.includes(s), s)
      }
    })

    it("emits payout.completed only on processing -> completed", () => {
      const emitting = StateMachine.edges(Payout.machine).filter((edge) => edge.emits.length > 0)
      assert.deepStrictEqual(emitting, [
        { from: "processing", event: "complete", to: "completed", emits: ["payout.completed"] }
      ])
    })

    it("rejects from created, pending and processing", () => {
      const rejectFrom = StateMachine.edges(Payout.machine)
        .filter((edge) => edge.to === "rejected")
        .map((edge) => edge.from)
      assert.sameMembers(rejectFrom, ["created", "pending", "processing"])
      for (const s of Payout.activeStatuses) assert.isTrue(StateMachine.can(Payout.machine, s, "reject"))
    })
  })
})
