/**
 * @paydesk/sql-pg: every persistence port of Paydesk on PostgreSQL (@effect/sql-pg), the
 * migrations, a database-backed rate source, production security adapters on Node's crypto,
 * and an embedded PostgreSQL for development and tests.
 */

/** The schema's migrations. */
export * as PgMigrations from "./PgMigrations.js"
/** Every persistence port on PostgreSQL (`PgStore.layer(url)`), and `migrate`. */
export * as PgStore from "./PgStore.js"
/** `Transactions` on `sql.withTransaction`. */
export * as PgTransactions from "./PgTransactions.js"
/** Accounts, users, terminals, API keys and sessions. */
export * as PgIdentity from "./PgIdentity.js"
/** Plans, subscriptions and charges. */
export * as PgRecurring from "./PgRecurring.js"
/** Test clocks. */
export * as PgTestClockRepository from "./PgTestClockRepository.js"
/** Payments. */
export * as PgPaymentRepository from "./PgPaymentRepository.js"
/** Payouts and the ledger. */
export * as PgPayouts from "./PgPayouts.js"
/** The callback outbox. */
export * as PgOutboxRepository from "./PgOutboxRepository.js"
/** Nonces and idempotency records. */
export * as PgRequestStores from "./PgRequestStores.js"
/** The operator-set exchange rate. */
export * as PgRateSource from "./PgRateSource.js"
/** Column conversions and error mapping. */
export * as PgSupport from "./PgSupport.js"
/** scrypt, AES-256-GCM and CSPRNG adapters. */
export * as NodeSecurity from "./NodeSecurity.js"
/** Embedded PostgreSQL. */
export * as EmbeddedPostgres from "./EmbeddedPostgres.js"
