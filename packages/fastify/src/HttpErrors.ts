/**
 * The one table from core error tags to HTTP statuses, and the one error body of the API:
 *
 *   { "error": { "code": "nonce_already_used", "message": "nonce already used", "request_id": "req_…", "field"?: "amount" } }
 *
 * `message` is the spec's text; `code` is stable and machine-readable. Defects are 500 with
 * `internal_error` and no detail, except `UnstorableText`, with which a store dies on text it
 * cannot hold (a 400: the request's fault, not the server's).
 */
import { Cause, Exit, Option } from "effect"
import type { PaydeskError } from "@paydesk/core"

/** HTTP status of every core error tag. */
export const statusOf: Record<PaydeskError["_tag"], number> = {
  InvalidRequest: 400,
  InvalidJsonBody: 400,
  AmountMalformed: 400,
  UsdtAmountMalformed: 400,
  AmountNotPositive: 400,
  AmountExceedsCeiling: 400,
  Unauthenticated: 401,
  NonceAlreadyUsed: 401,
  AccessDenied: 403,
  TerminalIdRequired: 400,
  TerminalUnavailable: 400,
  NotFound: 404,
  IdempotencyConflict: 409,
  OrderIdConflict: 409,
  PlanNotAvailable: 400,
  RecurringNotConfigured: 503,
  ProviderUnavailable: 503,
  RecurringTemporarilyUnavailable: 400,
  StopFailed: 400,
  SubscriptionFieldsMissing: 400,
  InsufficientBalance: 400,
  MaxActivePayouts: 409,
  InvalidTransition: 409,
  OperationNotAllowed: 400,
  InvalidCredentials: 401,
  WriteConflict: 409,
  CsrfRejected: 403,
  ServiceBusy: 503,
  UnstorableText: 400,
  TestClockAdvancing: 409
}

/** `NonceAlreadyUsed` -> `nonce_already_used`. */
export const codeOf = (tag: string): string => tag.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase()

/** An error response: status and body. */
export interface ErrorResponse {
  readonly status: number
  readonly body: { readonly error: { readonly code: string; readonly message: string; readonly request_id: string; readonly field?: string } }
}

/** Builds an error response. */
export const errorResponse = (status: number, code: string, message: string, requestId: string, field?: string): ErrorResponse => ({
  status,
  body: { error: { code, message, request_id: requestId, ...(field === undefined ? {} : { field }) } }
})

/** The response of a failed use case: its typed error mapped by the table, or 500. */
export const fromExit = (exit: Exit.Exit<unknown, unknown>, requestId: string): ErrorResponse | null => {
  if (Exit.isSuccess(exit)) return null
  const failure = Cause.findErrorOption(exit.cause)
  if (Option.isSome(failure)) {
    const error = failure.value as { _tag?: string; message?: string; field?: string; missing?: ReadonlyArray<string> }
    const status = error._tag !== undefined ? statusOf[error._tag as PaydeskError["_tag"]] : undefined
    if (status !== undefined) {
      // A refusal of missing fields (the spec's Russian text names all four) names the first missing one.
      return errorResponse(status, codeOf(error._tag!), error.message ?? "", requestId, error.field ?? error.missing?.[0])
    }
  }
  const defect = Cause.findDefect(exit.cause)
  if (defect._tag === "Success" && (defect.success as { _tag?: unknown } | null)?._tag === "UnstorableText") {
    return errorResponse(400, "unstorable_text", (defect.success as { message: string }).message, requestId)
  }
  return errorResponse(500, "internal_error", "internal error", requestId)
}
