/**
 * HTML of the payer pages: the payment page (amount, shop, status that refreshes itself, QR
 * code, sandbox simulation buttons) and the subscription consent page with the spec's text per
 * billing status (in sandbox also the banner and the first payment's simulate buttons). Pure functions from records to strings; every interpolated text is escaped,
 * and the inline script reads its data from attributes, never from interpolated code.
 */
import { Option } from "effect"
import { Amount, Schedule } from "@paydesk/core"
import type { Payment, Subscription, Terminal } from "@paydesk/core"

/** Escapes text for HTML element content and quoted attribute values. */
export const escape = (text: string): string =>
  text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll("\"", "&quot;")
    .replaceAll("'", "&#39;")

/** Statuses in which the payer can still pay (QR and simulate buttons shown). */
export const openStatuses: ReadonlyArray<Payment.Status> = ["created", "processing"]

/** Whether a payment can still be paid. */
export const isOpen = (status: Payment.Status): boolean => openStatuses.includes(status)

/** Where the payer goes once the payment is final: the terminal's success or fail page, if set. */
export const redirectUrlOf = (payment: Payment.Payment, terminal: Terminal.Terminal): string | null =>
  payment.status === "paid"
    ? terminal.successRedirectUrl
    : payment.status === "canceled" || payment.status === "expired"
    ? terminal.failRedirectUrl
    : null

/** What the status endpoint and the simulate call answer. */
export const statusBody = (payment: Payment.Payment, terminal: Terminal.Terminal) => ({
  status: payment.status,
  redirect_url: redirectUrlOf(payment, terminal)
})

/** Russian labels of payment statuses. */
export const statusLabels: Record<Payment.Status, string> = {
  created: "Ожидает оплаты",
  processing: "Платёж обрабатывается",
  paid: "Оплачено",
  canceled: "Платёж отменён",
  expired: "Срок оплаты истёк",
  chargeback: "Оспорен (чарджбэк)",
  refunded: "Возвращён"
}

