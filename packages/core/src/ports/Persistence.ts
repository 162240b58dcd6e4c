/**
 * The ports as types: `Persistence` is what a store adapter (memory, Postgres) provides,
 * `Services` everything a host provides to run every use case.
 */
import type { AccountRepository } from "./AccountRepository.js"
import type { Acquirer } from "./Acquirer.js"
import type { ApiKeyRepository } from "./ApiKeyRepository.js"
import type { CallbackTransport } from "./CallbackTransport.js"
import type { ChargeRepository } from "./ChargeRepository.js"
import type { Entropy } from "./Entropy.js"
import type { IdempotencyStore } from "./IdempotencyStore.js"
import type { Keccak256 } from "./Keccak256.js"
import type { LedgerRepository } from "./LedgerRepository.js"
import type { NonceStore } from "./NonceStore.js"
import type { OutboxRepository } from "./OutboxRepository.js"
import type { PasswordHasher } from "./PasswordHasher.js"
import type { PaymentRepository } from "./PaymentRepository.js"
import type { PayoutNetwork } from "./PayoutNetwork.js"
import type { PayoutRepository } from "./PayoutRepository.js"
import type { PlanRepository } from "./PlanRepository.js"
import type { RateSource } from "./RateSource.js"
import type { SecretCipher } from "./SecretCipher.js"
import type { SessionRepository } from "./SessionRepository.js"
import type { SubscriptionRepository } from "./SubscriptionRepository.js"
import type { TerminalRepository } from "./TerminalRepository.js"
import type { TestClockRepository } from "./TestClockRepository.js"
import type { TokenIssuer } from "./TokenIssuer.js"
import type { Transactions } from "./Transactions.js"

/** Every persistence port, `Transactions` included. */
export type Persistence =
  | Transactions
  | AccountRepository
  | TerminalRepository
  | ApiKeyRepository
  | SessionRepository
  | PlanRepository
  | PaymentRepository
  | SubscriptionRepository
  | TestClockRepository
  | ChargeRepository
  | PayoutRepository
  | LedgerRepository
  | OutboxRepository
  | NonceStore
  | IdempotencyStore

/** Every port of the core: what a host provides to run all use cases. */
export type Services =
  | Persistence
  | Entropy
  | PasswordHasher
  | Keccak256
  | TokenIssuer
  | SecretCipher
  | RateSource
  | CallbackTransport
  | Acquirer
  | PayoutNetwork
