/**
 * The dashboard's text in English and Russian: one dictionary per language with the same keys
 * (the type makes a missing translation a compile error), the chosen language kept in
 * localStorage (it is no secret), and `format` helpers for dates and amounts.
 */

/** The languages the dashboard speaks. */
export type Language = "en" | "ru"

const en = {
  "app.name": "Paydesk",
  "app.skip": "Skip to content",
  "nav.payments": "Payments",
  "nav.settings": "Terminal settings",
  "nav.main": "Main navigation",
  "env.label": "Mode",
  "env.sandbox": "Sandbox",
  "env.live": "Live",
  "env.banner": "Sandbox: test data, no real money",
  "lang.label": "Language",
  "signin.title": "Sign in",
  "signin.email": "E-mail",
  "signin.password": "Password",
  "signin.terminal": "Terminal ID",
  "signin.terminalHint": "The terminal's ID (a UUID) from your welcome message or the operator.",
  "signin.submit": "Sign in",
  "signin.busy": "Signing in…",
  "signin.expired": "Your session has ended. Please sign in again.",
  "signout": "Sign out",
  "loading": "Loading…",
  "error.generic": "Something went wrong",
  "retry": "Try again",
  "payments.title": "Payments",
  "payments.filters": "Filters",
  "payments.status": "Status",
  "payments.status.any": "Any status",
  "payments.allEnvironments": "Both sandbox and live",
  "payments.orderId": "Order ID",
  "payments.search": "Search",
  "payments.clear": "Clear",
  "payments.empty": "No payments match.",
  "payments.statusScan": "Filtered by status among the newest {n} payments.",
  "payments.col.created": "Created",
  "payments.col.order": "Order",
  "payments.col.amount": "Amount",
  "payments.col.status": "Status",
  "payments.col.env": "Mode",
  "paging.label": "Pages",
  "paging.prev": "Previous",
  "paging.next": "Next",
  "paging.of": "Page {page} of {pages} ({total} in all)",
  "status.created": "Awaiting payment",
  "status.processing": "Processing",
  "status.paid": "Paid",
  "status.canceled": "Canceled",
  "status.expired": "Expired",
  "status.chargeback": "Chargeback",
  "status.refunded": "Refunded",
  "payment.back": "All payments",
  "payment.title": "Payment {order}",
  "payment.details": "Details",
  "payment.id": "Payment ID",
  "payment.paidAt": "Paid",
  "payment.expiresAt": "Expires",
  "payment.description": "Description",
  "payment.events": "Events and deliveries",
  "payment.noEvents": "No events yet.",
  "event.delivery": "Delivery",
  "event.noDelivery": "Not delivered: no callback URL.",
  "event.resend": "Resend",
  "event.resending": "Sending…",
  "event.resent": "Sent again: {result}",
  "attempt.col.n": "#",
  "attempt.col.at": "At",
  "attempt.col.status": "HTTP status",
  "attempt.col.latency": "Time",
  "attempt.col.error": "Error",
  "attempt.none": "No attempts yet.",
  "delivery.pending": "Pending",
  "delivery.delivered": "Delivered",
  "delivery.failed": "Failed",
  "settings.title": "Terminal settings",
  "settings.callbackUrl": "Callback URL",
  "settings.endpoint": "Callback endpoint",
  "settings.secret": "Signing secret",
  "settings.rotate": "Rotate signing secret",
  "settings.rotateConfirm": "Rotate the signing secret? The previous one keeps signing during the overlap; deploy the new one before it ends.",
  "settings.newSecret": "New secret (shown only now; copy it):",
  "settings.overlapUntil": "The previous secret signs until {at}.",
  "confirm": "Confirm",
  "cancel": "Cancel",
  "none": "—"
} as const

/** A text's key. */
export type Key = keyof typeof en

