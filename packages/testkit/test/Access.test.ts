import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Fixtures, Kit, MemoryStore } from "@paydesk/testkit"
import { Access, Callbacks, Events, Payments, Payouts, Subscriptions, Terminals, TestClocks } from "@paydesk/core"
import type { Terminal as TerminalModule } from "@paydesk/core"
type Terminal = TerminalModule.Terminal

const apiKeyOf = (terminal: Terminal, subscriptionWrite = true): Access.Principal => ({
  _tag: "ApiKey",
  apiKeyId: Fixtures.uuid(),
  terminalId: terminal.id,
  subscriptionWrite
})

const userOf = (accountId: string): Access.Principal => ({
  _tag: "User",
  userId: Fixtures.uuid(),
  accountId,
  role: "owner"
})

/** The failure of a resolution as `[tag, message]`. */
const denied = (principal: Access.Principal, requested: string | null | undefined, purpose: Access.Purpose) =>
  Access.resolveTerminal(principal, requested, purpose).pipe(
    Effect.flip,
    Effect.map((error) => [error._tag, error.message] as const)
  )

const purposes: ReadonlyArray<Access.Purpose> = ["read", "write", "subscription_write"]

describe("Access", () => {
  it.layer(MemoryStore.layer)("resolveTerminal", (it) => {
    describe("API key", () => {
      it.effect("takes the key's terminal when terminal_id is omitted", () =>
        Effect.gen(function*() {
          const { terminal } = yield* Fixtures.seedTerminal()
          const key = apiKeyOf(terminal)
          for (const purpose of purposes) {
            for (const omitted of [undefined, null]) {
              const resolved = yield* Access.resolveTerminal(key, omitted, purpose)
              assert.strictEqual(resolved.id, terminal.id)
            }
          }
        }))

      it.effect("accepts its own terminal id, in any letter case", () =>
        Effect.gen(function*() {
          const { terminal } = yield* Fixtures.seedTerminal()
          const key = apiKeyOf(terminal)
          for (const purpose of purposes) {
            assert.deepStrictEqual(yield* Access.resolveTerminal(key, terminal.id, purpose), terminal)
            assert.strictEqual((yield* Access.resolveTerminal(key, terminal.id.toUpperCase(), purpose)).id, terminal.id)
          }
        }))

      it.effect("denies another terminal: terminal access denied, or subscription write access required", () =>
        Effect.gen(function*() {
          const { terminal } = yield* Fixtures.seedTerminal()
          const other = yield* Fixtures.seedTerminal()
          const key = apiKeyOf(terminal)
          for (const otherId of [other.terminal.id, Fixtures.uuid()]) {
            assert.deepStrictEqual(yield* denied(key, otherId, "read"), ["AccessDenied", "terminal access denied"])
            assert.deepStrictEqual(yield* denied(key, otherId, "write"), ["AccessDenied", "terminal access denied"])
            assert.deepStrictEqual(yield* denied(key, otherId, "subscription_write"), [
              "AccessDenied",
              "subscription write access required"
            ])
          }
        }))

      it.effect("requires subscription write access for subscription writes only", () =>
        Effect.gen(function*() {
          const { terminal } = yield* Fixtures.seedTerminal()
          const key = apiKeyOf(terminal, false)
          for (const requested of [undefined, terminal.id]) {
            assert.deepStrictEqual(yield* denied(key, requested, "subscription_write"), [
              "AccessDenied",
              "subscription write access required"
            ])
            assert.strictEqual((yield* Access.resolveTerminal(key, requested, "read")).id, terminal.id)
            assert.strictEqual((yield* Access.resolveTerminal(key, requested, "write")).id, terminal.id)
          }
        }))

      it.effect("denies a key whose terminal does not exist", () =>
        Effect.gen(function*() {
          const ghost = Fixtures.terminal(Fixtures.uuid())
          assert.deepStrictEqual(yield* denied(apiKeyOf(ghost), undefined, "read"), ["AccessDenied", "terminal access denied"])
        }))
    })

    describe("user", () => {
      it.effect("requires terminal_id", () =>
        Effect.gen(function*() {
          const { account } = yield* Fixtures.seedTerminal()
          for (const purpose of purposes) {
            for (const omitted of [undefined, null]) {
              assert.deepStrictEqual(yield* denied(userOf(account.id), omitted, purpose), [
                "TerminalIdRequired",
                "terminal_id is required"
              ])
            }
          }
        }))

      it.effect("resolves a terminal of the user's account, in any letter case", () =>
        Effect.gen(function*() {
          const { account, terminal } = yield* Fixtures.seedTerminal()
          for (const purpose of purposes) {
            assert.deepStrictEqual(yield* Access.resolveTerminal(userOf(account.id), terminal.id, purpose), terminal)
            assert.strictEqual(
              (yield* Access.resolveTerminal(userOf(account.id), terminal.id.toUpperCase(), purpose)).id,
              terminal.id
            )
          }
        }))

      it.effect("denies a terminal of another account or an unknown one: account access denied", () =>
        Effect.gen(function*() {
          const mine = yield* Fixtures.seedTerminal()
          const theirs = yield* Fixtures.seedTerminal()
          for (const purpose of purposes) {
            assert.deepStrictEqual(yield* denied(userOf(mine.account.id), theirs.terminal.id, purpose), [
              "AccessDenied",
              "account access denied"
            ])
            assert.deepStrictEqual(yield* denied(userOf(mine.account.id), Fixtures.uuid(), purpose), [
              "AccessDenied",
              "account access denied"
            ])
          }
        }))
    })

    it.effect("takes an empty terminal_id as given, not absent: the 403 of a terminal not the caller's (spec rule 3)", () =>
      Effect.gen(function*() {
        const { account, terminal } = yield* Fixtures.seedTerminal()
        for (const principal of [apiKeyOf(terminal), userOf(account.id)]) {
          for (const purpose of [...purposes, "subscription_owner"] as const) {
            const error = yield* Effect.flip(Access.resolveTerminal(principal, "", purpose))
            const expected = principal._tag === "User"
              ? "account access denied"
              : purpose === "subscription_write" || purpose === "subscription_owner"
              ? "subscription write access required"
              : "terminal access denied"
            assert.deepStrictEqual([error._tag, error.message], ["AccessDenied", expected], `${principal._tag} ${purpose}`)
          }
        }
      }))

    it.effect("denies a terminal_id that is not a UUID like any other terminal (403, spec rule 3)", () =>
      Effect.gen(function*() {
        const { account, terminal } = yield* Fixtures.seedTerminal()
        const expected = (principal: Access.Principal, purpose: Access.Purpose) =>
          principal._tag === "User"
            ? "account access denied"
            : purpose === "subscription_write" || purpose === "subscription_owner"
            ? "subscription write access required"
            : "terminal access denied"
        for (const principal of [apiKeyOf(terminal), userOf(account.id)]) {
          for (const bad of ["not-a-uuid", `${terminal.id}x`, terminal.id.replaceAll("-", ""), " "]) {
            for (const purpose of purposes) {
              const error = yield* Effect.flip(Access.resolveTerminal(principal, bad, purpose))
              const where = `${principal._tag} ${JSON.stringify(bad)} ${purpose}`
              assert.deepStrictEqual([error._tag, error.message], ["AccessDenied", expected(principal, purpose)], where)
            }
          }
        }
      }))

    it.effect("lets a disabled terminal be read but not written: terminal is unavailable", () =>
      Effect.gen(function*() {
        const { account, terminal } = yield* Fixtures.seedTerminal({ status: "disabled" })
        for (const [principal, requested] of [[apiKeyOf(terminal), undefined], [userOf(account.id), terminal.id]] as const) {
          assert.strictEqual((yield* Access.resolveTerminal(principal, requested, "read")).id, terminal.id)
          assert.deepStrictEqual(yield* denied(principal, requested, "write"), [
            "TerminalUnavailable",
            "terminal is unavailable"
          ])
          assert.deepStrictEqual(yield* denied(principal, requested, "subscription_write"), [
            "TerminalUnavailable",
            "terminal is unavailable"
          ])
        }
      }))
  })

  it.layer(MemoryStore.layer)("canSee", (it) => {
    it.effect("lets an API key see its own terminal only", () =>
      Effect.gen(function*() {
        const { terminal } = yield* Fixtures.seedTerminal()
        const other = yield* Fixtures.seedTerminal()
        assert.isTrue(yield* Access.canSee(apiKeyOf(terminal), terminal.id))
        assert.isFalse(yield* Access.canSee(apiKeyOf(terminal), other.terminal.id))
      }))

    it.effect("lets a user see the terminals of their account only", () =>
      Effect.gen(function*() {
        const { account, terminal } = yield* Fixtures.seedTerminal()
        const other = yield* Fixtures.seedTerminal()
        assert.isTrue(yield* Access.canSee(userOf(account.id), terminal.id))
        assert.isFalse(yield* Access.canSee(userOf(account.id), other.terminal.id))
        assert.isFalse(yield* Access.canSee(userOf(account.id), Fixtures.uuid()))
      }))
  })

  it.layer(Kit.layer)("use cases", (it) => {
    it.effect("take an empty terminal_id as given where absent means the key's terminal or all the account's: 403, or the spec's terminal_id is required", () =>
      Effect.gen(function*() {
        const merchant = yield* Kit.provisionMerchant()
        const key = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
        const user = userOf(merchant.accountId)
        for (const principal of [key, user]) {
          const calls = {
            "Payments.list": Payments.list(principal, { terminalId: "" }),
            "Payments.exportCsv": Payments.exportCsv(principal, { terminalId: "" }, String),
            "Payments.getByOrderId": Payments.getByOrderId(principal, { terminalId: "", orderId: "o-1" }),
            "Payments.create": Payments.create(principal, { terminalId: "", amount: "10", orderId: "o-1" }),
            "Terminals.balance": Terminals.balance(principal, ""),
            "Terminals.rate": Terminals.rate(principal, ""),
            "Payouts.list": Payouts.list(principal, { terminalId: "" }),
            "Payouts.create": Payouts.create(principal, { terminalId: "", amountUsdt: "1", walletAddress: "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", network: "TRC-20" }),
            "Subscriptions.list": Subscriptions.list(principal, { terminalId: "" }),
            "Events.list": Events.list(principal, { terminalId: "" }),
            "Callbacks.feed": Callbacks.feed(principal, { terminalId: "" }),
            "TestClocks.list": TestClocks.list(principal, { terminalId: "" }),
            "TestClocks.create": TestClocks.create(principal, { terminalId: "", frozenTime: "2026-01-31T10:00:00Z" })
          }
          for (const [name, call] of Object.entries(calls)) {
            const error = yield* Effect.flip(call as Effect.Effect<unknown, { readonly _tag: string; readonly message: string }, Kit.Services>)
            const expected = principal._tag === "ApiKey"
              ? ["AccessDenied", "terminal access denied"]
              : name.startsWith("Payouts.")
              ? ["TerminalIdRequired", "terminal_id is required"]
              : ["AccessDenied", "account access denied"]
            assert.deepStrictEqual([name, error._tag, error.message], [name, ...expected], principal._tag)
          }
        }
      }))

    it.effect("refuse an empty order_id to look up or filter by", () =>
      Effect.gen(function*() {
        const merchant = yield* Kit.provisionMerchant()
        const key = yield* Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
        for (const call of [Payments.list(key, { orderId: "" }), Payments.stats(key, { orderId: "" }), Payments.getByOrderId(key, { orderId: "" })]) {
          const error = yield* Effect.flip(call as Effect.Effect<unknown, { readonly _tag: string; readonly message: string }, Kit.Services>)
          assert.deepStrictEqual([error._tag, error.message], ["InvalidRequest", "order_id must be a non-empty string"])
        }
      }))
  })
})
