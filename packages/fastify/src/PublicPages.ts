/**
 * HTML of the payer pages: the payment page (amount, shop, status that refreshes itself, QR
 * code with an "open in bank app" link, sandbox simulation buttons) and the subscription consent
 * page with the spec's text per billing status (in sandbox also the banner and the first
 * payment's simulate buttons). Pure functions from records to strings; every interpolated text is
 * escaped, merchant and operator texts are isolated (`isolate`: `<bdi>`; in `<title>` without bidi
 * controls), and the inline script reads its data from attributes, never from interpolated code.
 * Payers see Russian wording only: a refusal is shown by its error code, never by the API's message.
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

/** The bidi formatting characters: embeddings and overrides (U+202A–U+202E) and isolates (U+2066–U+2069). */
const bidiControls = /[\u202a-\u202e\u2066-\u2069]/g

/** Text for a place no element can isolate (`<title>`): the bidi formatting characters taken out. */
export const withoutBidiControls = (text: string): string => text.replace(bidiControls, "")

/** Characters that end a bidi paragraph (bidi class B): the isolates opened before one end there. */
const paragraphEnd = /[\n\r\u001c-\u001e\u0085\u2029]/

/**
 * `text` with its isolates balanced: a PDI (U+2069) that closes no isolate of the text's own is
 * dropped, and every isolate the text leaves open is closed at its end (and before each paragraph
 * end). Inside a `<bdi>` a stray PDI would close the element's own isolate and let what follows in
 * the text reorder the page; embeddings and overrides cannot outlive an isolate, so they stay.
 */
export const balanceIsolates = (text: string): string => {
  let out = ""
  let open = 0
  for (const char of text) {
    if (char === "\u2069") {
      if (open === 0) continue
      open -= 1
    } else if (char === "\u2066" || char === "\u2067" || char === "\u2068") {
      open += 1
    } else if (paragraphEnd.test(char)) {
      out += "\u2069".repeat(open)
      open = 0
    }
    out += char
  }
  return out + "\u2069".repeat(open)
}

/**
 * Merchant or operator text (a shop name, a description, a plan's consent text) as element content:
 * escaped, and isolated in `<bdi>` so that its direction and any bidi controls in it cannot reorder
 * the text around it (make an amount or a name read differently).
 */
export const isolate = (text: string): string => `<bdi>${escape(balanceIsolates(text))}</bdi>`

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

/**
 * What a payer is told when a page action is refused, by the error `code` of the API's error body
 * (the API's own `message` is developer English and names internal states; it is never shown).
 */
export const refusalTexts: Readonly<Record<string, string>> = {
  invalid_transition: "Действие не выполнено: статус платежа уже изменился — возможно, платёж уже оплачен или отменён.",
  write_conflict: "Платёж сейчас обновляется. Попробуйте ещё раз.",
  csrf_rejected: "Страница устарела. Обновите её и попробуйте ещё раз.",
  operation_not_allowed: "Это действие недоступно для данного платежа.",
  not_found: "Ссылка недействительна или устарела.",
  recurring_temporarily_unavailable: "Регулярные платежи временно недоступны. Попробуйте позже.",
  provider_unavailable: "Сервис временно недоступен. Попробуйте ещё раз через минуту.",
  service_busy: "Сервис временно недоступен. Попробуйте ещё раз через минуту.",
  internal_error: "Сервис временно недоступен. Попробуйте ещё раз через минуту."
}

/** A refusal whose code has no text of its own. */
const fallbackRefusal = "Не удалось выполнить действие. Обновите страницу и попробуйте ещё раз."

/** The payer's text for a refused action with error `code` (see `refusalTexts`). */
export const payerErrorText = (code: string): string =>
  Object.prototype.hasOwnProperty.call(refusalTexts, code) ? refusalTexts[code]! : fallbackRefusal

/** The payment page script's messages: the refusals, plus a payment found final and no answer at all. */
const scriptMessages = {
  ...refusalTexts,
  fallback: fallbackRefusal,
  final: "Действие не выполнено: платёж уже завершён или отменён.",
  network: "Не удалось связаться с сервером. Проверьте подключение и попробуйте ещё раз."
}

