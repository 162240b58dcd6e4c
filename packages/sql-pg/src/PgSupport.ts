/**
 * Conversions between the core's values and PostgreSQL columns, and the error mapping every
 * Pg repository shares: money is `numeric` (kopecks and micro-USDT scaled back to exact
 * bigints), time is `timestamptz` (epoch milliseconds in the core), unique violations become
 * `WriteConflict`, text PostgreSQL cannot store (a NUL character: SQLSTATE 22021, 22P05) dies with the
 * core's `UnstorableText` (a 400, not a 500, at the HTTP edge), and any other SQL failure is a defect.
 */
import { Context, Effect, Exit, Option, type Request, type RequestResolver } from "effect"
import { Batching, Bytes, Id, Instant, UnstorableText, WriteConflict } from "@paydesk/core"
import type { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import type { Fragment } from "effect/sql/Statement"

/** A bigint in minor units (`scale` decimals) as a numeric literal string. */
export const toNumeric = (minor: bigint, scale: number): string => {
  const negative = minor < 0n
  const digits = (negative ? -minor : minor).toString().padStart(scale + 1, "0")
  const body = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`
  return negative ? `-${body}` : body
}

/**
 * A numeric column value (string) back to minor units; exact, no floats. Digits past `scale` are
 * dropped. The whole and the fraction's digits are read as one integer (one `BigInt` per call; a
 * power of ten and a product per call took nearly three times as long, `bench/micro.ts`, and a
 * charge reads about a dozen amounts).
 */
export const fromNumeric = (value: string | number | bigint, scale: number): bigint => {
  if (!Number.isInteger(scale) || scale < 0) throw new RangeError(`scale must be a whole number of decimals, got ${scale}`)
  const text = String(value)
  const negative = text.startsWith("-")
  const body = negative ? text.slice(1) : text
  const dot = body.indexOf(".")
  const whole = dot < 0 ? body : body.slice(0, dot)
  const fraction = dot < 0 ? "" : body.slice(dot + 1)
  const minor = BigInt(whole + fraction.slice(0, scale).padEnd(scale, "0"))
  return negative ? -minor : minor
}

/** Kopecks as `numeric(14,2)`. */
export const rub = (kopecks: bigint): string => toNumeric(kopecks, 2)
/** `numeric` roubles back to kopecks. */
export const fromRub = (value: string | number | bigint): bigint => fromNumeric(value, 2)
/** Micro-USDT (or micro-RUB rates) as `numeric(20,6)`. */
export const micro = (value: bigint): string => toNumeric(value, 6)
/** `numeric(20,6)` back to micro units. */
export const fromMicro = (value: string | number | bigint): bigint => fromNumeric(value, 6)

/** Epoch milliseconds as a `timestamptz` parameter. */
export const time = (ms: number): Date => new Date(ms)
/** Nullable epoch milliseconds as a `timestamptz` parameter. */
export const timeOrNull = (ms: number | null): Date | null => (ms === null ? null : new Date(ms))

/**
 * The keyset condition of a newest-first list (`created_at DESC, id DESC`): `AND` the rows after
 * `after` (a keyset cursor's position), or nothing. The position compares with its record's
 * stored created_at, which `storedAt` reads (within the list's scope): a row written in
 * microseconds (by SQL of its own, as the benches' pgbench does) would otherwise compare past the
 * entity's milliseconds and skip the rows after it in the same millisecond. The cursor's createdAt
 * stands in when the record is gone or not in the scope (a made-up cursor learns nothing of
 * another terminal's records).
 */
export const keysetAfter = (
  sql: SqlClient.SqlClient,
  after: { readonly createdAt: number; readonly id: string } | null | undefined,
  storedAt: (id: string) => Fragment
): Fragment =>
  after === null || after === undefined
    ? sql``
    : sql`AND (created_at, id) < (COALESCE((${storedAt(after.id)}), ${time(after.createdAt)}), ${after.id}::uuid)`
/** A `timestamptz` value back to epoch milliseconds. */
export const fromTime = (value: Date | string): number => (value instanceof Date ? value.getTime() : Date.parse(value))
/** A nullable `timestamptz` value back to epoch milliseconds. */
export const fromTimeOrNull = (value: Date | string | null): number | null => (value === null ? null : fromTime(value))

/** True when a SQL error is a unique violation. */
export const isUniqueViolation = (error: SqlError): boolean => (error.reason as { _tag?: string })._tag === "UniqueViolation"

/** True when a SQL error is a concurrency abort a retry can fix (deadlock, serialization failure). */
export const isConcurrencyAbort = (error: SqlError): boolean => {
  const tag = (error.reason as { _tag?: string })._tag
  return tag === "DeadlockError" || tag === "SerializationError" || tag === "LockTimeoutError"
}

/** SQLSTATEs of text the database cannot store: invalid byte sequence (NUL), untranslatable character. */
export const unstorableTextStates: ReadonlyArray<string> = ["22021", "22P05"]

/** The SQLSTATE of a SQL error, when the server sent one. */
export const sqlStateOf = (error: SqlError): string | undefined => {
  const cause = (error.reason as { cause?: unknown }).cause
  const code = typeof cause === "object" && cause !== null ? (cause as { code?: unknown }).code : undefined
  return typeof code === "string" ? code : undefined
}

/** The defect of a SQL error: `UnstorableText` for text the database refuses, else the error itself. */
const defectOf = (error: SqlError): unknown =>
  unstorableTextStates.includes(sqlStateOf(error) ?? "") ? UnstorableText.of() : error

/** The conflict of a unique rule or a concurrent writer on `constraint`. */
export const writeConflict = (constraint: string): WriteConflict =>
  new WriteConflict({ constraint, message: `${constraint} already taken or changed concurrently` })

/** Maps unique violations to `WriteConflict` and every other SQL error to a defect. */
export const conflictOnUnique = (constraint: string) =>
<A, R>(effect: Effect.Effect<A, SqlError, R>): Effect.Effect<A, WriteConflict, R> =>
  Effect.catch(effect, (error: SqlError) =>
    isUniqueViolation(error) || isConcurrencyAbort(error)
      ? Effect.fail(writeConflict(constraint))
      : Effect.die(defectOf(error)))

/** Any SQL error is a defect (the adapter has no expected failure here); unstorable text dies with `UnstorableText`. */
export const orDie = <A, R>(effect: Effect.Effect<A, SqlError, R>): Effect.Effect<A, never, R> =>
  Effect.catch(effect, (error: SqlError) => Effect.die(defectOf(error)))

/** The first row mapped, or none. */
export const first = <Row, A>(rows: ReadonlyArray<Row>, map: (row: Row) => A): Option.Option<A> =>
  rows.length === 0 ? Option.none() : Option.some(map(rows[0]!))

/** Runs a lookup by id only when `id` is a UUID (any other string names no row). */
export const byUuid = <A>(id: string, lookup: (id: string) => Effect.Effect<Option.Option<A>>) =>
  Id.isUuid(id) ? lookup(id) : Effect.succeed(Option.none<A>())

/** The condition of a claim's scope: rows of test clock `testClockId`, or of no clock (`null` or absent); `column` names the clock column. */
export const ofClock = (sql: SqlClient.SqlClient, testClockId: string | null | undefined, column: Fragment = sql`test_clock_id`): Fragment => {
  const id = testClockId ?? null
  if (id !== null && !Id.isUuid(id)) return sql`false`
  return id === null ? sql`${column} IS NULL` : sql`${column} = ${id}`
}

/**
 * Rows as one JSON parameter (for `jsonb_populate_recordset` or `jsonb_to_recordset`): `Date`s become
 * ISO 8601 text, and a lone surrogate in a string becomes U+FFFD, as the driver's UTF-8 encoding of a
 * text parameter makes it (JSON would keep it as an escape PostgreSQL refuses).
 */
export const jsonRows = (rows: ReadonlyArray<unknown>): string => {
  // JSON.stringify writes a lone surrogate (and only that) as a \uD800-\uDFFF escape: the rare rows
  // with one are written again, replacing it (a replacer function would slow every row down).
  const text = JSON.stringify(rows.map(datesAsText))
  return Bytes.hasLoneSurrogateEscape(text)
    ? JSON.stringify(rows, (_key, value: unknown) => typeof value === "string" ? Bytes.withoutLoneSurrogates(value) : value)
    : text
}

/**
 * A row whose `Date` values are ISO 8601 text, as `Date.prototype.toJSON` writes them (an invalid
 * one as null), through `Instant.formatIso`. `JSON.stringify` writes a `Date` through its `toJSON`,
 * slowly: 32 rows with four of them took two to three times as long (`bench/micro.ts`). Rows are the
 * repositories' plain column records (no `toJSON` or getters of their own); a `Date` of a subclass,
 * which may write itself otherwise, is left to `JSON.stringify`.
 */
const datesAsText = (row: unknown): unknown => {
  if (typeof row !== "object" || row === null || Array.isArray(row)) return row
  let copy: Record<string, unknown> | undefined
  for (const key of Object.keys(row)) {
    const value = (row as Record<string, unknown>)[key]
    if (value instanceof Date && Object.getPrototypeOf(value) === Date.prototype && !Object.hasOwn(value, "toJSON")) {
      copy ??= { ...row }
      copy[key] = Number.isNaN(value.getTime()) ? null : Instant.formatIso(value.getTime())
    }
  }
  return copy ?? row
}

/**
 * Splits items into rounds in which each key appears once, keeping each key's items in order (as
 * indexes): running the rounds one after the other is running the items one after the other. A
 * caller whose key is a uuid a statement matches as one gives it lowercased (PostgreSQL compares
 * uuids whatever their case).
 */
export const rounds = <A>(items: ReadonlyArray<A>, keyOf: (item: A) => string): Array<Array<number>> => {
  const result: Array<Array<number>> = []
  const next = new Map<string, number>()
  items.forEach((item, index) => {
    const key = keyOf(item)
    const round = next.get(key) ?? 0
    next.set(key, round + 1)
    ;(result[round] ??= []).push(index)
  })
  return result
}

/** The level (connection and savepoint) of the transaction in `context`, or `noTransaction`. */
const noTransaction = {}
const transactionOf = (sql: SqlClient.SqlClient, context: Context.Context<never>): object =>
  Option.getOrElse(Context.getOption(context as Context.Context<unknown>, sql.transactionService), () => noTransaction)

/** The batch key of a call: its transaction (or none) and its own key; the same objects for the same pair. */
interface Key {
  readonly transaction: object
}
const keys = new WeakMap<object, Map<unknown, Key>>()
const keyOf = (transaction: object, own: unknown): Key => {
  const ofTransaction = keys.get(transaction) ?? new Map<unknown, Key>()
  keys.set(transaction, ofTransaction)
  const known = ofTransaction.get(own)
  if (known !== undefined) return known
  const key: Key = { transaction }
  ofTransaction.set(own, key)
  return key
}

/** The answers of a batch of port calls; `inTransaction`: the batch runs in its callers' transaction. */
export type Many<A extends Request.Request<any, any, never>> = (
  requests: ReadonlyArray<A>,
  inTransaction: boolean
) => Effect.Effect<ReadonlyArray<Exit.Exit<Request.Success<A>, Request.Error<A>>>>

/**
 * A port operation whose calls made side by side run as one statement: `many` answers each request of
 * a batch, in order. A batch is the calls of one scheduler turn made in the same transaction, which it
 * runs on (the fibers of the core's `atomicEach`, say), or outside any; `batchKey` separates calls
 * further. Outside a transaction, a batch that fails is redone call by call, so only the call at fault
 * fails. Inside one, the failed statement has aborted the transaction: every call of the batch gets
 * the batch's failure (a conflict stays a conflict, for the caller's `atomic` to retry).
 */
export const sideBySide = <A extends Request.Request<any, any, never>>(
  sql: SqlClient.SqlClient,
  many: Many<A>,
  batchKey: (request: A) => unknown = () => undefined
): (request: A) => Effect.Effect<Request.Success<A>, Request.Error<A>> => {
  const resolver = Batching.batchResolver<A>(
    (requests, key) => many(requests, (key as Key).transaction !== noTransaction),
    {
      batchKey: (request, context) => keyOf(transactionOf(sql, context), batchKey(request)),
      redo: (key) => (key as Key).transaction === noTransaction
    }
  )
  // A request needs no services (`Request<_, _, never>`).
  return (request) => Effect.request(request, resolver) as Effect.Effect<Request.Success<A>, Request.Error<A>>
}

/**
 * A port call committed in groups: inside a transaction it is batched with the calls made side by side
 * in it (`sideBySide`, with the same `batchKey`); outside, it goes to `resolver` with the concurrent
 * ones (group commit).
 */
export const groupCommitted = <A extends Request.Request<any, any, never>>(
  sql: SqlClient.SqlClient,
  many: Many<A>,
  resolver: RequestResolver.RequestResolver<A>,
  batchKey?: (request: A) => unknown
): (request: A) => Effect.Effect<Request.Success<A>, Request.Error<A>> => {
  const inTransaction = sideBySide(sql, many, batchKey)
  return (request) =>
    Effect.flatMap(Effect.serviceOption(sql.transactionService), (transaction) =>
      Option.isSome(transaction)
        ? inTransaction(request)
        : Effect.request(request, resolver) as Effect.Effect<Request.Success<A>, Request.Error<A>>)
}

/**
 * The answers of a batched write whose statement a unique rule (or a concurrent writer) refused: in a
 * transaction, or for one request, every request gets the conflict; outside a transaction a batch of
 * several dies, so that each is redone alone (the one at fault is not known).
 */
export const conflictOfBatch = <A>(size: number, inTransaction: boolean) => (conflict: WriteConflict): Effect.Effect<ReadonlyArray<Exit.Exit<A, WriteConflict>>> =>
  size === 1 || inTransaction ? Effect.succeed(Array.from({ length: size }, () => Exit.fail(conflict))) : Effect.die(conflict)

/**
 * Answers of `SELECT`s by id made side by side: `rowsOf` reads the rows whose id is `IN` the given
 * subquery (all the ids, each once, lowercased as PostgreSQL prints a uuid), and each request gets
 * its own row, or none.
 */
export const byIds = <A extends Request.Request<Option.Option<B>, never, never> & { readonly id: string }, Row extends { readonly id: string }, B>(
  sql: SqlClient.SqlClient,
  rowsOf: (ids: Fragment) => Effect.Effect<ReadonlyArray<Row>, SqlError>,
  map: (row: Row) => B
) =>
(requests: ReadonlyArray<A>): Effect.Effect<ReadonlyArray<Exit.Exit<Option.Option<B>>>> => {
  const ids = JSON.stringify([...new Set(requests.map((r) => r.id.toLowerCase()))])
  return Effect.map(orDie(rowsOf(sql`SELECT jsonb_array_elements_text(${ids}::jsonb)::uuid`)), (rows) => {
    const found = new Map(rows.map((row) => [row.id, row]))
    return requests.map((r) => Exit.succeed(Option.map(Option.fromUndefinedOr(found.get(r.id.toLowerCase())), map)))
  })
}

/**
 * `effect` in a transaction of its own when it makes more than one statement (`statements`) and no
 * transaction is open; else as is. Inside the caller's transaction no savepoint is opened: it would
 * also cover the statements of calls running side by side, and undo them with a failure of this one.
 */
export const together = <A, E, R>(sql: SqlClient.SqlClient, statements: number, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
  statements <= 1
    ? effect
    : Effect.flatMap(Effect.serviceOption(sql.transactionService), (transaction) => Option.isSome(transaction) ? effect : sql.withTransaction(effect))

/** `together`, a SQL failure a defect. */
export const inOneTransaction = <A, R>(sql: SqlClient.SqlClient, statements: number, effect: Effect.Effect<A, never, R>): Effect.Effect<A, never, R> =>
  orDie(together(sql, statements, effect))

/** Quoted column names. */
const quoted = (names: ReadonlyArray<string>): string => names.map((n) => `"${n}"`).join(", ")

/**
 * Inserts rows (column name to value, the same keys in each) into `table` in one statement, in their
 * order (a serial column numbers them so); the statement text is the same whatever the number of rows.
 */
export const insertRows = (sql: SqlClient.SqlClient, table: string, rows: ReadonlyArray<Record<string, unknown>>) => {
  const columns = sql.literal(quoted(Object.keys(rows[0]!)))
  return sql`INSERT INTO ${sql(table)} (${columns})
    SELECT ${columns} FROM jsonb_populate_recordset(NULL::${sql(table)}, ${jsonRows(rows)}::jsonb) WITH ORDINALITY AS r
    ORDER BY r.ordinality`
}

/**
 * Updates rows of `table` by `id` in one statement: each row's columns (the same keys in each) are
 * written where `guard` holds (`t` the stored row, `r` the new one). Answers the ids updated. Each id
 * at most once per call (one statement cannot update a row twice; see `rounds`).
 */
export const updateRows = (sql: SqlClient.SqlClient, table: string, rows: ReadonlyArray<Record<string, unknown>>, guard: Fragment = sql`true`) => {
  const names = Object.keys(rows[0]!).filter((name) => name !== "id")
  return sql<{ readonly id: string }>`UPDATE ${sql(table)} AS t
    SET ${sql.literal(names.map((n) => `"${n}" = r."${n}"`).join(", "))}
    FROM jsonb_populate_recordset(NULL::${sql(table)}, ${jsonRows(rows)}::jsonb) AS r
    WHERE t.id = r.id AND ${guard}
    RETURNING t.id`
}
