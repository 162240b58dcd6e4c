/**
 * An embedded PostgreSQL killed under its program (`kill -9`, the OOM killer): `Running.exited`
 * says so, and `stop()` ends at once with a notice, where it used to wait for ever for an exit that
 * had already happened (the server's SIGTERM then never finished: outside probe).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { chmod, mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as EmbeddedPostgres from "../src/EmbeddedPostgres.js"

const alive = EmbeddedPostgres.alive

/** `promise`, or "timed out" after `ms`. */
const within = <A>(promise: Promise<A>, ms: number): Promise<A | "timed out"> =>
  Promise.race([promise, new Promise<"timed out">((ok) => setTimeout(() => ok("timed out"), ms).unref())])

/** An embedded PostgreSQL started in a fresh directory, with the notices it gives and its postmaster's pid. */
const started = Effect.gen(function*() {
  const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "paydesk-embedded-death-")))
  yield* Effect.promise(() => chmod(dir, 0o755))
  const dataDir = join(dir, "data")
  const notices: Array<string> = []
  const running = yield* Effect.promise(() => EmbeddedPostgres.start({ dataDir, notice: (message) => notices.push(message) }))
  const postmaster = Number.parseInt(readFileSync(join(dataDir, "postmaster.pid"), "utf8"), 10)
  return { dir, notices, running, postmaster }
})

describe("EmbeddedPostgres killed under its program", () => {
  it.live("exited resolves, and stop() ends with a notice instead of waiting for ever", () =>
    Effect.gen(function*() {
      const { dir, notices, running, postmaster } = yield* started
      try {
        process.kill(postmaster, "SIGKILL")
        const exited = yield* Effect.promise(() => within(running.exited, 10_000))
        // Gone for certain (whatever `exited` said): the stop meets a postgres that has exited.
        for (const until = Date.now() + 10_000; alive(postmaster) && Date.now() < until;) yield* Effect.sleep("50 millis")
        const stopped = yield* Effect.promise(() => within(running.stop().then(() => "stopped"), 15_000))
        assert.strictEqual(stopped, "stopped")
        assert.strictEqual(notices.length, 1)
        assert.match(notices[0]!, new RegExp(`\\(process ${postmaster}\\) had exited before its stop`))
        assert.deepStrictEqual(exited, { pid: postmaster })
      } finally {
        // The postmaster's children outlive a kill -9 of it for a moment; a test that failed leaves none behind.
        if (alive(postmaster)) process.kill(postmaster, "SIGKILL")
        yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
      }
    }), 120_000)

  it.live("a normal stop waits for PostgreSQL's exit and says nothing", () =>
    Effect.gen(function*() {
      const { dir, notices, running, postmaster } = yield* started
      yield* Effect.promise(() => running.stop())
      assert.isFalse(alive(postmaster))
      assert.deepStrictEqual(notices, [])
      // A stop is no death: `exited` does not resolve.
      assert.strictEqual(yield* Effect.promise(() => within(running.exited, 2_000)), "timed out")
      yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
    }), 120_000)
})
