/**
 * Port: Keccak-256, for the EIP-55 checksum of Ethereum (`ERC-20`) payout addresses.
 *
 * Contract: `hash(bytes)` is the 32-byte Keccak-256 of `bytes`, with Keccak's original padding as
 * Ethereum uses it, not NIST's SHA3-256 (which differs in one padding byte and gives other digests:
 * `hash` of no bytes is `c5d24601…5d85a470`, SHA3-256's is `a7ffc6f8…f8434a`). Neither Web Crypto
 * nor Node's crypto offers Keccak-256, and the core depends on `effect` only, so there is no
 * default: the reference server and the kit provide `@noble/hashes`' (`NodeSecurity.layerKeccak256`,
 * the testkit's `Kit`), and the testkit's `Keccak256Contract` checks an embedding team's own.
 */
import { Context } from "effect"

export class Keccak256 extends Context.Service<Keccak256, {
  hash(bytes: Uint8Array): Uint8Array
}>()("@paydesk/core/Keccak256") {}
