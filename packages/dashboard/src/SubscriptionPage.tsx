/**
 * A subscription's page: its details, the charge history (up to the 100 newest; the cycle and the
 * attempt in columns of their own, since "0.1" for cycle 0, attempt 1 reads as a number), the upcoming
 * charges (asked only of an enabled subscription: the schedule charges nothing otherwise), and
 * stop after a confirmation.
 */
import type { Charge, Subscription, UpcomingCharges } from "@paydesk/client"
import { useRef, useState } from "preact/hooks"
import { isolated, sentence } from "./Bidi.js"
import { Confirm } from "./Confirm.js"
import { useAction, useDashboard, useLoad } from "./Context.js"
import { formatRub, formatTime } from "./I18n.js"
import { follow, href } from "./Router.js"

/** Whether a stop still changes something. */
export const stoppable = (s: Subscription): boolean =>
  s.provider_state !== "stop" && s.billing_status !== "stopped" && s.billing_status !== "stop_pending"

interface Loaded {
  readonly subscription: Subscription
  readonly charges: ReadonlyArray<Charge>
  readonly upcoming: UpcomingCharges | null
}

export const SubscriptionPage = ({ id }: { id: string }) => {
  const { session, t, language } = useDashboard()
  const { busy, error, report, run } = useAction()
  const [loaded, setLoaded] = useState<Loaded | null>(null)
  const [confirming, setConfirming] = useState(false)
  const [reload, setReload] = useState(0)
  // The confirmation takes the Stop button's place: a cancel gives the focus back to it.
  const stopButton = useRef<HTMLButtonElement>(null)

  useLoad(async (): Promise<Loaded> => {
    const { client } = session
    const subscription = await client.subscriptions.get(id)
    const [charges, upcoming] = await Promise.all([
      client.subscriptions.charges(subscription.id),
      subscription.billing_status === "enabled" ? client.subscriptions.upcoming(subscription.id, 6) : Promise.resolve(null)
    ])
    return { subscription, charges, upcoming }
  }, setLoaded, report, [id, reload])

  const stop = async () => {
    await run(async () => {
      await session.client.subscriptions.stop(id)
      setReload((n) => n + 1)
    })
    setConfirming(false)
  }

  const back = <p><a href={href({ page: "subscriptions" })} onClick={follow}>← {t("sub.back")}</a></p>
  if (loaded === null) {
    return error === null ? <p role="status">{t("loading")}</p> : (
      <section>{back}<h1 tabIndex={-1}>{t("error.generic")}</h1><p class="error" role="alert">{error}</p></section>
    )
  }
  const { subscription: s, charges, upcoming } = loaded
  const ref = s.merchant_subscription_ref ?? s.id
  return (
    <section aria-labelledby="sub-title">
      {back}
      <h1 id="sub-title" tabIndex={-1}>{sentence(t, "sub.title", { ref: isolated(ref) })}</h1>
      {error === null ? null : <p class="error" role="alert">{error}</p>}
      <dl class="details">
        <dt>ID</dt><dd><code>{s.id}</code></dd>
        <dt>{t("subs.col.plan")}</dt><dd>{isolated(s.plan_code)} v{s.plan_version} ({t(`interval.${s.interval}`)})</dd>
        <dt>{t("subs.col.amount")}</dt><dd>{formatRub(language, s.merchant_amount_rub)}</dd>
        <dt>{t("subs.state")}</dt><dd><span class="badge">{t(`sub.state.${s.provider_state}`)}</span></dd>
        <dt>{t("subs.col.billing")}</dt><dd>{t(`billing.${s.billing_status}`)}</dd>
        <dt>{t("payments.col.env")}</dt><dd>{s.environment === "sandbox" ? t("env.sandbox") : t("env.live")}</dd>
        <dt>{t("sub.cycles")}</dt><dd>{s.successful_cycles}{s.max_cycles === undefined ? "" : ` / ${s.max_cycles}`}</dd>
        <dt>{t("subs.col.next")}</dt><dd>{formatTime(language, s.next_charge_at)}</dd>
        <dt>{t("payments.col.created")}</dt><dd>{formatTime(language, s.created_at)}</dd>
        <dt>{t("sub.stoppedAt")}</dt><dd>{formatTime(language, s.stopped_at)}</dd>
      </dl>
      {stoppable(s) ? (confirming ? (
        <Confirm id="stop" question={sentence(t, "subs.stopConfirm", { ref: isolated(ref) })} busy={busy} onConfirm={stop} onCancel={() => {
          setConfirming(false)
          setTimeout(() => stopButton.current?.focus())
        }} />
      ) : (
        <p><button type="button" ref={stopButton} onClick={() => setConfirming(true)}>{t("subs.stop")}</button></p>
      )) : null}
      <h2>{t("sub.charges")}</h2>
      {charges.length === 0 ? <p>{t("sub.noCharges")}</p> : (
        <div class="table-wrap">
          <table class="payments">
            <thead>
              <tr>
                <th scope="col">{t("sub.cycle")}</th>
                <th scope="col">{t("sub.attempt")}</th>
                <th scope="col">{t("sub.scheduled")}</th>
                <th scope="col">{t("subs.col.amount")}</th>
                <th scope="col">{t("payments.col.status")}</th>
                <th scope="col">{t("sub.message")}</th>
              </tr>
            </thead>
            <tbody>
              {charges.map((c) => (
                <tr key={c.id}>
                  <td data-label={t("sub.cycle")}>{c.cycle_number}</td>
                  <td data-label={t("sub.attempt")}>{c.attempt}</td>
                  <td data-label={t("sub.scheduled")}>{formatTime(language, c.scheduled_at)}</td>
                  <td data-label={t("subs.col.amount")} class="num">{formatRub(language, c.amount_rub)}</td>
                  <td data-label={t("payments.col.status")}>{t(`charge.${c.status}`)}{c.validation_status === "review" ? ` (${t("charge.review")})` : ""}</td>
                  <td data-label={t("sub.message")}>{c.message === null ? t("none") : isolated(c.message)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>{t("sub.upcoming")}</h2>
      {upcoming === null ? <p class="muted">{t("sub.noUpcoming")}</p> : (
        <ol class="upcoming">
          {upcoming.items.map((u) => (
            <li key={u.cycle_number}>{formatTime(language, u.scheduled_at)} · {formatRub(language, u.amount_rub)}</li>
          ))}
        </ol>
      )}
    </section>
  )
}
