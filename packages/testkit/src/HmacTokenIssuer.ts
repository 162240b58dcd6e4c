/**
 * The core's HMAC `TokenIssuer` (`@paydesk/core` `HmacTokenIssuer`) with a fixed test key by
 * default, for kits and tests.
 */
import type { Effect, Layer } from "effect"
import { HmacTokenIssuer, type TokenIssuer } from "@paydesk/core"

/** The signing key of `layer()` when none is given. */
export const defaultKey = "paydesk-testkit-token-key"

/** Builds the issuer keyed with `key`. */
export const make = (key: string = defaultKey): Effect.Effect<TokenIssuer["Service"]> => HmacTokenIssuer.make(key)

/** The issuer as a layer, keyed with `key`. */
export const layer = (key: string = defaultKey): Layer.Layer<TokenIssuer> => HmacTokenIssuer.layer(key)
