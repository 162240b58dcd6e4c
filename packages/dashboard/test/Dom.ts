/**
 * A DOM for Preact to render the dashboard's pages in Node: happy-dom's `Window` at a path, its
 * `document`, `window` (the router's `location` and `history`) and `localStorage` put on globalThis,
 * with the URLs the router pushes noted. Read back with `textContent`, `findAll`, `button` and
 * `click`. The real browser test is `packages/server/test/Dashboard.browser.integration.test.ts`.
 */
import { Window } from "happy-dom"

/** Installs `document` and `window` (path `pathname`) on globalThis; answers the root to render into and the URLs pushed. */
export const install = (pathname = "/dashboard/"): { readonly root: Element; readonly pushed: Array<string> } => {
  const window = new Window({ url: new URL(pathname, "http://localhost").toString() })
  const pushed: Array<string> = []
  const pushState = window.history.pushState.bind(window.history)
  window.history.pushState = (state: unknown, title: string, path?: string | URL) => {
    if (path !== undefined) pushed.push(String(path))
    pushState(state, title, path)
  }
  Object.defineProperty(globalThis, "localStorage", { value: window.localStorage, configurable: true, writable: true })
  Object.assign(globalThis, { document: window.document, window })
  const root = window.document.createElement("div")
  window.document.body.appendChild(root)
  return { root: root as unknown as Element, pushed }
}

/** Every element under `node` (itself included) that `match` accepts, in document order. */
export const findAll = (node: Element, match: (element: Element) => boolean): Array<Element> =>
  [node, ...node.querySelectorAll("*")].filter(match)

/** The button under `node` whose text is `label` (throws when there is none). */
export const button = (node: Element, label: string): HTMLButtonElement => {
  const found = findAll(node, (e) => e.localName === "button" && e.textContent === label)[0]
  if (found === undefined) throw new Error(`no button "${label}" in: ${node.textContent}`)
  return found as HTMLButtonElement
}

/** Clicks `element`, as a pointer would (button 0). */
export const click = (element: Element): void => void (element as HTMLElement).click()
