/**
 * Test harness of the Postgres suites: the run's targets (see globalSetup.ts) and a fresh
 * migrated database per suite on a target.
 */
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import * as PgStore from "../src/PgStore.js"

/** The targets of this run (DATABASE_URL or embedded, plus the machine's service). */
export const targets = inject("pgTargets")

let counter = 0

/** Creates a fresh empty database on the target's server and returns its URL (a new one each time it runs). */
export const freshDatabase = (url: string): Effect.Effect<string> =>
  Effect.suspend(() => PgStore.createDatabase(url, `${inject("pgPrefix")}t${process.pid}_${++counter}`))

/** Every persistence port on a fresh, migrated database of the target. */
export const store = (url: string, options: { readonly maxConnections?: number } = {}) =>
  Layer.unwrap(Effect.map(freshDatabase(url), (db) => PgStore.layer(db, options)))
