/**
 * Payout wallet addresses, checked per network before any money is held for them.
 *
 * A payout to an address its network cannot parse is refused by the network (or, worse, taken by a
 * network that reads it differently); one to a mistyped address goes to nobody. What each network's
 * own format carries is checked, so most typing mistakes are caught at the request:
 *
 * - `TRC-20` (TRON): 34 base58 characters decoding to 25 bytes: `0x41`, the 20-byte account, and
 *   the first 4 bytes of SHA-256(SHA-256) of the first 21 (base58check). One wrong character is
 *   caught by the checksum.
 * - `ERC-20` (Ethereum): `0x` and 40 hexadecimal digits. An address in mixed case carries the EIP-55
 *   checksum in its letters' case (a letter is upper case where the Keccak-256 of the lowercase
 *   address has a nibble of 8 or more), checked on the `Keccak256` port: a mistyped character is
 *   caught but for about one time in 4,000 (EIP-55's own figure, 0.0247 %; an address has about 15
 *   letters, each a bit of the check, fewer letters a weaker check). An address all in lower (or
 *   upper) case carries no checksum and is taken, as EIP-55 says, so a mistake that leaves a
 *   checksummed address in one case (its one upper-case letter typed in lower case) is not caught;
 *   wallets and explorers show the checksummed form, so an address typed from one is checked.
 * - `TON`: the user-friendly form (48 base64url characters decoding to 36 bytes: a flag byte,
 *   the workchain, the 32-byte account and a CRC16-XMODEM of the first 34), bounceable or not,
 *   never a testnet-only address (payouts move real USDT); or the raw form `0:` / `-1:` and 64
 *   hexadecimal digits.
 *
 * On every network the all-zero account (the burn address) and USDT's own token contract (pasting
 * the token's address for a wallet's is the classic way USDT is lost) are refused. An address valid
 * on another network is named as such ("a TRC-20 address, but the payout's network is ERC-20").
 * A TON address in standard base64 (`+`, `/`) is taken in its base64url form (`normalize`).
 */
import { Effect, Result } from "effect"
import { Hex } from "effect/encoding"
import { fromBase64Url } from "./Bytes.js"
import { withArticle as a } from "./Errors.js"
import { Keccak256 } from "./ports/Keccak256.js"

/** Networks payouts may use. */
export const networks = ["TRC-20", "ERC-20", "TON"] as const
export type Network = typeof networks[number]

export const isNetwork = (network: string): network is Network => (networks as ReadonlyArray<string>).includes(network)

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

/** Longest text `base58Decode` reads (its work grows with the square of the length). */
const maxBase58Length = 64

/** Base58 (Bitcoin's alphabet) to bytes; `undefined` for a character outside it or a text longer than 64. */
export const base58Decode = (text: string): Uint8Array | undefined => {
  if (text.length > maxBase58Length) return undefined
  let value = 0n
  for (const char of text) {
    const digit = BASE58.indexOf(char)
    if (digit < 0) return undefined
    value = value * 58n + BigInt(digit)
  }
  const bytes: Array<number> = []
  while (value > 0n) {
    bytes.unshift(Number(value & 0xffn))
    value >>= 8n
  }
  // Each leading '1' is a leading zero byte.
  for (let i = 0; i < text.length && text[i] === "1"; i++) bytes.unshift(0)
  return Uint8Array.from(bytes)
}

/** Bytes of hexadecimal digits already checked by a network's shape. */
const fromHex = (hex: string): Uint8Array => Result.getOrThrow(Hex.decode(hex.toLowerCase()))

/** CRC16-XMODEM (polynomial 0x1021, initial 0), as TON's user-friendly addresses carry it. */
export const crc16Xmodem = (bytes: Uint8Array): number => {
  let crc = 0
  for (const byte of bytes) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  }
  return crc
}

const allZero = (bytes: Uint8Array): boolean => bytes.every((byte) => byte === 0)

