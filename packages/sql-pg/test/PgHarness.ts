/**
 * Test harness of the Postgres suites: the run's targets (see globalSetup.ts) and a fresh
 * migrated database per suite on a target.
 */
import { Effect, Layer, Redacted } from "effect"
import { PgClient } from "@effect/sql-pg"
import { SqlClient } from "effect/sql"
import { inject } from "vitest"
import * as PgStore from "../src/PgStore.js"

/** The targets of this run (DATABASE_URL or embedded, plus the machine's service). */
export const targets = inject("pgTargets")

let counter = 0

/** The URL of `database` on the server of `url`. */
export const withDatabase = (url: string, database: string): string => {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

/** Creates a fresh empty database on the target's server and returns its URL. */
export const freshDatabase = (url: string): Effect.Effect<string> =>
  Effect.gen(function*() {
    const name = `paydesk_t${process.pid}_${Date.now().toString(36)}_${++counter}`
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`CREATE DATABASE ${name}`)
    return withDatabase(url, name)
  }).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
    Effect.orDie
  )

/** Every persistence port on a fresh, migrated database of the target. */
export const store = (url: string, options: { readonly maxConnections?: number } = {}) =>
  Layer.unwrap(Effect.map(freshDatabase(url), (db) => PgStore.layer(db, options)))
