/**
 * Every expected failure of Paydesk as a tagged error carrying the spec's message text.
 *
 * Errors carry no HTTP status: the HTTP adapter maps tags to statuses in one table.
 * Messages in backticks in the spec are reproduced exactly; where the spec only describes
 * a message (or asks for Russian text) the chosen wording is recorded in docs/decisions.md.
 */
import { Schema } from "effect"

/**
 * A noun of a message with its article: "an" before a vowel letter ("an ERC-20", "an unspecified"),
 * else "a" ("a TRC-20", "a loopback"). For the product's own fixed words (networks, address kinds),
 * whose sound follows their first letter.
 */
export const withArticle = (noun: string): string => `${/^[aeiou]/i.test(noun) ? "an" : "a"} ${noun}`

const message = { message: Schema.String }
/** A message and the request field at fault, when known (the HTTP error's `field`). */
const withField = { message: Schema.String, field: Schema.optional(Schema.String) }

/** The kind of request a 400 came from; lets a host tell validation failures apart. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  message: Schema.String,
  field: Schema.optional(Schema.String)
}) {}

/** Malformed JSON or an unknown field in a body that forbids them. */
export class InvalidJsonBody extends Schema.TaggedError<InvalidJsonBody>()("InvalidJsonBody", withField) {
  static readonly text = "invalid json body"
  /** The spec's text; `field` names the body's field at fault when one is (a value of the wrong type). */
  static of(field?: string): InvalidJsonBody {
    return new InvalidJsonBody(field === undefined ? { message: InvalidJsonBody.text } : { message: InvalidJsonBody.text, field })
  }
}

/** A rouble amount that is not rubles with at most two decimals. */
export class AmountMalformed extends Schema.TaggedError<AmountMalformed>()("AmountMalformed", withField) {
  static readonly text = "amount malformed: rubles with at most two decimals"
  static of(field?: string): AmountMalformed {
    return new AmountMalformed({ message: AmountMalformed.text, ...(field === undefined ? {} : { field }) })
  }
}

/** A USDT amount or a rate that is not a plain decimal with at most six decimals. */
export class UsdtAmountMalformed extends Schema.TaggedError<UsdtAmountMalformed>()("UsdtAmountMalformed", withField) {
  static readonly text = "amount_usdt malformed: a decimal with at most six decimals"
  static of(field?: string): UsdtAmountMalformed {
    return new UsdtAmountMalformed({ message: UsdtAmountMalformed.text, ...(field === undefined ? {} : { field }) })
  }
}

/** Zero or negative where an amount must be greater than zero. */
export class AmountNotPositive extends Schema.TaggedError<AmountNotPositive>()("AmountNotPositive", withField) {
  static readonly text = "amount must be greater than zero"
  static of(field?: string): AmountNotPositive {
    return new AmountNotPositive({ message: AmountNotPositive.text, ...(field === undefined ? {} : { field }) })
  }
}

/** A ceiling-mode amount above the plan's cap; the Russian text names ceiling and period. */
export class AmountExceedsCeiling extends Schema.TaggedError<AmountExceedsCeiling>()("AmountExceedsCeiling", {
  message: Schema.String,
  ceiling: Schema.String,
  interval: Schema.String
}) {
  /** The spec's Russian message ("the amount exceeds the limit of 4000.00 RUB per month"): the ceiling as a decimal string, the period's Russian label. */
  static of(ceiling: string, interval: string, periodLabel: string): AmountExceedsCeiling {
    return new AmountExceedsCeiling({ ceiling, interval, message: `Сумма превышает лимит ${ceiling} RUB за ${periodLabel}` })
  }
}

/** 401: the API key is missing or unknown, or a bearer token is invalid or expired. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", message) {}

/** 401 `nonce already used`. */
export class NonceAlreadyUsed extends Schema.TaggedError<NonceAlreadyUsed>()("NonceAlreadyUsed", message) {
  static readonly text = "nonce already used"
  static of(): NonceAlreadyUsed {
    return new NonceAlreadyUsed({ message: NonceAlreadyUsed.text })
  }
}

/**
 * 403 `terminal access denied`, `account access denied`, `subscription write access required`, and
 * `account owner access required` (credential management with anything but the owner's bearer token).
 */
export class AccessDenied extends Schema.TaggedError<AccessDenied>()("AccessDenied", {
  message: Schema.Literals(["terminal access denied", "account access denied", "subscription write access required", "account owner access required"])
}) {
  static readonly owner = () => new AccessDenied({ message: "account owner access required" })
  static readonly terminal = () => new AccessDenied({ message: "terminal access denied" })
  static readonly account = () => new AccessDenied({ message: "account access denied" })
  static readonly subscriptionWrite = () => new AccessDenied({ message: "subscription write access required" })
}

