/**
 * Test harness of the Postgres suites: the run's targets (see globalSetup.ts), a fresh migrated
 * database per suite on a target (alone or with the kit around it), and statement counts taken by
 * statement-level triggers.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { inject } from "vitest"
import { Kit } from "@paydesk/testkit"
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

/** A fresh migrated database with the kit around it; `pool` connections. */
export const kitOn = (url: string, pool = 10) =>
  Layer.unwrap(Effect.map(freshDatabase(url), (db) => Kit.layerAround(PgStore.layer(db, { maxConnections: pool }))))

/**
 * Counts statements from now on, by kind: each kind names the trigger event it counts (`"INSERT ON
 * payments"`). Answers the effect that reads the counts since the last reading (0 for a kind not seen).
 */
export const countStatements = <K extends string>(kinds: Readonly<Record<K, string>>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE statement_counts (kind text NOT NULL)`
    yield* sql.unsafe(`CREATE FUNCTION count_statement() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO statement_counts VALUES (TG_ARGV[0]); RETURN NULL; END $$`)
    for (const [kind, event] of Object.entries<string>(kinds)) {
      yield* sql.unsafe(`CREATE TRIGGER count_${kind} AFTER ${event} FOR EACH STATEMENT EXECUTE FUNCTION count_statement('${kind}')`)
    }
    return Effect.gen(function*() {
      const rows = yield* sql<{ kind: string; n: number }>`SELECT kind, count(*)::int AS n FROM statement_counts GROUP BY kind`
      yield* sql`DELETE FROM statement_counts`
      return Object.fromEntries(Object.keys(kinds).map((kind) => [kind, rows.find((r) => r.kind === kind)?.n ?? 0])) as Record<K, number>
    }).pipe(Effect.orDie)
  }).pipe(Effect.orDie)
