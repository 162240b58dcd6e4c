/**
 * The SDK's hand-written types are the API's: each one and the schema the server's OpenAPI
 * document is generated from are assignable both ways (a drift fails the type check), and the
 * document's examples, decoded with those schemas, are values of the SDK's types.
 */
import { describe, expect, it } from "vitest"
import { Schema } from "effect"
import { Examples, ResponseSchemas, Schemas } from "@paydesk/fastify"
import type * as Sdk from "../src/index.js"

const R = ResponseSchemas.responses
type Wire<S extends Schema.Top> = S["Type"]
/** `A` and `B` describe the same values (up to readonly-ness of arrays). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Deep<T> = T extends ReadonlyArray<infer E> ? ReadonlyArray<Deep<E>> : T extends object ? { readonly [K in keyof T]: Deep<T[K]> } : T

type Checks = [
  Same<Deep<Wire<typeof R.Payment>>, Deep<Sdk.Payment>>,
  Same<Deep<Wire<typeof R.PaymentPage>>, Deep<Sdk.Page<Sdk.Payment>>>,
  Same<Deep<Wire<typeof R.PaymentStats>>, Deep<Sdk.PaymentStats>>,
  Same<Deep<Wire<typeof R.PaymentDailyStats>>, Deep<Sdk.PaymentDailyStats>>,
  Same<Deep<Wire<typeof R.Terminal>>, Deep<Sdk.Terminal>>,
  Same<Deep<Wire<typeof R.Balance>>, Deep<Sdk.Balance>>,
  Same<Deep<Wire<typeof R.Rate>>, Deep<Sdk.Rate>>,
  Same<Deep<Wire<typeof R.Payout>>, Deep<Sdk.Payout>>,
  Same<Deep<Wire<typeof R.Plan>>, Deep<Sdk.Plan>>,
  Same<Deep<Wire<typeof R.Subscription>>, Deep<Sdk.Subscription>>,
  Same<Deep<Wire<typeof R.Charge>>, Deep<Sdk.Charge>>,
  Same<Deep<Wire<typeof R.EventFeed>>, Deep<Sdk.EventFeed>>,
  Same<Deep<Wire<typeof R.PaymentEvent>>, Deep<Sdk.PaymentEvent>>,
  Same<Deep<Wire<typeof R.PayoutEvent>>, Deep<Sdk.PayoutEvent>>,
  Same<Deep<Wire<typeof R.UpcomingCharges>>, Deep<Sdk.UpcomingCharges>>,
  Same<Deep<Wire<typeof R.TestClock>>, Deep<Sdk.TestClock>>,
  Same<Deep<Wire<typeof R.DeletedTestClock>>, Deep<Sdk.DeletedTestClock>>,
  Same<Deep<Wire<typeof R.Event>>, Deep<Sdk.Event>>,
  Same<Deep<Wire<typeof R.EventDetail>>, Deep<Sdk.EventDetail>>,
  Same<Deep<Wire<typeof R.EventPage>>, Deep<Sdk.EventPage>>,
  Same<Deep<Wire<typeof R.EventSent>>, Deep<Sdk.EventSent>>,
  Same<Deep<Wire<typeof R.TerminalDetails>>, Deep<Sdk.TerminalDetails>>,
  Same<Deep<Wire<typeof R.CallbackHeaders>>, Deep<Sdk.CallbackHeaders>>,
  Same<Deep<Wire<typeof R.PingEvent>>, Deep<Sdk.PingEvent>>,
  Same<Deep<Wire<typeof R.TokenPair>>, Deep<Sdk.TokenPair>>,
  Same<Deep<Wire<typeof R.ApiKey>>, Deep<Sdk.ApiKey>>,
  Same<Deep<Wire<typeof R.CreatedApiKey>>, Deep<Sdk.CreatedApiKey>>,
  Same<Deep<Wire<typeof R.SigningSecretRotation>>, Deep<Sdk.SigningSecretRotation>>
]
// Every check is `true`; a `false` here is a compile error.
export const checks: Checks = [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true]

/** What the SDK sends must decode with the request schemas (the SDK's inputs are a subset). */
type Sends = [
  Sdk.PaymentCreate extends Wire<typeof Schemas.PaymentCreate> ? true : false,
  Sdk.TerminalSettings extends Wire<typeof Schemas.TerminalSettings> ? true : false,
  Sdk.PayoutCreate extends Wire<typeof Schemas.PayoutCreate> ? true : false,
  Sdk.SubscriptionCreate extends Wire<typeof Schemas.SubscriptionCreate> ? true : false
]
export const sends: Sends = [true, true, true, true]
/** Every field of the payout request can be given (the spec's body `idempotency_key` once could not). */
export const payoutFields: Same<keyof Sdk.PayoutCreate, keyof Wire<typeof Schemas.PayoutCreate>> = true

describe("Types", () => {
  it("decodes the document's examples with the schemas the SDK types mirror", () => {
    const decode = <S extends Schema.Top>(schema: S, value: unknown): S["Type"] =>
      Schema.decodeUnknownSync(schema as unknown as Schema.Codec<S["Type"]>, { onExcessProperty: "error" })(value)
    const payment: Sdk.Payment = decode(R.Payment, Examples.payment)
    const subscription: Sdk.Subscription = decode(R.Subscription, Examples.subscription)
    const event: Sdk.WebhookEvent = decode(R.PaymentEvent, Examples.paymentEvent)
    expect([payment.status, subscription.billing_status, event.event_type]).toEqual(["created", "consent_pending", "payment.paid"])
  })
})
