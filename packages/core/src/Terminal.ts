/**
 * Accounts, users, terminals and API keys: who a merchant is and how it authenticates.
 *
 * An account owns users (the dashboard) and terminals (points of sale). A terminal has one
 * or more API keys (stored as SHA-256 hashes, shown once) and one signing secret (stored
 * encrypted through `SecretCipher`). Terminal settings are the ones the API can change.
 */

/** A merchant account. */
export interface Account {
  readonly id: string
  readonly name: string
  readonly createdAt: number
}

/** Role of a dashboard user; the spec shows only the merchant owner role. */
export type Role = "owner"

/** A dashboard user with a memory-hard password hash. */
export interface User {
  readonly id: string
  readonly accountId: string
  readonly email: string
  readonly passwordHash: string
  readonly role: Role
  readonly createdAt: number
}

export type ConversionMode = "instant" | "scheduled"

/** A terminal (point of sale). */
export interface Terminal {
  readonly id: string
  readonly accountId: string
  readonly name: string
  readonly status: "active" | "disabled"
  /** Direct (host-to-host) integration: subscriptions get `redirect_url` instead of `pay_url`. */
  readonly h2h: boolean
  readonly callbackUrl: string | null
  readonly successRedirectUrl: string | null
  readonly failRedirectUrl: string | null
  readonly conversionMode: ConversionMode
  /** "HH:MM" Moscow time of the daily conversion in `scheduled` mode. */
  readonly conversionTime: string | null
  readonly nextConversionAt: number | null
  readonly showPlatformBranding: boolean
  /** Signing secret encrypted by `SecretCipher`. */
  readonly signingSecretEncrypted: string
  /** The secret the last rotation replaced (encrypted); kept for an overlap window, not used to sign. */
  readonly previousSigningSecretEncrypted: string | null
  /** When the signing secret was last rotated; null if never. */
  readonly signingSecretRotatedAt: number | null
  readonly createdAt: number
  readonly updatedAt: number
}

/** An API key: bound to one terminal, stored as the SHA-256 hex of the key. */
export interface ApiKey {
  readonly id: string
  readonly terminalId: string
  readonly keyHash: string
  /** First characters of the key, to recognise it in listings. */
  readonly prefix: string
  /** Whether the key may create and stop subscriptions. */
  readonly subscriptionWrite: boolean
  readonly createdAt: number
  readonly revokedAt: number | null
}

/** A refresh-token session of a dashboard user (token stored as a hash, rotated on use). */
export interface Session {
  readonly id: string
  readonly userId: string
  readonly familyId: string
  readonly tokenHash: string
  readonly expiresAt: number
  readonly revokedAt: number | null
  readonly createdAt: number
}

/** Settings the merchant API may change. */
export interface Settings {
  readonly callbackUrl?: string | null
  readonly successRedirectUrl?: string | null
  readonly failRedirectUrl?: string | null
  readonly conversionMode?: ConversionMode
  readonly conversionTime?: string | null
  readonly showPlatformBranding?: boolean
}
