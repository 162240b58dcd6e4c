/**
 * `Paydesk`: the merchant API as typed methods. Every call carries the API key and a fresh
 * `X-Nonce`; writes that may be repeated safely are retried after a network failure or a 5xx
 * (payments by their `order_id`, payouts and subscriptions by an `Idempotency-Key` the client
 * generates when none is given, stops and simulations because repeating them changes nothing, a
 * test clock's deletion because it happens once: a retry after a lost answer is a 404).
 * Every error of a call names its `Idempotency-Key` (`error.idempotencyKey`, also a generated one)
 * or a payment's `order_id` (`error.orderId`), the attempts sent and whether a write may have been
 * done all the same (`error.outcomeUnknown`): repeat the call with that key to learn its result.
 * With `sandbox: true` payments are created in the sandbox and lists read the sandbox.
 *
 * Instead of an API key the client may act for the account owner with a dashboard session
 * (`Paydesk.login`, or `accessToken` / `refreshToken`): `Authorization: Bearer`, renewed with the
 * refresh token when it expires. Managing credentials (API keys, the signing secret) needs it.
 */
import { uuid } from "./Crypto.js"
import { apiKeyCredentials, type Call, transport, type TransportOptions } from "./Http.js"
import { Session, type SessionTokens } from "./Session.js"
import type {
  ApiKey,
  Balance,
  CreatedApiKey,
  Charge,
  DeletedTestClock,
  Event,
  EventDetail,
  EventFeed,
  EventFilter,
  EventPage,
  EventSent,
  Page,
  Paging,
  Payment,
  PaymentCreate,
  PaymentFilter,
  PaymentStats,
  PaymentDailyStats,
  DailyStatsQuery,
  Payout,
  PayoutCreate,
  Plan,
  Rate,
  SandboxChargeOutcome,
  SimulateOutcome,
  Subscription,
  SubscriptionCreate,
  SubscriptionFilter,
  SigningSecretRotation,
  Terminal,
  TerminalDetails,
  TerminalSettings,
  TestClock,
  TokenPair,
  UpcomingCharges
} from "./Types.js"

/** Options of the client. */
export interface ClientOptions extends TransportOptions {
  /** Create payments in the sandbox and read the sandbox by default. */
  readonly sandbox?: boolean
  /** The key's terminal: fills `terminal_id` where the API requires it (subscription creation, plans, credentials). */
  readonly terminalId?: string
  /** A dashboard session instead of `apiKey`: its access token (sent as `Authorization: Bearer`). */
  readonly accessToken?: string
  /** The session's refresh token: the client renews the access token with it when it expires. */
  readonly refreshToken?: string
  /** When `accessToken` expires (Unix seconds, `expires_at` of the token pair), if known. */
  readonly accessTokenExpiresAt?: number
  /** Called with every new token pair; store its refresh token (refresh tokens are single use). */
  readonly onTokens?: (tokens: TokenPair) => void
}

/** Options of `Paydesk.login`: the client's options with the owner's e-mail and password instead of credentials. */
export type LoginOptions = Omit<ClientOptions, "apiKey" | "accessToken" | "refreshToken" | "accessTokenExpiresAt"> & {
  readonly email: string
  readonly password: string
}

/** Options of one call (every method's last argument takes them, beside the method's own options). */
export interface CallOptions {
  /**
   * Cancels the call: the attempt in flight and any wait before a retry. The call then fails with
   * `PaydeskAbortError` and is not retried. A write cancelled after it was sent may have taken effect.
   */
  readonly signal?: AbortSignal | undefined
}

/** Options of a write that takes an idempotency key. */
export interface WriteOptions extends CallOptions {
  /**
   * Same key and body answer the first result; the client generates one per call when absent (for
   * payouts and subscriptions). Store yours before the call, or take the failed call's
   * `error.idempotencyKey` (given or generated) to repeat it: a new key is a new payout or subscription.
   */
  readonly idempotencyKey?: string | undefined
}

const enc = encodeURIComponent

/** Walks a list with `limit` and cursors; a record seen on an earlier page is not repeated. */
export async function* paginate<A extends { readonly id: string }>(
  page: (cursor: string | undefined) => Promise<Pick<Page<A>, "items" | "next_cursor">>
): AsyncGenerator<A> {
  const seen = new Set<string>()
  let cursor: string | undefined
  do {
    const answer = await page(cursor)
    for (const item of answer.items) {
      if (seen.has(item.id)) continue
      seen.add(item.id)
      yield item
    }
    cursor = answer.next_cursor ?? undefined
  } while (cursor !== undefined)
}

