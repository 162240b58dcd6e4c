/**
 * `Bytes.characterCount`: a limit in characters counts code points (an emoji one, as JSON Schema's
 * `maxLength` and PostgreSQL's `length` do), where `String.length` counts UTF-16 units (an emoji two).
 */
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import * as Bytes from "../src/Bytes.js"

describe("Bytes.characterCount", () => {
  it("counts code points: a pair is one, a lone surrogate one", () => {
    expect(Bytes.characterCount("")).toBe(0)
    expect(Bytes.characterCount("abc")).toBe(3)
    expect(Bytes.characterCount("😀".repeat(65))).toBe(65)
    expect(Bytes.characterCount("a😀b")).toBe(3)
    expect(Bytes.characterCount("\ud800")).toBe(1)
    expect(Bytes.characterCount("\udfff\ud800")).toBe(2)
    expect(Bytes.characterCount("\ud800😀")).toBe(2)
  })

  it("agrees with the string's code points for any text", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (text) => Bytes.characterCount(text) === [...text].length))
  })
})
