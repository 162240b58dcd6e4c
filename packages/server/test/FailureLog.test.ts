import { describe, expect, it } from "vitest"
import * as FailureLog from "../src/FailureLog.js"

describe("FailureLog", () => {
  it("logs the first failure to a destination, counts the next ones within the window, and says how many were left out", () => {
    const log = FailureLog.make(60_000)
    expect(log.note("https://a.example", 0)).toEqual({ log: true, leftOut: 0 })
    for (let i = 1; i <= 5; i++) expect(log.note("https://a.example", i * 10_000)).toEqual({ log: false })
    // Another destination has its own window.
    expect(log.note("https://b.example", 30_000)).toEqual({ log: true, leftOut: 0 })
    expect(log.note("https://a.example", 60_000)).toEqual({ log: true, leftOut: 5 })
    expect(log.note("https://a.example", 60_001)).toEqual({ log: false })
    expect(log.note("https://a.example", 200_000)).toEqual({ log: true, leftOut: 1 })
    expect(FailureLog.leftOutSuffix(0)).toBe("")
    expect(FailureLog.leftOutSuffix(1)).toBe(" (and 1 more failed attempt to it since the last line, not logged)")
    expect(FailureLog.leftOutSuffix(5)).toBe(" (and 5 more failed attempts to it since the last line, not logged)")
    // A worker's failed jobs.
    expect(FailureLog.leftOutSuffix(1, "failures of it")).toBe(" (and 1 more failure of it since the last line, not logged)")
    expect(FailureLog.leftOutSuffix(9, "failures of it")).toBe(" (and 9 more failures of it since the last line, not logged)")
  })

  it("remembers at most maxDestinations: the oldest is forgotten, and its next failure logged", () => {
    const log = FailureLog.make(60_000)
    for (let i = 0; i < FailureLog.maxDestinations; i++) log.note(`https://${i}.example`, 0)
    expect(log.note("https://0.example", 1)).toEqual({ log: false })
    // A new destination makes room: the oldest window, 0's, goes (its left-out count with it).
    log.note("https://new.example", 2)
    expect(log.note("https://0.example", 3)).toEqual({ log: true, leftOut: 0 })
    // 0's new window made room in turn (1's went); a younger one is still there.
    expect(log.note("https://5000.example", 4)).toEqual({ log: false })
  })
})
