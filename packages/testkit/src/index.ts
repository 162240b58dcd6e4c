/**
 * @paydesk/testkit (dev-only): in-memory adapters for every Paydesk port, record builders and the
 * Kit (all of Paydesk in memory, on the emulators of `@paydesk/emulators`, re-exported here).
 *
 * The contract suites every adapter must pass, and the model-based test of the money paths, load
 * vitest: they sit behind their own entry, `@paydesk/testkit/contracts`.
 */

/** The in-memory database, its `Transactions` adapter and its serialization helpers. */
export * as MemoryDatabase from "./MemoryDatabase.js"
/** Every persistence port on one fresh memory database (`MemoryStore.layer`). */
export * as MemoryStore from "./MemoryStore.js"
/** Memory accounts, terminals, API keys and sessions. */
export * as MemoryIdentity from "./MemoryIdentity.js"
/** Memory `PaymentRepository`. */
export * as MemoryPaymentRepository from "./MemoryPaymentRepository.js"
/** Memory plans, subscriptions and charges. */
export * as MemoryRecurring from "./MemoryRecurring.js"
/** Memory payouts and ledger. */
export * as MemoryPayouts from "./MemoryPayouts.js"
/** Memory `TestClockRepository`. */
export * as MemoryTestClockRepository from "./MemoryTestClockRepository.js"
/** Memory `OutboxRepository`. */
export * as MemoryOutboxRepository from "./MemoryOutboxRepository.js"
/** Memory `NonceStore` and `IdempotencyStore`. */
export * as MemoryRequestStores from "./MemoryRequestStores.js"

/** Seeded and Web Crypto `Entropy`. */
export * as TestEntropy from "./TestEntropy.js"
/** PBKDF2 `PasswordHasher` for tests. */
export * as Pbkdf2PasswordHasher from "./Pbkdf2PasswordHasher.js"
/** `Keccak256` from `@noble/hashes` (EIP-55 address checksums). */
export * as NobleKeccak256 from "./NobleKeccak256.js"
/** HMAC-SHA256 `TokenIssuer`. */
export * as HmacTokenIssuer from "./HmacTokenIssuer.js"
/** AES-256-GCM `SecretCipher`. */
export * as AesGcmSecretCipher from "./AesGcmSecretCipher.js"
/** Settable `RateSource`. */
export * as MemoryRateSource from "./MemoryRateSource.js"
/** Recording, programmable `CallbackTransport`. */
export * as RecordingCallbackTransport from "./RecordingCallbackTransport.js"
/** A tracer that keeps the spans it makes. */
export * as RecordingTracer from "./RecordingTracer.js"
/** The emulators and the manual clock (from `@paydesk/emulators`). */
export { AcquirerEmulator, ManualClock, PayoutNetworkEmulator } from "@paydesk/emulators"

/** Builders of valid records and seeding effects. */
export * as Fixtures from "./Fixtures.js"
/** The whole of Paydesk in memory, with provisioning helpers. */
export * as Kit from "./Kit.js"

/** `Entropy` from a seed (deterministic). */
export { layerSeeded as layerEntropySeeded, layerCrypto as layerEntropyCrypto } from "./TestEntropy.js"
/** A fresh memory database with every persistence port. */
export { layer as layerMemoryStore } from "./MemoryStore.js"
