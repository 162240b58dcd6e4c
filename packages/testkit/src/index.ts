/**
 * @paydesk/testkit: in-memory adapters for every Paydesk port, emulators of the acquirer and the
 * payout network, record builders, and the contract suites every adapter must pass.
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
/** Memory `OutboxRepository`. */
export * as MemoryOutboxRepository from "./MemoryOutboxRepository.js"
/** Memory `NonceStore` and `IdempotencyStore`. */
export * as MemoryRequestStores from "./MemoryRequestStores.js"

/** Seeded and Web Crypto `Entropy`. */
export * as TestEntropy from "./TestEntropy.js"
/** PBKDF2 `PasswordHasher` for tests. */
export * as Pbkdf2PasswordHasher from "./Pbkdf2PasswordHasher.js"
/** HMAC-SHA256 `TokenIssuer`. */
export * as HmacTokenIssuer from "./HmacTokenIssuer.js"
/** AES-256-GCM `SecretCipher`. */
export * as AesGcmSecretCipher from "./AesGcmSecretCipher.js"
/** Settable `RateSource`. */
export * as MemoryRateSource from "./MemoryRateSource.js"
/** Recording, programmable `CallbackTransport`. */
export * as RecordingCallbackTransport from "./RecordingCallbackTransport.js"
/** Acquirer emulator and its `Acquirer` layer. */
export * as AcquirerEmulator from "./AcquirerEmulator.js"
/** Payout network emulator and its `PayoutNetwork` layer. */
export * as PayoutNetworkEmulator from "./PayoutNetworkEmulator.js"

/** Builders of valid records and seeding effects. */
export * as Fixtures from "./Fixtures.js"
/** A settable wall clock whose sleeps stay real. */
export * as ManualClock from "./ManualClock.js"
/** The whole of Paydesk in memory, with provisioning helpers. */
export * as Kit from "./Kit.js"

/** Contract suites: `XContract.suite(name, layer)` registers the tests every adapter of port X must pass. */
export * as TransactionsContract from "./contracts/TransactionsContract.js"
export * as AccountRepositoryContract from "./contracts/AccountRepositoryContract.js"
export * as TerminalRepositoryContract from "./contracts/TerminalRepositoryContract.js"
export * as ApiKeyRepositoryContract from "./contracts/ApiKeyRepositoryContract.js"
export * as SessionRepositoryContract from "./contracts/SessionRepositoryContract.js"
export * as PlanRepositoryContract from "./contracts/PlanRepositoryContract.js"
export * as PaymentRepositoryContract from "./contracts/PaymentRepositoryContract.js"
export * as SubscriptionRepositoryContract from "./contracts/SubscriptionRepositoryContract.js"
export * as ChargeRepositoryContract from "./contracts/ChargeRepositoryContract.js"
export * as PayoutRepositoryContract from "./contracts/PayoutRepositoryContract.js"
export * as LedgerRepositoryContract from "./contracts/LedgerRepositoryContract.js"
export * as OutboxRepositoryContract from "./contracts/OutboxRepositoryContract.js"
export * as NonceStoreContract from "./contracts/NonceStoreContract.js"
export * as IdempotencyStoreContract from "./contracts/IdempotencyStoreContract.js"
export * as EntropyContract from "./contracts/EntropyContract.js"
export * as PasswordHasherContract from "./contracts/PasswordHasherContract.js"
export * as TokenIssuerContract from "./contracts/TokenIssuerContract.js"
export * as SecretCipherContract from "./contracts/SecretCipherContract.js"
export * as AcquirerContract from "./contracts/AcquirerContract.js"
export * as PayoutNetworkContract from "./contracts/PayoutNetworkContract.js"
export * as ChargeBookContract from "./contracts/ChargeBookContract.js"

/** `Entropy` from a seed (deterministic). */
export { layerSeeded as layerEntropySeeded, layerCrypto as layerEntropyCrypto } from "./TestEntropy.js"
/** A fresh memory database with every persistence port. */
export { layer as layerMemoryStore } from "./MemoryStore.js"
