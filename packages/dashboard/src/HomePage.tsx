/**
 * Home: the balance (available and held USDT) and the rate, the payments by status in the mode's
 * environment (the API's statistics), today's count and volume, and a chart of the volume per day
 * over the last 30 days by status: one call of the API's daily statistics, grouped by the
 * browser's own time zone, summed in kopecks as bigint.
 */
import type { Balance, PaymentDailyStats, PaymentStats, PaymentStatus, Rate } from "@paydesk/client"
import { Fragment } from "preact"
import { useEffect, useState } from "preact/hooks"
import { BalanceDetails } from "./BalanceDetails.js"
import { useDashboard } from "./Context.js"
import { formatRub, type Language, type Translate } from "./I18n.js"
import { kopecks, rubles } from "./Money.js"

const days = 30
const statuses: ReadonlyArray<PaymentStatus> = ["paid", "created", "processing", "refunded", "chargeback", "canceled", "expired"]
const colors: { readonly [S in PaymentStatus]: string } = {
  paid: "#16a34a", created: "#93c5fd", processing: "#f59e0b", refunded: "#a855f7", chargeback: "#dc2626", canceled: "#6b7280", expired: "#d1d5db"
}

/** The local calendar day of a moment, as YYYY-MM-DD. */
const dayOf = (date: Date): string =>
  `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, "0")}-${String(date.getDate()).padStart(2, "0")}`

interface Daily {
  readonly day: string
  readonly byStatus: ReadonlyMap<PaymentStatus, bigint>
  readonly count: number
  readonly total: bigint
}

/** The last `days` local days up to today (local midnights: daylight saving changes are the browser's). */
const range = (now: Date) => ({
  start: new Date(now.getFullYear(), now.getMonth(), now.getDate() - (days - 1)),
  end: new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1)
})

/** Every day of the range, with the API's figures where it has payments. */
const bucketsOf = (stats: PaymentDailyStats, start: Date): ReadonlyArray<Daily> => {
  const byDate = new Map(stats.items.map((item) => [item.date, item]))
  return Array.from({ length: days }, (_, i) => {
    const day = dayOf(new Date(start.getFullYear(), start.getMonth(), start.getDate() + i))
    const item = byDate.get(day)
    if (item === undefined) return { day, byStatus: new Map(), count: 0, total: 0n }
    return {
      day,
      byStatus: new Map(statuses.map((s) => [s, kopecks(item.by_status[s].amount)])),
      count: item.total.count,
      total: kopecks(item.total.amount)
    }
  })
}

const Chart = ({ data, t, language }: { data: ReadonlyArray<Daily>; t: Translate; language: Language }) => {
  const width = 600
  const height = 160
  const bar = width / data.length
  const max = data.reduce((m, d) => (d.total > m ? d.total : m), 0n)
  // Heights are drawing only: the amounts themselves stay exact.
  const scale = (k: bigint) => (max === 0n ? 0 : Number((k * BigInt(height * 1000)) / max) / 1000)
  const total = data.reduce((sum, d) => sum + d.total, 0n)
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} ${height + 16}`} role="img" aria-label={t("home.chartLabel", { days, total: formatRub(language, rubles(total)) })}>
        {data.map((d, i) => {
          let y = height
          return (
            <g key={d.day}>
              <title>{`${d.day}: ${formatRub(language, rubles(d.total))} (${d.count})`}</title>
              {statuses.map((status) => {
                const value = d.byStatus.get(status) ?? 0n
                if (value === 0n) return null
                const h = scale(value)
                y -= h
                return <rect key={status} x={i * bar + 1} y={y} width={bar - 2} height={h} fill={colors[status]} />
              })}
            </g>
          )
        })}
        <line x1="0" y1={height} x2={width} y2={height} stroke="#9ca3af" />
        <text x="0" y={height + 14} font-size="11" fill="#5b6470">{data[0]?.day}</text>
        <text x={width} y={height + 14} font-size="11" fill="#5b6470" text-anchor="end">{data[data.length - 1]?.day}</text>
      </svg>
      <figcaption>
        <ul class="legend">
          {statuses.map((s) => (
            <li key={s}><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill={colors[s]} /></svg> {t(`status.${s}`)}</li>
          ))}
        </ul>
      </figcaption>
    </figure>
  )
}

export const HomePage = () => {
  const { session, sandbox, t, language, fail } = useDashboard()
  const [balance, setBalance] = useState<Balance | null>(null)
  const [rate, setRate] = useState<Rate | null>(null)
  const [stats, setStats] = useState<PaymentStats | null>(null)
  const [daily, setDaily] = useState<ReadonlyArray<Daily> | null>(null)
  const [error, setError] = useState<string | null>(null)
  const environment = sandbox ? "sandbox" : "prod"

  useEffect(() => {
    let live = true
    const { client, terminalId } = session
    const report = (e: unknown) => live && setError(fail(e))
    client.balance.get({ terminal_id: terminalId }).then((b) => live && setBalance(b), report)
    client.rate.get({ terminal_id: terminalId }).then((r) => live && setRate(r), report)
    client.payments.stats({ terminal_id: terminalId, environment }).then((s) => live && setStats(s), report)
    const { start, end } = range(new Date())
    client.payments.dailyStats({
      terminal_id: terminalId,
      environment,
      created_from: start.toISOString(),
      created_to: end.toISOString(),
      time_zone: Intl.DateTimeFormat().resolvedOptions().timeZone
    }).then((s) => live && setDaily(bucketsOf(s, start)), report)
    return () => {
      live = false
    }
  }, [])

  const today = daily?.[daily.length - 1]
  return (
    <section aria-labelledby="home-title">
      <h1 id="home-title" tabIndex={-1}>{t("home.title")}</h1>
      {error === null ? null : <p class="error" role="alert">{error}</p>}
      <div class="cards">
        <div class="card">
          <h2>{t("payouts.balance")}</h2>
          {sandbox ? <p class="note">{t("home.balanceLive")}</p> : null}
          {balance === null ? <p role="status">{t("loading")}</p> : (
            <BalanceDetails balance={balance} rate={rate} language={language} t={t} />
          )}
        </div>
        <div class="card">
          <h2>{t("home.today")}</h2>
          {today === undefined ? <p role="status">{t("loading")}</p> : (
            <dl class="details">
              <dt>{t("home.count")}</dt><dd data-testid="today-count">{today.count}</dd>
              <dt>{t("home.volume")}</dt><dd>{formatRub(language, rubles(today.total))}</dd>
              <dt>{t("status.paid")}</dt><dd>{formatRub(language, rubles(today.byStatus.get("paid") ?? 0n))}</dd>
            </dl>
          )}
        </div>
        <div class="card">
          <h2>{t("home.byStatus")}</h2>
          {stats === null ? <p role="status">{t("loading")}</p> : (
            <dl class="details">
              {statuses.filter((s) => stats.by_status[s].count > 0).map((s) => (
                <Fragment key={s}><dt>{t(`status.${s}`)}</dt><dd>{stats.by_status[s].count} · {formatRub(language, stats.by_status[s].amount)}</dd></Fragment>
              ))}
              <dt>{t("home.total")}</dt><dd>{stats.total.count} · {formatRub(language, stats.total.amount)}</dd>
            </dl>
          )}
        </div>
      </div>
      <h2>{t("home.chart", { days })}</h2>
      {daily === null ? <p role="status">{t("loading")}</p> : <Chart data={daily} t={t} language={language} />}
    </section>
  )
}
