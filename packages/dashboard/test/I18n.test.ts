import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { apiErrorText, dictionaries, formatDecimal, formatRate, formatRub, formatUsdt, moscowTimeLocally, translator } from "../src/I18n.js"

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).toSorted()

describe("I18n", () => {
  it("shows the API's refusals in Russian by their code, with the API's detail where it names the field; in English the API's message", () => {
    const login = { code: "invalid_credentials", message: "invalid email or password" }
    expect([apiErrorText("ru", login), apiErrorText("en", login)]).toEqual(["Неверный e-mail или пароль.", "invalid email or password"])
    expect(apiErrorText("ru", { code: "too_many_requests", message: "too many login attempts, retry in 53 s", retryAfterMs: 52_100 }))
      .toBe("Слишком много попыток: повторите через 53 с.")
    expect(apiErrorText("ru", { code: "invalid_request", message: "wallet_address is not a TRC-20 address" }))
      .toBe("Неверные данные: wallet_address is not a TRC-20 address")
    // A code without a Russian text (one only the operator meets, or a new one) keeps the API's message.
    expect(apiErrorText("ru", { code: "clock_not_manual", message: "clock is not manual" })).toBe("clock is not manual")
    expect(apiErrorText("ru", { code: "constructor", message: "something new" })).toBe("something new")
    expect(apiErrorText("en", { code: "constructor", message: "something new" })).toBe("something new")
  })

  it("shows no Russian on the English page for a refusal whose API message is the spec's Russian text", () => {
    const stopFailed = { code: "stop_failed", message: "Не удалось завершить отключение подписки: подписка переведена на проверку (review)" }
    expect(apiErrorText("en", stopFailed)).toBe("The subscription could not be stopped: it was moved to review.")
    expect(apiErrorText("ru", stopFailed)).toBe("Не удалось завершить отключение подписки: подписка переведена на проверку (review).")
  })

  it("has a Russian text for every error code the dashboard's own calls can meet", () => {
    // Sign-in and sessions, terminal settings and test events, API keys, the signing secret, payments,
    // events, subscriptions (read and stop), balance, rate and payouts, through the server's HTTP layer.
    // Not here, as the dashboard cannot meet them: payment and subscription creation's codes
    // (order_id_conflict, plan_not_available, amount_exceeds_ceiling, subscription_fields_missing,
    // recurring_temporarily_unavailable), API keys' nonce_already_used, the payer pages' csrf_rejected,
    // operation_not_allowed (simulation, refunds, the operator's approve and resume), terminal_id_required
    // (it always sends terminal_id), unstorable_text (the server refuses NUL first, as invalid_request),
    // headers and content types it never sends, and the operator's and health's codes.
    const codes = [
      "invalid_credentials", "unauthenticated", "access_denied", "too_many_requests", "insufficient_balance", "max_active_payouts",
      "terminal_unavailable", "invalid_request", "invalid_json_body", "body_too_large", "amount_malformed", "amount_not_positive",
      "usdt_amount_malformed", "idempotency_conflict", "invalid_transition", "write_conflict", "test_clock_advancing",
      "recurring_not_configured", "provider_unavailable", "stop_failed", "not_found", "route_not_found", "uri_too_long",
      "request_timeout", "service_busy", "service_unavailable", "internal_error"
    ]
    const english = "an English message of the API"
    for (const code of codes) {
      const text = apiErrorText("ru", { code, message: english })
      expect(text, code).toMatch(/^[А-ЯЁ]/)
      expect(text, code).not.toBe(english)
      if (code !== "stop_failed") expect(apiErrorText("en", { code, message: english }), code).toBe(english)
    }
    // An answer that is not the API's (a proxy's page) has the client's code `http_<status>`.
    expect(apiErrorText("ru", { code: "http_502", message: "<html><body>Bad Gateway</body></html>" })).toBe("Сервер ответил ошибкой HTTP 502: повторите позже.")
  })

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

  it("formats USDT amounts and the rate in the language's convention, as roubles are", () => {
    expect(formatUsdt("ru", "10.521578")).toBe("10,521578\u00a0USDT")
    expect(formatUsdt("en", "10.521578")).toBe("10.521578 USDT")
    expect(formatUsdt("ru", "1234567.000001")).toBe("1\u00a0234\u00a0567,000001\u00a0USDT")
    expect(formatUsdt("en", "1234567.000001")).toBe("1,234,567.000001 USDT")
    expect(formatRate("ru", "95.00")).toBe("95,00\u00a0₽/USDT")
    expect(formatRate("en", "95.00")).toBe("95.00 ₽/USDT")
    expect(formatDecimal("ru", "40.5")).toBe("40,5")
    expect(formatDecimal("en", "1000")).toBe("1,000")
  })

  it("changes only the separators: every digit of any amount stays as sent (no floating point)", () => {
    const decimal = fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.stringMatching(/^\d{0,6}$/))
      .map(([whole, fraction]) => (fraction === "" ? `${whole}` : `${whole}.${fraction}`))
    fc.assert(fc.property(decimal, (amount) => {
      expect(formatDecimal("en", amount).replaceAll(",", "")).toBe(amount)
      expect(formatDecimal("ru", amount).replaceAll("\u00a0", "").replace(",", ".")).toBe(amount)
      expect(formatUsdt("ru", amount)).toBe(`${formatDecimal("ru", amount)}\u00a0USDT`)
    }))
  })

  it("says the conversion time is Moscow time, in every language", () => {
    expect(dictionaries.en["terminal.conversionTime"]).toMatch(/Moscow time/)
    expect(dictionaries.ru["terminal.conversionTime"]).toMatch(/по Москве/)
  })

  it("places a Moscow time in another time zone, with the day it falls on", () => {
    const now = new Date("2026-01-15T22:30:00Z") // already 16 January in Moscow
    expect(moscowTimeLocally("18:00", now, "Asia/Vladivostok")).toEqual({ time: "01:00", day: 1 })
    expect(moscowTimeLocally(" 09:05 ", now, "Europe/London")).toEqual({ time: "06:05", day: 0 })
    expect(moscowTimeLocally("02:00", now, "America/New_York")).toEqual({ time: "18:00", day: -1 })
    expect(moscowTimeLocally("18:00", now, "Europe/Moscow")).toEqual({ time: "18:00", day: 0 })
    for (const bad of ["", "24:00", "7:00", "18:60", "18-00"]) expect(moscowTimeLocally(bad, now, "UTC"), bad).toBeNull()
  })
})
