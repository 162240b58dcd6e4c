/**
 * How a use case's outcome becomes an Inngest step outcome, in one place: success returns the
 * value; a retryable failure (a concurrent writer, an unreachable provider, a defect or an
 * interruption) throws `RetryAfterError`; every other typed error throws `NonRetriableError`,
 * because retrying a refused request cannot change the answer.
 */
import { Cause, Exit, type Effect } from "effect"
import type { Runner } from "@paydesk/core"
import { NonRetriableError, RetryAfterError } from "inngest"

/** Tags of typed errors worth retrying, with the delay before the retry. */
export const retryableTags: ReadonlyMap<string, string> = new Map([
  ["WriteConflict", "1s"],
  ["ProviderUnavailable", "30s"]
])

/** Delay before retrying after a defect or an interruption. */
export const defectRetryAfter = "30s"

/** The Inngest error a failed use case maps to. */
export type StepError = RetryAfterError | NonRetriableError

const tagOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" ? error._tag : undefined

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

/** Maps the cause of a failed use case to the error Inngest should see. */
export const fromCause = <E>(cause: Cause.Cause<E>): StepError => {
  if (Cause.hasDies(cause) || !Cause.hasFails(cause)) {
    const defect = Cause.squash(cause)
    const what = Cause.hasDies(cause) ? `defect: ${messageOf(defect)}` : "interrupted"
    return new RetryAfterError(what, defectRetryAfter, { cause: defect })
  }
  const error = Cause.findErrorOption(cause)
  const failure = error._tag === "Some" ? error.value : Cause.squash(cause)
  const tag = tagOf(failure)
  const message = tag === undefined ? messageOf(failure) : `${tag}: ${messageOf(failure)}`
  const retryAfter = tag === undefined ? undefined : retryableTags.get(tag)
  return retryAfter === undefined
    ? new NonRetriableError(message, { cause: failure })
    : new RetryAfterError(message, retryAfter, { cause: failure })
}

/** The success value of an Exit, or throws the mapped Inngest error. */
export const fromExit = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isSuccess(exit)) return exit.value
  throw fromCause(exit.cause)
}

/** Runs a use case on the host's runtime; resolves with its value or rejects with the mapped Inngest error. */
export const runStep = async <A, E, R>(runtime: Runner.Runner<R>, effect: Effect.Effect<A, E, R>): Promise<A> =>
  fromExit(await runtime.runPromiseExit(effect))