const sha256 = (bytes: Uint8Array<ArrayBuffer>): Effect.Effect<Uint8Array<ArrayBuffer>> =>
  Effect.promise(async () => new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", bytes)))

/** USDT's token contracts (lowercase hex of the account): a payout sent there is lost. */
const usdtContracts: Record<Network, string> = {
  // TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t
  "TRC-20": "a614f803b6fd780986a42c78ec9c7f77e6ded13c",
  // 0xdAC17F958D2ee523a2206206994597C13D831ec7
  "ERC-20": "dac17f958d2ee523a2206206994597c13d831ec7",
  // EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs (workchain 0)
  "TON": "b113a994b5024a16719f69139328eb759596c38a25f59028b146fecdc3621dfe"
}

/** Burn addresses other than the zero account (Ethereum's conventional `…dEaD`). */
const burnAccounts: Record<Network, ReadonlyArray<string>> = {
  "TRC-20": [],
  "ERC-20": ["000000000000000000000000000000000000dead"],
  "TON": []
}

/** What is wrong with an account that decoded: the zero account, a burn address or USDT's contract. */
const accountProblem = (network: Network, account: Uint8Array): string | undefined => {
  const hex = Hex.encode(account)
  if (allZero(account) || burnAccounts[network].includes(hex)) return `wallet_address is ${a(network)} burn address: USDT sent there is lost`
  if (hex === usdtContracts[network]) return "wallet_address is USDT's own token contract, not a wallet: USDT sent there is lost"
  return undefined
}

const mistyped = "its checksum does not match: a character is probably mistyped; copy the address again"

/** The shapes of each network's addresses, without their checksums (the first check of each). */
const shapes: Record<Network, RegExp> = {
  "TRC-20": /^T[1-9A-HJ-NP-Za-km-z]{33}$/,
  "ERC-20": /^0x[0-9a-fA-F]{40}$/,
  "TON": /^(?:[A-Za-z0-9_-]{48}|(?:0|-1):[0-9a-fA-F]{64})$/
}

const forms: Record<Network, string> = {
  "TRC-20": "34 base58 characters starting with T",
  "ERC-20": "0x and 40 hexadecimal digits",
  "TON": "48 base64url characters (the user-friendly form) or 0: or -1: and 64 hexadecimal digits"
}

const notOfForm = (network: Network): string =>
  `wallet_address is not a${network === "ERC-20" ? "n" : ""} ${network} address: ${forms[network]}`

const tron = Effect.fnUntraced(function*(address: string) {
  if (!shapes["TRC-20"].test(address)) return notOfForm("TRC-20")
  const bytes = base58Decode(address)
  if (bytes === undefined || bytes.length !== 25 || bytes[0] !== 0x41) return `wallet_address is not a TRC-20 address: ${mistyped}`
  const body = Uint8Array.from(bytes.subarray(0, 21))
  const digest = yield* sha256(yield* sha256(body))
  if (!digest.subarray(0, 4).every((byte, i) => byte === bytes[21 + i])) return `wallet_address is not a TRC-20 address: ${mistyped}`
  return accountProblem("TRC-20", body.subarray(1))
})

/**
 * Whether a mixed-case Ethereum address carries a valid EIP-55 checksum: each letter is upper case
 * exactly where the Keccak-256 of the lowercase hex (as ASCII) has a nibble of 8 or more. An address
 * all in one case carries none and passes; a text that is not `0x` and 40 hexadecimal digits fails.
 */
export const hasValidEip55Checksum = Effect.fnUntraced(function*(address: string) {
  if (!shapes["ERC-20"].test(address)) return false
  const hex = address.slice(2)
  const lower = hex.toLowerCase()
  if (hex === lower || hex === hex.toUpperCase()) return true
  const digest = (yield* Keccak256).hash(new TextEncoder().encode(lower))
  for (let i = 0; i < hex.length; i++) {
    const char = hex[i]!
    if (char >= "0" && char <= "9") continue
    const nibble = i % 2 === 0 ? digest[i >> 1]! >> 4 : digest[i >> 1]! & 0x0f
    if ((char === lower[i]) !== (nibble < 8)) return false
  }
  return true
})

const ethereum = Effect.fnUntraced(function*(address: string) {
  if (!shapes["ERC-20"].test(address)) return notOfForm("ERC-20")
  if (!(yield* hasValidEip55Checksum(address))) return `wallet_address is not an ERC-20 address: ${mistyped}`
  return accountProblem("ERC-20", fromHex(address.slice(2)))
})

/** USDT's contract is on the basechain (0); the zero account is refused on either. */
const tonAccountProblem = (workchain: number, account: Uint8Array): string | undefined =>
  workchain === 0x00 || allZero(account) ? accountProblem("TON", account) : undefined

const ton = (address: string): string | undefined => {
  if (!shapes.TON.test(address)) return notOfForm("TON")
  const raw = /^(0|-1):([0-9a-fA-F]{64})$/.exec(address)
  if (raw !== null) {
    return tonAccountProblem(raw[1] === "0" ? 0x00 : 0xff, fromHex(raw[2]!))
  }
  const bytes = fromBase64Url(address)
  if (bytes === undefined || bytes.length !== 36) return notOfForm("TON")
  const flag = bytes[0]!
  if (((flag & 0x7f) !== 0x11 && (flag & 0x7f) !== 0x51) || (bytes[1] !== 0x00 && bytes[1] !== 0xff)
    || crc16Xmodem(bytes.subarray(0, 34)) !== ((bytes[34]! << 8) | bytes[35]!)) {
    return `wallet_address is not a TON address: ${mistyped}`
  }
  if ((flag & 0x80) !== 0) return "wallet_address is a TON testnet-only address: payouts move real USDT"
  return tonAccountProblem(bytes[1]!, bytes.subarray(2, 34))
}

/**
 * The address as stored: a TON address in standard base64 (`+`, `/`, as some wallets show it) in
 * base64url, the form the rest of the rules read; any other unchanged.
 */
export const normalize = (network: Network, address: string): string =>
  network === "TON" && /^[A-Za-z0-9+/]{48}$/.test(address) ? address.replace(/\+/g, "-").replace(/\//g, "_") : address

const check = (network: Network, address: string): Effect.Effect<string | undefined, never, Keccak256> => {
  switch (network) {
    case "TRC-20":
      return tron(address)
    case "ERC-20":
      return ethereum(address)
    case "TON":
      return Effect.succeed(ton(address))
  }
}

/**
 * Why `address` cannot receive a payout on `network`, or `undefined` when it can. `address` is
 * normalized (`normalize`) and within the general rule (1 to 128 letters, digits, `:`, `_`, `-`).
 * An address not of `network`'s form that is a valid address of another network (its checksum
 * too) is named as such.
 */
export const problem = Effect.fnUntraced(function*(network: Network, address: string) {
  const own = yield* check(network, address)
  if (own !== notOfForm(network)) return own
  for (const other of networks) {
    if (other !== network && shapes[other].test(address) && (yield* check(other, address)) === undefined) {
      return `wallet_address is ${a(other)} address, but the payout's network is ${network}: choose network ${other}, or give ${a(network)} address`
    }
  }
  return own
})
