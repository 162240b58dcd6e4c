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
 * - `ERC-20` (Ethereum): `0x` and 40 hexadecimal digits. The mixed-case EIP-55 checksum needs
 *   Keccak-256, which neither Web Crypto nor Node offers, so it is not checked (decisions.md).
 * - `TON`: the user-friendly form (48 base64url characters decoding to 36 bytes: a flag byte,
 *   the workchain, the 32-byte account and a CRC16-XMODEM of the first 34), bounceable or not,
 *   never a testnet-only address (payouts move real USDT); or the raw form `0:` / `-1:` and 64
 *   hexadecimal digits.
 *
 * On every network the all-zero account (the burn address) is refused: what is sent there is gone.
 */
import { Effect } from "effect"

/** Networks payouts may use. */
export const networks = ["TRC-20", "ERC-20", "TON"] as const
export type Network = typeof networks[number]

export const isNetwork = (network: string): network is Network => (networks as ReadonlyArray<string>).includes(network)

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

/** Base58 (Bitcoin's alphabet) to bytes; `undefined` for a character outside it. */
export const base58Decode = (text: string): Uint8Array | undefined => {
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

/** base64url (no padding) to bytes; `undefined` for a character outside it. */
const base64UrlDecode = (text: string): Uint8Array | undefined => {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
  const bytes: Array<number> = []
  let buffer = 0
  let bits = 0
  for (const char of text) {
    buffer = (buffer << 6) | alphabet.indexOf(char)
    bits += 6
    if (bits >= 8) {
      bits -= 8
      bytes.push((buffer >> bits) & 0xff)
    }
  }
  return Uint8Array.from(bytes)
}

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

const tron = Effect.fnUntraced(function*(address: string) {
  const problem = "wallet_address is not a TRC-20 address: 34 base58 characters starting with T, with a valid checksum"
  if (address.length !== 34 || !address.startsWith("T")) return problem
  const bytes = base58Decode(address)
  if (bytes === undefined || bytes.length !== 25 || bytes[0] !== 0x41) return problem
  const body = Uint8Array.from(bytes.subarray(0, 21))
  const check = yield* sha256(yield* sha256(body))
  if (!check.subarray(0, 4).every((byte, i) => byte === bytes[21 + i])) return problem
  if (allZero(body.subarray(1))) return "wallet_address is the TRON zero address: USDT sent there is lost"
  return undefined
})

const ethereum = (address: string): string | undefined => {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return "wallet_address is not an ERC-20 address: 0x and 40 hexadecimal digits"
  if (/^0x0{40}$/.test(address)) return "wallet_address is the Ethereum zero address: USDT sent there is lost"
  return undefined
}

const ton = (address: string): string | undefined => {
  const problem =
    "wallet_address is not a TON address: 48 base64url characters (the user-friendly form, with a valid checksum) or 0: or -1: and 64 hexadecimal digits"
  const zero = "wallet_address is the TON zero address: USDT sent there is lost"
  const raw = /^(?:0|-1):([0-9a-fA-F]{64})$/.exec(address)
  if (raw !== null) return /^0+$/.test(raw[1]!) ? zero : undefined
  if (address.length !== 48) return problem
  const bytes = base64UrlDecode(address)
  if (bytes === undefined || bytes.length !== 36) return problem
  const flag = bytes[0]!
  if ((flag & 0x80) !== 0) return "wallet_address is a TON testnet-only address: payouts move real USDT"
  if (flag !== 0x11 && flag !== 0x51) return problem
  if (bytes[1] !== 0x00 && bytes[1] !== 0xff) return problem
  if (crc16Xmodem(bytes.subarray(0, 34)) !== ((bytes[34]! << 8) | bytes[35]!)) return problem
  if (allZero(bytes.subarray(2, 34))) return zero
  return undefined
}

/**
 * Why `address` cannot receive a payout on `network`, or `undefined` when it can. `address` is
 * already within the general rule (1 to 128 letters, digits, `:`, `_`, `-`).
 */
export const problem = (network: Network, address: string): Effect.Effect<string | undefined> => {
  switch (network) {
    case "TRC-20":
      return tron(address)
    case "ERC-20":
      return Effect.succeed(ethereum(address))
    case "TON":
      return Effect.succeed(ton(address))
  }
}
