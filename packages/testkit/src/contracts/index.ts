/**
 * @paydesk/testkit/contracts: the contract suites every adapter of a port must pass
 * (`XContract.suite(name, layer)` registers its tests with vitest), and the model-based test of the
 * money paths. This entry loads `@effect/vitest`: import it from test files only.
 */
/** Contract suites: `XContract.suite(name, layer)` registers the tests every adapter of port X must pass. */
export * as TransactionsContract from "./TransactionsContract.js"
export * as AccountRepositoryContract from "./AccountRepositoryContract.js"
export * as TerminalRepositoryContract from "./TerminalRepositoryContract.js"
export * as ApiKeyRepositoryContract from "./ApiKeyRepositoryContract.js"
export * as SessionRepositoryContract from "./SessionRepositoryContract.js"
export * as PlanRepositoryContract from "./PlanRepositoryContract.js"
export * as PaymentRepositoryContract from "./PaymentRepositoryContract.js"
export * as SubscriptionRepositoryContract from "./SubscriptionRepositoryContract.js"
export * as ChargeRepositoryContract from "./ChargeRepositoryContract.js"
export * as PayoutRepositoryContract from "./PayoutRepositoryContract.js"
export * as LedgerRepositoryContract from "./LedgerRepositoryContract.js"
export * as OutboxRepositoryContract from "./OutboxRepositoryContract.js"
export * as TestClockRepositoryContract from "./TestClockRepositoryContract.js"
export * as NonceStoreContract from "./NonceStoreContract.js"
export * as IdempotencyStoreContract from "./IdempotencyStoreContract.js"
export * as EntropyContract from "./EntropyContract.js"
export * as PasswordHasherContract from "./PasswordHasherContract.js"
export * as Keccak256Contract from "./Keccak256Contract.js"
export * as TokenIssuerContract from "./TokenIssuerContract.js"
export * as SecretCipherContract from "./SecretCipherContract.js"
export * as AcquirerContract from "./AcquirerContract.js"
export * as PayoutNetworkContract from "./PayoutNetworkContract.js"
export * as ChargeBookContract from "./ChargeBookContract.js"

/** Model-based test of the money paths (random interleavings of the real use cases, invariants after every step). */
export * as MoneyModel from "./MoneyModel.js"