const ru: { readonly [K in Key]: string } = {
  "app.name": "Paydesk",
  "app.skip": "Перейти к содержимому",
  "nav.payments": "Платежи",
  "nav.settings": "Настройки терминала",
  "nav.main": "Главное меню",
  "env.label": "Режим",
  "env.sandbox": "Песочница",
  "env.live": "Боевой",
  "env.banner": "Песочница: тестовые данные, без реальных денег",
  "lang.label": "Язык",
  "signin.title": "Вход",
  "signin.email": "Эл. почта",
  "signin.password": "Пароль",
  "signin.terminal": "ID терминала",
  "signin.terminalHint": "ID терминала (UUID) из приветственного письма или от оператора.",
  "signin.submit": "Войти",
  "signin.busy": "Входим…",
  "signin.expired": "Сессия завершилась. Войдите снова.",
  "signout": "Выйти",
  "loading": "Загрузка…",
  "error.generic": "Что-то пошло не так",
  "retry": "Повторить",
  "payments.title": "Платежи",
  "payments.filters": "Фильтры",
  "payments.status": "Статус",
  "payments.status.any": "Любой статус",
  "payments.allEnvironments": "И песочница, и боевой",
  "payments.orderId": "Номер заказа",
  "payments.search": "Найти",
  "payments.clear": "Сбросить",
  "payments.empty": "Платежей не найдено.",
  "payments.statusScan": "Отбор по статусу среди {n} последних платежей.",
  "payments.col.created": "Создан",
  "payments.col.order": "Заказ",
  "payments.col.amount": "Сумма",
  "payments.col.status": "Статус",
  "payments.col.env": "Режим",
  "paging.label": "Страницы",
  "paging.prev": "Назад",
  "paging.next": "Вперёд",
  "paging.of": "Страница {page} из {pages} (всего {total})",
  "status.created": "Ожидает оплаты",
  "status.processing": "В обработке",
  "status.paid": "Оплачено",
  "status.canceled": "Отменён",
  "status.expired": "Истёк",
  "status.chargeback": "Чарджбэк",
  "status.refunded": "Возвращён",
  "payment.back": "Все платежи",
  "payment.title": "Платёж {order}",
  "payment.details": "Сведения",
  "payment.id": "ID платежа",
  "payment.paidAt": "Оплачен",
  "payment.expiresAt": "Истекает",
  "payment.description": "Описание",
  "payment.events": "События и доставки",
  "payment.noEvents": "Событий пока нет.",
  "event.delivery": "Доставка",
  "event.noDelivery": "Не доставляется: нет адреса для уведомлений.",
  "event.resend": "Отправить снова",
  "event.resending": "Отправляем…",
  "event.resent": "Отправлено снова: {result}",
  "attempt.col.n": "№",
  "attempt.col.at": "Время",
  "attempt.col.status": "HTTP-статус",
  "attempt.col.latency": "Длительность",
  "attempt.col.error": "Ошибка",
  "attempt.none": "Попыток пока не было.",
  "delivery.pending": "Ожидает",
  "delivery.delivered": "Доставлено",
  "delivery.failed": "Не доставлено",
  "settings.title": "Настройки терминала",
  "settings.callbackUrl": "Адрес для уведомлений",
  "settings.endpoint": "Состояние адреса уведомлений",
  "settings.secret": "Секрет подписи",
  "settings.rotate": "Сменить секрет подписи",
  "settings.rotateConfirm": "Сменить секрет подписи? Прежний продолжит подписывать в период перекрытия; установите новый до его окончания.",
  "settings.newSecret": "Новый секрет (показывается только сейчас, скопируйте его):",
  "settings.overlapUntil": "Прежний секрет подписывает до {at}.",
  "confirm": "Подтвердить",
  "cancel": "Отмена",
  "none": "—"
}

const dictionaries: { readonly [L in Language]: { readonly [K in Key]: string } } = { en, ru }

const storageKey = "paydesk.language"

/** The language kept from last time, else the browser's (Russian when it prefers Russian). */
export const initialLanguage = (): Language => {
  const kept = localStorage.getItem(storageKey)
  if (kept === "en" || kept === "ru") return kept
  return navigator.language.toLowerCase().startsWith("ru") ? "ru" : "en"
}

/** Remembers the language. */
export const keepLanguage = (language: Language): void => localStorage.setItem(storageKey, language)

/** A translator: the text of `key` with `{name}` placeholders filled. */
export const translator = (language: Language) =>
  (key: Key, values: { readonly [name: string]: string | number } = {}): string =>
    dictionaries[language][key].replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole))

/** A translator's type. */
export type Translate = ReturnType<typeof translator>

/** A date and time in the language's format (the browser's time zone). */
export const formatTime = (language: Language, iso: string | null): string =>
  iso === null ? "—" : new Date(iso).toLocaleString(language === "ru" ? "ru-RU" : "en-GB", { dateStyle: "medium", timeStyle: "short" })

/** A decimal rouble amount as sent by the API, with the currency sign (no float arithmetic). */
export const formatRub = (language: Language, amount: string): string => {
  const [whole = "0", fraction = "00"] = amount.split(".")
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, language === "ru" ? "\u00a0" : ",")
  return language === "ru" ? `${grouped},${fraction}\u00a0₽` : `₽${grouped}.${fraction}`
}
