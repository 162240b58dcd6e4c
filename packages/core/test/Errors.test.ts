import { assert, describe, it } from "@effect/vitest"
import {
  AccessDenied,
  AmountExceedsCeiling,
  AmountMalformed,
  AmountNotPositive,
  CsrfRejected,
  IdempotencyConflict,
  InsufficientBalance,
  InvalidCredentials,
  InvalidJsonBody,
  InvalidRequest,
  InvalidTransition,
  MaxActivePayouts,
  NonceAlreadyUsed,
  NotFound,
  OperationNotAllowed,
  OrderIdConflict,
  PlanNotAvailable,
  ProviderUnavailable,
  RecurringNotConfigured,
  RecurringTemporarilyUnavailable,
  StopFailed,
  SubscriptionFieldsMissing,
  TerminalIdRequired,
  TerminalUnavailable,
  Unauthenticated,
  UsdtAmountMalformed,
  WriteConflict
} from "../src/Errors.js"

const cyrillic = /[\u0400-\u04ff]/

describe("Errors", () => {
  describe("spec messages", () => {
    it.each([
      ["NonceAlreadyUsed", NonceAlreadyUsed.of(), "nonce already used"],
      ["AccessDenied", AccessDenied.terminal(), "terminal access denied"],
      ["AccessDenied", AccessDenied.account(), "account access denied"],
      ["AccessDenied", AccessDenied.subscriptionWrite(), "subscription write access required"],
      ["NotFound", NotFound.of("subscription"), "subscription not found"],
      ["TerminalIdRequired", TerminalIdRequired.of(), "terminal_id is required"],
      ["RecurringNotConfigured", RecurringNotConfigured.plans(), "recurring plans not configured"],
      ["RecurringNotConfigured", RecurringNotConfigured.subscriptions(), "subscriptions not configured"],
      ["InvalidJsonBody", InvalidJsonBody.of(), "invalid json body"],
      ["TerminalUnavailable", TerminalUnavailable.of(), "terminal is unavailable"],
      ["IdempotencyConflict", IdempotencyConflict.of(), "idempotency key conflicts with another request"],
      ["ProviderUnavailable", ProviderUnavailable.of(), "provider not available"],
      ["InsufficientBalance", InsufficientBalance.of(), "insufficient balance"],
      ["MaxActivePayouts", MaxActivePayouts.of(), "max active payouts reached"],
      ["AmountNotPositive", AmountNotPositive.of(), "amount must be greater than zero"],
      ["AmountMalformed", AmountMalformed.of(), "amount malformed: rubles with at most two decimals"],
      [
        "RecurringTemporarilyUnavailable",
        RecurringTemporarilyUnavailable.of(),
        "recurring scenario temporarily unavailable"
      ]
    ] as const)("%s: %s", (tag, error, text) => {
      assert.strictEqual(error._tag, tag)
      assert.strictEqual(error.message, text)
    })

    it("keeps each static text equal to the message of its constructor", () => {
      const pairs: ReadonlyArray<readonly [string, { readonly message: string }]> = [
        [NonceAlreadyUsed.text, NonceAlreadyUsed.of()],
        [TerminalIdRequired.text, TerminalIdRequired.of()],
        [InvalidJsonBody.text, InvalidJsonBody.of()],
        [TerminalUnavailable.text, TerminalUnavailable.of()],
        [IdempotencyConflict.text, IdempotencyConflict.of()],
        [ProviderUnavailable.text, ProviderUnavailable.of()],
        [InsufficientBalance.text, InsufficientBalance.of()],
        [MaxActivePayouts.text, MaxActivePayouts.of()],
        [AmountNotPositive.text, AmountNotPositive.of()],
        [AmountMalformed.text, AmountMalformed.of()],
        [RecurringTemporarilyUnavailable.text, RecurringTemporarilyUnavailable.of()],
        [StopFailed.text, StopFailed.of()],
        [SubscriptionFieldsMissing.text, SubscriptionFieldsMissing.of(["plan_id"])]
      ]
      for (const [text, error] of pairs) assert.strictEqual(error.message, text)
    })

    it("names the resource in NotFound", () => {
      const error = NotFound.of("subscription")
      assert.strictEqual(error.resource, "subscription")
      assert.strictEqual(NotFound.of("payment").message, "payment not found")
    })
  })

  describe("Russian texts", () => {
    it("SubscriptionFieldsMissing asks for terminal, plan, amount and idempotency key in Russian", () => {
      const error = SubscriptionFieldsMissing.of(["Idempotency-Key", "amount"])
      assert.strictEqual(error._tag, "SubscriptionFieldsMissing")
      assert.match(error.message, cyrillic)
      assert.match(error.message, /терминал/i)
      assert.match(error.message, /план/i)
      assert.match(error.message, /сумм/i)
      assert.match(error.message, /идемпотентн/i)
      assert.deepStrictEqual(error.missing, ["Idempotency-Key", "amount"])
    })

    it("StopFailed says in Russian that the subscription moved to review", () => {
      const error = StopFailed.of()
      assert.strictEqual(error._tag, "StopFailed")
      assert.match(error.message, cyrillic)
      assert.match(error.message, /review|проверк/i)
    })
  })

  describe("shape", () => {
    const all = [
      new InvalidRequest({ message: "terminal_id must be a UUID", field: "terminal_id" }),
      InvalidJsonBody.of(),
      AmountMalformed.of(),
      UsdtAmountMalformed.of(),
      AmountNotPositive.of(),
      new AmountExceedsCeiling({ message: "Сумма превышает потолок", ceiling: "4000.00", interval: "month" }),
      new Unauthenticated({ message: "X-Nonce header is required" }),
      NonceAlreadyUsed.of(),
      AccessDenied.terminal(),
      AccessDenied.account(),
      AccessDenied.subscriptionWrite(),
      TerminalIdRequired.of(),
      TerminalUnavailable.of(),
      NotFound.of("subscription"),
      IdempotencyConflict.of(),
      OrderIdConflict.of(),
      PlanNotAvailable.of(),
      RecurringNotConfigured.plans(),
      RecurringNotConfigured.subscriptions(),
      ProviderUnavailable.of(),
      RecurringTemporarilyUnavailable.of(),
      StopFailed.of(),
      SubscriptionFieldsMissing.of(["plan_id"]),
      InsufficientBalance.of(),
      MaxActivePayouts.of(),
      new InvalidTransition({ message: "payment in state canceled does not accept refund", entity: "payment", from: "canceled", event: "refund" }),
      new OperationNotAllowed({ message: "simulate is only available for sandbox payments" }),
      CsrfRejected.of(),
      InvalidCredentials.of(),
      new WriteConflict({ message: "duplicate", constraint: "payments_order_id" })
    ]

    it("gives every error a non-empty _tag and message", () => {
      for (const error of all) {
        assert.isString(error._tag)
        assert.isNotEmpty(error._tag)
        assert.isString(error.message)
        assert.isNotEmpty(error.message, error._tag)
        assert.instanceOf(error, Error)
      }
    })

    it("carries no HTTP status in any core error", () => {
      for (const error of all) {
        for (const key of ["status", "statusCode", "httpStatus", "code"]) {
          assert.isFalse(key in error, `${error._tag} has ${key}`)
        }
      }
    })

    it("uses distinct tags for distinct error classes", () => {
      const tagByClass = new Map<unknown, string>()
      for (const error of all) tagByClass.set(error.constructor, error._tag)
      assert.strictEqual(new Set(tagByClass.values()).size, tagByClass.size)
    })
  })
})
