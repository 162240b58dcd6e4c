/** STUB: being written. */
import type { FastifyInstance } from "fastify"
import type { Context } from "./Http.js"

/** Registers the routes. */
export const register = async (_app: FastifyInstance, _ctx: Context): Promise<void> => {}
