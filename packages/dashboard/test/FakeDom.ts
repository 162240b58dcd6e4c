/**
 * Just enough of a DOM for Preact to render the dashboard's pages in Node (the tests' environment
 * has no browser): elements with attributes and listeners, text nodes, a `document`, a `window`
 * with `location` and `history` (the router's), `localStorage` and `sessionStorage`. Read back with `textContent`,
 * `findAll`, `button`, `click`, `edit` and `submit`. The real browser test is
 * `packages/server/test/Dashboard.browser.integration.test.ts`.
 */

type Listener = (event: FakeEvent) => unknown

/** An event as the dashboard's handlers read it. */
export interface FakeEvent {
  readonly type: string
  readonly target: FakeNode
  currentTarget: FakeNode
  readonly button: number
  defaultPrevented: boolean
  preventDefault: () => void
  [key: string]: unknown
}

export class FakeNode {
  parentNode: FakeElement | null = null
  readonly childNodes: Array<FakeNode> = []
  constructor(readonly nodeType: number, readonly ownerDocument: FakeDocument | null) {}
  get firstChild(): FakeNode | null {
    return this.childNodes[0] ?? null
  }
  get nextSibling(): FakeNode | null {
    const siblings = this.parentNode?.childNodes
    if (siblings === undefined) return null
    return siblings[siblings.indexOf(this) + 1] ?? null
  }
  get textContent(): string {
    return this.childNodes.map((node) => node.textContent).join("")
  }
  insertBefore(node: FakeNode, before: FakeNode | null): FakeNode {
    node.remove()
    const at = before === null ? -1 : this.childNodes.indexOf(before)
    if (at < 0) this.childNodes.push(node)
    else this.childNodes.splice(at, 0, node)
    node.parentNode = this as unknown as FakeElement
    return node
  }
  appendChild(node: FakeNode): FakeNode {
    return this.insertBefore(node, null)
  }
  removeChild(node: FakeNode): FakeNode {
    node.remove()
    return node
  }
  remove(): void {
    const parent = this.parentNode
    if (parent === null) return
    parent.childNodes.splice(parent.childNodes.indexOf(this), 1)
    this.parentNode = null
  }
}

export class FakeText extends FakeNode {
  constructor(public data: string, document: FakeDocument) {
    super(3, document)
  }
  override get textContent(): string {
    return this.data
  }
}

export class FakeElement extends FakeNode {
  readonly attributes = new Map<string, string>()
  readonly style: { cssText: string; setProperty: () => void } = { cssText: "", setProperty: () => undefined }
  readonly listeners = new Map<string, Set<Listener>>()
  readonly namespaceURI = "http://www.w3.org/1999/xhtml"
  constructor(readonly localName: string, document: FakeDocument | null) {
    super(1, document)
  }
  setAttribute(name: string, value: unknown): void {
    this.attributes.set(name, String(value))
  }
  getAttribute(name: string): string | null {
    return this.attributes.get(name) ?? null
  }
  removeAttribute(name: string): void {
    this.attributes.delete(name)
  }
  addEventListener(type: string, listener: Listener): void {
    const set = this.listeners.get(type) ?? new Set()
    set.add(listener)
    this.listeners.set(type, set)
  }
  removeEventListener(type: string, listener: Listener): void {
    this.listeners.get(type)?.delete(listener)
  }
  focus(): void {}
}

export class FakeDocument {
  readonly documentElement = new FakeElement("html", this)
  createElement(name: string): FakeElement {
    return new FakeElement(name, this)
  }
  createElementNS(_namespace: string, name: string): FakeElement {
    return new FakeElement(name, this)
  }
  createTextNode(data: string): FakeText {
    return new FakeText(String(data), this)
  }
}

/** Installs `document` and `window` (path `pathname`) on globalThis; answers the root to render into and the URLs pushed. */
export const install = (pathname = "/dashboard/"): { readonly root: FakeElement; readonly pushed: Array<string> } => {
  const document = new FakeDocument()
  const pushed: Array<string> = []
  const listeners = new Map<string, Set<() => void>>()
  const url = new URL(pathname, "http://localhost")
  const location = { pathname: url.pathname, search: url.search, origin: url.origin }
  const window = {
    location,
    history: {
      pushState: (_state: unknown, _title: string, path: string) => {
        pushed.push(path)
        const next = new URL(path, "http://localhost")
        location.pathname = next.pathname
        location.search = next.search
      },
      // In place: no entry in `pushed`.
      replaceState: (_state: unknown, _title: string, path: string) => {
        const next = new URL(path, "http://localhost")
        location.pathname = next.pathname
        location.search = next.search
      }
    },
    addEventListener: (type: string, listener: () => void) => listeners.set(type, (listeners.get(type) ?? new Set()).add(listener)),
    removeEventListener: (type: string, listener: () => void) => listeners.get(type)?.delete(listener),
    dispatchEvent: (event: { readonly type: string }) => {
      for (const listener of listeners.get(event.type) ?? []) listener()
      return true
    }
  }
  for (const name of ["localStorage", "sessionStorage"]) {
    const stored = new Map<string, string>()
    const storage = {
      getItem: (key: string) => stored.get(key) ?? null,
      setItem: (key: string, value: string) => void stored.set(key, value),
      removeItem: (key: string) => void stored.delete(key)
    }
    Object.defineProperty(globalThis, name, { value: storage, configurable: true, writable: true })
  }
  Object.assign(globalThis, { document, window })
  const root = document.createElement("div")
  document.documentElement.appendChild(root)
  return { root, pushed }
}

/** Every element under `node` (itself included) that `match` accepts, in document order. */
export const findAll = (node: FakeNode, match: (element: FakeElement) => boolean): Array<FakeElement> => {
  const out: Array<FakeElement> = []
  const walk = (at: FakeNode) => {
    if (at instanceof FakeElement && match(at)) out.push(at)
    at.childNodes.forEach(walk)
  }
  walk(node)
  return out
}

/** The button under `node` whose text is `label` (throws when there is none). */
export const button = (node: FakeNode, label: string): FakeElement => {
  const found = findAll(node, (e) => e.localName === "button" && e.textContent === label)[0]
  if (found === undefined) throw new Error(`no button "${label}" in: ${node.textContent}`)
  return found
}

/** Dispatches a `type` event to `element`'s own listeners (as Preact attaches them). */
const dispatch = (element: FakeElement, type: string): void => {
  const event: FakeEvent = {
    type,
    target: element,
    currentTarget: element,
    button: 0,
    defaultPrevented: false,
    preventDefault() {
      event.defaultPrevented = true
    }
  }
  for (const listener of [...(element.listeners.get(type) ?? [])]) listener.call(element, event)
}

/** Clicks `element` (its own click listeners, as Preact attaches them). */
export const click = (element: FakeElement): void => dispatch(element, "click")

/** Sets a field's `value` and sends the event a person's edit sends: `input` (typed) or `change` (a choice in a select). */
export const edit = (element: FakeElement, value: string, type: "input" | "change" = "input"): void => {
  (element as unknown as { value: string }).value = value
  dispatch(element, type)
}

/** Submits `form` (its own submit listeners). */
export const submit = (form: FakeElement): void => dispatch(form, "submit")
