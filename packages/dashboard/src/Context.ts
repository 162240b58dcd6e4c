/**
 * What every page reads: the session (client and terminal), the sandbox/live mode, the language
 * and its translator, and `fail`, which turns an ended session into the sign-in page; and the two
 * hooks every page loads and acts with.
 */
import { createContext } from "preact"
import { useContext, useEffect, useRef, useState } from "preact/hooks"
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

/** An action of a page (a button's request): busy while it runs, its failure shown. */
export interface Action {
  readonly busy: boolean
  /** The last failure, described for the reader; null when there is none. */
  readonly error: string | null
  /** Shows a failure (a page's load reports its own through this too). */
  readonly report: (error: unknown) => void
  /** Takes the shown failure away (the page moved on: another filter, another answer). */
  readonly clear: () => void
  /** Runs `work` with `busy` set, after clearing the last failure; a failure is shown, never thrown. */
  readonly run: (work: () => Promise<void>) => Promise<void>
}

export const useAction = (): Action => {
  const { fail } = useDashboard()
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const report = (cause: unknown) => setError(fail(cause))
  const run = async (work: () => Promise<void>) => {
    setBusy(true)
    setError(null)
    try {
      await work()
    } catch (cause) {
      report(cause)
    } finally {
      setBusy(false)
    }
  }
  return { busy, error, report, clear: () => setError(null), run }
}

/**
 * A form's draft: it starts from `initial()` and starts again from it whenever `key` changes (the
 * address's query, a saved record's `updated_at`). Decided in the render itself, not in an effect
 * run after the paint, so what is typed right after the change is never overwritten.
 */
export const useDraft = <A>(initial: () => A, key: unknown): readonly [A, (next: A) => void] => {
  // Each change of the key starts a new generation (a key that comes back, A → B → A, is a change
  // too); a draft written in an earlier generation is set aside.
  const seen = useRef({ key, generation: 0 })
  if (!Object.is(seen.current.key, key)) seen.current = { key, generation: seen.current.generation + 1 }
  const { generation } = seen.current
  const [state, setState] = useState(() => ({ generation, value: initial() }))
  const draft = state.generation === generation ? state.value : initial()
  return [draft, (value: A) => setState({ generation, value })]
}

/**
 * Loads whenever one of `deps` changes: `load`'s answer goes to `loaded`, its failure to `report`;
 * the answer of a load the page has moved on from (other deps, or unmounted) is dropped.
 */
export const useLoad = <A>(load: () => Promise<A>, loaded: (value: A) => void, report: (error: unknown) => void, deps: ReadonlyArray<unknown>): void =>
  useEffect(() => {
    let live = true
    load().then((value) => live && loaded(value), (cause: unknown) => live && report(cause))
    return () => {
      live = false
    }
  }, deps)
