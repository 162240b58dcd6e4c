/**
 * Paging of the lists (payments, subscriptions, payouts): 20 records a page by page number, the
 * "Page N of M (T in all)" bar with Previous and Next, and, for a page number past the last page
 * (an old link, a `?page=` typed by hand, a list that shrank), a notice with a way back to the
 * first page instead of an empty list that looks like "nothing matches". The page number lives in
 * the URL's query (`page`, left out for the first page), read by `pageOf`; a value there that is
 * not valid is ignored and named above the list by `Ignored`.
 */
import { isolated, sentence } from "./Bidi.js"
import { useDashboard } from "./Context.js"

/** Records a page on every list. */
export const perPage = 20

/** The highest page number read from the URL (far past any real list; keeps the API's offset sane). */
export const maxPage = 1_000_000

/**
 * The page number of a URL's query: `page`, a positive decimal number (capped at `maxPage`), or 1
 * when there is none or it is not valid; a value that is not valid is added to `ignored` as
 * `page=value` (and never sent to the API).
 */
export const pageOf = (query: URLSearchParams, ignored: Array<string>): number => {
  const text = query.get("page") ?? ""
  const page = /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN
  if (text !== "" && !(page >= 1)) ignored.push(`page=${text}`)
  return page >= 1 ? Math.min(page, maxPage) : 1
}

/** Writes `page` into a URL's query (the first page is left out). */
export const writePage = (query: URLSearchParams, page: number): void => {
  if (page > 1) query.set("page", String(page))
}

/**
 * The note above a list that names the URL's values it ignored (nothing when there are none), each
 * isolated: a link's query is anyone's text.
 */
export const Ignored = ({ values }: { values: ReadonlyArray<string> }) => {
  const { t } = useDashboard()
  return values.length === 0 ? null : <p class="note" role="status">{sentence(t, "list.ignored", { values: values.flatMap((value, i) => i === 0 ? [isolated(value)] : [", ", isolated(value)]) })}</p>
}

/** The number of pages of `total` records (at least one). */
export const pageCount = (total: number, size: number = perPage): number => Math.max(1, Math.ceil(total / size))

/** Whether `page` lies past the last page while records exist (an empty page that is not "none match"). */
export const pastEnd = (page: number, total: number, size: number = perPage): boolean => total > 0 && page > pageCount(total, size)

/** The bar under a list: Previous, "Page N of M (T in all)", Next. */
export const Paging = ({ page, total, go }: { page: number; total: number; go: (page: number) => void }) => {
  const { t } = useDashboard()
  const pages = pageCount(total)
  return (
    <nav class="paging" aria-label={t("paging.label")}>
      <button type="button" disabled={page <= 1} onClick={() => go(page - 1)}>{t("paging.prev")}</button>
      <span aria-live="polite">{t("paging.of", { page, pages, total })}</span>
      <button type="button" disabled={page >= pages} onClick={() => go(page + 1)}>{t("paging.next")}</button>
    </nav>
  )
}

/** What an empty page shows: the list's "none" text, or, past the last page, the notice and a way back. */
export const EmptyPage = ({ page, total, go, empty }: { page: number; total: number; go: (page: number) => void; empty: string }) => {
  const { t } = useDashboard()
  if (!pastEnd(page, total)) return <p role="status">{empty}</p>
  return (
    <div class="paging past-end">
      <p role="status">{t("paging.pastEnd", { page, pages: pageCount(total), total })}</p>
      <button type="button" onClick={() => go(1)}>{t("paging.first")}</button>
    </div>
  )
}
