/**
 * Subscriptions of the mode's environment, newest first, 20 a page, filtered by state; each one
 * not yet stopped can be stopped after a confirmation (the list then shows its new state). The
 * state filter and the page live in the URL, as the payments filters do, so a reload, Back or a
 * shared link keeps them; a page number there that is not valid is ignored and named above the
 * list, a state the page does not offer is ignored.
 */
import type { Page, Subscription } from "@paydesk/client"
import type { ComponentChildren } from "preact"
import { useEffect, useState } from "preact/hooks"
import { isolated, sentence, withoutBidiControls } from "./Bidi.js"
import { Confirm } from "./Confirm.js"
import { useAction, useDashboard } from "./Context.js"
import { formatRub, formatTime } from "./I18n.js"
import { EmptyPage, Ignored, pageOf, Paging, perPage, writePage } from "./Paging.js"
import { follow, href, navigate, withQuery } from "./Router.js"
import { stoppable } from "./SubscriptionPage.js"

/** The states the filter offers. */
const states = ["new", "active", "stop"] as const

type State = "" | (typeof states)[number]

export interface SubscriptionFilters {
  readonly state: State
  readonly page: number
}

/**
 * The filters of the URL's query, and the `name=value` pairs of it that are not valid and were
 * ignored (a state the page does not offer is ignored silently, as the payments' status is).
 */
export const parseSubscriptionFilters = (search: string): { readonly filters: SubscriptionFilters; readonly ignored: ReadonlyArray<string> } => {
  const query = new URLSearchParams(search)
  const ignored: Array<string> = []
  const state = query.get("state") ?? ""
  const page = pageOf(query, ignored)
  return { filters: { state: (states as ReadonlyArray<string>).includes(state) ? state as State : "", page }, ignored }
}

const searchOf = (filters: SubscriptionFilters): string => {
  const query = new URLSearchParams()
  if (filters.state !== "") query.set("state", filters.state)
  writePage(query, filters.page)
  return withQuery(href({ page: "subscriptions" }), query)
}

export const SubscriptionsPage = ({ search }: { search: string }) => {
  const { session, sandbox, t, language, fail } = useDashboard()
  const action = useAction()
  const { filters, ignored } = parseSubscriptionFilters(search)
  const { state, page } = filters
  // With the page it is of: the bar names the page shown, not the one asked for while it loads.
  const [loaded, setLoaded] = useState<(Page<Subscription> & { readonly shown: number }) | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [confirming, setConfirming] = useState<Subscription | null>(null)
  const [message, setMessage] = useState<ComponentChildren | null>(null)
  const [reload, setReload] = useState(0)

  useEffect(() => {
    let live = true
    setError(null)
    action.clear()
    session.client.subscriptions.list({
      terminal_id: session.terminalId,
      environment: sandbox ? "sandbox" : "prod",
      ...(state === "" ? {} : { state }),
      page,
      limit: perPage
    }).then((p) => live && setLoaded({ ...p, shown: page }), (e: unknown) => live && setError(fail(e)))
    return () => {
      live = false
    }
  }, [state, page, reload])

  const go = (next: Partial<SubscriptionFilters>) => navigate(searchOf({ ...filters, ...next }))
  const goPage = (page: number) => go({ page })
  const refOf = (s: Subscription) => s.merchant_subscription_ref ?? s.id
  const stop = async (subscription: Subscription) => {
    await action.run(async () => {
      await session.client.subscriptions.stop(subscription.id)
      setMessage(sentence(t, "subs.stopped", { ref: isolated(refOf(subscription)) }))
      setReload((n) => n + 1)
    })
    setConfirming(null)
  }

  return (
    <section aria-labelledby="subs-title">
      <h1 id="subs-title" tabIndex={-1}>{t("subs.title")}</h1>
      <div class="filters">
        <label>
          <span>{t("subs.state")}</span>
          <select name="state" value={state} onChange={(e) => go({ state: (e.currentTarget as HTMLSelectElement).value as State, page: 1 })}>
            <option value="">{t("subs.state.any")}</option>
            {states.map((s) => <option value={s} key={s}>{t(`subs.state.${s}`)}</option>)}
          </select>
        </label>
      </div>
      <Ignored values={ignored} />
      {message === null ? null : <p class="ok" role="status">{message}</p>}
      {[error, action.error].map((text) => text === null ? null : <p class="error" role="alert">{text}</p>)}
      {confirming === null ? null : (
        <Confirm id="stop" question={sentence(t, "subs.stopConfirm", { ref: isolated(refOf(confirming)) })} busy={action.busy}
          onConfirm={() => stop(confirming)} onCancel={() => setConfirming(null)} />
      )}
      {loaded === null ? (error === null ? <p role="status">{t("loading")}</p> : null) : loaded.items.length === 0 ? <EmptyPage page={loaded.shown} total={loaded.total} go={goPage} empty={t("subs.empty")} /> : (
        <>
          <div class="table-wrap">
            <table class="payments">
              <thead>
                <tr>
                  <th scope="col">{t("subs.col.ref")}</th>
                  <th scope="col">{t("subs.col.plan")}</th>
                  <th scope="col">{t("subs.col.amount")}</th>
                  <th scope="col">{t("subs.state")}</th>
                  <th scope="col">{t("subs.col.billing")}</th>
                  <th scope="col">{t("subs.col.next")}</th>
                  <th scope="col"><span class="visually-hidden">{t("subs.stop")}</span></th>
                </tr>
              </thead>
              <tbody>
                {loaded.items.map((s) => (
                  <tr key={s.id}>
                    <td data-label={t("subs.col.ref")}><a href={href({ page: "subscription", id: s.id })} onClick={follow}>{isolated(refOf(s))}</a></td>
                    <td data-label={t("subs.col.plan")}>{isolated(s.plan_code)} v{s.plan_version}</td>
                    <td data-label={t("subs.col.amount")} class="num">{formatRub(language, s.merchant_amount_rub)}</td>
                    <td data-label={t("subs.state")}><span class="badge">{t(`sub.state.${s.provider_state}`)}</span></td>
                    <td data-label={t("subs.col.billing")}>{t(`billing.${s.billing_status}`)}</td>
                    <td data-label={t("subs.col.next")}>{formatTime(language, s.next_charge_at)}</td>
                    <td>
                      {stoppable(s) ? (
                        <button type="button" class="secondary" aria-label={`${t("subs.stop")} ${withoutBidiControls(refOf(s))}`} onClick={() => {
                          setMessage(null)
                          setConfirming(s)
                        }}>{t("subs.stop")}</button>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Paging page={loaded.shown} total={loaded.total} go={goPage} />
        </>
      )}
    </section>
  )
}
