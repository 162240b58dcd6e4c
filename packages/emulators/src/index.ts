/**
 * @paydesk/emulators: production-grade stand-ins behind the `Acquirer` and `PayoutNetwork` ports
 * (a sandbox bank with a charge book in memory or in PostgreSQL, a payout network) and a manual
 * wall clock. The reference server runs on them until a real bank is connected; tests and demos
 * use them through `@paydesk/testkit`'s Kit.
 */

/** Acquirer emulator (the sandbox bank), its `ChargeBook` and the `Acquirer` layers on it. */
export * as AcquirerEmulator from "./AcquirerEmulator.js"
/** The acquirer emulator's charge book in PostgreSQL (durable, shared by every process on the database). */
export * as PgChargeBook from "./PgChargeBook.js"
/** Payout network emulator, its `PayoutBook` and the `PayoutNetwork` layers on it. */
export * as PayoutNetworkEmulator from "./PayoutNetworkEmulator.js"
/** The payout network emulator's book in PostgreSQL (durable, shared by every process on the database). */
export * as PgPayoutBook from "./PgPayoutBook.js"
/** A settable wall clock whose sleeps stay real. */
export * as ManualClock from "./ManualClock.js"