/** Content-Security-Policy of a page whose inline style and script carry `nonce`. */
export const contentSecurityPolicy = (nonce: string): string =>
  [
    "default-src 'none'",
    "img-src data:",
    `style-src 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'"
  ].join("; ")

const styles = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1d2129;margin:0}
main{max-width:26rem;margin:2rem auto;background:#fff;border-radius:12px;padding:1.5rem;box-shadow:0 1px 4px rgba(0,0,0,.08)}
h1{font-size:1.2rem;margin:0 0 1rem}
.merchant{color:#5c6470;margin:0 0 .25rem}
.amount{font-size:2rem;font-weight:600;margin:0 0 1rem}
.status{font-weight:600;margin:1rem 0}
.qr{text-align:center}
.qr img{width:240px;height:240px;image-rendering:pixelated}
.sandbox{border:1px dashed #c77700;border-radius:8px;padding:1rem;margin-top:1rem}
.sandbox form{display:inline-block;margin:.25rem}
.consent{white-space:pre-line;background:#f4f5f7;border-radius:8px;padding:.75rem}
button{font:inherit;padding:.6rem 1rem;border-radius:8px;border:1px solid #1d2129;background:#1d2129;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#1d2129}
.error{color:#b00020}
footer{color:#8a919c;font-size:.8rem;margin-top:1.5rem;text-align:center}
[hidden]{display:none!important}
`

const layout = (input: { readonly title: string; readonly nonce: string; readonly body: string; readonly script?: string; readonly branding: boolean }) =>
  `<!doctype html>
<html lang="ru">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escape(input.title)}</title>
<style nonce="${escape(input.nonce)}">${styles}</style>
</head>
<body>
<main>
${input.body}
${input.branding ? "<footer>Платёжная страница Paydesk</footer>" : ""}
</main>
${input.script === undefined ? "" : `<script nonce="${escape(input.nonce)}">${input.script}</script>`}
</body>
</html>
`

const money = (kopecks: bigint, currency: string): string => `${Amount.formatRub(kopecks)} ${currency}`

// Reads everything from data attributes; polls the status every 2 s until the payment is final,
// then hides the QR code and buttons and redirects to the terminal's page when one is set.
const paymentScript = `(() => {
  const root = document.getElementById("payment");
  if (root === null) return;
  const labels = JSON.parse(root.dataset.labels || "{}");
  const open = (root.dataset.open || "").split(" ");
  const statusEl = document.getElementById("status");
  const errorEl = document.getElementById("error");
  let finished = false;
  const redirect = (url) => {
    if (typeof url === "string" && /^https?:\\/\\//i.test(url)) setTimeout(() => window.location.assign(url), 1500);
  };
  const apply = (data) => {
    if (finished || data === null || typeof data.status !== "string") return;
    root.dataset.status = data.status;
    statusEl.textContent = labels[data.status] || data.status;
    if (open.includes(data.status)) return;
    finished = true;
    for (const el of document.querySelectorAll("[data-open-only]")) el.hidden = true;
    redirect(data.redirect_url);
  };
  const poll = async () => {
    try {
      const response = await fetch(root.dataset.statusUrl, { headers: { accept: "application/json" }, cache: "no-store" });
      if (response.ok) apply(await response.json());
    } catch {}
    if (!finished) setTimeout(poll, 2000);
  };
  for (const form of document.querySelectorAll("form[data-simulate]")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const fields = new FormData(form);
      errorEl.textContent = "";
      try {
        const response = await fetch(form.action, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify({ outcome: fields.get("outcome"), csrf_token: fields.get("csrf_token") })
        });
        const data = await response.json();
        if (response.ok) apply(data);
        else errorEl.textContent = (data.error && data.error.message) || "Ошибка";
      } catch {
        errorEl.textContent = "Не удалось связаться с сервером";
      }
    });
  }
  if (open.includes(root.dataset.status)) setTimeout(poll, 2000);
  else { finished = true; redirect(root.dataset.redirectUrl); }
})();`

/**
 * The sandbox simulate buttons of an open payment: plain forms posting to the payment page's
 * simulate route (`pagePath` is that page's path) with the payment's own `csrf_token`.
 */
const simulateForms = (payment: Payment.Payment, pagePath: string): string => {
  const form = (outcome: "paid" | "failed" | "processing", label: string, cls: string) =>
    `<form method="post" action="${escape(`${pagePath}/simulate`)}" data-simulate>
<input type="hidden" name="outcome" value="${outcome}">
<input type="hidden" name="csrf_token" value="${escape(payment.csrfToken)}">
<button type="submit"${cls === "" ? "" : ` class="${cls}"`}>${escape(label)}</button>
</form>`
  return [
    form("paid", "simulate paid", ""),
    form("failed", "simulate failed", "secondary"),
    payment.status === "created" ? form("processing", "simulate processing (payer started paying)", "secondary") : ""
  ].join("\n")
}

/** The payment page. `qrDataUrl` is the PNG data URL of the QR payload (open payments only). */
export const paymentPage = (input: {
  readonly payment: Payment.Payment
  readonly terminal: Terminal.Terminal
  readonly qrDataUrl: string | null
  readonly pagePath: string
  readonly nonce: string
}): string => {
  const { payment, terminal } = input
  const open = isOpen(payment.status)
  const sandbox = payment.environment === "sandbox"
  const redirect = open ? null : redirectUrlOf(payment, terminal)
  const qr = open
    ? `<div class="qr" data-open-only>${
      input.qrDataUrl === null
        ? "<p>QR-код недоступен</p>"
        : `<img src="${escape(input.qrDataUrl)}" alt="QR-код для оплаты через СБП">
<p>Отсканируйте QR-код в приложении банка</p>`
    }</div>`
    : ""
  const simulate = sandbox
    ? `<section class="sandbox" data-sandbox>
<p><strong>Тестовый платёж (песочница).</strong> Деньги не списываются.</p>
<div data-open-only${open ? "" : " hidden"}>
${simulateForms(payment, input.pagePath)}
</div>
</section>`
    : ""
  const body = `<div id="payment" data-status="${escape(payment.status)}" data-status-url="${escape(`${input.pagePath}/status`)}" data-open="${openStatuses.join(" ")}"${
    redirect === null ? "" : ` data-redirect-url="${escape(redirect)}"`
  } data-labels="${escape(JSON.stringify(statusLabels))}">
<h1>Оплата заказа</h1>
<p class="merchant">${escape(terminal.name)}</p>
<p class="amount">${escape(money(payment.amount, payment.currency))}</p>
${payment.description === null ? "" : `<p class="description">${escape(payment.description)}</p>`}
<p class="status">Статус: <span id="status">${escape(statusLabels[payment.status])}</span></p>
${qr}
${simulate}
<p id="error" class="error" role="alert"></p>
${open ? "<noscript><meta http-equiv=\"refresh\" content=\"5\"></noscript>" : ""}
</div>`
  return layout({
    title: `Оплата: ${terminal.name}`,
    nonce: input.nonce,
    body,
    script: paymentScript,
    branding: terminal.showPlatformBranding
  })
}

/** How often the subscription is charged, in Russian ("каждый месяц", "каждые 30 дней"). */
export const periodText = (terms: Subscription.Terms): string => {
  if (terms.schedule === "fixed_days") {
    const days = Schedule.fixedDays(terms.interval)
    return days === 1 ? "каждый день" : `каждые ${days} дней`
  }
  return `раз в ${Schedule.intervalLabelRu(terms.interval)}`
}

/** The payer's text per billing status (the spec's "Payer form text per billing status"). */
export const billingTexts: Record<Subscription.BillingStatus, string> = {
  consent_pending: "Подтвердите условия регулярного платежа. До вашего подтверждения деньги не списываются.",
  pending: "Первый платёж принят, подключение регулярных платежей проверяется.",
  enabled: "Регулярные платежи подключены.",
  review: "Платёж ожидает проверки. Повторно подтверждать подписку не нужно.",
  stop_pending: "Регулярный платёж больше недоступен.",
  stopped: "Регулярный платёж больше недоступен."
}

/** The payer's text once consent is given and the first payment waits to be paid (still `consent_pending`). */
export const awaitingFirstPaymentText = "Условия подтверждены. Оплатите первый платёж — до оплаты деньги не списываются."

/** The subscription consent page, its content chosen by billing status (and, before the first payment, by consent). */
export const subscriptionPage = (input: {
  readonly subscription: Subscription.Subscription
  readonly terminal: Terminal.Terminal
  readonly firstPayment: Option.Option<Payment.Payment>
  readonly pagePath: string
  readonly paymentPath: (payToken: string) => string
  readonly nonce: string
}): string => {
  const { subscription: sub, terminal } = input
  const terms = sub.terms
  const status = sub.billingStatus
  const summary = `<dl>
<dt>Магазин</dt><dd class="merchant">${escape(terminal.name)}</dd>
<dt>Сумма списания</dt><dd class="amount">${escape(money(terms.payerAmount, "RUB"))}</dd>
<dt>Периодичность</dt><dd class="period">${escape(periodText(terms))}</dd>
${terms.maxCycles === null ? "" : `<dt>Количество списаний</dt><dd>не более ${terms.maxCycles}</dd>`}
</dl>`
  let content: string
  const first = Option.getOrNull(input.firstPayment)
  if (status === "consent_pending" && first !== null) {
    const payLink = isOpen(first.status)
      ? `<p><a class="pay-first" href="${escape(input.paymentPath(first.payToken))}">Оплатить первый платёж</a></p>`
      : ""
    content = `<p class="state">${escape(awaitingFirstPaymentText)}</p>
${summary}
${payLink}`
  } else if (status === "consent_pending") {
    content = `<p class="state">${escape(billingTexts.consent_pending)}</p>
${summary}
<h2>Условия</h2>
<div class="consent">${escape(terms.consentText)}</div>
<p class="policy">Версия условий: ${escape(terms.policyVersion)}</p>
<form method="post" action="${escape(`${input.pagePath}/confirm`)}">
<input type="hidden" name="csrf_token" value="${escape(sub.csrfToken)}">
<button type="submit">Подтвердить и перейти к оплате</button>
</form>`
  } else if (status === "pending") {
    content = `<p class="state">${escape(billingTexts.pending)}</p>
${summary}`
  } else if (status === "enabled") {
    content = `<p class="state">${escape(billingTexts.enabled)}</p>
${summary}`
  } else {
    content = `<p class="state">${escape(billingTexts[status])}</p>`
  }
  // Sandbox: the banner in every state, and the first payment's simulate buttons while it waits to be paid.
  const sandbox = sub.environment === "sandbox"
    ? `<section class="sandbox" data-sandbox>
<p><strong>Тестовая подписка (песочница).</strong> Деньги не списываются.</p>
${
      status === "consent_pending" && first !== null && isOpen(first.status)
        ? `<p>Первый платёж:</p>\n${simulateForms(first, input.paymentPath(first.payToken))}`
        : ""
    }
</section>`
    : ""
  const body = `<div id="subscription" data-billing-status="${escape(status)}" data-consent="${first === null ? "no" : "given"}">
<h1>Регулярный платёж</h1>
${content}
${sandbox}
</div>`
  return layout({ title: `Подписка: ${terminal.name}`, nonce: input.nonce, body, branding: terminal.showPlatformBranding })
}

/** A page for an error (unknown link, refused form). */
export const errorPage = (input: { readonly status: number; readonly message: string; readonly nonce: string }): string => {
  const title = input.status === 404 ? "Страница не найдена" : "Не удалось выполнить действие"
  const text = input.status === 404 ? "Ссылка недействительна или устарела." : input.message
  return layout({
    title,
    nonce: input.nonce,
    body: `<h1>${escape(title)}</h1>\n<p class="error">${escape(text)}</p>`,
    branding: true
  })
}
