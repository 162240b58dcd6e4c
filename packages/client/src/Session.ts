/**
 * A dashboard session as the client's credentials: `Authorization: Bearer <access token>`, the
 * access token renewed with the refresh token shortly before it expires (or once after a 401).
 *
 * Refresh tokens are single use and rotate, and a reused one revokes the whole session: so one
 * renewal runs at a time (concurrent calls wait for it), it is never retried blindly, and every new
 * pair goes to `onTokens` for the caller to store.
 *
 * Once it has ended (logged out, or its refresh token refused) it gives no credentials: every later
 * call fails with `PaydeskSessionEndedError` without being sent.
 */
import { PaydeskApiError, PaydeskSessionEndedError } from "./Errors.js"
import type { Call, Credentials } from "./Http.js"
import type { TokenPair } from "./Types.js"

/** Seconds before `expires_at` when the access token is renewed. */
export const renewAheadSeconds = 30

/** The tokens a session starts from. */
export interface SessionTokens {
  readonly accessToken?: string | undefined
  readonly refreshToken?: string | undefined
  /** When the access token expires (Unix seconds), if known. */
  readonly expiresAt?: number | undefined
}

/** A session's mutable state and its renewal. */
export class Session implements Credentials {
  #access: string | undefined
  #refresh: string | undefined
  #expiresAt: number | undefined
  #exchange: Promise<TokenPair> | undefined
  /** A call in flight whose answer replaces the pair (a password change): renewals wait for it. */
  #replacing: Promise<unknown> | undefined
  #ended = false
  #call: (<A>(call: Call) => Promise<A>) | undefined
  readonly #onTokens: ((tokens: TokenPair) => void) | undefined

  constructor(tokens: SessionTokens, onTokens?: (tokens: TokenPair) => void) {
    this.#access = tokens.accessToken
    this.#refresh = tokens.refreshToken
    this.#expiresAt = tokens.expiresAt
    this.#onTokens = onTokens
  }

  /** Connects the session to the transport that performs its refresh calls. */
  bind(call: <A>(call: Call) => Promise<A>): void {
    this.#call = call
  }

  /** The current tokens (store the refresh token: after a renewal the previous one no longer works). */
  get tokens(): SessionTokens {
    return { accessToken: this.#access, refreshToken: this.#refresh, expiresAt: this.#expiresAt }
  }

  /** Takes a new pair (from login or refresh). */
  accept(pair: TokenPair): TokenPair {
    this.#access = pair.access_token
    this.#refresh = pair.refresh_token
    this.#expiresAt = pair.expires_at
    this.#onTokens?.(pair)
    return pair
  }

  /** Whether the session has ended (logged out, or its refresh token refused). */
  get ended(): boolean {
    return this.#ended
  }

  /** Forgets the tokens and ends the session (after logout, or a refused refresh token): later calls are refused unsent. */
  clear(): void {
    this.#access = undefined
    this.#refresh = undefined
    this.#expiresAt = undefined
    this.#ended = true
  }

  /**
   * Runs `call` with the session's credentials, its answer the session's next pair (a password
   * change, which ends the session's other tokens), once no renewal is in flight; renewals asked for meanwhile wait for it
   * and use the pair it brings, so neither a renewal with the refresh token it revokes (refused: the
   * session would end) nor a renewal answered after it (an older pair) replaces that pair.
   */
  async replace(call: (headers: { readonly [name: string]: string }) => Promise<TokenPair>): Promise<TokenPair> {
    while (this.#exchange !== undefined || this.#replacing !== undefined) await (this.#exchange ?? this.#replacing)!.catch(() => undefined)
    // The call's credentials, taken (renewed if due) before it counts as in flight: it is sent with
    // them alone, never renewed after a 401 (a renewal would wait for the call itself).
    const headers = await this.headers()
    const replacing = call(headers).then((pair) => this.accept(pair))
    this.#replacing = replacing
    try {
      return await replacing
    } finally {
      this.#replacing = undefined
    }
  }

  /** Exchanges the refresh token for a new pair now; concurrent callers share one exchange. */
  refresh(): Promise<TokenPair> {
    if (this.#exchange !== undefined) return this.#exchange
    if (this.#replacing !== undefined) {
      // After the pair being replaced arrives (or its call fails), with the tokens then current.
      const after = this.#replacing.then(() => this.refresh(), () => this.refresh())
      return after
    }
    if (this.#ended) return Promise.reject(new PaydeskSessionEndedError())
    const refreshToken = this.#refresh
    if (refreshToken === undefined) return Promise.reject(new TypeError("Paydesk: this session has no refresh token"))
    const call = this.#call
    if (call === undefined) return Promise.reject(new TypeError("Paydesk: the session is not bound to a client"))
    const exchange = call<TokenPair>({ method: "POST", path: "/api/v1/auth/refresh", body: { refresh_token: refreshToken }, safe: false, anonymous: true })
      .then((pair) => this.accept(pair), (error: unknown) => {
        // A refused refresh token (spent, expired, logged out) cannot become valid again: the session is over.
        if (error instanceof PaydeskApiError && error.status === 401) this.clear()
        throw error
      })
      .finally(() => (this.#exchange = undefined))
    this.#exchange = exchange
    return exchange
  }

  async headers(): Promise<{ readonly [name: string]: string }> {
    if (this.#exchange !== undefined) await this.#exchange.catch(() => undefined)
    const due = this.#expiresAt !== undefined && Date.now() / 1000 >= this.#expiresAt - renewAheadSeconds
    if ((this.#access === undefined || due) && this.#refresh !== undefined) await this.renew()
    if (this.#ended) throw new PaydeskSessionEndedError()
    return this.#access === undefined ? {} : { authorization: `Bearer ${this.#access}` }
  }

  /** Renews the access token (sharing an exchange in flight); false when the session cannot be renewed. */
  renew(): Promise<boolean> {
    if (this.#refresh === undefined && this.#exchange === undefined) return Promise.resolve(false)
    return this.refresh().then(() => true, () => false)
  }
}
