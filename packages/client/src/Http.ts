/**
 * The client's transport: one `fetch` per attempt with the credentials (`X-API-Key` and a fresh
 * `X-Nonce`, or a dashboard session's `Authorization: Bearer`), a timeout, the error body turned into `PaydeskApiError`, and retries of network failures,
 * timeouts and 5xx answers for requests that are safe to repeat (reads, and writes that carry
 * their idempotency: an `order_id`, an `Idempotency-Key`, a stop that repeats harmlessly, or a
 * deletion, which happens once: its repeat is a 404 that leaves `outcomeUnknown` set).
 * The timeout covers the whole attempt, the answer's body included; the caller's `signal` cancels
 * the call (the attempt in flight and any wait before a retry). A 429 is not retried: its
 * `Retry-After` is on the error (`retryAfterMs`).
 *
 * Every error of a call says what was sent (`CallOutcome`): the attempts, whether a write may have
 * been done all the same (`outcomeUnknown`), and the call's `Idempotency-Key` or `order_id`, so
 * that a caller who gave no key can still repeat the call safely.
 */
import { uuid } from "./Crypto.js"
import { type CallOutcome, judged, PaydeskAbortError, PaydeskApiError, PaydeskConnectionError, PaydeskSessionEndedError } from "./Errors.js"

/** Options of the transport (and of the client). */
export interface TransportOptions {
  /** The terminal's API key (or use a dashboard session: `accessToken`, or `Paydesk.login`). */
  readonly apiKey?: string
  /** The server's origin (default `http://127.0.0.1:8080`, the reference server). */
  readonly baseUrl?: string
  /** Retries of a safe request after a network failure, a timeout or a 5xx (default 2). */
  readonly maxRetries?: number
  /** Time allowed for one attempt, in ms (default 30 000). */
  readonly timeoutMs?: number
  /** First retry delay in ms, doubled each time (default 500; `Retry-After` wins when longer). */
  readonly retryDelayMs?: number
  /** The `fetch` to use (default the global one). */
  readonly fetch?: typeof fetch
}

/** One API call. */
export interface Call {
  readonly method: "GET" | "POST" | "PUT" | "DELETE"
  readonly path: string
  readonly query?: { readonly [name: string]: string | number | boolean | undefined }
  readonly body?: unknown
  readonly headers?: { readonly [name: string]: string }
  /** The call's idempotency key: sent as `Idempotency-Key` on every attempt, and named by its errors. */
  readonly idempotencyKey?: string | undefined
  /** A payment creation's `order_id` (its natural idempotency key), named by its errors. */
  readonly orderId?: string | undefined
  /** Whether repeating the request cannot do the work twice. */
  readonly safe: boolean
  /** Sent without credentials (login, refresh). */
  readonly anonymous?: true
  /** Answer as text (CSV) instead of JSON. */
  readonly text?: true
  /** The caller's signal: cancels the call, which is then not retried. */
  readonly signal?: AbortSignal | undefined
}

/**
 * Waits `ms`, or less when `signal` aborts (the caller then sees the abort); its abort listener goes
 * when it ends (a listener sleeps every poll, for days).
 */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted === true) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener("abort", done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener("abort", done, { once: true })
  })

/**
 * The signal of one attempt: aborted after `timeoutMs` or when the caller's signal aborts (by hand,
 * since `AbortSignal.any` needs Node 20). `end` releases the timer and the listener.
 */
export const attemptSignal = (timeoutMs: number, caller: AbortSignal | undefined) => {
  const controller = new AbortController()
  const onAbort = () => controller.abort(caller?.reason)
  const timer = setTimeout(() => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")), timeoutMs)
  caller?.addEventListener("abort", onAbort, { once: true })
  if (caller?.aborted === true) onAbort()
  return {
    signal: controller.signal,
    end: () => {
      clearTimeout(timer)
      caller?.removeEventListener("abort", onAbort)
    }
  }
}

/** The API's 503 that no retry changes: the deployment (or the terminal) has no recurring plans. */
const lastingCode = "recurring_not_configured"

/** The `code` of the API's error body in `text`, if it is one. */
const errorCodeOf = (text: string): string | undefined => {
  try {
    const code = (JSON.parse(text) as { error?: { code?: unknown } } | null)?.error?.code
    return typeof code === "string" ? code : undefined
  } catch {
    return undefined
  }
}

/** How much of a 5xx's body, and for how long, is read before a retry (the API's error bodies are small). */
const peekBytes = 16_384
const peekMs = 2_000

/**
 * The body of `response` when it is at most `maxBytes` and arrives within `ms`; undefined otherwise
 * (longer, slower, or cut), and the body is let go either way.
 */
const peekText = async (response: Response, maxBytes: number, ms: number): Promise<string | undefined> => {
  const reader = response.body?.getReader()
  if (reader === undefined) return ""
  const chunks: Array<Uint8Array> = []
  let size = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), ms)
  })
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), late])
      if (next === "late") return undefined
      if (next.done) break
      size += next.value.byteLength
      if (size > maxBytes) return undefined
      chunks.push(next.value)
    }
    const bytes = new Uint8Array(size)
    let at = 0
    for (const chunk of chunks) {
      bytes.set(chunk, at)
      at += chunk.byteLength
    }
    return new TextDecoder().decode(bytes)
  } catch {
    return undefined
  } finally {
    clearTimeout(timer)
    void reader.cancel().catch(() => undefined)
  }
}

