import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { HmacTokenIssuer } from "../src/index.js"

const now = 1_796_000_000_000
const claims = { userId: "u", accountId: "a", role: "owner", familyId: "f", expiresAt: now + 60_000 }

describe("HmacTokenIssuer", () => {
  it.effect("verifies its own tokens, and with next keys those of a process already on a next key (a rolling rotation), never a previous key's", () =>
    Effect.gen(function*() {
      const old = yield* HmacTokenIssuer.make("old key")
      const switching = yield* HmacTokenIssuer.make("old key", ["new key"])
      const switched = yield* HmacTokenIssuer.make("new key")
      const fromNew = yield* switched.issue(claims)
      const fromSwitching = yield* switching.issue(claims)
      // A process still on the old key, told the next one, accepts the switched process's tokens.
      assert.deepStrictEqual(yield* switching.verify(fromNew, now), Option.some(claims))
      assert.isTrue(Option.isNone(yield* old.verify(fromNew, now)))
      // It issues with its own key: the old key's processes read its tokens, the switched one does not.
      assert.deepStrictEqual(yield* old.verify(fromSwitching, now), Option.some(claims))
      assert.isTrue(Option.isNone(yield* switched.verify(fromSwitching, now)))
      // Expiry and forgery are checked with every key.
      assert.isTrue(Option.isNone(yield* switching.verify(fromNew, claims.expiresAt)))
      assert.isTrue(Option.isNone(yield* switching.verify(`${fromNew.split(".")[0]}.AAAA`, now)))
    }))
})
