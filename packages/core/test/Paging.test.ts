import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as fc from "fast-check"
import * as Paging from "../src/Paging.js"

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

describe("Paging", () => {
  it.effect("page n of size s starts at (n - 1) * s; limit replaces the page size", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* Paging.resolve({}, 50), { limit: 50, offset: 0, after: null, start: 0, page: 1 })
      assert.deepStrictEqual(yield* Paging.resolve({ page: 3 }, 50), { limit: 50, offset: 100, after: null, start: 100, page: 3 })
      assert.deepStrictEqual(yield* Paging.resolve({ page: 3, limit: 10 }, 50), { limit: 10, offset: 20, after: null, start: 20, page: 3 })
    }))

  it("a cursor resumes after the last record of the window, numbers the pages, and there is none after the last record", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 0, max: 1_000 }), (limit, total) => {
      // A list newest first: record i is older than record i - 1.
      const list = Array.from({ length: total }, (_, i) => ({ createdAt: 1_000_000 - i, id: uuid(i) }))
      const rowsOf = (read: Paging.ListPage) => {
        const from = read.after === null || read.after === undefined ? list : list.filter((r) => r.createdAt < read.after!.createdAt)
        return from.slice(read.offset, read.offset + read.limit)
      }
      let window = Effect.runSync(Paging.resolve({ limit }, 50))
      const seen: Array<string> = []
      for (let page = 1;; page++) {
        if (window.page !== page) return false
        const { items, nextCursor } = Paging.answer(window, rowsOf(Paging.read(window)))
        seen.push(...items.map((r) => r.id))
        if (nextCursor === null) break
        window = Effect.runSync(Paging.resolve({ limit, cursor: nextCursor }, 50))
      }
      return seen.join() === list.map((r) => r.id).join()
    }))
  })

  it.effect("a keyset cursor holds the last record's position and how many came before; an offset cursor still reads from its offset", () =>
    Effect.gen(function*() {
      const cursor = Paging.encodeCursor({ createdAt: 1_773_133_200_000, id: uuid(7) }, 20)
      assert.deepStrictEqual(yield* Paging.resolve({ cursor, limit: 10 }, 50), {
        limit: 10,
        offset: 0,
        after: { createdAt: 1_773_133_200_000, id: uuid(7) },
        start: 20,
        page: 3
      })
      const legacy = btoa("o:20").replace(/=+$/, "")
      assert.deepStrictEqual(yield* Paging.resolve({ cursor: legacy, limit: 10 }, 50), { limit: 10, offset: 20, after: null, start: 20, page: 3 })
    }))

  it("refuses a limit out of range, a foreign cursor and a cursor with a page", () => {
    const failure = (request: Paging.Request) => {
      const exit = Effect.runSyncExit(Paging.resolve(request, 50))
      return Exit.isFailure(exit) ? String(exit.cause) : "succeeded"
    }
    assert.match(failure({ limit: 0 }), /limit must be an integer from 1 to 100/)
    assert.match(failure({ limit: 101 }), /limit must be an integer from 1 to 100/)
    assert.match(failure({ cursor: "bm9wZQ" }), /cursor must be the next_cursor of a previous answer/)
    assert.match(failure({ cursor: "%%%" }), /cursor must be the next_cursor of a previous answer/)
    // An events cursor (createdAt.sequence.id) and a position with a made-up id are not cursors of these lists.
    assert.match(failure({ cursor: btoa(`1773133200000.3.${uuid(1)}`).replace(/=+$/, "") }), /cursor must be the next_cursor of a previous answer/)
    assert.match(failure({ cursor: btoa("1773133200000.not-a-uuid-not-a-uuid-not-a-uuid-xxxx.0").replace(/=+$/, "") }), /cursor must be the next_cursor/)
    assert.match(failure({ cursor: Paging.encodeCursor({ createdAt: 1, id: uuid(1) }, 50), page: 2 }), /cursor and page cannot be used together/)
    assert.match(failure({ page: 0 }), /page must be an integer of at least 1/)
  })
})
