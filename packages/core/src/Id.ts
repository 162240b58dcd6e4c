/**
 * Identifiers as the API spells them.
 *
 * Payments are `pay_<uuid>` and payouts `po_<uuid>`; everything else is a bare UUID. Stored and
 * compared identifiers are the lowercase bare UUID: parsing accepts the prefixed form or the bare
 * UUID (charge history carries the bare one), in any letter case for the UUID part, and formatting
 * puts the prefix back on the lowercase UUID. A UUID is the RFC 4122 textual form of any version.
 */
import { Option } from "effect"

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Prefix of payment identifiers. */
export const PAYMENT_PREFIX = "pay_"

/** Prefix of payout identifiers. */
export const PAYOUT_PREFIX = "po_"

/** Whether a string is a UUID in 8-4-4-4-12 hex form (any version, any letter case). */
export const isUuid = (input: unknown): input is string => typeof input === "string" && UUID_PATTERN.test(input)

/** The lowercase UUID of a UUID string, or none. */
export const parseUuid = (input: unknown): Option.Option<string> =>
  isUuid(input) ? Option.some(input.toLowerCase()) : Option.none()

const prefixed = (prefix: string, uuid: string): string => {
  if (!isUuid(uuid)) throw new RangeError(`${prefix}<uuid> needs a UUID, got ${JSON.stringify(uuid)}`)
  return prefix + uuid.toLowerCase()
}

const parsePrefixed = (prefix: string, input: unknown): Option.Option<string> => {
  if (typeof input !== "string") return Option.none()
  // The prefix in any case, as the UUID (and as event ids, `EVT_…`): `PAY_<UUID>` is the payment too.
  return parseUuid(input.slice(0, prefix.length).toLowerCase() === prefix ? input.slice(prefix.length) : input)
}

/** `pay_<uuid>` of a payment UUID; a non-UUID argument is a programmer error and throws a `RangeError`. */
export const paymentId = (uuid: string): string => prefixed(PAYMENT_PREFIX, uuid)

/** The lowercase bare UUID of `pay_<uuid>` or of a bare UUID, or none. */
export const parsePaymentId = (input: unknown): Option.Option<string> => parsePrefixed(PAYMENT_PREFIX, input)

/** `po_<uuid>` of a payout UUID; a non-UUID argument is a programmer error and throws a `RangeError`. */
export const payoutId = (uuid: string): string => prefixed(PAYOUT_PREFIX, uuid)

/** The lowercase bare UUID of `po_<uuid>` or of a bare UUID, or none. */
export const parsePayoutId = (input: unknown): Option.Option<string> => parsePrefixed(PAYOUT_PREFIX, input)
