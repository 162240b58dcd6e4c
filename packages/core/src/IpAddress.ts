/**
 * IP address literals and what they reach: the pure classifier behind the rule that callbacks go
 * to public hosts only (`CallbackUrl`), used on write by the core and at send time by the HTTP
 * transport on every address a host name resolves to.
 *
 * `parse` reads IPv4 in every form a URL parser or `inet_aton` accepts (`127.0.0.1`, `127.1`,
 * `0x7f000001`, `2130706433`, `0177.0.0.1`, a trailing dot) and IPv6 (compressed, with an embedded
 * IPv4 tail, in brackets). `classify` names the range an address is in; only `public` addresses
 * are ordinary Internet hosts. IPv6 forms that carry an IPv4 address (IPv4-mapped, NAT64, 6to4)
 * are classified by that IPv4 address, so `::ffff:127.0.0.1` is loopback.
 */
import { withArticle as article } from "./Errors.js"

/** A parsed address: IPv4 as an unsigned 32-bit number, IPv6 as eight 16-bit groups. */
export type Address =
  | { readonly version: 4; readonly value: number }
  | { readonly version: 6; readonly groups: ReadonlyArray<number> }

/** What an address reaches. */
export type Kind =
  | "public"
  | "loopback"
  | "private"
  | "carrier-grade-nat"
  | "link-local"
  | "unspecified"
  | "multicast"
  | "broadcast"
  | "documentation"
  | "reserved"

/** The kind with its article, for messages: "a loopback", "an unspecified". */
export const withArticle = (kind: Kind): string => article(kind)

/** Kinds a deployment may allow for development (`PAYDESK_CALLBACK_ALLOW_PRIVATE`); the others are never reachable. */
export const privateKinds: ReadonlyArray<Kind> = ["loopback", "private", "carrier-grade-nat"]

const parseIpv4Part = (part: string): number | null => {
  if (/^0[xX][0-9a-fA-F]*$/.test(part)) return part.length === 2 ? 0 : parseInt(part.slice(2), 16)
  if (/^0[0-7]+$/.test(part)) return parseInt(part.slice(1), 8)
  if (/^(0|[1-9][0-9]*)$/.test(part)) return Number(part)
  return null
}

/** IPv4 in any of the forms URL parsers accept (1 to 4 parts, decimal, octal or hex); null otherwise. */
export const parseIpv4 = (text: string): number | null => {
  const parts = text.split(".")
  if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop()
  if (parts.length === 0 || parts.length > 4 || text.length > 64) return null
  const numbers: Array<number> = []
  for (const part of parts) {
    const n = parseIpv4Part(part)
    if (n === null || !Number.isFinite(n)) return null
    numbers.push(n)
  }
  const last = numbers.pop()!
  if (numbers.some((n) => n > 255)) return null
  if (last >= 256 ** (4 - numbers.length)) return null
  let value = 0
  numbers.forEach((n, i) => (value += n * 256 ** (3 - i)))
  return value + last
}

/** IPv6 (optionally in brackets) as eight groups; null when malformed or carrying a zone id. */
export const parseIpv6 = (text: string): ReadonlyArray<number> | null => {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text
  if (bare.length > 64 || !/^[0-9a-fA-F:.]+$/.test(bare) || !bare.includes(":")) return null
  const halves = bare.split("::")
  if (halves.length > 2) return null
  const groupsOf = (half: string): Array<number> | null => {
    if (half === "") return []
    const out: Array<number> = []
    const pieces = half.split(":")
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!
      if (i === pieces.length - 1 && piece.includes(".")) {
        if (!/^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(piece)) return null
        const v4 = parseIpv4(piece)!
        out.push(Math.floor(v4 / 65536), v4 % 65536)
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(piece)) return null
        out.push(parseInt(piece, 16))
      }
    }
    return out
  }
  const head = groupsOf(halves[0]!)
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : []
  if (head === null || tail === null) return null
  if (halves.length === 1) return head.length === 8 ? head : null
  if (head.length + tail.length > 7) return null
  return [...head, ...Array<number>(8 - head.length - tail.length).fill(0), ...tail]
}

/** An IP literal (IPv4 in any URL form, IPv6 with or without brackets), or null for anything else. */
export const parse = (text: string): Address | null => {
  const v6 = parseIpv6(text)
  if (v6 !== null) return { version: 6, groups: v6 }
  const v4 = parseIpv4(text)
  return v4 === null ? null : { version: 4, value: v4 }
}

