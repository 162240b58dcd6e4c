/**
 * `jsonRows`, the one JSON parameter of the batched statements: its `Date` columns are written as
 * ISO text by hand (off `JSON.stringify`'s slow path), and the text must stay what `JSON.stringify`
 * wrote before, so PostgreSQL reads the same rows.
 */
import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import { jsonRows } from "../src/PgSupport.js"

describe("PgSupport.jsonRows", () => {
  it("writes rows as JSON.stringify does, Date columns included", () => {
    const instant = fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_999 })
    const value = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      instant.map((ms) => new Date(ms)),
      fc.constant(new Date(Number.NaN)),
      fc.dictionary(fc.string(), instant.map((ms) => new Date(ms)))
    )
    fc.assert(fc.property(fc.array(fc.dictionary(fc.string(), value)), (rows) => {
      expect(jsonRows(rows)).toBe(JSON.stringify(rows))
    }), { numRuns: 2_000 })
  })

  it("keeps the rows it is given as they are", () => {
    const row = { id: "a", created_at: new Date(1_772_262_000_000), paid_at: null }
    expect(jsonRows([row])).toBe(`[{"id":"a","created_at":"2026-02-28T07:00:00.000Z","paid_at":null}]`)
    expect(row.created_at).toBeInstanceOf(Date)
  })

  it("writes a lone surrogate as U+FFFD, in a row with a Date too", () => {
    const rows = [{ note: "a\ud800b", at: new Date(0) }]
    expect(jsonRows(rows)).toBe(`[{"note":"a\ufffdb","at":"1970-01-01T00:00:00.000Z"}]`)
  })
})
