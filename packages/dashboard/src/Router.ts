/**
 * A small router over the History API: every page has a real URL under `/dashboard/` (the
 * server answers index.html for any of them, so deep links and reloads work), links navigate
 * without a reload, and focus moves to the new page's heading for keyboard and screen-reader users.
 */
import { useEffect, useState } from "preact/hooks"

/** Where the dashboard lives. */
export const base = "/dashboard"

/** A route the dashboard knows. */
export type Route =
  | { readonly page: "home" }
  | { readonly page: "payments" }
  | { readonly page: "payment"; readonly id: string }
  | { readonly page: "subscriptions" }
  | { readonly page: "subscription"; readonly id: string }
  | { readonly page: "payouts" }
  | { readonly page: "settings" }
  | { readonly page: "notFound" }

/** The route of a path. */
export const parse = (pathname: string): Route => {
  const path = pathname.startsWith(base) ? pathname.slice(base.length) : pathname
  const parts = path.split("/").filter((part) => part !== "")
  if (parts.length === 0) return { page: "home" }
  if (parts.length === 1 && parts[0] === "payments") return { page: "payments" }
  if (parts.length === 2 && parts[0] === "payments") return { page: "payment", id: decodeURIComponent(parts[1]!) }
  if (parts.length === 1 && parts[0] === "subscriptions") return { page: "subscriptions" }
  if (parts.length === 2 && parts[0] === "subscriptions") return { page: "subscription", id: decodeURIComponent(parts[1]!) }
  if (parts.length === 1 && parts[0] === "payouts") return { page: "payouts" }
  if (parts.length === 1 && parts[0] === "settings") return { page: "settings" }
  return { page: "notFound" }
}

/** The path of a route. */
export const href = (route: Exclude<Route, { page: "notFound" }>): string => {
  switch (route.page) {
    case "home":
      return `${base}/`
    case "payments":
      return `${base}/payments`
    case "payment":
      return `${base}/payments/${encodeURIComponent(route.id)}`
    case "subscriptions":
      return `${base}/subscriptions`
    case "subscription":
      return `${base}/subscriptions/${encodeURIComponent(route.id)}`
    case "payouts":
      return `${base}/payouts`
    case "settings":
      return `${base}/settings`
  }
}

/** `path` with `query` (no `?` when the query is empty): a list page's URL from its filters. */
export const withQuery = (path: string, query: URLSearchParams): string => {
  const text = query.toString()
  return text === "" ? path : `${path}?${text}`
}

const changed = "paydesk:navigate"

/** Goes to `path` (query included) without a reload. */
export const navigate = (path: string): void => {
  window.history.pushState(null, "", path)
  window.dispatchEvent(new Event(changed))
}

/**
 * Leaves `name` out of the current URL's query in place (no new history entry): a list's `page` is a
 * page of the mode and terminal it was read in, so a switch of either starts at the first page (a
 * probe switched from sandbox to live on page 2 and was told page 2 was past the end).
 */
export const forgetQuery = (name: string): void => {
  const query = new URLSearchParams(window.location.search)
  if (!query.has(name)) return
  query.delete(name)
  window.history.replaceState(null, "", withQuery(window.location.pathname, query))
  window.dispatchEvent(new Event(changed))
}

/** The current location (path and query), updated on navigation and on back/forward. */
export const useLocation = (): { readonly pathname: string; readonly search: string } => {
  const read = () => ({ pathname: window.location.pathname, search: window.location.search })
  const [location, setLocation] = useState(read)
  useEffect(() => {
    const update = () => setLocation(read())
    window.addEventListener(changed, update)
    window.addEventListener("popstate", update)
    return () => {
      window.removeEventListener(changed, update)
      window.removeEventListener("popstate", update)
    }
  }, [])
  return location
}

/** A click handler for an `<a href>` that navigates in place (modified clicks open a new tab as usual). */
export const follow = (event: MouseEvent): void => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  const anchor = (event.currentTarget as HTMLAnchorElement | null)
  if (anchor === null) return
  event.preventDefault()
  navigate(anchor.getAttribute("href") ?? base)
}
