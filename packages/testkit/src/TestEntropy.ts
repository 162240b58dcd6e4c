/**
 * Two `Entropy` adapters: a seeded, reproducible one for tests and one on Web Crypto.
 *
 * The seeded adapter draws from SplitMix64, whose outputs never repeat within 2^64 draws; each UUID
 * places one whole draw in bits that the version and variant fields leave untouched, so seeded
 * UUIDs never repeat either. The same seed gives the same sequence of UUIDs and tokens in every run.
 */
import { Effect, Layer } from "effect"
import { Entropy } from "@paydesk/core"
import { toBase64Url } from "./Bytes.js"

const MASK_64 = (1n << 64n) - 1n

/** The default seed of `layerSeeded`. */
export const defaultSeed = 20_261_121

/** A SplitMix64 generator: `next()` returns 64 pseudo-random bits as a bigint. */
export const splitMix64 = (seed: number | bigint): { next(): bigint } => {
  let state = BigInt.asUintN(64, BigInt(seed))
  return {
    next() {
      state = (state + 0x9e3779b97f4a7c15n) & MASK_64
      let z = state
      z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK_64
      z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK_64
      return z ^ (z >> 31n)
    }
  }
}

const writeBits = (target: Uint8Array, bits: bigint, positions: ReadonlyArray<number>): void => {
  let rest = bits
  for (let i = positions.length - 1; i >= 0; i--) {
    target[positions[i]!] = Number(rest & 0xffn)
    rest >>= 8n
  }
}

const hex = (bytes: Uint8Array): string => {
  let out = ""
  for (const byte of bytes) out += byte.toString(16).padStart(2, "0")
  return out
}

/** Formats 16 bytes as a lowercase UUID, setting the version 4 and RFC 4122 variant bits. */
export const formatUuidV4 = (bytes: Uint8Array): string => {
  const b = Uint8Array.from(bytes)
  b[6] = (b[6]! & 0x0f) | 0x40
  b[8] = (b[8]! & 0x3f) | 0x80
  const h = hex(b)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** A deterministic `Entropy` service from a seed. */
export const makeSeeded = (seed: number | bigint = defaultSeed): Entropy["Service"] => {
  const random = splitMix64(seed)
  const bytes = (count: number): Uint8Array => {
    const out = new Uint8Array(count)
    for (let i = 0; i < count; i += 8) writeBits(out, random.next(), [0, 1, 2, 3, 4, 5, 6, 7].map((j) => i + j))
    return out
  }
  return Entropy.of({
    uuid: Effect.sync(() => {
      const b = new Uint8Array(16)
      // The unique draw goes to bytes 0-5 and 10-11; version and variant live in bytes 6 and 8.
      writeBits(b, random.next(), [0, 1, 2, 3, 4, 5, 10, 11])
      writeBits(b, random.next(), [6, 7, 8, 9, 12, 13, 14, 15])
      return formatUuidV4(b)
    }),
    token: (count) => Effect.sync(() => toBase64Url(bytes(count)))
  })
}

/** Seeded, reproducible `Entropy`; every layer build starts the sequence from `seed` again. */
export const layerSeeded = (seed: number | bigint = defaultSeed): Layer.Layer<Entropy> =>
  Layer.sync(Entropy, () => makeSeeded(seed))

/** `Entropy` on Web Crypto: `crypto.randomUUID()` and `crypto.getRandomValues`. */
export const layerCrypto: Layer.Layer<Entropy> = Layer.succeed(Entropy)(Entropy.of({
  uuid: Effect.sync(() => globalThis.crypto.randomUUID()),
  token: (count) =>
    Effect.sync(() => {
      const out = new Uint8Array(count)
      for (let i = 0; i < count; i += 65_536) globalThis.crypto.getRandomValues(out.subarray(i, i + 65_536))
      return toBase64Url(out)
    })
}))
