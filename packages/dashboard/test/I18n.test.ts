import { describe, expect, it } from "vitest"
import { dictionaries, formatRub, translator } from "../src/I18n.js"

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).toSorted()

describe("I18n", () => {
  it("English and Russian have the same keys and the same placeholders in each text", () => {
    expect(Object.keys(dictionaries.ru).toSorted()).toEqual(Object.keys(dictionaries.en).toSorted())
    for (const [key, text] of Object.entries(dictionaries.en)) {
      expect(placeholders(dictionaries.ru[key as keyof typeof dictionaries.en]), key).toEqual(placeholders(text))
      expect(dictionaries.ru[key as keyof typeof dictionaries.en].trim(), key).not.toBe("")
    }
  })

  it("fills placeholders and leaves unknown ones visible", () => {
    expect(translator("en")("paging.of", { page: 2, pages: 5, total: 90 })).toBe("Page 2 of 5 (90 in all)")
    expect(translator("ru")("payment.title", {})).toBe("Платёж {order}")
  })

  it("formats rouble strings without floating point", () => {
    expect(formatRub("en", "1234567.50")).toBe("₽1,234,567.50")
    expect(formatRub("ru", "1234567.50")).toBe("1\u00a0234\u00a0567,50\u00a0₽")
    expect(formatRub("en", "0.05")).toBe("₽0.05")
  })
})
