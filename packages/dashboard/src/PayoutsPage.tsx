/**
 * Payouts: the balance (available and held USDT) and the rate, a request form whose confirmation
 * shows the amount against the available balance (compared exactly, in micro-USDT), and the list
 * of payouts with their status, newest first, 20 a page (completed and rejected payouts stay in the
 * list, so it only grows). A new payout shows on the first page. The list's page lives in the URL
 * (`?page=`), as the payments' does, so a reload, Back or a shared link keeps it; a page number
 * there that is not valid is ignored and named above the list.
 */
import { type Balance, type Page, type Payout, type PayoutCreate, PaydeskCallError, type Rate } from "@paydesk/client"
import { useRef, useState } from "preact/hooks"
import { isolated, sentence } from "./Bidi.js"
import { Confirm } from "./Confirm.js"
import { useAction, useDashboard, useLoad } from "./Context.js"
import { formatDecimal, formatTime } from "./I18n.js"
import { BalanceDetails } from "./BalanceDetails.js"
import { microUsdt, signedMicroUsdt } from "./Money.js"
import { pendingKey, settled, slotOf } from "./PendingWrite.js"
import { EmptyPage, Ignored, pageOf, Paging, perPage, writePage } from "./Paging.js"
import { href, navigate, withQuery } from "./Router.js"

const networks: ReadonlyArray<PayoutCreate["network"]> = ["TRC-20", "ERC-20", "TON"]

/** The page of the payouts list in the URL's query, and the `name=value` pairs of it that are not valid and were ignored. */
export const parsePayoutsPage = (search: string): { readonly page: number; readonly ignored: ReadonlyArray<string> } => {
  const ignored: Array<string> = []
  const page = pageOf(new URLSearchParams(search), ignored)
  return { page, ignored }
}

const searchOf = (page: number): string => {
  const query = new URLSearchParams()
  writePage(query, page)
  return withQuery(href({ page: "payouts" }), query)
}

/** Where the tab keeps the Idempotency-Key of the payout request whose outcome is not known yet. */
const pendingPayout = "paydesk.pendingPayout"

