/**
 * Home: the balance (available and held USDT) and the rate, the payments by status in the mode's
 * environment (the API's statistics), today's count and volume, and a chart of the volume per day
 * over the last 30 days by status. Today and the chart are summed here from the payments list
 * (newest first, read until 30 days back, at most `scanLimit`), in kopecks as bigint; the API has
 * no per-day statistics yet.
 */
import type { Balance, Payment, PaymentStats, PaymentStatus, Rate } from "@paydesk/client"
import { Fragment } from "preact"
import { useEffect, useState } from "preact/hooks"
import { useDashboard } from "./Context.js"
import { formatRub, type Language, type Translate } from "./I18n.js"
import { kopecks, rubles } from "./Money.js"

const scanLimit = 5000
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
  readonly byStatus: Map<PaymentStatus, bigint>
  count: number
  total: bigint
}

interface Scan {
  readonly days: ReadonlyArray<Daily>
  readonly truncated: boolean
}

const scan = async (payments: AsyncIterable<Payment>, now: Date): Promise<Scan> => {
  const start = new Date(now.getFullYear(), now.getMonth(), now.getDate() - (days - 1))
  const buckets: Array<Daily> = []
  for (let i = 0; i < days; i++) {
    const day = new Date(start.getFullYear(), start.getMonth(), start.getDate() + i)
    buckets.push({ day: dayOf(day), byStatus: new Map(), count: 0, total: 0n })
  }
  const index = new Map(buckets.map((b, i) => [b.day, i]))
  let seen = 0
  for await (const payment of payments) {
    const created = new Date(payment.created_at)
    if (created < start) return { days: buckets, truncated: false }
    if (++seen > scanLimit) return { days: buckets, truncated: true }
    const bucket = buckets[index.get(dayOf(created)) ?? -1]
    if (bucket === undefined) continue
    const amount = kopecks(payment.amount)
    bucket.byStatus.set(payment.status, (bucket.byStatus.get(payment.status) ?? 0n) + amount)
    bucket.count++
    bucket.total += amount
  }
  return { days: buckets, truncated: false }
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
  const [daily, setDaily] = useState<Scan | null>(null)
  const [error, setError] = useState<string | null>(null)
  const environment = sandbox ? "sandbox" : "prod"

  useEffect(() => {
    let live = true
    const { client, terminalId } = session
    const report = (e: unknown) => live && setError(fail(e))
    client.balance.get({ terminal_id: terminalId }).then((b) => live && setBalance(b), report)
    client.rate.get({ terminal_id: terminalId }).then((r) => live && setRate(r), report)
    client.payments.stats({ terminal_id: terminalId, environment }).then((s) => live && setStats(s), report)
    scan(client.payments.iterate({ terminal_id: terminalId, environment, limit: 100 }), new Date()).then((s) => live && setDaily(s), report)
    return () => {
      live = false
    }
  }, [])

  const today = daily?.days[daily.days.length - 1]
  return (
    <section aria-labelledby="home-title">
      <h1 id="home-title" tabIndex={-1}>{t("home.title")}</h1>
      {error === null ? null : <p class="error" role="alert">{error}</p>}
      <div class="cards">
        <div class="card">
          <h2>{t("payouts.balance")}</h2>
          {balance === null ? <p role="status">{t("loading")}</p> : (
            <dl class="details">
              <dt>{t("payouts.available")}</dt><dd>{balance.available_usdt} USDT</dd>
              <dt>{t("payouts.hold")}</dt><dd>{balance.hold_usdt} USDT</dd>
              {rate === null ? null : <><dt>{t("payouts.rate")}</dt><dd>{rate.rate} ₽/USDT</dd></>}
            </dl>
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
      {daily === null ? <p role="status">{t("loading")}</p> : (
        <>
          <Chart data={daily.days} t={t} language={language} />
          {daily.truncated ? <p class="note">{t("home.truncated", { n: scanLimit })}</p> : null}
        </>
      )}
    </section>
  )
}
