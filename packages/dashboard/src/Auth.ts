/**
 * The dashboard session: sign-in with the owner's e-mail and password (`Paydesk.login`), the
 * token pair kept as docs/decisions.md says (access token in memory only; the refresh token in
 * this tab's sessionStorage, so a reload keeps the session and closing the tab ends it), a timer
 * that renews the access token before it expires, and sign-out (the server revokes both tokens).
 *
 * The terminal the dashboard acts on and the sandbox/live mode are no secrets: localStorage; so is
 * the e-mail of the last sign-in (to prefill the form after the session ends), until sign-out.
 */
import { Paydesk, PaydeskApiError, type Terminal, type TokenPair } from "@paydesk/client"

const refreshKey = "paydesk.refresh"
const terminalKey = "paydesk.terminal"
const emailKey = "paydesk.email"
const sandboxKey = "paydesk.sandbox"

/** Seconds before expiry when the timer renews the access token (the SDK also renews on use). */
const renewAhead = 60

/** The API's origin: the page's own (the server that serves the dashboard serves the API). */
const baseUrl = (): string => window.location.origin

/** A signed-in session: the terminals of the account and the one the pages act on. */
export interface Session {
  readonly client: Paydesk
  readonly terminals: ReadonlyArray<Terminal>
  readonly terminalId: string
  readonly email: string
}

/** Thrown at sign-in when the account has no terminal yet (nothing to show). */
export class NoTerminals extends Error {
  constructor() {
    super("the account has no terminals")
  }
}

let timer: ReturnType<typeof setTimeout> | undefined

const schedule = (client: Paydesk, expiresAt: number | undefined, onEnded: () => void) => {
  if (timer !== undefined) clearTimeout(timer)
  timer = undefined
  if (expiresAt === undefined) return
  const delay = Math.max(5_000, (expiresAt - renewAhead) * 1000 - Date.now())
  timer = setTimeout(() => {
    client.auth.refresh().catch((error: unknown) => {
      if (error instanceof PaydeskApiError && error.status === 401) onEnded()
    })
  }, delay)
}

const keep = (pair: TokenPair, client: () => Paydesk | undefined, onEnded: () => void) => {
  sessionStorage.setItem(refreshKey, pair.refresh_token)
  const current = client()
  if (current !== undefined) schedule(current, pair.expires_at, onEnded)
}

/** The remembered e-mail (to prefill the sign-in form). */
export const rememberedEmail = (): string => localStorage.getItem(emailKey) ?? ""

/** The account's terminals and the one to act on: the one chosen last time when it is still there, else the first. */
const withTerminals = async (client: Paydesk, email: string): Promise<Session> => {
  const { items } = await client.terminals.list()
  const first = items[0]
  if (first === undefined) throw new NoTerminals()
  const kept = localStorage.getItem(terminalKey)
  const terminalId = items.some((x) => x.id === kept) ? kept! : first.id
  localStorage.setItem(terminalKey, terminalId)
  return { client, terminals: items, terminalId, email }
}

/** The same session acting on another of the account's terminals (remembered for next time). */
export const switchTerminal = (session: Session, terminalId: string): Session => {
  localStorage.setItem(terminalKey, terminalId)
  return { ...session, terminalId }
}

/** Signs in; `onEnded` runs when the session can no longer be renewed. */
export const signIn = async (input: { readonly email: string; readonly password: string }, onEnded: () => void): Promise<Session> => {
  let client: Paydesk | undefined
  client = await Paydesk.login({
    baseUrl: baseUrl(),
    email: input.email,
    password: input.password,
    maxRetries: 1,
    onTokens: (pair) => keep(pair, () => client, onEnded)
  })
  const tokens = client.auth.tokens()
  schedule(client, tokens?.expiresAt, onEnded)
  try {
    const session = await withTerminals(client, input.email)
    localStorage.setItem(emailKey, input.email)
    return session
  } catch (error) {
    await signOut({ client, terminals: [], terminalId: "", email: input.email })
    throw error
  }
}

/** The session kept by this tab (after a reload), renewed once to check it; null when there is none or it ended. */
export const resume = async (onEnded: () => void): Promise<Session | null> => {
  const refreshToken = sessionStorage.getItem(refreshKey)
  if (refreshToken === null) return null
  let client: Paydesk | undefined
  client = new Paydesk({ baseUrl: baseUrl(), refreshToken, maxRetries: 1, onTokens: (pair) => keep(pair, () => client, onEnded) })
  try {
    const pair = await client.auth.refresh()
    return await withTerminals(client, pair.user.email || rememberedEmail())
  } catch {
    sessionStorage.removeItem(refreshKey)
    return null
  }
}

/**
 * Signs out: the server ends the session; this tab forgets the tokens either way, and the browser
 * the e-mail it signed in with (the next person at a shared machine does not see it prefilled).
 */
export const signOut = async (session: Session): Promise<void> => {
  if (timer !== undefined) clearTimeout(timer)
  timer = undefined
  sessionStorage.removeItem(refreshKey)
  localStorage.removeItem(emailKey)
  await session.client.auth.logout().catch(() => undefined)
}

/** Forgets a session that ended (refused refresh). */
export const forget = (): void => {
  if (timer !== undefined) clearTimeout(timer)
  timer = undefined
  sessionStorage.removeItem(refreshKey)
}

/** Whether the dashboard shows the sandbox (default) or live data. */
export const initialSandbox = (): boolean => localStorage.getItem(sandboxKey) !== "false"

/** Remembers the mode. */
export const keepSandbox = (sandbox: boolean): void => localStorage.setItem(sandboxKey, String(sandbox))
