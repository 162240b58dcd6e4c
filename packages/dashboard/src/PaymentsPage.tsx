/**
 * The payments list: newest first, 20 a page, in the mode's environment (or both), with status,
 * date range (the browser's local days) and `order_id` filters, all applied by the API, as is the
 * CSV export of what the filters select. The filters live in the URL, so a filtered page can be
 * reloaded, bookmarked and shared; a value in the URL that is not valid (a date that does not
 * exist, a range that ends before it starts, a page that is no positive number) is ignored and named
 * above the list, never sent or left to break the page.
 */
import type { Payment, PaymentFilter, PaymentStatus } from "@paydesk/client"
import { useEffect, useState } from "preact/hooks"
import { isolated } from "./Bidi.js"
import { useDashboard, useDraft } from "./Context.js"
import { formatRub, formatTime } from "./I18n.js"
import { EmptyPage, Ignored, pageOf, Paging, perPage, writePage } from "./Paging.js"
import { base, follow, href, navigate, withQuery } from "./Router.js"

const statuses: ReadonlyArray<PaymentStatus> = ["created", "processing", "paid", "canceled", "expired", "chargeback", "refunded"]

export interface Filters {
  readonly status: PaymentStatus | ""
  /** Local calendar days, YYYY-MM-DD (inclusive), or "". */
  readonly from: string
  readonly to: string
  readonly all: boolean
  readonly order: string
  readonly page: number
}

/** Whether `text` is a calendar day that exists, `YYYY-MM-DD` (not 2026-13-45, not 2026-02-30). */
export const isDay = (text: string): boolean => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text)
  if (match === null) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const date = new Date(Date.UTC(2000, month - 1, day))
  date.setUTCFullYear(year)
  return year >= 1 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

/**
 * The filters of the URL's query, and the `name=value` pairs of it that are not valid and were
 * ignored (an unknown status is ignored silently, as before: it is no filter the page offers).
 */
export const parseFilters = (search: string): { readonly filters: Filters; readonly ignored: ReadonlyArray<string> } => {
  const query = new URLSearchParams(search)
  const ignored: Array<string> = []
  const day = (name: "from" | "to"): string => {
    const text = query.get(name) ?? ""
    if (text === "" || isDay(text)) return text
    ignored.push(`${name}=${text}`)
    return ""
  }
  const status = query.get("status") ?? ""
  const from = day("from")
  let to = day("to")
  // A range that ends before it starts selects nothing and the API refuses it: the end is dropped.
  if (from !== "" && to !== "" && to < from) {
    ignored.push(`to=${to}`)
    to = ""
  }
  const page = pageOf(query, ignored)
  return {
    filters: {
      status: (statuses as ReadonlyArray<string>).includes(status) ? status as PaymentStatus : "",
      from,
      to,
      all: query.get("env") === "all",
      order: query.get("order") ?? "",
      page
    },
    ignored
  }
}

/** The filters of the URL's query (what is not valid left out). */
export const filtersOf = (search: string): Filters => parseFilters(search).filters

const searchOf = (filters: Filters): string => {
  const query = new URLSearchParams()
  if (filters.status !== "") query.set("status", filters.status)
  if (filters.from !== "") query.set("from", filters.from)
  if (filters.to !== "") query.set("to", filters.to)
  if (filters.all) query.set("env", "all")
  if (filters.order !== "") query.set("order", filters.order)
  writePage(query, filters.page)
  return withQuery(href({ page: "payments" }), query)
}

interface Loaded {
  readonly items: ReadonlyArray<Payment>
  readonly total: number
  /** The page these items are of (the bar names it, not the one asked for while it loads). */
  readonly shown: number
}

/**
 * Local midnight at the start of a `YYYY-MM-DD` day, `days` later, as ISO 8601; undefined past the
 * year 9999, which the API's four-digit years cannot say (`toISOString` writes `+010000-…`).
 */
const localDay = (day: string, days = 0): string | undefined => {
  const start = new Date(`${day}T00:00:00`)
  start.setDate(start.getDate() + days)
  return start.getUTCFullYear() > 9999 ? undefined : start.toISOString()
}

/**
 * The API's filter of the page's filters (the `to` day is included: the range ends at the next local
 * midnight; a `to` of the year 9999's last day sets no end, which is what it means).
 */
const apiFilter = (filters: Filters, terminalId: string, environment: "all" | "sandbox" | "prod"): PaymentFilter => {
  const from = filters.from === "" ? undefined : localDay(filters.from)
  const to = filters.to === "" ? undefined : localDay(filters.to, 1)
  return {
    terminal_id: terminalId,
    environment,
    ...(filters.status === "" ? {} : { status: filters.status }),
    ...(filters.order === "" ? {} : { order_id: filters.order }),
    ...(from === undefined ? {} : { created_from: from }),
    ...(to === undefined ? {} : { created_to: to })
  }
}

/** The status's badge. */
export const StatusBadge = ({ status }: { status: PaymentStatus }) => {
  const { t } = useDashboard()
  return <span class={`badge status-${status}`}>{t(`status.${status}`)}</span>
}

