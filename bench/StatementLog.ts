/**
 * What PostgreSQL's own log says about the statements of one database: with
 * `log_min_duration_statement = 0` set on the database (`enable`, before its connections open), every
 * statement is logged with its time, three lines per statement of the extended protocol ("parse",
 * "bind" — where a statement with parameters is planned — and "execute"), one ("statement") for the
 * simple protocol, and the parameters of an execute on the line after. `since` reads what was logged
 * from a position of the log file on (`position`), so a bench brackets a phase with two readings.
 *
 * The log file is the server's (`LOG`, by default the Debian service's), readable by this process: the
 * benches that use it need `DATABASE_URL`'s server, not the embedded one.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { PgStore } from "@paydesk/sql-pg"
import { closeSync, openSync, readSync, statSync } from "node:fs"

/** The server's log file. */
export const file = process.env.LOG ?? "/var/log/postgresql/postgresql-15-main.log"

/** The name of the database of `url`. */
export const databaseOf = (url: string): string => new URL(url).pathname.slice(1)

/** Logs every statement of database `name` from the next connection on (`serverUrl`: any database of that server). */
export const enable = (serverUrl: string, name: string) =>
  Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`ALTER DATABASE ${name} SET log_min_duration_statement = 0`)).pipe(
    Effect.provide(PgStore.layerClient(serverUrl, { maxConnections: 1 }))
  ))

/** The log's end now. */
export const position = (): number => statSync(file).size

/** One logged step of a statement. */
export interface Step {
  readonly ms: number
  readonly step: "statement" | "parse" | "bind" | "execute"
  /** The statement, spaces collapsed, cut to 100 characters. */
  readonly kind: string
  /** The parameters logged with an execute (empty when none). */
  readonly parameters: string
}

const line = /@(\S+) LOG: {2}duration: ([\d.]+) ms {2}(statement|parse|bind|execute)[^:]*: (.*)$/

/** The steps logged for database `name` in `lines`. */
export const steps = (lines: ReadonlyArray<string>, name: string): Array<Step> => {
  const found: Array<Step> = []
  lines.forEach((entry, i) => {
    const [, database, ms, step, statement] = line.exec(entry) ?? []
    if (database !== name || step === undefined) return
    // The statement's other lines follow, each starting with a tab; then its parameters, if any.
    let end = i + 1
    while (lines[end]?.startsWith("\t")) end++
    const text = [statement ?? "", ...lines.slice(i + 1, end)].join(" ")
    const next = lines[end] ?? ""
    found.push({
      ms: Number(ms),
      step: step as Step["step"],
      kind: text.replace(/\s+/g, " ").trim().slice(0, 100),
      parameters: step === "execute" && next.includes("DETAIL:  parameters:") ? next : ""
    })
  })
  return found
}

/** The lines logged from `from` (a `position`) on. */
export const since = (from: number): Array<string> => {
  const size = statSync(file).size - from
  const buffer = Buffer.alloc(Math.max(0, size))
  const fd = openSync(file, "r")
  try {
    readSync(fd, buffer, 0, buffer.length, from)
  } finally {
    closeSync(fd)
  }
  return buffer.toString("utf8").split("\n")
}

/** Per kind of statement: how many ran, their time in all, and the part of it spent in "bind" (planning). */
export interface Kind {
  readonly kind: string
  readonly count: number
  readonly ms: number
  readonly bindMs: number
  /** Their parameters, as logged (one entry per execute). */
  readonly parameters: ReadonlyArray<string>
}

/** `steps` grouped by kind, the longest in all first. */
export const byKind = (all: ReadonlyArray<Step>): Array<Kind> => {
  const kinds = new Map<string, { count: number; ms: number; bindMs: number; parameters: Array<string> }>()
  for (const s of all) {
    const entry = kinds.get(s.kind) ?? { count: 0, ms: 0, bindMs: 0, parameters: [] }
    if (s.step === "statement" || s.step === "execute") entry.count++
    if (s.step === "bind") entry.bindMs += s.ms
    if (s.parameters !== "") entry.parameters.push(s.parameters)
    entry.ms += s.ms
    kinds.set(s.kind, entry)
  }
  return [...kinds.entries()].map(([kind, k]) => ({ kind, ...k })).sort((a, b) => b.ms - a.ms)
}