export const PayoutsPage = ({ search }: { search: string }) => {
  const { session, sandbox, t, language } = useDashboard()
  const { busy, error, report, run, clear } = useAction()
  const [balance, setBalance] = useState<Balance | null>(null)
  const [rate, setRate] = useState<Rate | null>(null)
  // With the page it is of: the bar names the page shown, not the one asked for while it loads.
  const [list, setList] = useState<(Page<Payout> & { readonly shown: number }) | null>(null)
  const [draft, setDraft] = useState<PayoutCreate>({ amount_usdt: "", wallet_address: "", network: "TRC-20" })
  const [confirming, setConfirming] = useState(false)
  const [message, setMessage] = useState<string | null>(null)
  const [reload, setReload] = useState(0)
  const { page, ignored } = parsePayoutsPage(search)
  const go = (next: number) => navigate(searchOf(next))

  useLoad(() => {
    const { client, terminalId } = session
    return Promise.all([
      client.balance.get({ terminal_id: terminalId }),
      client.rate.get({ terminal_id: terminalId })
    ])
  }, ([b, r]) => {
    setBalance(b)
    setRate(r)
  }, report, [reload])
  useLoad(() => session.client.payouts.list({ terminal_id: session.terminalId, page, limit: perPage }), (p) => setList({ ...p, shown: page }), report, [reload, page])

  // A refusal of the last request (a mistyped address) is about that request: editing the draft clears
  // it. Not an error of loading the page, nor the warning that a request may have been made.
  const refused = useRef(false)
  const edit = (next: PayoutCreate) => {
    setDraft(next)
    if (refused.current) clear()
    refused.current = false
  }
  // On the Russian page a decimal comma (as it writes amounts) is taken as the point the API reads; on
  // the English one "10,000" is refused, not read as 10.
  const amountText = language === "ru" ? draft.amount_usdt.trim().replace(",", ".") : draft.amount_usdt.trim()
  const amount = microUsdt(amountText)
  // Signed: a negative balance (a reversal after a hold) leaves nothing to pay out, so every amount is over it.
  const available = balance === null ? null : signedMicroUsdt(balance.available_usdt)
  const over = amount !== null && available !== null && amount > available
  // The API refuses a payout of nothing: said before any request, as an amount over the balance is.
  const zero = amount === 0n
  const problem = over ? t("payouts.over") : zero ? t("payouts.zero") : null

  const request = async () => {
    const body = { ...draft, amount_usdt: amountText, wallet_address: draft.wallet_address.trim(), terminal_id: session.terminalId }
    const slot = slotOf(pendingPayout, session.terminalId)
    const idempotencyKey = pendingKey(slot, JSON.stringify(body))
    await run(async () => {
      try {
        const payout = await session.client.payouts.create(body, { idempotencyKey })
        settled(slot)
        setMessage(t("payouts.created", { status: t(`payout.${payout.status}`) }))
        setDraft({ ...draft, amount_usdt: "" })
        if (page !== 1) go(1)
        setReload((n) => n + 1)
      } catch (cause) {
        // It may have been made: the list shows it; the same request again is answered with it.
        if (cause instanceof PaydeskCallError && cause.outcomeUnknown) {
          setReload((n) => n + 1)
          throw new Error(t("payouts.unknown"))
        }
        refused.current = true
        throw cause
      }
    })
    setConfirming(false)
  }

  return (
    <section aria-labelledby="payouts-title">
      <h1 id="payouts-title" tabIndex={-1}>{t("payouts.title")}</h1>
      {sandbox ? <p class="notice" role="note">{t("payouts.liveInSandbox")}</p> : <p class="note">{t("payouts.live")}</p>}
      <h2>{t("payouts.balance")}</h2>
      {balance === null ? (error === null ? <p role="status">{t("loading")}</p> : null) : (
        <BalanceDetails balance={balance} rate={rate} language={language} t={t} />
      )}
      <h2>{t("payouts.new")}</h2>
      <form class="filters" onSubmit={(event) => {
        event.preventDefault()
        setMessage(null)
        if (amount !== null && draft.wallet_address.trim() !== "" && problem === null) setConfirming(true)
      }}>
        <label>
          <span>{t("payouts.amount")}</span>
          <input name="amount" inputMode="decimal" required pattern={language === "ru" ? "\\d+([.,]\\d{1,6})?" : "\\d+(\\.\\d{1,6})?"} value={draft.amount_usdt} aria-invalid={problem !== null}
            aria-describedby={problem === null ? undefined : "payout-over"}
            onInput={(e) => edit({ ...draft, amount_usdt: (e.currentTarget as HTMLInputElement).value })} />
        </label>
        <label class="wide">
          <span>{t("payouts.wallet")}</span>
          <input name="wallet" required autocomplete="off" spellcheck={false} value={draft.wallet_address} aria-describedby="wallet-hint"
            onInput={(e) => edit({ ...draft, wallet_address: (e.currentTarget as HTMLInputElement).value })} />
        </label>
        <label>
          <span>{t("payouts.network")}</span>
          <select name="network" value={draft.network} onChange={(e) => edit({ ...draft, network: (e.currentTarget as HTMLSelectElement).value as PayoutCreate["network"] })}>
            {networks.map((n) => <option value={n} key={n}>{n}</option>)}
          </select>
        </label>
        <div class="actions"><button type="submit" disabled={problem !== null || busy}>{t("payouts.request")}</button></div>
      </form>
      <p id="wallet-hint" class="note">{t(`payouts.walletHint.${draft.network}`)}</p>
      {problem === null ? null : <p id="payout-over" class="error">{problem}</p>}
      {confirming ? (
        <Confirm id="payout" busy={busy} onConfirm={request} onCancel={() => setConfirming(false)}
          question={sentence(t, "payouts.confirm", { wallet: isolated(draft.wallet_address.trim()) }, {
            amount: formatDecimal(language, amountText),
            network: draft.network,
            available: balance === null ? "?" : formatDecimal(language, balance.available_usdt)
          })} />
      ) : null}
      {message === null ? null : <p class="ok" role="status">{message}</p>}
      {error === null ? null : <p class="error" role="alert">{error}</p>}
      <h2>{t("payouts.title")}</h2>
      <Ignored values={ignored} />
      {list === null ? null : list.items.length === 0 ? <EmptyPage page={list.shown} total={list.total} go={go} empty={t("payouts.empty")} /> : (
        <>
          <div class="table-wrap">
            <table class="payments">
              <thead>
                <tr>
                  <th scope="col">{t("payouts.col.created")}</th>
                  <th scope="col">{t("payouts.col.amount")}</th>
                  <th scope="col">{t("payouts.col.wallet")}</th>
                  <th scope="col">{t("payouts.col.status")}</th>
                </tr>
              </thead>
              <tbody>
                {list.items.map((p) => (
                  <tr key={p.id}>
                    <td data-label={t("payouts.col.created")}>{formatTime(language, p.created_at)}</td>
                    <td data-label={t("payouts.col.amount")} class="num">{formatDecimal(language, p.amount_usdt)}</td>
                    {/* Each value one element, so that a card (narrow screens) lays it out beside its label as a whole. */}
                    <td data-label={t("payouts.col.wallet")}><span><code>{p.wallet_address}</code> <span class="nowrap">{p.network}</span></span></td>
                    <td data-label={t("payouts.col.status")}><span><span class={`badge payout-${p.status}`}>{t(`payout.${p.status}`)}</span>{p.reject_reason === null ? null : <> {isolated(p.reject_reason)}</>}</span></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Paging page={list.shown} total={list.total} go={go} />
        </>
      )}
    </section>
  )
}
