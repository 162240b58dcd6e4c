/**
 * Contract suite of `Keccak256`: Keccak's own digests (not NIST SHA3-256's, the usual mix-up: they
 * differ in one padding byte), across the 136-byte block, and EIP-55's published addresses checked
 * through `WalletAddress`.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { Keccak256, WalletAddress } from "@paydesk/core"

/** What the suite needs. */
export type Requirements = Keccak256

const hex = (bytes: Uint8Array): string => Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")
const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text)

/** Registers the `Keccak256` contract tests for `layer_`. */
export const suite = <E>(name: string, layer_: Layer.Layer<Requirements, E>): void =>
  layer(layer_)(`Keccak256 contract (${name})`, (it) => {
    it.effect("gives Keccak-256's digests, not SHA3-256's", () =>
      Effect.gen(function*() {
        const keccak = yield* Keccak256
        assert.strictEqual(hex(keccak.hash(new Uint8Array(0))), "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")
        assert.strictEqual(hex(keccak.hash(utf8("abc"))), "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45")
        assert.strictEqual(hex(keccak.hash(utf8("The quick brown fox jumps over the lazy dog"))),
          "4d741b6f1eb29cb2a9b9911c82f56fa8d73b04959d3d9d222895df6c0b28aa15")
      }))

    it.effect("hashes inputs around the 136-byte block as one digest of all their bytes", () =>
      Effect.gen(function*() {
        const keccak = yield* Keccak256
        const digests = new Set<string>()
        for (const length of [135, 136, 137, 272, 1000]) {
          const digest = keccak.hash(new Uint8Array(length).fill(0x61))
          assert.strictEqual(digest.length, 32)
          digests.add(hex(digest))
          // The same input again gives the same digest, and the input is not changed.
          const input = new Uint8Array(length).fill(0x61)
          assert.strictEqual(hex(keccak.hash(input)), hex(digest))
          assert.isTrue(input.every((byte) => byte === 0x61))
        }
        assert.strictEqual(digests.size, 5)
        // One byte short of the block and the whole block ("a" repeated), as @noble/hashes (audited) gives them:
        // the padding's last byte lands in the same block or opens a second one.
        assert.strictEqual(hex(keccak.hash(new Uint8Array(135).fill(0x61))), "34367dc248bbd832f4e3e69dfaac2f92638bd0bbd18f2912ba4ef454919cf446")
        assert.strictEqual(hex(keccak.hash(new Uint8Array(136).fill(0x61))), "a6c4d403279fe3e0af03729caada8374b5ca54d8065329a3ebcaeb4b60aa386e")
      }))

    it.effect("EIP-55's own example addresses pass, each with one letter's case changed fails", () =>
      Effect.gen(function*() {
        for (const address of [
          "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
          "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
          "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
          "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb"
        ]) {
          assert.isTrue(yield* WalletAddress.hasValidEip55Checksum(address), address)
          const at = address.search(/[a-fA-F]/u)
          const flipped = address.slice(0, at) + (address[at] === address[at]!.toLowerCase() ? address[at]!.toUpperCase() : address[at]!.toLowerCase()) + address.slice(at + 1)
          assert.isFalse(yield* WalletAddress.hasValidEip55Checksum(flipped), flipped)
        }
      }))
  })
