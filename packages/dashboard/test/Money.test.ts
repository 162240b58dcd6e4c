import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { kopecks, microUsdt, rubles, signedMicroUsdt } from "../src/Money.js"

describe("Money", () => {
  it("kopecks and rubles round-trip the API's rouble strings", () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), (k) => {
      expect(kopecks(rubles(k))).toBe(k)
    }))
    expect(kopecks("1000.50")).toBe(100050n)
    expect(kopecks("7")).toBe(700n)
    expect(rubles(5n)).toBe("0.05")
  })

  it("sums exactly where floats would not", () => {
    expect(rubles(kopecks("0.10") + kopecks("0.20"))).toBe("0.30")
  })

  it("microUsdt reads at most six decimals and refuses anything else", () => {
    expect(microUsdt("40.5")).toBe(40_500_000n)
    expect(microUsdt(" 100.000000 ")).toBe(100_000_000n)
    expect(microUsdt("0.000001")).toBe(1n)
    for (const bad of ["", "1.", ".5", "1.0000001", "-1", "1e3", "1,5", "abc"]) expect(microUsdt(bad), bad).toBeNull()
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), (m) => {
      expect(microUsdt(`${m / 1_000_000n}.${String(m % 1_000_000n).padStart(6, "0")}`)).toBe(m)
    }))
  })

  it("signedMicroUsdt also reads a negative balance; a sign alone or twice is refused", () => {
    expect(signedMicroUsdt("-10.000000")).toBe(-10_000_000n)
    expect(signedMicroUsdt(" -0.000001 ")).toBe(-1n)
    expect(signedMicroUsdt("12838.749216")).toBe(12_838_749_216n)
    for (const bad of ["-", "--1", "+1", "- 1", "1-", ""]) expect(signedMicroUsdt(bad), bad).toBeNull()
  })
})
