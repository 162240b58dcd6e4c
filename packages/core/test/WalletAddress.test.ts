import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import * as WalletAddress from "../src/WalletAddress.js"

// Real addresses: USDT's contracts on TRON and Ethereum, its jetton master on TON (the first a
// well-known TRON account).
const tron = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
const tron2 = "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"
const ethereum = "0xdAC17F958D2ee523a2206206994597C13D831ec7"
const tonBounceable = "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs"
const tonRaw = "0:b113a994b5024a16719f69139328eb759596c38a25f59028b146fecdc3621dfe"

const problem = (network: WalletAddress.Network, address: string) => WalletAddress.problem(network, address)

/** The same TON account with another flag byte, its checksum recomputed. */
const tonWithFlag = (flag: number, workchain = 0x00): string => {
  const bytes = Buffer.from(tonBounceable, "base64url")
  bytes[0] = flag
  bytes[1] = workchain
  const crc = WalletAddress.crc16Xmodem(bytes.subarray(0, 34))
  bytes[34] = crc >> 8
  bytes[35] = crc & 0xff
  return bytes.toString("base64url")
}

/** One character replaced by another of the same alphabet. */
const mistype = (address: string, at: number, alphabet: string): string => {
  const current = address[at]!
  const next = alphabet[(alphabet.indexOf(current) + 1) % alphabet.length]!
  return address.slice(0, at) + next + address.slice(at + 1)
}

const base58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
const base64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

describe("WalletAddress", () => {
  it.effect("takes real addresses of each network", () =>
    Effect.gen(function*() {
      assert.isUndefined(yield* problem("TRC-20", tron))
      assert.isUndefined(yield* problem("TRC-20", tron2))
      assert.isUndefined(yield* problem("ERC-20", ethereum))
      assert.isUndefined(yield* problem("ERC-20", ethereum.toLowerCase()))
      assert.isUndefined(yield* problem("TON", tonBounceable))
      assert.isUndefined(yield* problem("TON", tonWithFlag(0x51)), "non-bounceable (UQ…)")
      assert.isUndefined(yield* problem("TON", tonWithFlag(0x11, 0xff)), "masterchain")
      assert.isUndefined(yield* problem("TON", tonRaw))
      assert.isUndefined(yield* problem("TON", `-1:${tonRaw.slice(2).toUpperCase()}`))
    }))

  it.effect("refuses an address of another network", () =>
    Effect.gen(function*() {
      assert.match((yield* problem("ERC-20", tron))!, /not an ERC-20 address/)
      assert.match((yield* problem("TON", tron))!, /not a TON address/)
      assert.match((yield* problem("TRC-20", ethereum))!, /not a TRC-20 address/)
      assert.match((yield* problem("TRC-20", tonBounceable))!, /not a TRC-20 address/)
      assert.match((yield* problem("ERC-20", tonRaw))!, /not an ERC-20 address/)
    }))

  it.effect("a TRON address with any one character mistyped fails its checksum", () =>
    Effect.gen(function*() {
      for (let at = 1; at < tron.length; at++) {
        assert.match((yield* problem("TRC-20", mistype(tron, at, base58)))!, /not a TRC-20 address/, `at ${at}`)
      }
      // Two characters swapped.
      assert.isDefined(yield* problem("TRC-20", `${tron.slice(0, 5)}${tron[6]}${tron[5]}${tron.slice(7)}`))
    }))

  it.effect("a TON address with any one character mistyped fails its CRC", () =>
    Effect.gen(function*() {
      for (let at = 2; at < tonBounceable.length; at++) {
        assert.isDefined(yield* problem("TON", mistype(tonBounceable, at, base64url)), `at ${at}`)
      }
    }))

  it.effect("refuses the wrong length, prefix, flag and workchain", () =>
    Effect.gen(function*() {
      for (const address of [tron.slice(0, 33), `${tron}1`, `A${tron.slice(1)}`, "T0000000000000000000000000000000OI"]) {
        assert.isDefined(yield* problem("TRC-20", address), address)
      }
      for (const address of [ethereum.slice(0, 41), `${ethereum}0`, ethereum.slice(2) + "00", `0X${ethereum.slice(2)}`, `0x${"g".repeat(40)}`]) {
        assert.isDefined(yield* problem("ERC-20", address), address)
      }
      assert.match((yield* problem("TON", tonWithFlag(0x91)))!, /testnet-only/)
      assert.match((yield* problem("TON", tonWithFlag(0xd1)))!, /testnet-only/)
      assert.match((yield* problem("TON", tonWithFlag(0x12)))!, /not a TON address/)
      assert.match((yield* problem("TON", tonWithFlag(0x11, 0x01)))!, /not a TON address/)
      assert.isDefined(yield* problem("TON", `1:${tonRaw.slice(2)}`))
      assert.isDefined(yield* problem("TON", tonRaw.slice(0, -1)))
      assert.isDefined(yield* problem("TON", tonBounceable.slice(0, 47)))
    }))

  it.effect("refuses each network's zero (burn) address", () =>
    Effect.gen(function*() {
      assert.match((yield* problem("TRC-20", "T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb"))!, /zero address/)
      assert.match((yield* problem("ERC-20", `0x${"0".repeat(40)}`))!, /zero address/)
      assert.match((yield* problem("TON", "EQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAM9c"))!, /zero address/)
      assert.match((yield* problem("TON", `0:${"0".repeat(64)}`))!, /zero address/)
    }))

  it("base58 decoding keeps leading zero bytes and refuses characters outside the alphabet", () => {
    assert.deepStrictEqual(WalletAddress.base58Decode("11"), Uint8Array.from([0, 0]))
    assert.deepStrictEqual(WalletAddress.base58Decode("1z"), Uint8Array.from([0, 57]))
    assert.deepStrictEqual(WalletAddress.base58Decode("5R"), Uint8Array.from([1, 0]))
    for (const char of ["0", "O", "I", "l", "+"]) assert.isUndefined(WalletAddress.base58Decode(`T${char}`))
  })

  it("CRC16-XMODEM of the check string is 0x31C3", () => {
    assert.strictEqual(WalletAddress.crc16Xmodem(new TextEncoder().encode("123456789")), 0x31c3)
  })

  it.effect("any string is answered (never a defect), and only the three networks' forms pass", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(fc.constantFrom(...WalletAddress.networks), fc.stringMatching(/^[A-Za-z0-9:_-]{1,128}$/), async (network, address) => {
          const answer = await Effect.runPromise(problem(network, address))
          if (answer === undefined) {
            assert.match(address, network === "TRC-20" ? /^T.{33}$/ : network === "ERC-20" ? /^0x[0-9a-fA-F]{40}$/ : /^(?:.{48}|-?\d:[0-9a-fA-F]{64})$/)
          }
        }),
        { numRuns: 300 }
      )
    ))
})
