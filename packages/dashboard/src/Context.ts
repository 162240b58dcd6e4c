/**
 * What every page reads: the session (client and terminal), the sandbox/live mode, the language
 * and its translator, and `fail`, which turns an ended session into the sign-in page.
 */
import { createContext } from "preact"
import { useContext } from "preact/hooks"
import type { Session } from "./Auth.js"
import type { Language, Translate } from "./I18n.js"

/** The dashboard's shared state. */
export interface Dashboard {
  readonly session: Session
  readonly sandbox: boolean
  readonly language: Language
  readonly t: Translate
  /** Reports an error; a refused session signs out. Answers the text to show. */
  readonly fail: (error: unknown) => string
}

export const DashboardContext = createContext<Dashboard | null>(null)

/** The dashboard's shared state (inside the signed-in layout). */
export const useDashboard = (): Dashboard => {
  const value = useContext(DashboardContext)
  if (value === null) throw new Error("useDashboard outside the signed-in layout")
  return value
}
