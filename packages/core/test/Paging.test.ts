import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as fc from "fast-check"
import * as Paging from "../src/Paging.js"

describe("Paging", () => {
  it.effect("page n of size s starts at (n - 1) * s; limit replaces the page size", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* Paging.resolve({}, 50), { limit: 50, offset: 0, page: 1 })
      assert.deepStrictEqual(yield* Paging.resolve({ page: 3 }, 50), { limit: 50, offset: 100, page: 3 })
      assert.deepStrictEqual(yield* Paging.resolve({ page: 3, limit: 10 }, 50), { limit: 10, offset: 20, page: 3 })
    }))

  it("a cursor resumes where the last window ended, and there is none after the last record", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 0, max: 10_000 }), (limit, total) => {
      let window = Effect.runSync(Paging.resolve({ limit }, 50))
      let seen = 0
      for (;;) {
        seen += Math.max(0, Math.min(limit, total - window.offset))
        const next = Paging.next(window, total)
        if (next === null) break
        window = Effect.runSync(Paging.resolve({ limit, cursor: next }, 50))
      }
      return seen === total
    }))
  })

  it("refuses a limit out of range, a foreign cursor and a cursor with a page", () => {
    const failure = (request: Paging.Request) => {
      const exit = Effect.runSyncExit(Paging.resolve(request, 50))
      return Exit.isFailure(exit) ? String(exit.cause) : "succeeded"
    }
    assert.match(failure({ limit: 0 }), /limit must be an integer from 1 to 100/)
    assert.match(failure({ limit: 101 }), /limit must be an integer from 1 to 100/)
    assert.match(failure({ cursor: "bm9wZQ" }), /cursor must be the next_cursor of a previous answer/)
    assert.match(failure({ cursor: "%%%" }), /cursor must be the next_cursor of a previous answer/)
    assert.match(failure({ cursor: Paging.encodeCursor(50), page: 2 }), /cursor and page cannot be used together/)
    assert.match(failure({ page: 0 }), /page must be an integer of at least 1/)
  })
})
