/**
 * @paydesk/inngest: the Inngest engine of Paydesk's background work. Cron sweeps and
 * `sleepUntil` flows call the core's idempotent use cases; served from Fastify at `/api/inngest`.
 * `InngestWakeups` sends the flows' events after each commit that writes a due moment.
 */
export * as InngestClient from "./InngestClient.js"
export * as InngestFunctions from "./InngestFunctions.js"
export * as InngestPlugin from "./InngestPlugin.js"
export * as InngestWakeups from "./InngestWakeups.js"
export * as Retryability from "./Retryability.js"