const inV4 = (value: number, base: readonly [number, number, number, number], bits: number): boolean => {
  const start = base[0] * 2 ** 24 + base[1] * 2 ** 16 + base[2] * 2 ** 8 + base[3]
  const size = 2 ** (32 - bits)
  return value >= start && value < start + size
}

const v4Ranges: ReadonlyArray<readonly [readonly [number, number, number, number], number, Kind]> = [
  [[0, 0, 0, 0], 8, "unspecified"],
  [[10, 0, 0, 0], 8, "private"],
  [[100, 64, 0, 0], 10, "carrier-grade-nat"],
  [[127, 0, 0, 0], 8, "loopback"],
  [[169, 254, 0, 0], 16, "link-local"],
  // Azure's platform address (WireServer, the host's agent and DNS): public in form, inside a VM it
  // reaches the platform, as 169.254.169.254 does elsewhere (an outside probe saved it as a callback URL).
  [[168, 63, 129, 16], 32, "reserved"],
  [[172, 16, 0, 0], 12, "private"],
  [[192, 0, 0, 0], 24, "reserved"],
  [[192, 0, 2, 0], 24, "documentation"],
  [[192, 88, 99, 0], 24, "reserved"],
  [[192, 168, 0, 0], 16, "private"],
  [[198, 18, 0, 0], 15, "reserved"],
  [[198, 51, 100, 0], 24, "documentation"],
  [[203, 0, 113, 0], 24, "documentation"],
  [[224, 0, 0, 0], 4, "multicast"],
  [[255, 255, 255, 255], 32, "broadcast"],
  [[240, 0, 0, 0], 4, "reserved"]
]

const classifyV4 = (value: number): Kind => {
  for (const [base, bits, kind] of v4Ranges) if (inV4(value, base, bits)) return kind
  return "public"
}

const v4Of = (high: number, low: number): number => high * 65536 + low

const classifyV6 = (g: ReadonlyArray<number>): Kind => {
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0)
  if (zeroUpTo(8)) return "unspecified"
  if (zeroUpTo(7) && g[7] === 1) return "loopback"
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible, deprecated), 64:ff9b::a.b.c.d (NAT64): the IPv4 inside decides.
  if (zeroUpTo(5) && g[5] === 0xffff) return classifyV4(v4Of(g[6]!, g[7]!))
  if (zeroUpTo(6)) return classifyV4(v4Of(g[6]!, g[7]!)) === "public" ? "reserved" : classifyV4(v4Of(g[6]!, g[7]!))
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return classifyV4(v4Of(g[6]!, g[7]!))
  // 2002:AABB:CCDD::/48 is 6to4 for AA.BB.CC.DD.
  if (g[0] === 0x2002) return classifyV4(v4Of(g[1]!, g[2]!)) === "public" ? "reserved" : classifyV4(v4Of(g[1]!, g[2]!))
  const first = g[0]!
  if ((first & 0xfe00) === 0xfc00) return "private" // fc00::/7 unique local (fd00:ec2::254 is a metadata address)
  if ((first & 0xffc0) === 0xfe80) return "link-local"
  if ((first & 0xffc0) === 0xfec0) return "reserved" // site-local, deprecated
  if ((first & 0xff00) === 0xff00) return "multicast"
  if (first === 0x2001 && g[1] === 0x0db8) return "documentation"
  if (first === 0x3fff && (g[1]! & 0xf000) === 0) return "documentation" // 3fff::/20 (RFC 9637)
  if (first === 0x2001 && g[1]! < 0x0200) return "reserved" // Teredo, benchmarking, ORCHID and other IETF assignments
  if ((first & 0xe000) !== 0x2000) return "reserved" // outside 2000::/3, the global unicast space
  return "public"
}

/** The kind of a parsed address. */
export const classifyAddress = (address: Address): Kind =>
  address.version === 4 ? classifyV4(address.value) : classifyV6(address.groups)

/** The kind of an IP literal, or null when `text` is not one. */
export const classify = (text: string): Kind | null => {
  const address = parse(text)
  return address === null ? null : classifyAddress(address)
}

/** Whether a deployment with `allowPrivate` may connect to an address of this kind. */
export const isAllowed = (kind: Kind, allowPrivate: boolean): boolean =>
  kind === "public" || (allowPrivate && privateKinds.includes(kind))
