/**
 * The in-memory database behind every memory repository, and the memory `Transactions` adapter.
 *
 * All tables are `Map`s of immutable records held in one mutable object. One global semaphore
 * serializes transactions: `transaction` takes the lock, snapshots every table (a shallow copy of
 * each `Map` is enough, records are never mutated), runs the effect and restores the snapshot on
 * any failure, defect or interruption. A nested `transaction` joins the open one and behaves like a
 * savepoint: its own writes are undone when it fails, even if the outer transaction recovers.
 * Repository operations call `atomically`, which joins an open transaction of the current fiber or
 * takes the lock for the single operation, so no reader ever sees another fiber's uncommitted writes.
 * A consequence of the single lock: a transaction must never wait for another fiber that needs the
 * database, or both wait forever.
 */
import { Context, Effect, Exit, Layer, Semaphore } from "effect"
import type {
  Callback,
  Charge,
  IdempotencyRecord,
  Ledger,
  Paging,
  Payment,
  Payout,
  Plan,
  Subscription,
  Terminal,
  TestClock
} from "@paydesk/core"
import { Transactions, WriteConflict } from "@paydesk/core"

/** A nonce claim as the memory `NonceStore` keeps it. */
export interface NonceClaim {
  readonly apiKeyId: string
  readonly nonce: string
  readonly expiresAt: number
}

/** Every table of the memory database, keyed by primary key (composite keys are joined strings). */
export interface Tables {
  readonly accounts: Map<string, Terminal.Account>
  readonly users: Map<string, Terminal.User>
  readonly terminals: Map<string, Terminal.Terminal>
  readonly apiKeys: Map<string, Terminal.ApiKey>
  readonly sessions: Map<string, Terminal.Session>
  readonly plans: Map<string, Plan.Plan>
  readonly payments: Map<string, Payment.Payment>
  readonly subscriptions: Map<string, Subscription.Subscription>
  readonly testClocks: Map<string, TestClock.TestClock>
  readonly charges: Map<string, Charge.Charge>
  readonly payouts: Map<string, Payout.Payout>
  /** Ledger entries in append order. */
  readonly ledger: Map<string, Ledger.Entry>
  readonly outboxEvents: Map<string, Callback.OutboxEvent>
  readonly deliveries: Map<string, Callback.Delivery>
  readonly attempts: Map<string, Callback.Attempt>
  readonly nonces: Map<string, NonceClaim>
  readonly idempotency: Map<string, IdempotencyRecord>
}

const tableNames = [
  "accounts",
  "users",
  "terminals",
  "apiKeys",
  "sessions",
  "plans",
  "payments",
  "subscriptions",
  "testClocks",
  "charges",
  "payouts",
  "ledger",
  "outboxEvents",
  "deliveries",
  "attempts",
  "nonces",
  "idempotency"
] as const satisfies ReadonlyArray<keyof Tables>

type Snapshot = { readonly [K in keyof Tables]: Tables[K] }

/** Fresh, empty tables. */
export const emptyTables = (): Tables => ({
  accounts: new Map(),
  users: new Map(),
  terminals: new Map(),
  apiKeys: new Map(),
  sessions: new Map(),
  plans: new Map(),
  payments: new Map(),
  subscriptions: new Map(),
  testClocks: new Map(),
  charges: new Map(),
  payouts: new Map(),
  ledger: new Map(),
  outboxEvents: new Map(),
  deliveries: new Map(),
  attempts: new Map(),
  nonces: new Map(),
  idempotency: new Map()
})

const snapshot = (tables: Tables): Snapshot => {
  const copy: Record<string, Map<string, unknown>> = {}
  for (const name of tableNames) copy[name] = new Map<string, unknown>(tables[name])
  return copy as unknown as Snapshot
}

// Restores in place, so Map references held by repositories stay valid.
const restore = (tables: Tables, saved: Snapshot): void => {
  for (const name of tableNames) {
    const table = tables[name] as Map<string, unknown>
    table.clear()
    for (const [key, value] of saved[name] as Map<string, unknown>) table.set(key, value)
  }
}

/** The `WriteConflict` a memory repository fails with when `constraint` is violated. */
export const writeConflict = (constraint: string): WriteConflict =>
  new WriteConflict({ message: `write conflict on ${constraint}`, constraint })

