/**
 * Assertions shared by the contract suites.
 *
 * Suites assert on values with `assert` from `@effect/vitest`; these helpers cover the recurring
 * shapes: an `Option` that must be present, a failure with a given tag, a defect, and a repeated
 * effect run concurrently.
 */
import { assert } from "@effect/vitest"
import { Cause, Effect, Exit, Option } from "effect"

/** The value of a `Some`, failing the test on `None`. */
export const some = <A>(option: Option.Option<A>, what = "value"): A => {
  if (Option.isNone(option)) return assert.fail(`expected ${what} to be present`)
  return option.value
}

/** Asserts `None`. */
export const none = <A>(option: Option.Option<A>, what = "value"): void => {
  assert.isTrue(Option.isNone(option), `expected no ${what}`)
}

/** Runs `effect` and asserts it fails with an error tagged `tag`; returns that error. */
export const expectFailure = <A, E extends { readonly _tag: string }, R>(
  effect: Effect.Effect<A, E, R>,
  tag: E["_tag"]
): Effect.Effect<E, never, R> =>
  Effect.map(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) return assert.fail(`expected a ${tag} failure, got success`)
    const error = Cause.findErrorOption(exit.cause)
    if (Option.isNone(error)) return assert.fail(`expected a ${tag} failure, got ${Cause.pretty(exit.cause)}`)
    assert.strictEqual(error.value._tag, tag)
    return error.value
  })

/** Asserts `effect` fails with `WriteConflict`. */
export const expectWriteConflict = <A, E extends { readonly _tag: string }, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<void, never, R> => Effect.asVoid(expectFailure(effect, "WriteConflict" as E["_tag"]))

/** Asserts `effect` dies (a defect, not a typed failure). */
export const expectDefect = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<void, never, R> =>
  Effect.map(Effect.exit(effect), (exit) => {
    assert.isTrue(Exit.isFailure(exit), "expected a defect, got success")
    if (Exit.isFailure(exit)) {
      assert.isTrue(Cause.hasDies(exit.cause), `expected a defect, got ${Cause.pretty(exit.cause)}`)
    }
  })

/** Asserts `effect` does not succeed (typed failure or defect; adapters may report either). */
export const expectNoSuccess = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<void, never, R> =>
  Effect.map(Effect.exit(effect), (exit) => assert.isTrue(Exit.isFailure(exit), "expected the effect to fail"))

/** Runs `n` copies of `make(i)` concurrently and collects their exits in order. */
export const concurrently = <A, E, R>(
  n: number,
  make: (i: number) => Effect.Effect<A, E, R>
): Effect.Effect<Array<Exit.Exit<A, E>>, never, R> =>
  Effect.forEach(Array.from({ length: n }, (_, i) => i), (i) => Effect.exit(make(i)), { concurrency: "unbounded" })

/** Ids of records, for set comparisons. */
export const ids = (records: ReadonlyArray<{ readonly id: string }>): Array<string> => records.map((r) => r.id)

/** The records whose id is in `wanted`, in their original order. */
export const only = <T extends { readonly id: string }>(
  records: ReadonlyArray<T>,
  wanted: ReadonlyArray<{ readonly id: string }>
): Array<T> => {
  const set = new Set(wanted.map((w) => w.id))
  return records.filter((r) => set.has(r.id))
}