export const PaymentsPage = ({ search }: { search: string }) => {
  const { session, sandbox, t, language, fail } = useDashboard()
  const { filters, ignored } = parseFilters(search)
  const [loaded, setLoaded] = useState<Loaded | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [attempt, setAttempt] = useState(0)
  const environment = filters.all ? "all" : sandbox ? "sandbox" : "prod"
  const [draft, setDraft] = useDraft(() => filters, search)

  useEffect(() => {
    let live = true
    setError(null)
    setLoaded(null)
    const load = async (): Promise<Loaded> => {
      const page = await session.client.payments.list({ ...apiFilter(filters, session.terminalId, environment), page: filters.page, limit: perPage })
      return { items: page.items, total: page.total, shown: filters.page }
    }
    load().then((result) => live && setLoaded(result), (e: unknown) => live && setError(fail(e)))
    return () => {
      live = false
    }
  }, [search, sandbox, attempt])

  const [exporting, setExporting] = useState(false)
  /** Downloads the payments the filters select as CSV (the API's export, at most 10 000 rows). */
  const exportCsv = async () => {
    setExporting(true)
    try {
      const csv = await session.client.payments.exportCsv(apiFilter(filters, session.terminalId, environment))
      const url = URL.createObjectURL(new Blob([csv], { type: "text/csv;charset=utf-8" }))
      const link = document.createElement("a")
      link.href = url
      link.download = `payments-${environment}-${new Date().toISOString().slice(0, 10)}.csv`
      document.body.append(link)
      link.click()
      link.remove()
      setTimeout(() => URL.revokeObjectURL(url), 10_000)
    } catch (e) {
      setError(fail(e))
    } finally {
      setExporting(false)
    }
  }
  const go = (next: Partial<Filters>) => navigate(searchOf({ ...filters, ...next }))

  return (
    <section aria-labelledby="payments-title">
      <h1 id="payments-title" tabIndex={-1}>{t("payments.title")}</h1>
      <form class="filters" role="search" aria-label={t("payments.filters")} onSubmit={(event) => {
        event.preventDefault()
        go({ ...draft, order: draft.order.trim(), page: 1 })
      }}>
        <label>
          <span>{t("payments.status")}</span>
          <select name="status" value={draft.status} onChange={(e) => setDraft({ ...draft, status: (e.currentTarget as HTMLSelectElement).value as Filters["status"] })}>
            <option value="">{t("payments.status.any")}</option>
            {statuses.map((s) => <option value={s} key={s}>{t(`status.${s}`)}</option>)}
          </select>
        </label>
        <label>
          <span>{t("payments.from")}</span>
          <input name="from" type="date" value={draft.from} max={draft.to === "" ? undefined : draft.to}
            onInput={(e) => setDraft({ ...draft, from: (e.currentTarget as HTMLInputElement).value })} />
        </label>
        <label>
          <span>{t("payments.to")}</span>
          <input name="to" type="date" value={draft.to} min={draft.from === "" ? undefined : draft.from}
            onInput={(e) => setDraft({ ...draft, to: (e.currentTarget as HTMLInputElement).value })} />
        </label>
        <label>
          <span>{t("payments.orderId")}</span>
          <input name="order" type="search" value={draft.order} autocomplete="off" onInput={(e) => setDraft({ ...draft, order: (e.currentTarget as HTMLInputElement).value })} />
        </label>
        <label class="check">
          <input name="all" type="checkbox" checked={draft.all} onChange={(e) => setDraft({ ...draft, all: (e.currentTarget as HTMLInputElement).checked })} />
          <span>{t("payments.allEnvironments")}</span>
        </label>
        <div class="actions">
          <button type="submit">{t("payments.search")}</button>
          <a class="button secondary" href={`${base}/payments`} onClick={(event) => {
            follow(event)
            // Followed here (not a new tab): the draft empties at once, also when the address had
            // no filters yet (edits not searched), which leaves the address as it was.
            if (event.defaultPrevented) setDraft(filtersOf(""))
          }}>{t("payments.clear")}</a>
          <button type="button" class="secondary" disabled={exporting} onClick={exportCsv}>{t("payments.export")}</button>
        </div>
      </form>

      <Ignored values={ignored} />
      {error !== null ? (
        <div class="error" role="alert">
          <p>{error}</p>
          <button type="button" onClick={() => setAttempt((n) => n + 1)}>{t("retry")}</button>
        </div>
      ) : loaded === null ? (
        <p role="status">{t("loading")}</p>
      ) : loaded.items.length === 0 ? (
        <EmptyPage page={loaded.shown} total={loaded.total} go={(page) => go({ page })} empty={t("payments.empty")} />
      ) : (
        <>
          <div class="table-wrap">
            <table class="payments">
              <thead>
                <tr>
                  <th scope="col">{t("payments.col.order")}</th>
                  <th scope="col">{t("payments.col.amount")}</th>
                  <th scope="col">{t("payments.col.status")}</th>
                  <th scope="col">{t("payments.col.created")}</th>
                  <th scope="col">{t("payments.col.env")}</th>
                </tr>
              </thead>
              <tbody>
                {loaded.items.map((p) => (
                  <tr key={p.id}>
                    <td data-label={t("payments.col.order")}><a href={href({ page: "payment", id: p.id })} onClick={follow}>{isolated(p.order_id)}</a></td>
                    <td data-label={t("payments.col.amount")} class="num">{formatRub(language, p.amount)}</td>
                    <td data-label={t("payments.col.status")}><StatusBadge status={p.status} /></td>
                    <td data-label={t("payments.col.created")}>{formatTime(language, p.created_at)}</td>
                    <td data-label={t("payments.col.env")}>{p.environment === "sandbox" ? t("env.sandbox") : t("env.live")}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Paging page={loaded.shown} total={loaded.total} go={(page) => go({ page })} />
        </>
      )}
    </section>
  )
}