/** 400 `terminal_id is required`. */
export class TerminalIdRequired extends Schema.TaggedError<TerminalIdRequired>()("TerminalIdRequired", message) {
  static readonly text = "terminal_id is required"
  static of(): TerminalIdRequired {
    return new TerminalIdRequired({ message: TerminalIdRequired.text })
  }
}

/** 400 `terminal is unavailable`: the terminal is disabled. */
export class TerminalUnavailable extends Schema.TaggedError<TerminalUnavailable>()("TerminalUnavailable", message) {
  static readonly text = "terminal is unavailable"
  static of(): TerminalUnavailable {
    return new TerminalUnavailable({ message: TerminalUnavailable.text })
  }
}

/** 404 for any resource; the message names it (`subscription not found`, `payment not found`, ...). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: Schema.String,
  resource: Schema.String
}) {
  static of(resource: "subscription" | "payment" | "payout" | "terminal" | "account" | "plan" | "delivery" | "user" | "api key" | "event" | "test clock"): NotFound {
    return new NotFound({ resource, message: `${resource} not found` })
  }
}

/** 409: the same idempotency key (or order_id) with another body. */
export class IdempotencyConflict extends Schema.TaggedError<IdempotencyConflict>()("IdempotencyConflict", message) {
  static readonly text = "idempotency key conflicts with another request"
  static of(): IdempotencyConflict {
    return new IdempotencyConflict({ message: IdempotencyConflict.text })
  }
  /** A signing-secret rotation's key after a later rotation replaced the secret it made. */
  static rotationReplaced(): IdempotencyConflict {
    return new IdempotencyConflict({
      message: `${IdempotencyConflict.text}: a later rotation replaced the secret this key made (verify X-Signature-Next with the later rotation's secret, then retire-previous)`
    })
  }
}

/** 409: a payment with this order_id exists with other parameters. */
export class OrderIdConflict extends Schema.TaggedError<OrderIdConflict>()("OrderIdConflict", message) {
  static readonly text = "order_id already used for another payment"
  static of(): OrderIdConflict {
    return new OrderIdConflict({ message: OrderIdConflict.text })
  }
}

/** 400: the selected plan is unknown, inactive or not connected to the terminal. */
export class PlanNotAvailable extends Schema.TaggedError<PlanNotAvailable>()("PlanNotAvailable", message) {
  static readonly text = "selected plan is not available for this terminal"
  static of(): PlanNotAvailable {
    return new PlanNotAvailable({ message: PlanNotAvailable.text })
  }
}

/** 503 `recurring plans not configured` / `subscriptions not configured`. */
export class RecurringNotConfigured extends Schema.TaggedError<RecurringNotConfigured>()("RecurringNotConfigured", {
  message: Schema.Literals(["recurring plans not configured", "subscriptions not configured"])
}) {
  static readonly plans = () => new RecurringNotConfigured({ message: "recurring plans not configured" })
  static readonly subscriptions = () => new RecurringNotConfigured({ message: "subscriptions not configured" })
}

/** 503 `provider not available`: the acquirer could not be reached. */
export class ProviderUnavailable extends Schema.TaggedError<ProviderUnavailable>()("ProviderUnavailable", message) {
  static readonly text = "provider not available"
  static of(): ProviderUnavailable {
    return new ProviderUnavailable({ message: ProviderUnavailable.text })
  }
}

/** 400: the acquirer refuses new recurring bindings for now. */
export class RecurringTemporarilyUnavailable
  extends Schema.TaggedError<RecurringTemporarilyUnavailable>()("RecurringTemporarilyUnavailable", message)
{
  static readonly text = "recurring scenario temporarily unavailable"
  static of(): RecurringTemporarilyUnavailable {
    return new RecurringTemporarilyUnavailable({ message: RecurringTemporarilyUnavailable.text })
  }
}

/** 400 (Russian): the stop could not be completed and the subscription moved to review. */
export class StopFailed extends Schema.TaggedError<StopFailed>()("StopFailed", message) {
  static readonly text = "Не удалось завершить отключение подписки: подписка переведена на проверку (review)"
  static of(): StopFailed {
    return new StopFailed({ message: StopFailed.text })
  }
}

/** 400 (Russian): Idempotency-Key, terminal, plan or amount missing on subscription creation. */
export class SubscriptionFieldsMissing extends Schema.TaggedError<SubscriptionFieldsMissing>()("SubscriptionFieldsMissing", {
  message: Schema.String,
  missing: Schema.Array(Schema.String)
}) {
  static readonly text =
    "Укажите терминал (terminal_id), план (plan_id), сумму (amount) и ключ идемпотентности (Idempotency-Key)"
  static of(missing: ReadonlyArray<string>): SubscriptionFieldsMissing {
    return new SubscriptionFieldsMissing({ message: SubscriptionFieldsMissing.text, missing: [...missing] })
  }
}

