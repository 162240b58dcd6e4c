/**
 * The terminal's balance as Home and Payouts show it: available and held USDT, the roubles paid
 * but not yet converted (a terminal on scheduled conversion, until its conversion time; shown only
 * when there are any), and the rate. Available may be negative: a refund or chargeback after a
 * payout's hold took more than was left is owed back first.
 */
import type { Balance, Rate } from "@paydesk/client"
import { formatRate, formatRub, formatUsdt, type Language, type Translate } from "./I18n.js"
import { kopecks } from "./Money.js"

export const BalanceDetails = ({ balance, rate, language, t }: {
  readonly balance: Balance
  readonly rate: Rate | null
  readonly language: Language
  readonly t: Translate
}) => (
  <dl class="details">
    <dt>{t("payouts.available")}</dt><dd data-testid="available">{formatUsdt(language, balance.available_usdt)}</dd>
    <dt>{t("payouts.hold")}</dt><dd>{formatUsdt(language, balance.hold_usdt)}</dd>
    {kopecks(balance.pending_rub) === 0n ? null : (
      <><dt>{t("payouts.pendingRub")}</dt><dd data-testid="pending-rub">{formatRub(language, balance.pending_rub)}</dd></>
    )}
    {rate === null ? null : <><dt>{t("payouts.rate")}</dt><dd>{formatRate(language, rate.rate)}</dd></>}
  </dl>
)