/** The longest wait before a retry that `Retry-After` may ask for. */
const maxRetryAfterMs = 60_000

/**
 * `Retry-After` in ms: delay-seconds, or an HTTP-date (RFC 9110: IMF-fixdate, or the obsolete RFC 850
 * and asctime forms) counted from the answer's `Date` (the server's clock; the client's when absent
 * or unreadable), 0 for a date already past. Undefined when absent or unreadable.
 */
export const retryAfterMs = (value: string | null | undefined, date?: string | null, now: number = Date.now()): number | undefined => {
  const given = value?.trim() ?? ""
  if (/^\d+(\.\d+)?$/.test(given)) return Math.round(Number(given) * 1000)
  // An HTTP-date starts with the day's name; `Date.parse` alone would read "-1" or "7" as a year.
  if (!/^[A-Za-z]{3}/.test(given)) return undefined
  // Every HTTP-date is GMT; the asctime form does not say so, and `Date.parse` would read it as local time.
  const at = Date.parse(/(GMT|UTC|Z|[+-]\d{4})$/i.test(given) ? given : `${given} GMT`)
  if (!Number.isFinite(at)) return undefined
  const served = date === undefined || date === null ? Number.NaN : Date.parse(date)
  return Math.max(0, at - (Number.isFinite(served) ? served : now))
}

/** What an idempotency key may hold: the API's rule (`Idempotency.validateKey`), 1 to 128 printable ASCII characters without spaces. */
const printableAscii = /^[\x21-\x7e]{1,128}$/

/**
 * Whether a `fetch` failure is a refused connection (nothing reached the server): Node's `fetch` puts
 * the code on its direct cause. Only there: a `fetch` of the caller's that retries inside may have
 * sent the request before a later try was refused.
 */
const refused = (error: unknown): boolean => {
  const codeOf = (e: unknown) => typeof e === "object" && e !== null ? (e as { code?: unknown }).code : undefined
  return codeOf(error) === "ECONNREFUSED" || codeOf(typeof error === "object" && error !== null ? (error as { cause?: unknown }).cause : undefined) === "ECONNREFUSED"
}

/** How a call authenticates: the headers of one attempt, and what to do once the access token is refused. */
export interface Credentials {
  headers(): Promise<{ readonly [name: string]: string }>
  /** Renews the session after a 401; true when the call may be repeated with new headers. */
  renew?(): Promise<boolean>
}

/** API-key credentials: the key and a fresh nonce per attempt. */
export const apiKeyCredentials = (apiKey: string): Credentials => ({
  // A retry carries a new nonce (the spec refuses a repeated one).
  headers: async () => ({ "x-api-key": apiKey, "x-nonce": await uuid() })
})

