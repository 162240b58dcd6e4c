/**
 * `Keccak256` from `@noble/hashes` (as the reference server's `NodeSecurity.layerKeccak256`): the
 * EIP-55 checksum of ERC-20 payout addresses in the kit.
 */
import { Layer } from "effect"
import { Keccak256 } from "@paydesk/core"
import { keccak_256 } from "@noble/hashes/sha3.js"

/** The `Keccak256` layer. */
export const layer: Layer.Layer<Keccak256> = Layer.succeed(Keccak256)({ hash: (bytes) => keccak_256(bytes) })
