/**
 * The dashboard session: sign-in with the owner's e-mail and password (`Paydesk.login`), the
 * token pair kept as docs/decisions.md says (access token in memory only; the refresh token in
 * this tab's sessionStorage, so a reload keeps the session and closing the tab ends it), a timer
 * that renews the access token before it expires, and sign-out (the server revokes both tokens).
 *
 * The terminal the dashboard acts on and the sandbox/live mode are no secrets: localStorage.
 */
import { Paydesk, PaydeskApiError, type TokenPair } from "@paydesk/client"

const refreshKey = "paydesk.refresh"
const terminalKey = "paydesk.terminal"
const emailKey = "paydesk.email"
const sandboxKey = "paydesk.sandbox"

/** Seconds before expiry when the timer renews the access token (the SDK also renews on use). */
const renewAhead = 60

/** The API's origin: the page's own (the server that serves the dashboard serves the API). */
const baseUrl = (): string => window.location.origin

/** A signed-in session. */
export interface Session {
  readonly client: Paydesk
  readonly terminalId: string
  readonly email: string
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

/** The remembered terminal and e-mail (to prefill the sign-in form). */
export const remembered = () => ({
  terminalId: localStorage.getItem(terminalKey) ?? "",
  email: localStorage.getItem(emailKey) ?? ""
})

/** Signs in; `onEnded` runs when the session can no longer be renewed. */
export const signIn = async (input: { readonly email: string; readonly password: string; readonly terminalId: string }, onEnded: () => void): Promise<Session> => {
  let client: Paydesk | undefined
  client = await Paydesk.login({
    baseUrl: baseUrl(),
    email: input.email,
    password: input.password,
    terminalId: input.terminalId,
    maxRetries: 1,
    onTokens: (pair) => keep(pair, () => client, onEnded)
  })
  const tokens = client.auth.tokens()
  schedule(client, tokens?.expiresAt, onEnded)
  // Checks the terminal now: a wrong ID is told at sign-in, not on the first page.
  try {
    await client.terminals.get(input.terminalId)
  } catch (error) {
    await client.auth.logout().catch(() => undefined)
    sessionStorage.removeItem(refreshKey)
    throw error
  }
  localStorage.setItem(terminalKey, input.terminalId)
  localStorage.setItem(emailKey, input.email)
  return { client, terminalId: input.terminalId, email: input.email }
}

/** The session kept by this tab (after a reload), renewed once to check it; null when there is none or it ended. */
export const resume = async (onEnded: () => void): Promise<Session | null> => {
  const refreshToken = sessionStorage.getItem(refreshKey)
  const { terminalId, email } = remembered()
  if (refreshToken === null || terminalId === "") return null
  let client: Paydesk | undefined
  client = new Paydesk({ baseUrl: baseUrl(), refreshToken, terminalId, maxRetries: 1, onTokens: (pair) => keep(pair, () => client, onEnded) })
  try {
    const pair = await client.auth.refresh()
    return { client, terminalId, email: pair.user.email || email }
  } catch {
    sessionStorage.removeItem(refreshKey)
    return null
  }
}

/** Signs out: the server ends the session; this tab forgets the tokens either way. */
export const signOut = async (session: Session): Promise<void> => {
  if (timer !== undefined) clearTimeout(timer)
  timer = undefined
  sessionStorage.removeItem(refreshKey)
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
