import { Layer } from "effect"
import {
  AcquirerEmulator,
  AesGcmSecretCipher,
  HmacTokenIssuer,
  MemoryStore,
  NobleKeccak256,
  PayoutNetworkEmulator,
  Pbkdf2PasswordHasher,
  TestEntropy
} from "@paydesk/testkit"
import {
  AcquirerContract,
  AccountRepositoryContract,
  ApiKeyRepositoryContract,
  ChargeBookContract,
  ChargeRepositoryContract,
  EntropyContract,
  IdempotencyStoreContract,
  Keccak256Contract,
  LedgerRepositoryContract,
  NonceStoreContract,
  OutboxRepositoryContract,
  PasswordHasherContract,
  PaymentRepositoryContract,
  PayoutNetworkContract,
  PayoutRepositoryContract,
  PlanRepositoryContract,
  SecretCipherContract,
  SessionRepositoryContract,
  SubscriptionRepositoryContract,
  TerminalRepositoryContract,
  TestClockRepositoryContract,
  TokenIssuerContract,
  TransactionsContract
} from "@paydesk/testkit/contracts"

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
TestClockRepositoryContract.suite("memory", store)
NonceStoreContract.suite("memory", store)
IdempotencyStoreContract.suite("memory", store)

EntropyContract.suite("seeded", TestEntropy.layerSeeded())
EntropyContract.suite("crypto", TestEntropy.layerCrypto)
PasswordHasherContract.suite("pbkdf2", Pbkdf2PasswordHasher.layer())
Keccak256Contract.suite("@noble/hashes", NobleKeccak256.layer)
TokenIssuerContract.suite("hmac", HmacTokenIssuer.layer(), { foreign: HmacTokenIssuer.layer("another key") })
SecretCipherContract.suite("aes-gcm", AesGcmSecretCipher.layer(), { foreign: AesGcmSecretCipher.layer("another passphrase") })
AcquirerContract.suite("emulator", AcquirerEmulator.layer)
PayoutNetworkContract.suite("emulator", PayoutNetworkEmulator.layer)
ChargeBookContract.suite("memory", Layer.sync(ChargeBookContract.ChargeBooks, () => {
  const book = AcquirerEmulator.memoryBook()
  return { first: book, second: book }
}))
