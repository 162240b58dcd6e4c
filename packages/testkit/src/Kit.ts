/**
 * The whole of Paydesk in memory: every port on the in-memory adapters and emulators, plus
 * provisioning through the operator use cases (account, terminal, API key, plans of both modes
 * and both schedule kinds). Tests, the demo and embedding teams start from `Kit.layer`.
 */
import { Effect, Layer } from "effect"
import { Auth, Operator, type Plan, type SandboxAcquirer, type Terminal } from "@paydesk/core"
import type {
  Acquirer,
  CallbackTransport,
  Entropy,
  Keccak256,
  PasswordHasher,
  PayoutNetwork,
  RateSource,
  SecretCipher,
  TokenIssuer
} from "@paydesk/core"
import { AcquirerEmulator, PayoutNetworkEmulator } from "@paydesk/emulators"
import * as AesGcmSecretCipher from "./AesGcmSecretCipher.js"
import * as HmacTokenIssuer from "./HmacTokenIssuer.js"
import * as MemoryRateSource from "./MemoryRateSource.js"
import * as MemoryStore from "./MemoryStore.js"
import * as NobleKeccak256 from "./NobleKeccak256.js"
import * as Pbkdf2PasswordHasher from "./Pbkdf2PasswordHasher.js"
import * as RecordingCallbackTransport from "./RecordingCallbackTransport.js"
import * as TestEntropy from "./TestEntropy.js"

/** Every service the kit provides. */
export type Services =
  | MemoryStore.Services
  | Entropy
  | PasswordHasher
  | Keccak256
  | TokenIssuer
  | SecretCipher
  | RateSource
  | MemoryRateSource.MemoryRateSource
  | CallbackTransport
  | RecordingCallbackTransport.RecordingCallbackTransport
  | Acquirer
  | SandboxAcquirer
  | AcquirerEmulator.AcquirerEmulator
  | PayoutNetwork
  | PayoutNetworkEmulator.PayoutNetworkEmulator

/** Everything but the store: emulators, test crypto, settable rate, recording transport. */
export type Surroundings = Exclude<Services, MemoryStore.Services>

/** Emulators (no sandbox acquirer), test crypto, a settable rate and a recording transport, with the given entropy. */
const liveSurroundings = (entropy: Layer.Layer<Entropy>): Layer.Layer<Exclude<Surroundings, SandboxAcquirer>> =>
  Layer.mergeAll(
    entropy,
    Pbkdf2PasswordHasher.layer(),
    NobleKeccak256.layer,
    HmacTokenIssuer.layer(),
    AesGcmSecretCipher.layer(),
    MemoryRateSource.layer(),
    RecordingCallbackTransport.layer,
    AcquirerEmulator.layer,
    PayoutNetworkEmulator.layer
  )

/** Emulators (the sandbox acquirer included), test crypto, a settable rate and a recording transport, with the given entropy. */
const surroundings = (entropy: Layer.Layer<Entropy>): Layer.Layer<Surroundings> =>
  Layer.merge(liveSurroundings(entropy), AcquirerEmulator.sandboxLayer)

/** The kit's emulators and test adapters around another store (e.g. Postgres), with Web Crypto entropy. */
export const layerAround = <P, E, R>(store: Layer.Layer<P, E, R>): Layer.Layer<P | Surroundings, E, R> =>
  Layer.merge(store, surroundings(TestEntropy.layerCrypto))

/** A fresh in-memory Paydesk: store, emulators, seeded entropy, test crypto. */
export const layer: Layer.Layer<Services> = Layer.merge(MemoryStore.layer, surroundings(TestEntropy.layerSeeded()))

/** The same without a sandbox acquirer: a deployment that offers no sandbox subscriptions. */
export const layerWithoutSandbox: Layer.Layer<Exclude<Services, SandboxAcquirer>> = Layer.merge(
  MemoryStore.layer,
  liveSurroundings(TestEntropy.layerSeeded())
)

