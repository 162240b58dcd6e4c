/**
 * A payment's page: its details, then each of its callback events with every delivery and the
 * delivery's attempts (time, HTTP status, latency, error), and a button that sends an event again
 * (one attempt outside the scheduled eight; the page reloads the event to show it).
 */
import type { EventDetail, Payment } from "@paydesk/client"
import { useState } from "preact/hooks"
import { isolated, sentence } from "./Bidi.js"
import { useAction, useDashboard, useLoad } from "./Context.js"
import { attemptResult, formatRate, formatRub, formatTime, formatUsdt, type Language, sentAccepted, type Translate } from "./I18n.js"
import { StatusBadge } from "./PaymentsPage.js"
import { follow, href } from "./Router.js"

const steps = ["created", "paid", "canceled", "expired", "chargeback", "refunded"] as const
type Step = typeof steps[number]

/** The payment's story: one line per payment event (oldest first), else its own timestamps. */
const timeline = (payment: Payment, events: ReadonlyArray<EventDetail>): ReadonlyArray<{ readonly step: Step; readonly at: string }> => {
  const fromEvents = events.flatMap((e) => {
    const step = e.type.startsWith("payment.") ? e.type.slice("payment.".length) : ""
    return (steps as ReadonlyArray<string>).includes(step) ? [{ step: step as Step, at: e.created_at }] : []
  })
  if (fromEvents.length > 0) return fromEvents
  return [{ step: "created" as const, at: payment.created_at }, ...(payment.paid_at === null ? [] : [{ step: "paid" as const, at: payment.paid_at }])]
}

interface Loaded {
  readonly payment: Payment
  readonly events: ReadonlyArray<EventDetail>
}

