/**
 * The kit on PostgreSQL as the reference server runs its engine, for the engine benches: the kit's
 * emulators, callbacks over real HTTP (`HttpCallbackTransport`, the later layer winning for
 * `CallbackTransport`; or `transport`), the server's entropy (Node's `randomUUID` and pooled tokens,
 * not the kit's Web Crypto ones), Node's synchronous SHA-256 and HMAC (callback signatures),
 * no spans recorded (as without an OTLP endpoint, server/Telemetry.ts), and private destinations
 * allowed (the benches' receivers are on 127.0.0.1: PAYDESK_CALLBACK_ALLOW_PRIVATE=1 in the server).
 */
import { Layer, References } from "effect"
import { type CallbackTransport, Config, PaydeskConfig } from "@paydesk/core"
import { HttpCallbackTransport } from "@paydesk/server"
import { NodeSecurity, PgStore } from "@paydesk/sql-pg"
import { Kit } from "@paydesk/testkit"

export const layer = (
  url: string,
  options: { readonly transport?: Layer.Layer<CallbackTransport>; readonly config?: Partial<typeof Config.defaults> } = {}
) =>
  Layer.mergeAll(
    Kit.layerAround(PgStore.layer(url, { maxConnections: 10 })),
    options.transport ?? HttpCallbackTransport.layer,
    NodeSecurity.layerSyncDigest,
    NodeSecurity.layerCryptoEntropy,
    Layer.succeed(References.TracerEnabled)(false),
    Layer.succeed(PaydeskConfig)({ ...Config.defaults, allowPrivateCallbacks: true, ...options.config })
  )