/** The merchant API client. */
export class Paydesk {
  readonly #call: <A>(call: Call) => Promise<A>
  readonly #options: ClientOptions
  readonly #session: Session | undefined

  constructor(options: ClientOptions) {
    const given = (value: unknown): value is string => typeof value === "string" && value !== ""
    if (given(options?.apiKey)) {
      this.#session = undefined
      this.#call = transport(options, apiKeyCredentials(options.apiKey))
    } else if (given(options?.accessToken) || given(options?.refreshToken)) {
      this.#session = new Session(
        { accessToken: options.accessToken, refreshToken: options.refreshToken, expiresAt: options.accessTokenExpiresAt },
        options.onTokens
      )
      this.#call = transport(options, this.#session)
      this.#session.bind(this.#call)
    } else {
      throw new TypeError("Paydesk: apiKey is required (or a dashboard session: accessToken or refreshToken, or Paydesk.login)")
    }
    this.#options = options
  }

  /**
   * Signs in as the account owner (dashboard e-mail and password) and answers a client acting with
   * that session (Bearer token, renewed when it expires). Not retried: each call is a login attempt.
   */
  static async login(options: LoginOptions): Promise<Paydesk> {
    const { email, password, ...rest } = options
    const pair = await transport(rest, { headers: async () => ({}) })<TokenPair>({
      method: "POST",
      path: "/api/v1/auth/login",
      body: { email, password },
      safe: false,
      anonymous: true
    })
    options.onTokens?.(pair)
    return new Paydesk({ ...rest, accessToken: pair.access_token, refreshToken: pair.refresh_token, accessTokenExpiresAt: pair.expires_at })
  }

  /** The dashboard session (Bearer-token mode only). */
  readonly auth = {
    /** The session's current tokens (undefined with an API key). */
    tokens: (): SessionTokens | undefined => this.#session?.tokens,
    /** Renews the session now: a new token pair (the previous refresh token stops working). Not retried. */
    refresh: (): Promise<TokenPair> => this.#sessionOrThrow().refresh(),
    /**
     * Changes the signed-in user's password. Every session of the user ends (other devices, and
     * whoever held its password or a token); this client goes on with the new pair the answer
     * carries (given to `onTokens` too). Not retried: a lost answer leaves the password changed and
     * this session ended, so sign in again with the new password.
     */
    changePassword: async (passwords: { readonly current_password: string; readonly new_password: string }): Promise<TokenPair> => {
      const session = this.#sessionOrThrow()
      return session.replace((headers) =>
        this.#call<TokenPair>({
          method: "POST",
          path: "/api/v1/auth/password",
          headers,
          body: { current_password: passwords.current_password, new_password: passwords.new_password },
          safe: false,
          anonymous: true
        }))
    },
    /**
     * Ends the session: its access and refresh tokens stop working (repeating is harmless). Later
     * calls of this client fail with `PaydeskSessionEndedError`, unsent: sign in again for a new client.
     */
    logout: async (): Promise<{ readonly ok: true }> => {
      const session = this.#sessionOrThrow()
      // Already over (logged out, or its refresh token refused): nothing left to end.
      if (session.ended) return { ok: true }
      const { refreshToken } = session.tokens
      const answer = await this.#call<{ readonly ok: true }>({
        method: "POST",
        path: "/api/v1/auth/logout",
        ...(refreshToken === undefined ? {} : { body: { refresh_token: refreshToken } }),
        safe: true
      })
      session.clear()
      return answer
    }
  }

  #sessionOrThrow(): Session {
    if (this.#session === undefined) throw new TypeError("Paydesk: this client uses an API key, not a dashboard session (Paydesk.login)")
    return this.#session
  }

  #terminalOrThrow(given: string | undefined): string {
    const terminal = this.#terminal(given)
    if (terminal === undefined) throw new TypeError("Paydesk: terminalId is required (as an argument or the client's terminalId option)")
    return terminal
  }

  /** Whether the client works in the sandbox. */
  get sandbox(): boolean {
    return this.#options.sandbox === true
  }

  #environment<E extends string>(given: E | undefined): E | "sandbox" | undefined {
    return given ?? (this.sandbox ? "sandbox" : undefined)
  }

  #terminal(given: string | undefined): string | undefined {
    return given ?? this.#options.terminalId
  }

  #filterQuery(filter: PaymentFilter) {
    return {
      terminal_id: filter.terminal_id,
      environment: this.#environment(filter.environment),
      recurring: filter.recurring,
      status: filter.status,
      order_id: filter.order_id,
      created_from: filter.created_from,
      created_to: filter.created_to
    }
  }

  #paymentQuery(filter: PaymentFilter & Paging) {
    return {
      ...this.#filterQuery(filter),
      page: filter.page,
      limit: filter.limit,
      cursor: filter.cursor
    }
  }

  /** One-off payments. */
  readonly payments = {
    /**
     * Creates a payment (or answers the one of this `order_id`, same parameters); send the payer to
     * `pay_url`. Its errors name the `order_id` (`error.orderId`, and `error.idempotencyKey` when one
     * was given): creating it again with them answers the same payment.
     */
    create: (input: PaymentCreate, options: WriteOptions = {}): Promise<Payment> =>
      this.#call({
        method: "POST",
        path: "/api/v1/payments",
        body: this.sandbox && input.test === undefined ? { ...input, test: true } : input,
        idempotencyKey: options.idempotencyKey,
        orderId: input.order_id,
        // The order_id is the payment's natural idempotency key.
        safe: true,
        signal: options.signal
      }),
    /** Reads a payment (`pay_<uuid>` or UUID). */
    get: (paymentId: string, options: CallOptions = {}): Promise<Payment> =>
      this.#call({ method: "GET", path: `/api/v1/payments/${enc(paymentId)}`, safe: true, signal: options.signal }),
    /** Reads the payment of an `order_id` (in the sandbox with the `sandbox` option). */
    getByOrderId: (orderId: string, options: CallOptions & { readonly environment?: "sandbox" | "prod"; readonly terminal_id?: string } = {}): Promise<Payment> =>
      this.#call({
        method: "GET",
        path: "/api/v1/payments/by-order",
        query: { order_id: orderId, environment: this.#environment(options.environment), terminal_id: options.terminal_id },
        safe: true,
        signal: options.signal
      }),
    /** One page of payments, newest first. */
    list: (query: PaymentFilter & Paging = {}, options: CallOptions = {}): Promise<Page<Payment>> =>
      this.#call({ method: "GET", path: "/api/v1/payments", query: this.#paymentQuery(query), safe: true, signal: options.signal }),
    /** Every payment matching the filter, newest first, fetched page by page. */
    iterate: (query: PaymentFilter & { readonly limit?: number } = {}, options: CallOptions = {}): AsyncGenerator<Payment> =>
      paginate((cursor) => this.payments.list({ ...query, limit: query.limit ?? 100, ...(cursor === undefined ? {} : { cursor }) }, options)),
    /** Count and amount per status. */
    stats: (filter: PaymentFilter = {}, options: CallOptions = {}): Promise<PaymentStats> =>
      this.#call({ method: "GET", path: "/api/v1/payments/stats", query: this.#filterQuery(filter), safe: true, signal: options.signal }),
    /** Count and amount per status for each calendar day (in `time_zone`) of a range that has payments. */
    dailyStats: (query: DailyStatsQuery, options: CallOptions = {}): Promise<PaymentDailyStats> =>
      this.#call({
        method: "GET",
        path: "/api/v1/payments/stats/daily",
        query: { ...this.#filterQuery(query), time_zone: query.time_zone },
        safe: true,
        signal: options.signal
      }),
    /** Every payment matching the filter as CSV, newest first (at most 10 000 rows; the server refuses paging with it). */
    exportCsv: (filter: PaymentFilter = {}, options: CallOptions = {}): Promise<string> =>
      this.#call({ method: "GET", path: "/api/v1/payments", query: { ...this.#filterQuery(filter), format: "csv" }, safe: true, text: true, signal: options.signal }),
    /** Sandbox only: answers as the payer's bank would (`paid` sends `payment.paid`). */
    simulate: (paymentId: string, outcome: SimulateOutcome, options: CallOptions = {}): Promise<Payment> =>
      this.#call({ method: "POST", path: `/api/v1/payments/${enc(paymentId)}/simulate`, body: { outcome }, safe: true, signal: options.signal })
  }

  /** Terminal settings. */
  readonly terminals = {
    /** The terminals you may act on: an API key's one, or every terminal of the signed-in user's account. */
    list: (options: CallOptions = {}): Promise<{ readonly items: ReadonlyArray<Terminal> }> =>
      this.#call({ method: "GET", path: "/api/v1/terminals", safe: true, signal: options.signal }),
    /** The settings, the health of the callback endpoint and the signing-secret overlap. */
    get: (terminalId: string, options: CallOptions = {}): Promise<TerminalDetails> =>
      this.#call({ method: "GET", path: `/api/v1/terminals/${enc(terminalId)}`, safe: true, signal: options.signal }),
    /** Changes the settings given. */
    update: (terminalId: string, settings: TerminalSettings, options: CallOptions = {}): Promise<Terminal> =>
      this.#call({ method: "PUT", path: `/api/v1/terminals/${enc(terminalId)}`, body: settings, safe: true, signal: options.signal }),
    /** Sends a `ping` event to the callback URL now (not retried by the client: each call is an attempt). */
    testEvent: (terminalId: string, options: CallOptions = {}): Promise<EventSent> =>
      this.#call({ method: "POST", path: `/api/v1/terminals/${enc(terminalId)}/test-event`, safe: false, signal: options.signal })
  }

  /** The terminal's balance. */
  readonly balance = {
    get: (options: CallOptions & { readonly terminal_id?: string } = {}): Promise<Balance> =>
      this.#call({ method: "GET", path: "/api/v1/balance", query: { terminal_id: options.terminal_id }, safe: true, signal: options.signal })
  }

  /** The USDT/RUB rate. */
  readonly rate = {
    get: (options: CallOptions & { readonly terminal_id?: string } = {}): Promise<Rate> =>
      this.#call({ method: "GET", path: "/api/v1/rate", query: { terminal_id: options.terminal_id }, safe: true, signal: options.signal })
  }

  /** USDT payouts. */
  readonly payouts = {
    /**
     * Requests a payout; retried safely under one idempotency key: the body's `idempotency_key` or the
     * `idempotencyKey` option (one key: both given must be equal), else one generated for the call.
     * The key goes in the `Idempotency-Key` header of every attempt (and stays in the body when given there).
     * A failed call's error names the key (`error.idempotencyKey`): repeat the call with it (the
     * option or the body field) to learn the result. Calling again without it makes a second payout.
     * Payouts are live only: a client made with `sandbox: true` refuses one with a `TypeError`, before
     * anything is sent (the server refuses `X-Test-Mode: true` on payouts too); make payouts with a
     * live client.
     */
    create: async (input: PayoutCreate & { readonly terminal_id?: string }, options: WriteOptions = {}): Promise<Payout> => {
      const { terminal_id, ...body } = input
      const given = body.idempotency_key ?? undefined
      if (given !== undefined && options.idempotencyKey !== undefined && given !== options.idempotencyKey) {
        throw new TypeError("Paydesk: idempotency_key and the idempotencyKey option differ (they are the same key: give one, or both equal)")
      }
      // Payouts exist only live: a sandbox client refuses one itself, before anything is sent (also
      // against a server that would take it: real USDT for what its caller takes for a test).
      if (this.sandbox) {
        throw new TypeError("Paydesk: payouts are live only (real USDT), and this client was made with sandbox: true; make payouts with a live client. Nothing was sent")
      }
      const key = given ?? options.idempotencyKey ?? await uuid()
      return this.#call({
        method: "POST",
        path: "/api/v1/payouts",
        query: { terminal_id },
        body,
        idempotencyKey: key,
        safe: true,
        signal: options.signal
      })
    },
    /** One page of payouts, newest first. */
    list: (query: Paging & { readonly terminal_id?: string } = {}, options: CallOptions = {}): Promise<Page<Payout>> =>
      this.#call({ method: "GET", path: "/api/v1/payouts", query: { ...query }, safe: true, signal: options.signal }),
    /** Every payout, newest first. */
    iterate: (query: { readonly terminal_id?: string; readonly limit?: number } = {}, options: CallOptions = {}): AsyncGenerator<Payout> =>
      paginate((cursor) => this.payouts.list({ ...query, limit: query.limit ?? 100, ...(cursor === undefined ? {} : { cursor }) }, options))
  }

  /** Subscription plans of the terminal. */
  readonly plans = {
    list: async (options: CallOptions & { readonly terminal_id?: string } = {}): Promise<ReadonlyArray<Plan>> =>
      (await this.#call<{ items: ReadonlyArray<Plan> }>({
        method: "GET",
        path: "/api/v1/subscription-plans",
        query: { terminal_id: this.#terminal(options.terminal_id) },
        safe: true,
        signal: options.signal
      })).items
  }

  /** Recurring subscriptions. */
  readonly subscriptions = {
    /**
     * Creates a subscription (send the payer to `pay_url`, unchanged). Keep the idempotency key of
     * a logical request: a retry with it answers the same subscription. Without one the client
     * generates a key per call; a failed call's error names it (`error.idempotencyKey`): repeat the
     * call with it to learn the result. Calling again without it makes a second subscription.
     */
    create: async (input: SubscriptionCreate, options: WriteOptions = {}): Promise<Subscription> => {
      const key = options.idempotencyKey ?? await uuid()
      const terminal = this.#terminal(input.terminal_id)
      // With the `sandbox` option a subscription is a sandbox one, as payments are.
      const body = this.sandbox && input.test === undefined ? { ...input, test: true } : input
      return this.#call({
        method: "POST",
        path: "/api/v1/subscriptions",
        body: terminal === undefined ? body : { ...body, terminal_id: terminal },
        idempotencyKey: key,
        safe: true,
        signal: options.signal
      })
    },
    get: (subscriptionId: string, options: CallOptions = {}): Promise<Subscription> =>
      this.#call({ method: "GET", path: `/api/v1/subscriptions/${enc(subscriptionId)}`, safe: true, signal: options.signal }),
    /** One page of subscriptions, newest first. */
    list: (query: SubscriptionFilter & Paging = {}, options: CallOptions = {}): Promise<Page<Subscription>> =>
      this.#call({
        method: "GET",
        path: "/api/v1/subscriptions",
        query: { ...query, ...(this.#environment(query.environment) === undefined ? {} : { environment: this.#environment(query.environment) }) },
        safe: true,
        signal: options.signal
      }),
    /** Every subscription, newest first. */
    iterate: (query: SubscriptionFilter & { readonly limit?: number } = {}, options: CallOptions = {}): AsyncGenerator<Subscription> =>
      paginate((cursor) => this.subscriptions.list({ ...query, limit: query.limit ?? 100, ...(cursor === undefined ? {} : { cursor }) }, options)),
    /** The charge history (up to 100 newest). */
    charges: (subscriptionId: string, options: CallOptions = {}): Promise<ReadonlyArray<Charge>> =>
      this.#call({ method: "GET", path: `/api/v1/subscriptions/${enc(subscriptionId)}/charges`, safe: true, signal: options.signal }),
    /** The next charges (default 12, at most 60) by the schedule that charges. */
    upcoming: (subscriptionId: string, count?: number, options: CallOptions = {}): Promise<UpcomingCharges> =>
      this.#call({
        method: "GET",
        path: `/api/v1/subscriptions/${enc(subscriptionId)}/upcoming`,
        query: count === undefined ? {} : { count },
        safe: true,
        signal: options.signal
      }),
    /**
     * Sandbox: queues the sandbox acquirer's answers to the next charges of a sandbox subscription
     * (after any queued before). Not retried by the client: a repeat would queue them twice.
     */
    programCharges: (
      subscriptionId: string,
      outcomes: ReadonlyArray<SandboxChargeOutcome>,
      options: CallOptions = {}
    ): Promise<{ readonly subscription_id: string; readonly outcomes: ReadonlyArray<SandboxChargeOutcome> }> =>
      this.#call({
        method: "POST",
        path: `/api/v1/subscriptions/${enc(subscriptionId)}/sandbox/charge-outcomes`,
        body: { outcomes },
        safe: false,
        signal: options.signal
      }),
    /** Stops it (repeating is harmless); re-read it to see `stop`/`stopped`. */
    stop: (subscriptionId: string, options: CallOptions = {}): Promise<{ readonly ok: true }> =>
      this.#call({ method: "POST", path: `/api/v1/subscriptions/${enc(subscriptionId)}/stop`, safe: true, signal: options.signal })
  }

  /** Test clocks: sandbox time you move (pass `test_clock` when creating sandbox payments and subscriptions). */
  readonly testClocks = {
    /** Creates a clock frozen at `frozen_time` (ISO 8601 with `Z` or an offset). */
    create: (input: { readonly frozen_time: string; readonly name?: string; readonly terminal_id?: string }, options: CallOptions = {}): Promise<TestClock> => {
      const terminal = this.#terminal(input.terminal_id)
      return this.#call({
        method: "POST",
        path: "/api/v1/test-clocks",
        body: terminal === undefined ? input : { ...input, terminal_id: terminal },
        safe: false,
        signal: options.signal
      })
    },
    get: (testClockId: string, options: CallOptions = {}): Promise<TestClock> =>
      this.#call({ method: "GET", path: `/api/v1/test-clocks/${enc(testClockId)}`, safe: true, signal: options.signal }),
    /** One page of clocks, newest first. */
    list: (query: { readonly terminal_id?: string; readonly page?: number } = {}, options: CallOptions = {}): Promise<Omit<Page<TestClock>, "next_cursor">> =>
      this.#call({ method: "GET", path: "/api/v1/test-clocks", query: { ...query }, safe: true, signal: options.signal }),
    /**
     * Moves the clock to `frozen_time`, running its objects' due work in order. Answers the clock
     * `ready` at the new time, or still `advancing` when the request's budget ran out (`untilReady`
     * then polls until it is ready).
     */
    advance: async (
      testClockId: string,
      frozenTime: string,
      options: CallOptions & { readonly untilReady?: boolean; readonly pollMs?: number } = {}
    ): Promise<TestClock> => {
      let clock = await this.#call<TestClock>({
        method: "POST",
        path: `/api/v1/test-clocks/${enc(testClockId)}/advance`,
        body: { frozen_time: frozenTime },
        safe: false,
        signal: options.signal
      })
      while (options.untilReady === true && clock.status === "advancing") {
        await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1000))
        // An abort during the pause ends the poll here (the read below fails at once with PaydeskAbortError).
        clock = await this.testClocks.get(testClockId, options)
      }
      return clock
    },
    /**
     * Deletes the clock and every object on it (`DELETE /api/v1/test-clocks/{id}`): the clock is
     * gone at once, its payments, subscriptions, charges and events are removed within minutes.
     * Refused while it advances (409 `test_clock_advancing`).
     *
     * Retried after a network failure or a 5xx like the other calls that repeating cannot do twice
     * (a stop, a revoke): a deletion happens once. When an attempt's answer was lost after the server
     * deleted the clock, the retry is answered 404 `test clock not found`: the error then has
     * `attempts` above 1 and `outcomeUnknown` true, and the clock is gone either way. A 404 on the
     * first attempt (`attempts` 1) means the clock was not there (another terminal's, or deleted before).
     */
    delete: (testClockId: string, options: CallOptions = {}): Promise<DeletedTestClock> =>
      this.#call({ method: "DELETE", path: `/api/v1/test-clocks/${enc(testClockId)}`, safe: true, signal: options.signal })
  }

  /**
   * The terminal's API keys (the account owner's session only: `Paydesk.login`). `terminalId`
   * defaults to the client's `terminalId` option.
   */
  readonly apiKeys = {
    /** Issues another key, shown only in this answer. Not retried: a repeat would issue two. */
    create: (options: CallOptions & { readonly subscription_write?: boolean; readonly terminalId?: string } = {}): Promise<CreatedApiKey> =>
      this.#call({
        method: "POST",
        path: `/api/v1/terminals/${enc(this.#terminalOrThrow(options.terminalId))}/api-keys`,
        body: options.subscription_write === undefined ? {} : { subscription_write: options.subscription_write },
        safe: false,
        signal: options.signal
      }),
    /** The keys, oldest first (prefixes only; a key is never shown again). */
    list: async (options: CallOptions & { readonly terminalId?: string } = {}): Promise<ReadonlyArray<ApiKey>> =>
      (await this.#call<{ items: ReadonlyArray<ApiKey> }>({
        method: "GET",
        path: `/api/v1/terminals/${enc(this.#terminalOrThrow(options.terminalId))}/api-keys`,
        safe: true,
        signal: options.signal
      })).items,
    /** Revokes a key at once (repeating is harmless). */
    revoke: (keyId: string, options: CallOptions & { readonly terminalId?: string } = {}): Promise<ApiKey> =>
      this.#call({
        method: "POST",
        path: `/api/v1/terminals/${enc(this.#terminalOrThrow(options.terminalId))}/api-keys/${enc(keyId)}/revoke`,
        safe: true,
        signal: options.signal
      })
  }

  /**
   * The callback signing secret (the account owner's session only). Rotating starts an overlap
   * (24 h by default): `X-Signature` keeps the previous secret, `X-Signature-Next` carries the new
   * one. Deploy a verifier that accepts both (`webhooks.verify(body, headers, [previous, next])`),
   * then `retirePrevious` (or let the overlap end): from then on `X-Signature` is the new secret's.
   */
  readonly signingSecret = {
    /**
     * A new secret, shown only in this answer. Sent with an `Idempotency-Key` (the given one, else one
     * generated per call), so a retry after a lost answer gets the same secret instead of a second
     * rotation that would replace it unseen; a failed call's error names the key
     * (`error.idempotencyKey`): repeat the call with it to get the secret (within 24 h, while no other
     * rotation replaced it).
     */
    rotate: async (options: WriteOptions & { readonly terminalId?: string } = {}): Promise<SigningSecretRotation> => {
      const path = `/api/v1/terminals/${enc(this.#terminalOrThrow(options.terminalId))}/signing-secret/rotate`
      return this.#call({ method: "POST", path, idempotencyKey: options.idempotencyKey ?? await uuid(), safe: true, signal: options.signal })
    },
    /** Ends the overlap now: the previous secret stops signing (repeating is harmless). */
    retirePrevious: (options: CallOptions & { readonly terminalId?: string } = {}): Promise<TerminalDetails> =>
      this.#call({
        method: "POST",
        path: `/api/v1/terminals/${enc(this.#terminalOrThrow(options.terminalId))}/signing-secret/retire-previous`,
        safe: true,
        signal: options.signal
      })
  }

  /** The terminal's callback events. */
  readonly events = {
    /** One page of events, newest first (live only unless `environment` says otherwise). */
    list: (query: EventFilter = {}, options: CallOptions = {}): Promise<EventPage> =>
      this.#call({
        method: "GET",
        path: "/api/v1/events",
        query: { ...query, ...(this.#environment(query.environment) === undefined ? {} : { environment: this.#environment(query.environment) }) },
        safe: true,
        signal: options.signal
      }),
    /** Every event matching the filter, newest first. */
    iterate: (query: Omit<EventFilter, "cursor"> = {}, options: CallOptions = {}): AsyncGenerator<Event> =>
      paginate((cursor) => this.events.list({ ...query, limit: query.limit ?? 100, ...(cursor === undefined ? {} : { cursor }) }, options)),
    /** One event with every delivery and attempt. */
    get: (eventId: string, options: CallOptions = {}): Promise<EventDetail> =>
      this.#call({ method: "GET", path: `/api/v1/events/${enc(eventId)}`, safe: true, signal: options.signal }),
    /** Sends it again now: one attempt outside the 8 (not retried by the client). */
    resend: (eventId: string, options: CallOptions = {}): Promise<EventSent> =>
      this.#call({ method: "POST", path: `/api/v1/events/${enc(eventId)}/resend`, safe: false, signal: options.signal }),
    /**
     * Queues again every event whose delivery failed since `since` (ISO 8601). Live events unless
     * `environment` says otherwise (the sandbox with the `sandbox` option). Not retried by the client:
     * its answer (`requeued`, how many it queued) does not replay, so a retry after a lost answer would
     * report only what was left. Calling again is harmless: it queues only what is still failed (what
     * failed again, or what a call without an answer did not reach); add up the counts yourself.
     */
    recover: (
      input: { readonly since: string; readonly terminal_id?: string; readonly environment?: "sandbox" | "all" | "prod" },
      options: CallOptions = {}
    ): Promise<{ readonly requeued: number }> => {
      const environment = this.#environment(input.environment)
      return this.#call({
        method: "POST",
        path: "/api/v1/events/recover",
        body: environment === undefined ? input : { ...input, environment },
        // Repeating does no harm, but its count would not be the first call's.
        safe: false,
        signal: options.signal
      })
    },
    /** The feed `paydesk listen` reads: events after a cursor, oldest first, each signed now. */
    feed: (
      query: { readonly after?: string; readonly limit?: number; readonly environment?: "sandbox" | "prod" | "all" } = {},
      options: CallOptions = {}
    ): Promise<EventFeed> =>
      this.#call({ method: "GET", path: "/api/v1/events/feed", query: { ...query }, safe: true, signal: options.signal })
  }
}

/** A client: `createClient({ apiKey, baseUrl, sandbox })` (or with a session: `accessToken`, `refreshToken`). */
export const createClient = (options: ClientOptions): Paydesk => new Paydesk(options)