/**
 * The link the QR code encodes, offered as an "open in bank app" button (a payer on a phone cannot
 * scan their own screen): only an `https:` URL (an SBP payment link opens the bank app or a bank
 * chooser); a sandbox payload or anything else is shown as the QR code only.
 */
export const bankLinkOf = (qrPayload: string | null): string | null => {
  if (qrPayload === null || !/^https:\/\/[^\s]+$/i.test(qrPayload)) return null
  try {
    return new URL(qrPayload).protocol === "https:" ? qrPayload : null
  } catch {
    return null
  }
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
main{max-width:26rem;margin:2rem auto;background:#fff;border-radius:12px;padding:1.5rem;box-shadow:0 1px 4px rgba(0,0,0,.08);word-break:break-word;overflow-wrap:anywhere}
h1{font-size:1.2rem;margin:0 0 1rem}
.merchant{color:#5c6470;margin:0 0 .25rem}
.amount{font-size:2rem;font-weight:600;margin:0 0 1rem}
.status{font-weight:600;margin:1rem 0}
.qr{display:flex;flex-direction:column;align-items:center;text-align:center}
.qr img{width:240px;height:240px;max-width:100%;image-rendering:pixelated}
.qr p{margin:.5rem 0}
a.bank-link{display:inline-block;padding:.75rem 1.25rem;border-radius:8px;background:#1d2129;color:#fff;font-weight:600;text-decoration:none}
@media (max-width:40rem){.qr .bank{order:-1;margin-bottom:1rem}}
.sandbox{border:1px dashed #c77700;border-radius:8px;padding:1rem;margin-top:1rem}
.sandbox form{display:inline-block;margin:.25rem}
.consent{white-space:pre-line;background:#f4f5f7;border-radius:8px;padding:.75rem}
button{font:inherit;padding:.6rem 1rem;border-radius:8px;border:1px solid #1d2129;background:#1d2129;color:#fff;cursor:pointer}
button:disabled{opacity:.5;cursor:progress}
button.secondary{background:#fff;color:#1d2129}
.error{color:#b00020}
footer{color:#5f6670;font-size:.8rem;margin-top:1.5rem;text-align:center}
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
// then hides the QR code and buttons and redirects to the terminal's page when one is set. A
// simulate button press disables the buttons until answered; a refusal refreshes the status at
// once and is shown in Russian by its error code; a status change clears a shown refusal.
const paymentScript = `(() => {
  const root = document.getElementById("payment");
  if (root === null) return;
  const labels = JSON.parse(root.dataset.labels || "{}");
  const messages = JSON.parse(root.dataset.messages || "{}");
  const open = (root.dataset.open || "").split(" ");
  const statusEl = document.getElementById("status");
  const errorEl = document.getElementById("error");
  const buttons = document.querySelectorAll("form[data-simulate] button");
  let finished = false;
  let busy = false;
  const redirect = (url) => {
    // Replaces the page in the history: Back from the shop goes where the payer came from, not to
    // this page, which would redirect forward again.
    if (typeof url === "string" && /^https?:\\/\\//i.test(url)) setTimeout(() => window.location.replace(url), 1500);
  };
  const apply = (data) => {
    if (finished || data === null || typeof data !== "object" || typeof data.status !== "string") return;
    if (data.status !== root.dataset.status) {
      root.dataset.status = data.status;
      statusEl.textContent = labels[data.status] || data.status;
      errorEl.textContent = "";
    }
    if (open.includes(data.status)) return;
    finished = true;
    for (const el of document.querySelectorAll("[data-open-only]")) el.hidden = true;
    redirect(data.redirect_url);
  };
  const refresh = async () => {
    try {
      const response = await fetch(root.dataset.statusUrl, { headers: { accept: "application/json" }, cache: "no-store" });
      if (response.ok) apply(await response.json());
    } catch {}
  };
  const poll = async () => {
    await refresh();
    if (!finished) setTimeout(poll, 2000);
  };
  const setBusy = (value) => {
    busy = value;
    for (const button of buttons) button.disabled = value;
  };
  const refusal = (data) => {
    if (finished) return messages.final;
    const code = data !== null && typeof data === "object" && data.error && typeof data.error.code === "string" ? data.error.code : "";
    return Object.prototype.hasOwnProperty.call(messages, code) ? messages[code] : messages.fallback;
  };
  for (const form of document.querySelectorAll("form[data-simulate]")) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (busy) return;
      const fields = new FormData(form);
      setBusy(true);
      errorEl.textContent = "";
      let message = "";
      try {
        const response = await fetch(form.action, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify({ outcome: fields.get("outcome"), csrf_token: fields.get("csrf_token") })
        });
        let data = null;
        try { data = await response.json(); } catch {}
        if (response.ok) apply(data);
        else {
          await refresh();
          message = refusal(data);
        }
      } catch {
        message = messages.network;
      }
      setBusy(false);
      errorEl.textContent = message;
    });
  }
  if (open.includes(root.dataset.status)) setTimeout(poll, 2000);
  else { finished = true; redirect(root.dataset.redirectUrl); }
})();`

/** The sandbox simulate buttons' labels, in the payer pages' Russian as the rest of them. */
export const simulateLabels = {
  paid: "Имитировать оплату",
  failed: "Имитировать отказ в оплате",
  processing: "Имитировать начало оплаты (плательщик начал платить)"
} as const

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
    form("paid", simulateLabels.paid, ""),
    form("failed", simulateLabels.failed, "secondary"),
    payment.status === "created" ? form("processing", simulateLabels.processing, "secondary") : ""
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
  const bankLink = bankLinkOf(payment.qrPayload)
  // On a narrow screen (a phone, which cannot scan its own screen) the CSS puts the link first.
  const qr = open
    ? `<div class="qr" data-open-only>${
      input.qrDataUrl === null
        ? "<p>QR-код недоступен</p>"
        : `<img src="${escape(input.qrDataUrl)}" alt="QR-код для оплаты через СБП">
<p>Отсканируйте QR-код в приложении банка</p>`
    }${
      bankLink === null
        ? ""
        : `\n<p class="bank"><a class="bank-link" href="${escape(bankLink)}" rel="noreferrer">Открыть в приложении банка</a></p>`
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
  } data-labels="${escape(JSON.stringify(statusLabels))}" data-messages="${escape(JSON.stringify(scriptMessages))}">
<h1>Оплата заказа</h1>
<p class="merchant">${isolate(terminal.name)}</p>
<p class="amount">${escape(money(payment.amount, payment.currency))}</p>
${payment.description === null ? "" : `<p class="description">${isolate(payment.description)}</p>`}
<p class="status">Статус: <span id="status" aria-live="polite" aria-atomic="true">${escape(statusLabels[payment.status])}</span></p>
${qr}
${simulate}
${redirect === null ? "" : `<p class="back"><a href="${escape(redirect)}" rel="noreferrer">${payment.status === "paid" ? "Вернуться в магазин" : "Вернуться на сайт магазина"}</a></p>`}
<p id="error" class="error" role="alert"></p>
${open ? "<noscript><meta http-equiv=\"refresh\" content=\"5\"></noscript>" : ""}
</div>`
  return layout({
    title: `Оплата: ${withoutBidiControls(terminal.name)}`,
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
<dt>Магазин</dt><dd class="merchant">${isolate(terminal.name)}</dd>
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
<div class="consent">${isolate(terms.consentText)}</div>
<p class="policy">Версия условий: ${isolate(terms.policyVersion)}</p>
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
  return layout({ title: `Подписка: ${withoutBidiControls(terminal.name)}`, nonce: input.nonce, body, branding: terminal.showPlatformBranding })
}

/**
 * A page for an error (unknown link, refused form): Russian text by the error `code`, and for a
 * refused form a link `back` to the page it came from.
 */
export const errorPage = (input: {
  readonly status: number
  readonly code: string
  readonly nonce: string
  readonly back?: { readonly path: string; readonly label: string }
}): string => {
  const title = input.status === 404 ? "Страница не найдена" : "Не удалось выполнить действие"
  const text = input.status === 404 ? "Ссылка недействительна или устарела." : payerErrorText(input.code)
  const back = input.back === undefined || input.status === 404 ? "" : `\n<p><a href="${escape(input.back.path)}">${escape(input.back.label)}</a></p>`
  return layout({
    title,
    nonce: input.nonce,
    body: `<h1>${escape(title)}</h1>\n<p class="error">${escape(text)}</p>${back}`,
    branding: true
  })
}
