import { describe, expect, it } from "vitest"
import { href, parse, type Route } from "../src/Router.js"

describe("Router", () => {
  it("parses every page's path back to its route", () => {
    const routes: ReadonlyArray<Exclude<Route, { page: "notFound" }>> = [
      { page: "home" },
      { page: "payments" },
      { page: "payment", id: "pay_6f1c2a9e-0000-4000-8000-000000000001" },
      { page: "subscriptions" },
      { page: "subscription", id: "a/b c" },
      { page: "payouts" },
      { page: "settings" }
    ]
    for (const route of routes) expect(parse(href(route))).toEqual(route)
  })

  it("treats /dashboard and /dashboard/ as home, and anything else as not found", () => {
    expect(parse("/dashboard")).toEqual({ page: "home" })
    expect(parse("/dashboard/")).toEqual({ page: "home" })
    expect(parse("/dashboard/payments/")).toEqual({ page: "payments" })
    expect(parse("/dashboard/nope")).toEqual({ page: "notFound" })
    expect(parse("/dashboard/payments/x/y")).toEqual({ page: "notFound" })
  })
})
