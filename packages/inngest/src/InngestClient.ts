/**
 * The Inngest client of Paydesk's background engine. The mode is always passed explicitly:
 * `isDev: true` talks to a local Inngest dev server and skips request signing, `isDev: false`
 * talks to Inngest Cloud (or `baseUrl`) and verifies every request with the signing key.
 */
import { Inngest, type Logger } from "inngest"

/** Options of `makeClient`. */
export interface Options {
  /** The app id shown in Inngest; stable for the app's lifetime (default `paydesk`). */
  readonly id?: string
  /** Development mode: local dev server, no signature verification. Required so no environment variable decides it. */
  readonly isDev: boolean
  /** Key Inngest signs its requests with (required to serve in cloud mode). */
  readonly signingKey?: string
  /** Key to send events with. */
  readonly eventKey?: string
  /** Inngest API origin, for a self-hosted Inngest server. */
  readonly baseUrl?: string
  /**
   * Where the SDK's own messages go (a refused signature, a failed sync), as `logger.error(fields,
   * message)` (pino's order); default the SDK's console logger, several plain lines per message.
   */
  readonly logger?: Logger
}

/** The default app id. */
export const defaultId = "paydesk"

/** The client the functions are created with. */
export type Client = Inngest.Any

/** Builds the client. */
export const makeClient = (options: Options): Client =>
  new Inngest({
    id: options.id ?? defaultId,
    isDev: options.isDev,
    ...(options.signingKey === undefined ? {} : { signingKey: options.signingKey }),
    ...(options.eventKey === undefined ? {} : { eventKey: options.eventKey }),
    ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
    ...(options.logger === undefined ? {} : { logger: options.logger, internalLogger: options.logger })
  })