/** Code-unit order of two strings, as Postgres compares ids under the C collation. */
export const compareText = (a: string, b: string): number => a < b ? -1 : a > b ? 1 : 0

/** Newest first: `createdAt` descending, then `id` descending. */
export const newestFirst = (
  a: { readonly createdAt: number; readonly id: string },
  b: { readonly createdAt: number; readonly id: string }
): number => b.createdAt - a.createdAt || compareText(b.id, a.id)

/**
 * A page of a newest-first list (`all`, sorted by `newestFirst`), as `ListPage` asks for it: the
 * records after `after` when it is set, `offset` of them skipped, at most `limit`.
 */
export const pageOf = <A extends { readonly createdAt: number; readonly id: string }>(
  all: ReadonlyArray<A>,
  page: Paging.ListPage
): ReadonlyArray<A> => {
  const after = page.after ?? null
  const from = after === null ? all : all.filter((record) => newestFirst(after, record) < 0)
  const offset = Math.max(0, page.offset)
  return from.slice(offset, offset + Math.max(0, page.limit))
}

/** The smallest of the moments that are set (`null` when none is). */
export const earliest = (moments: ReadonlyArray<number | null>): number | null =>
  moments.reduce<number | null>((min, m) => m === null ? min : min === null ? m : Math.min(min, m), null)

/** A defect for a duplicate primary key on an insert whose port has no error channel. */
export const duplicateKey = (table: string, key: string): Effect.Effect<never> =>
  Effect.die(new Error(`duplicate key ${JSON.stringify(key)} in ${table}`))

/** The memory databases with a transaction open on the current fiber. */
export const InMemoryTransaction = Context.Reference<ReadonlySet<object>>("@paydesk/testkit/InMemoryTransaction", {
  defaultValue: () => new Set()
})

/** The memory database: its tables and its serialization primitives. */
export class MemoryDatabase extends Context.Service<MemoryDatabase, {
  /** The live tables; mutate only inside `atomically` or `transaction`. */
  readonly tables: Tables
  /** Runs `effect` inside the current fiber's open transaction, or alone under the global lock. */
  atomically<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R>
  /** Runs `effect` as one transaction (joining an open one as a savepoint). */
  transaction<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R>
  /** Whether the current fiber has a transaction open on this database. */
  readonly inTransaction: Effect.Effect<boolean>
  /** Empties every table (under the lock). */
  readonly clear: Effect.Effect<void>
}>()("@paydesk/testkit/MemoryDatabase") {}

/** Builds a memory database with empty tables. */
export const make: Effect.Effect<MemoryDatabase["Service"]> = Effect.gen(function*() {
  const tables = emptyTables()
  const lock = yield* Semaphore.make(1)
  const identity: object = tables

  const withRollback = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restoreInterruption) =>
      Effect.suspend(() => {
        const saved = snapshot(tables)
        return restoreInterruption(effect).pipe(
          Effect.onExit((exit) => Exit.isSuccess(exit) ? Effect.void : Effect.sync(() => restore(tables, saved)))
        )
      })
    )

  const inTransaction = Effect.map(InMemoryTransaction, (open) => open.has(identity))

  const atomically = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(inTransaction, (open) => open ? effect : lock.withPermits(1)(effect))

  const transaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.flatMap(InMemoryTransaction, (open) =>
      open.has(identity)
        ? withRollback(effect)
        : lock.withPermits(1)(
          withRollback(Effect.provideService(effect, InMemoryTransaction, new Set([...open, identity])))
        ))

  const clear = lock.withPermits(1)(Effect.sync(() => {
    for (const name of tableNames) tables[name].clear()
  }))

  return MemoryDatabase.of({ tables, atomically, transaction, inTransaction, clear })
})

/** A fresh memory database per layer build. */
export const layer: Layer.Layer<MemoryDatabase> = Layer.effect(MemoryDatabase, make)

/** The memory `Transactions` adapter on the `MemoryDatabase` in context. */
export const layerTransactions: Layer.Layer<Transactions, never, MemoryDatabase> = Layer.effect(
  Transactions,
  Effect.map(MemoryDatabase, (db) => Transactions.of({ run: db.transaction }))
)
