/**
 * Serves the Inngest functions from a Fastify app at `/api/inngest` with `inngest/fastify`:
 * GET answers introspection, PUT registers the app with Inngest, POST runs a function step.
 * Requests are verified with the client's signing key unless the client is in dev mode.
 */
import type { FastifyInstance } from "fastify"
import type { InngestFunction } from "inngest"
import { serve } from "inngest/fastify"
import type { Client } from "./InngestClient.js"

/** The path Inngest calls. */
export const path = "/api/inngest"

/** Largest request body accepted on the Inngest route (step state and events), whatever the app's limit. */
export const bodyLimit = 4 * 1024 * 1024

/** Options of `register`. */
export interface Options {
  readonly client: Client
  readonly functions: ReadonlyArray<InngestFunction.Like>
  /**
   * Public origin Inngest calls back. Give it in cloud mode: by default the request's host, so a
   * sync (an unsigned `PUT`, by Inngest's design) registers whatever `Host` its sender names.
   */
  readonly serveOrigin?: string
}

/** Adds the Inngest route to the app. */
export const register = (app: FastifyInstance, options: Options): void => {
  app.route({
    method: ["GET", "POST", "PUT"],
    url: path,
    bodyLimit,
    handler: serve({
      client: options.client,
      functions: [...options.functions],
      servePath: path,
      ...(options.serveOrigin === undefined ? {} : { serveOrigin: options.serveOrigin })
    })
  })
}
