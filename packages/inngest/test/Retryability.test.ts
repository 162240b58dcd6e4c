import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, ManagedRuntime } from "effect"
import { InvalidRequest, NotFound, ProviderUnavailable, WriteConflict } from "@paydesk/core"
import { NonRetriableError, RetryAfterError } from "inngest"
import * as Retryability from "../src/Retryability.js"

const thrown = (f: () => unknown): unknown => {
  try {
    f()
  } catch (error) {
    return error
  }
  assert.fail("expected a throw")
}

describe("Retryability", () => {
  it("success returns the value", () => {
    assert.deepStrictEqual(Retryability.fromExit(Exit.succeed({ charges: 2 })), { charges: 2 })
  })

  it("WriteConflict retries after a second", () => {
    const conflict = new WriteConflict({ message: "version check failed", constraint: "subscriptions_version" })
    const error = thrown(() => Retryability.fromExit(Exit.fail(conflict)))
    assert.instanceOf(error, RetryAfterError)
    assert.strictEqual((error as RetryAfterError).message, "WriteConflict: version check failed")
    assert.strictEqual((error as RetryAfterError).retryAfter, "1")
    assert.strictEqual((error as RetryAfterError).cause, conflict)
  })

  it("ProviderUnavailable retries after thirty seconds", () => {
    const error = thrown(() => Retryability.fromExit(Exit.fail(ProviderUnavailable.of())))
    assert.instanceOf(error, RetryAfterError)
    assert.strictEqual((error as RetryAfterError).retryAfter, "30")
  })

  it("NotFound and other typed errors are not retried", () => {
    const notFound = thrown(() => Retryability.fromExit(Exit.fail(NotFound.of("subscription"))))
    assert.instanceOf(notFound, NonRetriableError)
    assert.notInstanceOf(notFound, RetryAfterError)
    assert.strictEqual((notFound as NonRetriableError).message, "NotFound: subscription not found")
    const invalid = thrown(() => Retryability.fromExit(Exit.fail(new InvalidRequest({ message: "amount is required" }))))
    assert.instanceOf(invalid, NonRetriableError)
    const untagged = thrown(() => Retryability.fromExit(Exit.fail({ _tag: "toString", message: "odd" })))
    assert.instanceOf(untagged, NonRetriableError)
  })

  it("a defect retries, also when it comes with a typed error", () => {
    const defect = thrown(() => Retryability.fromExit(Exit.die(new Error("boom"))))
    assert.instanceOf(defect, RetryAfterError)
    assert.strictEqual((defect as RetryAfterError).message, "defect: boom")
    assert.strictEqual((defect as RetryAfterError).retryAfter, "30")
    const both = Cause.combine(Cause.fail(NotFound.of("payment")), Cause.die(new Error("boom")))
    assert.instanceOf(Retryability.fromCause(both), RetryAfterError)
  })

  it("an interruption retries", () => {
    const error = Retryability.fromCause(Cause.interrupt())
    assert.instanceOf(error, RetryAfterError)
    assert.strictEqual(error.message, "interrupted")
  })

  it("runStep runs the effect on the runtime and throws the mapped error", async () => {
    const runtime = ManagedRuntime.make(Layer.empty)
    try {
      assert.strictEqual(await Retryability.runStep(runtime, Effect.succeed(42)), 42)
      const rejected = await Retryability.runStep(runtime, Effect.fail(NotFound.of("payment"))).then(
        () => assert.fail("expected a rejection"),
        (error: unknown) => error
      )
      assert.instanceOf(rejected, NonRetriableError)
      const died = await Retryability.runStep(runtime, Effect.die("oops")).then(
        () => assert.fail("expected a rejection"),
        (error: unknown) => error
      )
      assert.instanceOf(died, RetryAfterError)
      assert.strictEqual((died as Error).message, "defect: oops")
    } finally {
      await runtime.dispose()
    }
  })
})
