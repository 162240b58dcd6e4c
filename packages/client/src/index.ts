/**
 * @paydesk/client: the Paydesk merchant SDK. A typed, fetch-based client of the merchant API
 * (`new Paydesk({ apiKey, baseUrl, sandbox })`, or `Paydesk.login` for the owner's session), callback verification (`webhooks.verify`), and
 * the local development loop (`listen`, `trigger`). Runs on Node >= 18, Bun, Deno and edge
 * runtimes; needs no Effect.
 */
export { createClient, paginate, Paydesk } from "./Client.js"
export type { ClientOptions, LoginOptions, WriteOptions } from "./Client.js"
export type { SessionTokens } from "./Session.js"
export { listen, trigger, triggers } from "./Dev.js"
export type { ListenOptions, TriggerOptions } from "./Dev.js"
export {
  judgesRequest,
  ListenerCursorLost,
  PaydeskAbortError,
  PaydeskApiError,
  PaydeskCallError,
  PaydeskConnectionError,
  PaydeskError,
  PaydeskSessionEndedError,
  WebhookVerificationError
} from "./Errors.js"
export type { ApiErrorCode, ApiErrorDetails, CallErrorOptions, CallOutcome, WebhookFailure } from "./Errors.js"
export type { TransportOptions } from "./Http.js"
export type * from "./Types.js"
export * as webhooks from "./Webhooks.js"
