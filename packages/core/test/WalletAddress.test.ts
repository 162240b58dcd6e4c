import { assert, describe, it } from "@effect/vitest"
import { keccak_256 } from "@noble/hashes/sha3.js"
import { Effect, Layer } from "effect"
import * as fc from "fast-check"
import { Keccak256 } from "../src/ports/Keccak256.js"
import * as WalletAddress from "../src/WalletAddress.js"

// The port as the reference server and the kit provide it (a core test cannot import the testkit).
const keccak = Layer.succeed(Keccak256)({ hash: (bytes) => keccak_256(bytes) })

// Addresses made for these tests (valid checksums, no one's wallet), and USDT's token contracts.
const tron = "TJKmZKEkHfSuVWmQ5ZYsLFcEgH8NgoNSGw"
const tron2 = "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE"
const ethereum = "0x865f2ecac5ec7ffd0d3b1c8900eb63162ac0f631"
// EIP-55's own examples of checksummed addresses.
const checksummed = [
  "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
  "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
  "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
  "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb"
]
const tonBounceable = "EQBbpICDZRnZno_y9CuIwQeUIKJVxNwriXTo_Q-Q9nGB5fDX"
const tonNonBounceable = "UQBbpICDZRnZno_y9CuIwQeUIKJVxNwriXTo_Q-Q9nGB5a0S"
const tonRaw = `0:${Buffer.from(tonBounceable, "base64url").subarray(2, 34).toString("hex")}`
const usdt = {
  tron: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
  ethereum: "0xdAC17F958D2ee523a2206206994597C13D831ec7",
  ton: "EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs"
}

