import { Layer } from "effect"
import {
  AcquirerContract,
  AcquirerEmulator,
  AccountRepositoryContract,
  AesGcmSecretCipher,
  ApiKeyRepositoryContract,
  ChargeBookContract,
  ChargeRepositoryContract,
  EntropyContract,
  HmacTokenIssuer,
  IdempotencyStoreContract,
  LedgerRepositoryContract,
  MemoryStore,
  NonceStoreContract,
  OutboxRepositoryContract,
  PasswordHasherContract,
  PaymentRepositoryContract,
  PayoutNetworkContract,
  PayoutNetworkEmulator,
  PayoutRepositoryContract,
  Pbkdf2PasswordHasher,
  PlanRepositoryContract,
  SecretCipherContract,
  SessionRepositoryContract,
  SubscriptionRepositoryContract,
  TerminalRepositoryContract,
  TestEntropy,
  TokenIssuerContract,
  TransactionsContract
} from "@paydesk/testkit"

const store = MemoryStore.layer

TransactionsContract.suite("memory", store)
AccountRepositoryContract.suite("memory", store)
TerminalRepositoryContract.suite("memory", store)
ApiKeyRepositoryContract.suite("memory", store)
SessionRepositoryContract.suite("memory", store)
PlanRepositoryContract.suite("memory", store)
PaymentRepositoryContract.suite("memory", store)
SubscriptionRepositoryContract.suite("memory", store)
ChargeRepositoryContract.suite("memory", store)
PayoutRepositoryContract.suite("memory", store)
LedgerRepositoryContract.suite("memory", store)
OutboxRepositoryContract.suite("memory", store)
NonceStoreContract.suite("memory", store)
IdempotencyStoreContract.suite("memory", store)

EntropyContract.suite("seeded", TestEntropy.layerSeeded())
EntropyContract.suite("crypto", TestEntropy.layerCrypto)
PasswordHasherContract.suite("pbkdf2", Pbkdf2PasswordHasher.layer())
TokenIssuerContract.suite("hmac", HmacTokenIssuer.layer(), { foreign: HmacTokenIssuer.layer("another key") })
SecretCipherContract.suite("aes-gcm", AesGcmSecretCipher.layer(), { foreign: AesGcmSecretCipher.layer("another passphrase") })
AcquirerContract.suite("emulator", AcquirerEmulator.layer)
PayoutNetworkContract.suite("emulator", PayoutNetworkEmulator.layer)
ChargeBookContract.suite("memory", Layer.sync(ChargeBookContract.ChargeBooks, () => {
  const book = AcquirerEmulator.memoryBook()
  return { first: book, second: book }
}))
