/** STUB: being written. */
import type { FastifyInstance } from "fastify"
import type { OperatorHooks } from "./App.js"
import type { Context } from "./Http.js"

/** Registers the routes. */
export const register = async (_app: FastifyInstance, _ctx: Context, _options: { readonly token: string; readonly hooks: OperatorHooks }): Promise<void> => {}
