/**
 * The bidi helpers exist twice: the payer pages' (`@paydesk/fastify`, `PublicPages`) and the
 * dashboard's (`Bidi.ts`), which may depend on no workspace package but the client. The two copies
 * must treat every text alike: checked here, outside both packages, on random texts rich in the
 * characters they handle.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Dashboard from "../packages/dashboard/src/Bidi.js"
import * as PayerPages from "../packages/fastify/src/PublicPages.js"

const characters = ["a", "ж", "ש", "1", " ", "\n", "\r", "\u2029", "\u0085", "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u200f"]
const texts = fc.array(fc.constantFrom(...characters), { maxLength: 40 }).map((chars) => chars.join(""))

describe("the two copies of the bidi helpers", () => {
  it("balance isolates and take bidi controls out alike", () => {
    fc.assert(fc.property(texts, (text) => {
      expect(Dashboard.balanceIsolates(text)).toBe(PayerPages.balanceIsolates(text))
      expect(Dashboard.withoutBidiControls(text)).toBe(PayerPages.withoutBidiControls(text))
    }), { numRuns: 2000 })
  })
})
