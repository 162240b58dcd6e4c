/**
 * Every persistence port on one in-memory database: the layer use-case tests start from.
 *
 * `layer` provides `MemoryDatabase`, `Transactions` and all repositories and stores, sharing one
 * fresh database per build. Layers are memoized within one build graph; wrap it in `Layer.fresh`
 * when a test needs a second, independent store inside a graph that already built one.
 */
import { Layer } from "effect"
import type { Persistence as CorePersistence } from "@paydesk/core"
import * as MemoryDatabase from "./MemoryDatabase.js"
import * as MemoryIdentity from "./MemoryIdentity.js"
import * as MemoryOutboxRepository from "./MemoryOutboxRepository.js"
import * as MemoryPaymentRepository from "./MemoryPaymentRepository.js"
import * as MemoryPayouts from "./MemoryPayouts.js"
import * as MemoryRecurring from "./MemoryRecurring.js"
import * as MemoryRequestStores from "./MemoryRequestStores.js"
import * as MemoryTestClockRepository from "./MemoryTestClockRepository.js"

/** The persistence ports (repositories, stores and `Transactions`). */
export type Persistence = CorePersistence

/** The persistence ports plus the `MemoryDatabase` behind them. */
export type Services = Persistence | MemoryDatabase.MemoryDatabase

/** Every repository and store on the `MemoryDatabase` in context. */
export const layerRepositories: Layer.Layer<Persistence, never, MemoryDatabase.MemoryDatabase> = Layer.mergeAll(
  MemoryDatabase.layerTransactions,
  MemoryIdentity.layerAccountRepository,
  MemoryIdentity.layerTerminalRepository,
  MemoryIdentity.layerApiKeyRepository,
  MemoryIdentity.layerSessionRepository,
  MemoryRecurring.layerPlanRepository,
  MemoryPaymentRepository.layer,
  MemoryRecurring.layerSubscriptionRepository,
  MemoryTestClockRepository.layer,
  MemoryRecurring.layerChargeRepository,
  MemoryPayouts.layerPayoutRepository,
  MemoryPayouts.layerLedgerRepository,
  MemoryOutboxRepository.layer,
  MemoryRequestStores.layerNonceStore,
  MemoryRequestStores.layerIdempotencyStore
)

/** A fresh memory database with `Transactions` and every repository and store on it. */
export const layer: Layer.Layer<Services> = layerRepositories.pipe(Layer.provideMerge(MemoryDatabase.layer))