/** 400 `insufficient balance`. */
export class InsufficientBalance extends Schema.TaggedError<InsufficientBalance>()("InsufficientBalance", message) {
  static readonly text = "insufficient balance"
  static of(): InsufficientBalance {
    return new InsufficientBalance({ message: InsufficientBalance.text })
  }
}

/** 409 `max active payouts reached`. */
export class MaxActivePayouts extends Schema.TaggedError<MaxActivePayouts>()("MaxActivePayouts", message) {
  static readonly text = "max active payouts reached"
  static of(): MaxActivePayouts {
    return new MaxActivePayouts({ message: MaxActivePayouts.text })
  }
}

/** 409: the state machine does not allow this move (e.g. refund of an unpaid payment). */
export class InvalidTransition extends Schema.TaggedError<InvalidTransition>()("InvalidTransition", {
  message: Schema.String,
  entity: Schema.String,
  from: Schema.String,
  event: Schema.String
}) {}

/** 400: the operation is not available for this payment (sandbox simulate on live, refund of sandbox). */
export class OperationNotAllowed extends Schema.TaggedError<OperationNotAllowed>()("OperationNotAllowed", message) {}

/** 403: the payer page's csrf_token did not match. */
export class CsrfRejected extends Schema.TaggedError<CsrfRejected>()("CsrfRejected", message) {
  static readonly text = "invalid csrf_token"
  static of(): CsrfRejected {
    return new CsrfRejected({ message: CsrfRejected.text })
  }
}

/** 401 on login: wrong e-mail or password (one message for both, no user enumeration). */
export class InvalidCredentials extends Schema.TaggedError<InvalidCredentials>()("InvalidCredentials", message) {
  static readonly text = "invalid email or password"
  static of(): InvalidCredentials {
    return new InvalidCredentials({ message: InvalidCredentials.text })
  }
}

/** 409: a unique rule was violated by a concurrent writer; the use case retries once. */
export class WriteConflict extends Schema.TaggedError<WriteConflict>()("WriteConflict", {
  message: Schema.String,
  constraint: Schema.String
}) {}

/** A time zone the database does not know (the use case answers 400 on `time_zone`, as for a name no IANA table has). */
export class UnknownTimeZone extends Schema.TaggedError<UnknownTimeZone>()("UnknownTimeZone", {
  timeZone: Schema.String
}) {}

/** 503: too many password checks are already running or waiting; retry shortly (bounds memory-hard hashing). */
export class ServiceBusy extends Schema.TaggedError<ServiceBusy>()("ServiceBusy", message) {
  static readonly text = "too many sign-ins in progress, retry shortly"
  static of(): ServiceBusy {
    return new ServiceBusy({ message: ServiceBusy.text })
  }
}

/** 400: text the store cannot hold (a NUL character, an encoding the database refuses). */
export class UnstorableText extends Schema.TaggedError<UnstorableText>()("UnstorableText", message) {
  static readonly text = "text contains characters that cannot be stored (such as NUL, \\u0000)"
  static of(): UnstorableText {
    return new UnstorableText({ message: UnstorableText.text })
  }
}

/** 409: the test clock is advancing; its objects cannot change until the advance ends. */
export class TestClockAdvancing extends Schema.TaggedError<TestClockAdvancing>()("TestClockAdvancing", message) {
  static readonly text = "test clock is advancing"
  static of(): TestClockAdvancing {
    return new TestClockAdvancing({ message: TestClockAdvancing.text })
  }
}

/** Every error a merchant-facing use case can fail with. */
export type PaydeskError =
  | InvalidRequest
  | InvalidJsonBody
  | AmountMalformed
  | UsdtAmountMalformed
  | AmountNotPositive
  | AmountExceedsCeiling
  | Unauthenticated
  | NonceAlreadyUsed
  | AccessDenied
  | TerminalIdRequired
  | TerminalUnavailable
  | NotFound
  | IdempotencyConflict
  | OrderIdConflict
  | PlanNotAvailable
  | RecurringNotConfigured
  | ProviderUnavailable
  | RecurringTemporarilyUnavailable
  | StopFailed
  | SubscriptionFieldsMissing
  | InsufficientBalance
  | MaxActivePayouts
  | InvalidTransition
  | OperationNotAllowed
  | InvalidCredentials
  | CsrfRejected
  | WriteConflict
  | ServiceBusy
  | UnstorableText
  | TestClockAdvancing
