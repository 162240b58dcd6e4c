/**
 * The rule for a terminal's `callback_url`: the service POSTs signed, merchant-controlled JSON
 * there, so it must not reach the service's own network (SSRF).
 *
 * Accepted: an `http` or `https` URL of at most 2048 characters, without credentials
 * (`user:pass@`), whose host is a public IP address or a name that is not reserved for local use.
 * Refused: loopback, private, carrier-grade NAT, link-local (cloud metadata `169.254.169.254`),
 * unspecified, multicast, broadcast, documentation and reserved addresses in every disguise a URL
 * parser turns into them (`0x7f000001`, `2130706433`, `0177.0.0.1`, `127.1`, `[::ffff:127.0.0.1]`,
 * `[::1]`), and names for local hosts (`localhost`, `*.localhost`, single-label names, `*.local`,
 * `*.internal`, `*.home.arpa`). With `allowPrivate` (development), loopback, private and
 * carrier-grade NAT addresses and local names are accepted.
 *
 * A name is only checked as text here; the transport checks every address it resolves to, with
 * the same classifier, when it sends (`IpAddress`).
 */
import { Result } from "effect"
import { hasControlCharacter, hasLoneSurrogate, unicodeOnly } from "./Bytes.js"
import * as IpAddress from "./IpAddress.js"

/** Longest accepted URL. */
export const maxLength = 2048

const localNames = [/^localhost$/, /\.localhost$/, /\.local$/, /\.internal$/, /\.home\.arpa$/]

/** Whether a host name (not an IP literal) names a local host by convention. */
export const isLocalName = (hostname: string): boolean => {
  const name = hostname.toLowerCase().replace(/\.$/, "")
  return !name.includes(".") || localNames.some((pattern) => pattern.test(name))
}

/** Checks a callback URL; the failure is the message for the named field. */
export const check = (url: string, options: { readonly allowPrivate: boolean; readonly field?: string }): Result.Result<string, string> => {
  const field = options.field ?? "callback_url"
  const malformed = Result.fail(`${field} must be an http or https URL of at most ${maxLength} characters`)
  // (`\S` lets ESC, DEL and C1 through; a control character is no part of a URL, RFC 3986 percent-encodes it.)
  if (url.length > maxLength || !/^https?:\/\/[^\s/?#]+\S*$/i.test(url) || hasControlCharacter(url)) return malformed
  // Stored as sent, or refused: a store would write the lone half as U+FFFD, another URL than the one checked and answered.
  if (hasLoneSurrogate(url)) return Result.fail(unicodeOnly(field))
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return malformed
  }
  if ((parsed.protocol !== "http:" && parsed.protocol !== "https:") || parsed.hostname === "") return malformed
  if (parsed.username !== "" || parsed.password !== "") return Result.fail(`${field} must not contain credentials (user:password@)`)
  // Port 0 parses but no connection can reach it: every callback would fail (an outside probe).
  if (parsed.port === "0") return Result.fail(`${field} must not use port 0`)
  const kind = IpAddress.classify(parsed.hostname)
  if (kind !== null) {
    return IpAddress.isAllowed(kind, options.allowPrivate)
      ? Result.succeed(url)
      : Result.fail(`${field} must not point to ${IpAddress.withArticle(kind)} address (${parsed.hostname})`)
  }
  if (!options.allowPrivate && isLocalName(parsed.hostname)) {
    return Result.fail(`${field} must not point to a local host name (${parsed.hostname})`)
  }
  return Result.succeed(url)
}