const problem = (network: WalletAddress.Network, address: string) => WalletAddress.problem(network, address).pipe(Effect.provide(keccak))

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
      assert.isUndefined(yield* problem("ERC-20", ethereum.toUpperCase().replace("0X", "0x")))
      assert.isUndefined(yield* problem("TON", tonBounceable))
      assert.isUndefined(yield* problem("TON", tonNonBounceable), "non-bounceable (UQ…)")
      assert.strictEqual(tonWithFlag(0x51), tonNonBounceable)
      assert.isUndefined(yield* problem("TON", tonWithFlag(0x11, 0xff)), "masterchain")
      assert.isUndefined(yield* problem("TON", tonRaw))
      assert.isUndefined(yield* problem("TON", `-1:${tonRaw.slice(2).toUpperCase()}`))
    }))

  it.effect("refuses an address of another network, naming it", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* problem("ERC-20", tron), "wallet_address is a TRC-20 address, but the payout's network is ERC-20: choose network TRC-20, or give an ERC-20 address")
      assert.match((yield* problem("TON", tron))!, /^wallet_address is a TRC-20 address, but the payout's network is TON/)
      assert.strictEqual(yield* problem("TRC-20", ethereum), "wallet_address is an ERC-20 address, but the payout's network is TRC-20: choose network ERC-20, or give a TRC-20 address")
      assert.match((yield* problem("TRC-20", tonBounceable))!, /^wallet_address is a TON address/)
      assert.match((yield* problem("ERC-20", tonRaw))!, /^wallet_address is a TON address/)
      // Of another network's shape but not valid there (its checksum fails): not named.
      assert.strictEqual(yield* problem("TRC-20", "x".repeat(48)), "wallet_address is not a TRC-20 address: 34 base58 characters starting with T")
      assert.strictEqual(yield* problem("ERC-20", `${tron.slice(0, 10)}X${tron.slice(11)}`), "wallet_address is not an ERC-20 address: 0x and 40 hexadecimal digits")
      // Of no network's form: the expected one is described.
      assert.strictEqual(yield* problem("TRC-20", "abc"), "wallet_address is not a TRC-20 address: 34 base58 characters starting with T")
      assert.strictEqual(yield* problem("ERC-20", "abc"), "wallet_address is not an ERC-20 address: 0x and 40 hexadecimal digits")
      assert.match((yield* problem("TON", "abc"))!, /^wallet_address is not a TON address: 48 base64url characters/)
    }))

  it.effect("a TRON address with any one character mistyped fails its checksum", () =>
    Effect.gen(function*() {
      for (let at = 1; at < tron.length; at++) {
        assert.match((yield* problem("TRC-20", mistype(tron, at, base58)))!, /checksum does not match: a character is probably mistyped/, `at ${at}`)
      }
      // Two characters swapped.
      assert.isDefined(yield* problem("TRC-20", `${tron.slice(0, 5)}${tron[6]}${tron[5]}${tron.slice(7)}`))
    }))

  it.effect("a checksummed (mixed-case) Ethereum address passes; all in one case it carries no checksum and passes", () =>
    Effect.gen(function*() {
      for (const address of checksummed) {
        assert.isUndefined(yield* problem("ERC-20", address), address)
        assert.isUndefined(yield* problem("ERC-20", address.toLowerCase()), address)
        assert.isUndefined(yield* problem("ERC-20", `0x${address.slice(2).toUpperCase()}`), address)
      }
      // EIP-55's all-caps and all-lower examples.
      for (const address of ["0x52908400098527886E0F7030069857D2E4169EE7", "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
        "0xde709f2102306220921060314715629080e2fb77", "0x27b1fdb04752bbc536007a920d24acb045561c26"]) {
        assert.isUndefined(yield* problem("ERC-20", address), address)
      }
    }))

  it.effect("a checksummed Ethereum address with any one character mistyped, or one letter's case changed, fails its checksum", () =>
    Effect.gen(function*() {
      const message = "wallet_address is not an ERC-20 address: its checksum does not match: a character is probably mistyped; copy the address again"
      const hexDigits = "0123456789abcdef"
      for (const address of checksummed) {
        let mistypes = 0
        let caught = 0
        for (let at = 2; at < address.length; at++) {
          const current = address[at]!
          // The next digit of the alphabet, in the case the address has there (a digit typed for a letter comes out as a digit).
          const next = hexDigits[(hexDigits.indexOf(current.toLowerCase()) + 1) % 16]!
          const typed = current === current.toUpperCase() ? next.toUpperCase() : next
          const mistyped = address.slice(0, at) + typed + address.slice(at + 1)
          mistypes++
          if ((yield* problem("ERC-20", mistyped)) === message) caught++
          if (/[a-fA-F]/.test(current)) {
            const flipped = address.slice(0, at) + (current === current.toLowerCase() ? current.toUpperCase() : current.toLowerCase()) + address.slice(at + 1)
            assert.strictEqual(yield* problem("ERC-20", flipped), message, `${address} case at ${at}`)
          }
        }
        // A mistype slips through only where the new checksum happens to fit every letter's case (about 2^-15 each):
        // with these four addresses, none does.
        assert.strictEqual(caught, mistypes, address)
      }
      // The check itself refuses what is not an address's shape (it would read other characters as the hex).
      for (const text of [checksummed[0]!.slice(2), `${checksummed[0]!}0`, checksummed[0]!.slice(0, 41), "0x"]) {
        assert.isFalse(yield* WalletAddress.hasValidEip55Checksum(text).pipe(Effect.provide(keccak)), text)
      }
      // The token contract's checksummed form passes the checksum and is refused as the contract.
      assert.match((yield* problem("ERC-20", usdt.ethereum))!, /USDT's own token contract/)
    }))

  it.effect("a TON address with any one character mistyped fails its CRC", () =>
    Effect.gen(function*() {
      for (let at = 2; at < tonBounceable.length; at++) {
        assert.match((yield* problem("TON", mistype(tonBounceable, at, base64url)))!, /checksum does not match/, `at ${at}`)
      }
    }))

  it.effect("refuses the wrong length, prefix, flag and workchain", () =>
    Effect.gen(function*() {
      for (const address of [tron.slice(0, 33), `${tron}1`, `A${tron.slice(1)}`, "T0000000000000000000000000000000OI"]) {
        assert.isDefined(yield* problem("TRC-20", address), address)
      }
      // Valid base58check starting with T, but another version byte than TRON's 0x41 (0x40, 0x42).
      for (const address of ["T1mmJjSMcEVPdma3oiEDah4MBPC3yQsKfi", "TpSyGx2w2bR9GdrDrYtrYwbvSPhwSmg7ER"]) {
        assert.match((yield* problem("TRC-20", address))!, /not a TRC-20 address/, address)
      }
      for (const address of [ethereum.slice(0, 41), `${ethereum}0`, ethereum.slice(2) + "00", `0X${ethereum.slice(2)}`, `0x${"g".repeat(40)}`]) {
        assert.isDefined(yield* problem("ERC-20", address), address)
      }
      assert.match((yield* problem("TON", tonWithFlag(0x91)))!, /testnet-only/)
      assert.match((yield* problem("TON", tonWithFlag(0xd1)))!, /testnet-only/)
      assert.match((yield* problem("TON", tonWithFlag(0x12)))!, /not a TON address/)
      assert.match((yield* problem("TON", tonWithFlag(0x11, 0x01)))!, /not a TON address/)
      // A broken address with the testnet bit is broken, not "testnet-only".
      assert.match((yield* problem("TON", "z".repeat(48)))!, /not a TON address/)
      assert.match((yield* problem("TON", `k${tonBounceable.slice(1)}`))!, /not a TON address/)
      assert.isDefined(yield* problem("TON", `1:${tonRaw.slice(2)}`))
      assert.isDefined(yield* problem("TON", tonRaw.slice(0, -1)))
      assert.isDefined(yield* problem("TON", tonBounceable.slice(0, 47)))
    }))

  it.effect("refuses each network's burn addresses", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* problem("TRC-20", "T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb"), "wallet_address is a TRC-20 burn address: USDT sent there is lost")
      assert.strictEqual(yield* problem("ERC-20", `0x${"0".repeat(40)}`), "wallet_address is an ERC-20 burn address: USDT sent there is lost")
      assert.match((yield* problem("ERC-20", "0x000000000000000000000000000000000000dEaD"))!, /ERC-20 burn address/)
      assert.match((yield* problem("TON", "EQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAM9c"))!, /TON burn address/)
      assert.match((yield* problem("TON", `0:${"0".repeat(64)}`))!, /TON burn address/)
      assert.match((yield* problem("TON", `-1:${"0".repeat(64)}`))!, /TON burn address/)
    }))

  it.effect("refuses USDT's own token contract in every form", () =>
    Effect.gen(function*() {
      const contract = "wallet_address is USDT's own token contract, not a wallet: USDT sent there is lost"
      assert.strictEqual(yield* problem("TRC-20", usdt.tron), contract)
      assert.strictEqual(yield* problem("ERC-20", usdt.ethereum), contract)
      assert.strictEqual(yield* problem("ERC-20", usdt.ethereum.toLowerCase()), contract)
      assert.strictEqual(yield* problem("TON", usdt.ton), contract)
      const account = Buffer.from(usdt.ton, "base64url").subarray(2, 34).toString("hex")
      assert.strictEqual(yield* problem("TON", `0:${account}`), contract)
      // The same account on the masterchain is another account.
      assert.isUndefined(yield* problem("TON", `-1:${account}`))
    }))

  it("a TON address in standard base64 is taken in base64url; other addresses are unchanged", () => {
    const standard = "EQCHFsJOm+UOeYHn650gtw7TPMXpKEZ5Foc6UlS8ppKeL25F"
    assert.strictEqual(WalletAddress.normalize("TON", standard), "EQCHFsJOm-UOeYHn650gtw7TPMXpKEZ5Foc6UlS8ppKeL25F")
    assert.strictEqual(WalletAddress.normalize("TON", "EQCw/ikJ"), "EQCw/ikJ")
    assert.strictEqual(WalletAddress.normalize("TRC-20", standard), standard)
    assert.strictEqual(WalletAddress.normalize("TON", tonBounceable), tonBounceable)
  })

  it("base58 decoding keeps leading zero bytes and refuses characters outside the alphabet", () => {
    assert.deepStrictEqual(WalletAddress.base58Decode("11"), Uint8Array.from([0, 0]))
    assert.deepStrictEqual(WalletAddress.base58Decode("1z"), Uint8Array.from([0, 57]))
    assert.deepStrictEqual(WalletAddress.base58Decode("5R"), Uint8Array.from([1, 0]))
    for (const char of ["0", "O", "I", "l", "+"]) assert.isUndefined(WalletAddress.base58Decode(`T${char}`))
    assert.isUndefined(WalletAddress.base58Decode("z".repeat(65)), "longer than any address: not read")
    assert.isDefined(WalletAddress.base58Decode("z".repeat(64)))
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