const EventCard = ({ initial }: { initial: EventDetail }) => {
  const { session, t, language } = useDashboard()
  const { busy, error, run } = useAction()
  const [event, setEvent] = useState(initial)
  const [resent, setResent] = useState<{ readonly text: string; readonly accepted: boolean } | null>(null)
  const message = error === null ? (resent === null ? null : { text: resent.text, error: !resent.accepted }) : { text: error, error: true }

  const resend = () => {
    setResent(null)
    return run(async () => {
      const sent = await session.client.events.resend(event.id)
      // An endpoint that refused it (or could not be reached) is said so, as a settings page's test event.
      const accepted = sentAccepted(sent)
      setResent({ text: t(accepted ? "event.resent" : "event.resentFailed", { result: attemptResult(t, sent) }), accepted })
      setEvent(await session.client.events.get(event.id))
    })
  }

  const headingId = `event-${event.id}`
  return (
    <article class="event" aria-labelledby={headingId}>
      <header>
        <h3 id={headingId}><code>{event.type}</code> <span class="muted">#{event.sequence}</span></h3>
        <span class="muted">{formatTime(language, event.created_at)}</span>
        <button type="button" onClick={resend} disabled={busy} aria-describedby={message === null ? undefined : `${headingId}-message`}>
          {busy ? t("event.resending") : t("event.resend")}
        </button>
      </header>
      {message === null ? null : <p id={`${headingId}-message`} class={message.error ? "error" : "ok"} role={message.error ? "alert" : "status"}>{message.text}</p>}
      {event.deliveries.length === 0 ? <p class="muted">{t("event.noDelivery")}</p> : event.deliveries.map((delivery) => (
        <section class="delivery" key={delivery.id} aria-label={`${t("event.delivery")} ${t(`delivery.kind.${delivery.kind}`)}`}>
          <p>
            <strong>{t("event.delivery")}</strong> <span class="muted">({t(`delivery.kind.${delivery.kind}`)})</span>{" "}
            <span class={`badge delivery-${delivery.status}`}>{t(`delivery.${delivery.status}`)}</span>
          </p>
          {delivery.attempt_log.length === 0 ? <p class="muted">{t("attempt.none")}</p> : (
            <div class="table-wrap">
              <table class="attempts">
                <thead>
                  <tr>
                    <th scope="col">{t("attempt.col.n")}</th>
                    <th scope="col">{t("attempt.col.at")}</th>
                    <th scope="col">{t("attempt.col.status")}</th>
                    <th scope="col">{t("attempt.col.latency")}</th>
                    <th scope="col">{t("attempt.col.error")}</th>
                  </tr>
                </thead>
                <tbody>
                  {delivery.attempt_log.map((a) => (
                    <tr key={a.attempt}>
                      <td data-label={t("attempt.col.n")}>{a.attempt}</td>
                      <td data-label={t("attempt.col.at")}>{formatTime(language, a.at)}</td>
                      <td data-label={t("attempt.col.status")}>{a.status_code ?? t("none")}</td>
                      <td data-label={t("attempt.col.latency")} class="num">{t("attempt.ms", { ms: a.latency_ms })}</td>
                      <td data-label={t("attempt.col.error")}>{a.error ?? t("none")}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </section>
      ))}
    </article>
  )
}

/**
 * What a live paid payment credited (its `settlement`): USDT at the rate, or roubles awaiting the
 * scheduled conversion; a refund or chargeback took it back (roubles refunded before conversion
 * are never converted).
 */
const creditText = (t: Translate, language: Language, payment: Payment): string => {
  const s = payment.settlement
  if (s == null) return ""
  const rub = formatRub(language, s.merchant_amount_rub)
  const reversed = payment.status === "refunded" || payment.status === "chargeback"
  const credit = s.amount_usdt === null || s.rate === null
    ? t(reversed ? "payment.creditedRub" : "payment.creditedPending", { rub })
    : t("payment.creditedUsdt", { usdt: formatUsdt(language, s.amount_usdt), rate: formatRate(language, s.rate), rub, at: formatTime(language, s.converted_at) })
  return reversed ? t("payment.creditedReversed", { credit, status: t(`status.${payment.status}`) }) : credit
}

export const PaymentPage = ({ id }: { id: string }) => {
  const { session, sandbox, t, language } = useDashboard()
  const { error, report } = useAction()
  const [loaded, setLoaded] = useState<Loaded | null>(null)

  useLoad(async (): Promise<Loaded> => {
    const { client } = session
    const payment = await client.payments.get(id)
    // The payment's own terminal: an owner may open a payment of another terminal of the account
    // than the one chosen (a link, a bookmark), and its events are that terminal's.
    const page = await client.events.list({
      terminal_id: payment.terminal_id,
      object_id: payment.id,
      environment: payment.environment === "sandbox" ? "sandbox" : "prod",
      limit: 100
    })
    // Oldest first reads as the payment's story.
    const events = await Promise.all(page.items.toReversed().map((event) => client.events.get(event.id)))
    return { payment, events }
  }, setLoaded, report, [id])

  if (error !== null) {
    return (
      <section>
        <h1 tabIndex={-1}>{t("error.generic")}</h1>
        <p class="error" role="alert">{error}</p>
        <a href={href({ page: "payments" })} onClick={follow}>{t("payment.back")}</a>
      </section>
    )
  }
  if (loaded === null) return <p role="status">{t("loading")}</p>
  const { payment, events } = loaded
  return (
    <section aria-labelledby="payment-title">
      <p><a href={href({ page: "payments" })} onClick={follow}>← {t("payment.back")}</a></p>
      <h1 id="payment-title" tabIndex={-1}>{sentence(t, "payment.title", { order: isolated(payment.order_id) })}</h1>
      {(payment.environment === "sandbox") === sandbox ? null : (
        <p class="notice" role="note">{t("payment.otherMode", {
          environment: payment.environment === "sandbox" ? t("env.sandbox") : t("env.live"),
          mode: sandbox ? t("env.sandbox") : t("env.live")
        })}</p>
      )}
      <h2>{t("payment.details")}</h2>
      <dl class="details">
        <dt>{t("payment.id")}</dt><dd><code>{payment.id}</code></dd>
        <dt>{t("payments.col.amount")}</dt><dd>{formatRub(language, payment.amount)}</dd>
        <dt>{t("payments.col.status")}</dt><dd><StatusBadge status={payment.status} /></dd>
        <dt>{t("payments.col.env")}</dt><dd>{payment.environment === "sandbox" ? t("env.sandbox") : t("env.live")}</dd>
        <dt>{t("payments.col.created")}</dt><dd>{formatTime(language, payment.created_at)}</dd>
        <dt>{t("payment.paidAt")}</dt><dd>{formatTime(language, payment.paid_at)}</dd>
        {payment.settlement == null ? null : (
          <><dt>{t("payment.credited")}</dt><dd data-testid="credited">{creditText(t, language, payment)}</dd></>
        )}
        {payment.status === "created" || payment.status === "processing"
          ? <><dt>{t("payment.expiresAt")}</dt><dd>{formatTime(language, payment.expires_at)}</dd></>
          : null}
        <dt>{t("payment.description")}</dt><dd>{payment.description === null ? t("none") : isolated(payment.description)}</dd>
      </dl>
      <h2>{t("timeline.title")}</h2>
      <ol class="timeline">
        {timeline(payment, events).map((item, i) => (
          <li key={i}><strong>{t(`timeline.${item.step}`)}</strong> <span class="muted">{formatTime(language, item.at)}</span></li>
        ))}
      </ol>
      <h2>{t("payment.events")}</h2>
      {events.length === 0 ? <p>{t("payment.noEvents")}</p> : events.map((event) => <EventCard initial={event} key={event.id} />)}
    </section>
  )
}