/** Password of provisioned owners. */
export const ownerPassword = "correct horse battery staple"

/** A provisioned merchant: account, owner, terminal with key and secret, and its principal. */
export interface Merchant {
  readonly accountId: string
  readonly userId: string
  readonly ownerEmail: string
  readonly terminal: Terminal.Terminal
  readonly apiKey: string
  readonly signingSecret: string
}

let merchantCounter = 0

/** Provisions an account with its owner and one terminal through the operator use cases. */
export const provisionMerchant = Effect.fn("Kit.provisionMerchant")(function*(options: {
  readonly name?: string
  readonly h2h?: boolean
  readonly callbackUrl?: string | null
} = {}) {
  const n = ++merchantCounter
  const ownerEmail = `owner-${n}-${globalThis.crypto.randomUUID().slice(0, 8)}@merchant.example`
  const { accountId, userId } = yield* Operator.createAccount({
    name: options.name ?? `Merchant ${n}`,
    ownerEmail,
    ownerPassword
  })
  const created = yield* Operator.createTerminal({
    accountId,
    name: `${options.name ?? `Merchant ${n}`} shop`,
    h2h: options.h2h ?? false,
    callbackUrl: options.callbackUrl === undefined ? "https://merchant.example/callbacks" : options.callbackUrl
  })
  const merchant: Merchant = {
    accountId,
    userId,
    ownerEmail,
    terminal: created.terminal,
    apiKey: created.apiKey,
    signingSecret: created.signingSecret
  }
  return merchant
})

/** The four standard plans: both modes, both schedule kinds. */
export interface Plans {
  /** Amount within a ceiling of 4000.00 per calendar month. */
  readonly ceilingMonthly: Plan.Plan
  /** Fixed tariff 990.00 (payer) / 950.00 (merchant) per calendar month. */
  readonly fixedMonthly: Plan.Plan
  /** Fixed tariff 2990.00 / 2900.00 every 30 days. */
  readonly fixed30Days: Plan.Plan
  /** Amount within a ceiling of 9000.00 every 90 days. */
  readonly ceiling90Days: Plan.Plan
}

/** Creates the standard plans for a terminal (optionally with `max_cycles`). */
export const provisionPlans = Effect.fn("Kit.provisionPlans")(function*(
  terminalId: string,
  options: { readonly maxCycles?: number | null } = {}
) {
  const code = (name: string) => `${name}-${terminalId.slice(0, 8)}`
  const common = {
    terminalIds: [terminalId],
    consentText: "Я согласен на регулярные списания по условиям подписки.",
    policyVersion: "2026-01",
    maxCycles: options.maxCycles ?? null
  }
  const plans: Plans = {
    ceilingMonthly: yield* Operator.createPlan({
      ...common,
      code: code("ceiling-month"),
      name: "Up to 4000 a month",
      interval: "month",
      schedule: "calendar",
      capAmountRub: "4000.00"
    }),
    fixedMonthly: yield* Operator.createPlan({
      ...common,
      code: code("fixed-month"),
      name: "Premium monthly",
      interval: "month",
      schedule: "calendar",
      payerAmountRub: "990.00",
      merchantAmountRub: "950.00"
    }),
    fixed30Days: yield* Operator.createPlan({
      ...common,
      code: code("fixed-30d"),
      name: "Every 30 days",
      interval: "month",
      schedule: "fixed_days",
      payerAmountRub: "2990.00",
      merchantAmountRub: "2900.00"
    }),
    ceiling90Days: yield* Operator.createPlan({
      ...common,
      code: code("ceiling-90d"),
      name: "Up to 9000 a quarter",
      interval: "quarter",
      schedule: "fixed_days",
      capAmountRub: "9000.00"
    })
  }
  return plans
})

/** The API-key principal of a merchant, as `Auth.apiKey` returns it (claims a fresh nonce). */
export const apiKeyPrincipal = (merchant: Merchant, nonce: string) => Auth.apiKey(merchant.apiKey, nonce)