/** Makes the function that performs calls. */
export const transport = (options: TransportOptions, credentials: Credentials = apiKeyCredentials(options.apiKey ?? "")) => {
  const base = (options.baseUrl ?? "http://127.0.0.1:8080").replace(/\/+$/, "")
  const maxRetries = options.maxRetries ?? 2
  const timeoutMs = options.timeoutMs ?? 30_000
  const delayMs = options.retryDelayMs ?? 500
  const fetcher = options.fetch ?? globalThis.fetch

  const urlOf = (call: Call): string => {
    const query = new URLSearchParams()
    for (const [name, value] of Object.entries(call.query ?? {})) if (value !== undefined) query.set(name, String(value))
    const search = query.toString()
    return `${base}${call.path}${search === "" ? "" : `?${search}`}`
  }

  /** Waits before retry `attempt + 1`: the backoff, or the answer's `Retry-After` when longer (at most 60 s). */
  const wait = (attempt: number, signal: AbortSignal | undefined, after?: number) => {
    const backoff = delayMs * 2 ** attempt
    return sleep(after !== undefined && after > backoff ? Math.min(after, maxRetryAfterMs) : backoff, signal)
  }
  const retryAfterOf = (response: Response) => retryAfterMs(response.headers.get("retry-after"), response.headers.get("date"))

  // A function, not an inline test: TypeScript would keep `aborted` narrowed across the awaits.
  const cancelled = (call: Call): boolean => call.signal?.aborted === true

  return async <A>(call: Call): Promise<A> => {
    // Checked before anything is sent: a key `fetch` cannot put in a header (Cyrillic, say) failed
    // every attempt locally and read as a network failure whose outcome was unknown.
    if (call.idempotencyKey !== undefined && !printableAscii.test(call.idempotencyKey)) {
      throw new TypeError("Paydesk: an idempotency key is 1 to 128 printable ASCII characters (letters, digits, punctuation; no spaces); nothing was sent")
    }
    const url = urlOf(call)
    const write = call.method !== "GET"
    let renewed = false
    /** Attempts sent (a renewal's repeat after a 401 included). */
    let sent = 0
    /** Some attempt went out without a definite answer, and no later answer settled it (see `CallOutcome.outcomeUnknown`). */
    let unsettled = false
    const outcome = (): CallOutcome => ({
      attempts: sent,
      outcomeUnknown: write && unsettled,
      idempotencyKey: call.idempotencyKey,
      orderId: call.orderId
    })
    const aborted = () =>
      new PaydeskAbortError(`${call.method} ${call.path}: cancelled by the caller's signal`, sent, { cause: call.signal?.reason, ...outcome() })

    for (let attempt = 0; ; attempt++) {
      if (cancelled(call)) throw aborted()
      const retriable = call.safe && attempt < maxRetries
      // Outside the try below: a session that cannot give credentials (ended) is not a network failure.
      let credentialHeaders: { readonly [name: string]: string }
      try {
        credentialHeaders = call.anonymous === true ? {} : await credentials.headers()
      } catch (error) {
        // Ended between two attempts: the earlier ones may have done the work; say so, with the key.
        if (error instanceof PaydeskSessionEndedError) throw new PaydeskSessionEndedError(outcome())
        throw error
      }
      const { signal, end } = attemptSignal(timeoutMs, call.signal)
      let response: Response
      let text: string
      try {
        sent++
        response = await fetcher(url, {
          method: call.method,
          headers: {
            accept: call.text === true ? "text/csv" : "application/json",
            ...credentialHeaders,
            ...(call.body === undefined ? {} : { "content-type": "application/json" }),
            ...call.headers,
            ...(call.idempotencyKey === undefined ? {} : { "idempotency-key": call.idempotencyKey })
          },
          ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
          signal
        })
        if (response.status >= 500 && retriable) {
          // A JSON 503 is read (a little, briefly) before it is retried: one saying the terminal has no
          // recurring plans is the same however often asked, so it is answered (an embedding probe saw
          // three tries of one plans list). Anything else is retried as any 5xx.
          const json = response.status === 503 && (response.headers.get("content-type") ?? "").startsWith("application/json")
          const peeked = json ? await peekText(response, peekBytes, Math.min(timeoutMs, peekMs)) : undefined
          if (peeked === undefined || errorCodeOf(peeked) !== lastingCode) {
            // A 5xx does not say whether the work was done (a proxy may answer it after the server did it).
            unsettled = true
            if (!json) await response.body?.cancel().catch(() => undefined)
            end()
            await wait(attempt, call.signal, retryAfterOf(response))
            continue
          }
          text = peeked
        } else {
          if (response.status === 401 && call.anonymous !== true && !renewed && credentials.renew !== undefined) {
            // An access token refused (expired early, or a clock apart): one renewal, then the call again.
            renewed = true
            if (await credentials.renew()) {
              await response.body?.cancel().catch(() => undefined)
              end()
              attempt--
              continue
            }
          }
          // The body is part of the answer: a timeout or a cut connection while it arrives is no answer either.
          text = await response.text()
        }
      } catch (cause) {
        end()
        // Sent, perhaps received and done: no answer says otherwise (unless the connection was
        // refused: then nothing reached the server).
        if (!refused(cause)) unsettled = true
        if (cancelled(call)) throw aborted()
        if (retriable) {
          await wait(attempt, call.signal)
          continue
        }
        throw new PaydeskConnectionError(`${call.method} ${call.path}: no answer (${(cause as Error)?.message ?? String(cause)})`, sent, { cause, ...outcome() })
      }
      end()
      if (!response.ok) {
        let error: { code?: string; message?: string; request_id?: string; field?: string } = {}
        try {
          error = (JSON.parse(text) as { error?: typeof error }).error ?? {}
        } catch {
          // Not the API's error body (a proxy's page): keep the status.
        }
        if (response.status >= 500 && errorCodeOf(text) !== lastingCode) unsettled = true
        // Only an answer that judged the request itself settles it: the same body under the same
        // order_id or key would have been judged the same way the first time (invalid, too large, in
        // conflict with another body), so that attempt did nothing either. Other refusals (401, 403:
        // the key changed meanwhile; 408, 429; a 409 write_conflict) refuse this attempt only.
        else if (judged(response.status, error.code)) unsettled = false
        throw new PaydeskApiError(
          response.status,
          error.code ?? `http_${response.status}`,
          error.message ?? (text.slice(0, 200) || response.statusText),
          error.request_id ?? response.headers.get("x-request-id") ?? undefined,
          error.field,
          { ...outcome(), retryAfterMs: retryAfterOf(response) }
        )
      }
      if (call.text === true) return text as A
      try {
        return JSON.parse(text) as A
      } catch (cause) {
        // A 2xx that is not the API's JSON (a proxy's or a portal's page, a cut body): the server may
        // have done the work, so the call says so, with its key, as for no answer at all.
        unsettled = true
        throw new PaydeskConnectionError(
          `${call.method} ${call.path}: answered ${response.status} with a body that is not JSON (${JSON.stringify(text.slice(0, 80))}): not the API's answer`,
          sent,
          { cause, ...outcome() }
        )
      }
    }
  }
}
