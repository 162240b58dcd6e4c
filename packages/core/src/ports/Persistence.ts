/**
 * The persistence ports as one type: what a store adapter (memory, Postgres) provides.
 */
import type { AccountRepository } from "./AccountRepository.js"
import type { ApiKeyRepository } from "./ApiKeyRepository.js"
import type { ChargeRepository } from "./ChargeRepository.js"
import type { IdempotencyStore } from "./IdempotencyStore.js"
import type { LedgerRepository } from "./LedgerRepository.js"
import type { NonceStore } from "./NonceStore.js"
import type { OutboxRepository } from "./OutboxRepository.js"
import type { PaymentRepository } from "./PaymentRepository.js"
import type { PayoutRepository } from "./PayoutRepository.js"
import type { PlanRepository } from "./PlanRepository.js"
import type { SessionRepository } from "./SessionRepository.js"
import type { SubscriptionRepository } from "./SubscriptionRepository.js"
import type { TerminalRepository } from "./TerminalRepository.js"
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
  | ChargeRepository
  | PayoutRepository
  | LedgerRepository
  | OutboxRepository
  | NonceStore
  | IdempotencyStore
