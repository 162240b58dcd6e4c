import {
  AccountRepositoryContract,
  ApiKeyRepositoryContract,
  ChargeRepositoryContract,
  IdempotencyStoreContract,
  LedgerRepositoryContract,
  NonceStoreContract,
  OutboxRepositoryContract,
  PaymentRepositoryContract,
  PayoutRepositoryContract,
  PlanRepositoryContract,
  SessionRepositoryContract,
  SubscriptionRepositoryContract,
  TerminalRepositoryContract,
  TestClockRepositoryContract,
  TransactionsContract
} from "@paydesk/testkit/contracts"
import { store, targets } from "./PgHarness.js"

for (const target of targets) {
  const name = `postgres (${target.name})`
  TransactionsContract.suite(name, store(target.url))
  AccountRepositoryContract.suite(name, store(target.url))
  TerminalRepositoryContract.suite(name, store(target.url))
  ApiKeyRepositoryContract.suite(name, store(target.url))
  SessionRepositoryContract.suite(name, store(target.url))
  PlanRepositoryContract.suite(name, store(target.url))
  PaymentRepositoryContract.suite(name, store(target.url))
  SubscriptionRepositoryContract.suite(name, store(target.url))
  ChargeRepositoryContract.suite(name, store(target.url))
  PayoutRepositoryContract.suite(name, store(target.url))
  LedgerRepositoryContract.suite(name, store(target.url))
  OutboxRepositoryContract.suite(name, store(target.url))
  TestClockRepositoryContract.suite(name, store(target.url))
  NonceStoreContract.suite(name, store(target.url))
  IdempotencyStoreContract.suite(name, store(target.url))
}
