/**
 * The events feed (`paydesk listen`) on the memory store: its cursors name a place in the insertion
 * order, sealed with the host's key, so a cursor outlives its event, cannot be forged or moved to
 * another terminal, and one of a position this store never gave (a reset store) is refused.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Callbacks, OutboxRepository, Payments, SecretCipher } from "@paydesk/core"
import { Kit } from "@paydesk/testkit"

const eventTypes = (items: ReadonlyArray<Callbacks.FeedItem>) => items.map((item) => [item.event.eventType, item.event.paymentId])

describe("Events feed", () => {
  it.effect("a cursor outlives its event; a forged, reset-store or other terminal's cursor is refused", () =>
    Effect.gen(function*() {
      const merchant = yield* Kit.provisionMerchant({ callbackUrl: null })
      const principal = () => Kit.apiKeyPrincipal(merchant, crypto.randomUUID())
      const create = (orderId: string) => Effect.map(Effect.flatMap(principal(), (p) => Payments.create(p, { amount: "10", orderId, test: true })), (r) => r.payment)
      const [a, b] = [yield* create("a"), yield* create("b")]
      const first = yield* Callbacks.feed(yield* principal(), {})
      assert.deepStrictEqual(eventTypes(first.items), [["payment.created", a.id], ["payment.created", b.id]])
      assert.strictEqual(first.nextAfter, first.items[1]!.cursor)
      assert.match(first.items[0]!.cursor, /^feed_v1\./)

      // The retention deletes both events (no callback URL, so no delivery holds them).
      assert.isAtLeast(yield* (yield* OutboxRepository).purge(Number.MAX_SAFE_INTEGER), 2)
      const afterPurge = yield* Callbacks.feed(yield* principal(), { after: first.items[0]!.cursor })
      assert.deepStrictEqual(afterPurge.items, [])
      // The same place sealed again (a fresh nonce, so another text), bound to the terminal as before.
      assert.match(afterPurge.nextAfter!, /^feed_v1\./)
      assert.notStrictEqual(afterPurge.nextAfter, first.items[0]!.cursor)
      const c = yield* create("c")
      assert.deepStrictEqual(eventTypes((yield* Callbacks.feed(yield* principal(), { after: first.items[0]!.cursor })).items), [["payment.created", c.id]])
      assert.deepStrictEqual(eventTypes((yield* Callbacks.feed(yield* principal(), { after: afterPurge.nextAfter! })).items), [["payment.created", c.id]])

      const refused = (after: string, who = principal()) =>
        Effect.map(Effect.flip(Effect.flatMap(who, (p) => Callbacks.feed(p, { after }))), (error) => [error._tag, "field" in error ? error.field : null])
      // A position sealed by the host's key but never given by this store: the store was reset.
      const cipher = yield* SecretCipher
      const sealed = (text: string) => Effect.map(cipher.encrypt(text), (ciphertext) => `feed_${ciphertext}`)
      const beyond = yield* sealed(`feed:${merchant.terminal.id}:${String(10 ** 12).padStart(15, "0")}`)
      assert.deepStrictEqual(yield* refused(beyond), ["InvalidRequest", "after"])
      // One within what it gave is read from there.
      const within = yield* sealed(`feed:${merchant.terminal.id}:${"0".repeat(15)}`)
      assert.deepStrictEqual(eventTypes((yield* Callbacks.feed(yield* principal(), { after: within })).items), [["payment.created", c.id]])
      // Made up (another text the key sealed: unpadded, or of no feed), tampered, or another terminal's.
      assert.deepStrictEqual(yield* refused(yield* sealed("not a cursor")), ["InvalidRequest", "after"])
      assert.deepStrictEqual(yield* refused(yield* sealed(`feed:${merchant.terminal.id}:1`)), ["InvalidRequest", "after"])
      assert.deepStrictEqual(yield* refused(yield* sealed(`${merchant.terminal.id}:${"0".repeat(15)}`)), ["InvalidRequest", "after"])
      assert.deepStrictEqual(yield* refused(first.items[0]!.cursor.slice(0, -3)), ["InvalidRequest", "after"])
      const other = yield* Kit.provisionMerchant({ callbackUrl: null })
      assert.deepStrictEqual(yield* refused(first.items[0]!.cursor, Kit.apiKeyPrincipal(other, crypto.randomUUID())), ["InvalidRequest", "after"])
    }).pipe(Effect.provide(Kit.layer)))
})
